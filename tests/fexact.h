/*
 * An exact-sum oracle for tests of lossless float sums: the exact sum of
 * doubles in a wide fixed-point integer (units of 2^-1074), turned into an
 * exact decimal and rounded by strtod (correctly rounded, ties to even);
 * the average the exact quotient by the count, its decimal cut past every
 * double's midpoint with a sticky digit, rounded by strtod the same way.
 */
#ifndef FEXACT_H
#define FEXACT_H

#include <stdbool.h>
#include <stdint.h>

#define FX_ACC_LIMBS 72 /* 2304 bits: doubles reach 2^1024 = 2^2098 units, sums of < 2^32 rows 2^2130 */

typedef struct fx_exact {
  uint32_t pos[FX_ACC_LIMBS], neg[FX_ACC_LIMBS];
  uint64_t count; /* the values added */
  bool inf;       /* an infinity was added (the sum is then meaningless) */
} fx_exact;

/* The IEEE bit pattern of x, and the double of a pattern. */
uint64_t fx_bits(double x);
double fx_double(uint64_t b);
/* Adds x (finite, or an infinity that sets inf) to e. */
void fx_add(fx_exact *e, double x);
/* The sum (avg: divided by the count) rounded once to the nearest double. */
double fx_value(const fx_exact *e, bool avg);

#endif /* FEXACT_H */
