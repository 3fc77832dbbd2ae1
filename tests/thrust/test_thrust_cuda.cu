/* The thrust test on Thrust's CUDA system, built by nvcc: the cuda backend,
 * device bitmaps, device cdata, streams, more than 2^32 rows. */
#include "thrust_body.h"
