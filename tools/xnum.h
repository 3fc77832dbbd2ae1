/* Exact decimals of SQL DECIMAL(38): an integer u with |u| <= 10^38 - 1 and a
 * scale s in 0..38, standing for u / 10^s. The arithmetic of a SELECT's
 * results (select_post.c): + - * / on aggregates, comparisons for HAVING and
 * ORDER BY. Every operation is exact or reports that its result does not fit;
 * nothing rounds except division, which rounds half away from zero as the
 * library's AVG does. Intermediate products and scaled operands use 256 bits,
 * so no comparison or quotient is ever computed on a rounded value. */
#ifndef PSTOOL_XNUM_H
#define PSTOOL_XNUM_H

#include <stdint.h>

#include "packscan.h"

#define XNUM_MAX_SCALE 38
/* A quotient's scale is at least this (the library's PS_QUERY_AVG_MIN_SCALE,
 * so that SUM(x) / COUNT(x) is AVG(x) to the digit). */
#define XNUM_DIV_MIN_SCALE 6

typedef struct xnum {
  __int128 u;
  int scale;
} xnum;

/* From a result's datum (not NULL): 0, or -1 when it is outside DECIMAL(38). */
int xnum_from_datum(const ps_datum *d, xnum *out);
/* Into a datum (as_double the nearest double, str NULL). */
void xnum_to_datum(const xnum *x, ps_datum *out);
/* x at a larger or equal scale: 0, or -1 when it would not fit 38 digits. */
int xnum_rescale(const xnum *x, int scale, xnum *out);
/* a + b, a - b at the larger scale; a * b at the sum of the scales (at most
 * 38, checked by the caller). 0, or -1 when the result does not fit. */
int xnum_add(const xnum *a, const xnum *b, xnum *out);
int xnum_sub(const xnum *a, const xnum *b, xnum *out);
int xnum_mul(const xnum *a, const xnum *b, xnum *out);
/* a / b at `scale` (at least a's), rounded half away from zero. 0; 1 when b
 * is zero; -1 when the quotient does not fit. */
int xnum_div(const xnum *a, const xnum *b, int scale, xnum *out);
/* -1, 0, 1 as a < b, a = b, a > b, exactly, whatever the scales. */
int xnum_cmp(const xnum *a, const xnum *b);
/* Exact SQL text ("-0.50"): at most 42 bytes with the NUL. */
void xnum_format(const xnum *x, char out[48]);

#endif
