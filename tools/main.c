/* packscan: encode CSV into compressed table files and query them with SQL
 * WHERE-expressions evaluated on the compressed columns. */
#include "cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
