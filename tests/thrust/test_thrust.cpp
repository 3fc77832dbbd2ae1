/* The thrust test on Thrust's host (CPP) device system, built by g++: the
 * reference and OpenCL backends, bitmaps in host memory. */
#include "thrust_body.h"
