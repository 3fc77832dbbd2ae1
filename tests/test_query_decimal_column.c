/*
 * query_decimal_column: a PS_TYPE_DECIMAL column in a query is the exact
 * decimal (M + code) / 10^scale, as packscan.h says of decimal columns and
 * as queries already read FOR float64 columns of a scale. So a DECIMAL column
 * and a FLOAT64 column with the same scale, reference and codes must give the
 * same results, as aggregate values (SUM, MIN, MAX, AVG of the column and of
 * a product) and as GROUP BY keys; and the named case of one row of unscaled
 * 12345 at scale 2 must sum to 123.45. Seeded random columns with nulls.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tcol.h"

#define N_AGGS 5

typedef struct twin {
  ps_column *dec, *flt; /* the same codes as PS_TYPE_DECIMAL and as PS_TYPE_FLOAT64 */
} twin;

static int twin_create(ps_context *ctx, uint64_t n, uint32_t w, int64_t ref, uint32_t scale, const uint64_t *codes,
                       const uint8_t *valid, twin *t) {
  ps_reference m;
  m.i = ref;
  tcol *c = tcol_for(PS_TYPE_DECIMAL, n, w, scale, m, codes, valid, NULL);
  int ok = CHECK_OK(ctx, tcol_create(ctx, c, &t->dec));
  c->type = c->code_type = PS_TYPE_FLOAT64; /* the same stream, read as a float column of the scale */
  ok = ok && CHECK_OK(ctx, tcol_create(ctx, c, &t->flt));
  tcol_free(c);
  return ok;
}

static ps_value *col_value(ps_context *ctx, ps_column *c) {
  ps_value *v = NULL;
  return CHECK_OK(ctx, ps_value_column(ctx, c, &v)) ? v : NULL;
}

/* SUM(x), MIN(x), MAX(x), AVG(x), SUM(x * y) GROUP BY key over one side of the twins. */
static ps_status run(ps_context *ctx, uint64_t n, ps_column *x, ps_column *y, ps_column *key, ps_query_result **res) {
  ps_value *vx = col_value(ctx, x), *vp = NULL, *a = col_value(ctx, x), *b = col_value(ctx, y);
  if (a && b && CHECK_OK(ctx, ps_value_arith(ctx, PS_MUL, a, b, &vp))) a = b = NULL;
  ps_value_destroy(a);
  ps_value_destroy(b);
  ps_status st = PS_ERR_INTERNAL;
  if (vx && vp) {
    const ps_agg aggs[N_AGGS] = {
        {PS_AGG_SUM, vx}, {PS_AGG_MIN, vx}, {PS_AGG_MAX, vx}, {PS_AGG_AVG, vx}, {PS_AGG_SUM, vp}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = n;
    d.n_keys = key ? 1 : 0;
    d.keys[0] = key;
    d.n_aggs = N_AGGS;
    d.aggs = aggs;
    ps_query *q = NULL;
    if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) st = ps_query_run(ctx, q, res);
    ps_query_destroy(q);
  }
  ps_value_destroy(vx);
  ps_value_destroy(vp);
  return st;
}

static void print_datum(const char *what, const ps_datum *d) {
  char buf[PS_DATUM_TEXT_SIZE] = "?";
  ps_datum_format(d, buf, sizeof buf);
  fprintf(stderr, "    %s: %s (scale %u)\n", what, buf, d->scale);
}

static int same(const ps_datum *x, const ps_datum *y) {
  if (x->is_null || y->is_null) return x->is_null && y->is_null;
  return x->lo == y->lo && x->hi == y->hi && x->scale == y->scale;
}

static void compare(const ps_query_result *dec, const ps_query_result *flt, uint32_t n_keys) {
  uint64_t groups = ps_query_result_groups(dec);
  if (!CHECKF(groups == ps_query_result_groups(flt),
              "%" PRIu64 " groups with DECIMAL columns, %" PRIu64 " with FLOAT64 ones", groups,
              ps_query_result_groups(flt)))
    return;
  for (uint64_t g = 0; g < groups; g++) {
    ps_datum x, y;
    for (uint32_t k = 0; k < n_keys; k++)
      if (CHECK_OK(NULL, ps_query_result_key(dec, g, k, &x)) && CHECK_OK(NULL, ps_query_result_key(flt, g, k, &y)) &&
          !CHECKF(same(&x, &y), "group %" PRIu64 ": the DECIMAL key differs from the FLOAT64 key", g)) {
        print_datum("DECIMAL", &x);
        print_datum("FLOAT64", &y);
      }
    for (uint32_t a = 0; a < N_AGGS; a++)
      if (CHECK_OK(NULL, ps_query_result_value(dec, g, a, &x)) &&
          CHECK_OK(NULL, ps_query_result_value(flt, g, a, &y)) &&
          !CHECKF(same(&x, &y), "group %" PRIu64 ", aggregate %u: DECIMAL columns differ from FLOAT64 ones", g, a)) {
        print_datum("DECIMAL", &x);
        print_datum("FLOAT64", &y);
      }
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "query_decimal_column");
  ps_context *ctx = th_context(0);

  th_case("one row of unscaled 12345 at scale 2");
  {
    const uint64_t code = 45;
    twin x = {0}, key = {0};
    if (twin_create(ctx, 1, 6, 12300, 2, &code, NULL, &x) && twin_create(ctx, 1, 6, 12300, 2, &code, NULL, &key)) {
      ps_query_result *res = NULL;
      ps_datum d;
      if (CHECK_OK(ctx, run(ctx, 1, x.dec, x.dec, key.dec, &res))) {
        char text[PS_DATUM_TEXT_SIZE] = "";
        if (CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &d)) &&
            CHECK_OK(NULL, ps_datum_format(&d, text, sizeof text)))
          CHECKF(strcmp(text, "123.45") == 0 && d.scale == 2, "SUM is %s at scale %u, expected 123.45", text, d.scale);
        if (CHECK_OK(NULL, ps_query_result_key(res, 0, 0, &d)) &&
            CHECK_OK(NULL, ps_datum_format(&d, text, sizeof text)))
          CHECKF(strcmp(text, "123.45") == 0 && d.scale == 2, "the key is %s at scale %u, expected 123.45", text,
                 d.scale);
        if (CHECK_OK(NULL, ps_query_result_value(res, 0, 4, &d)) &&
            CHECK_OK(NULL, ps_datum_format(&d, text, sizeof text)))
          CHECKF(strcmp(text, "15239.9025") == 0 && d.scale == 4, "SUM(x * x) is %s at scale %u, expected 15239.9025",
                 text, d.scale);
      }
      ps_query_result_destroy(res);
    }
    ps_column_destroy(x.dec);
    ps_column_destroy(x.flt);
    ps_column_destroy(key.dec);
    ps_column_destroy(key.flt);
  }

  const int rounds = 20 * (int)th.scale;
  for (int round = 0; round < rounds; round++) {
    uint64_t n = 1 + th_below(&th.rng, 3000);
    uint32_t wx = (uint32_t)th_below(&th.rng, 21), wy = (uint32_t)th_below(&th.rng, 9),
             wk = 1 + (uint32_t)th_below(&th.rng, 3);
    uint32_t sx = (uint32_t)th_below(&th.rng, 7), sy = (uint32_t)th_below(&th.rng, 4),
             sk = (uint32_t)th_below(&th.rng, 3);
    int64_t rx = (int64_t)th_below(&th.rng, 2000001) - 1000000, ry = (int64_t)th_below(&th.rng, 201) - 100;
    int64_t rk = (int64_t)th_below(&th.rng, 21) - 10;
    int nulls = th_chance(&th.rng, 50);
    th_case("round %d: n %" PRIu64 ", x w%u scale %u M %" PRId64 ", y w%u scale %u M %" PRId64
            ", key w%u scale %u M %" PRId64 "%s",
            round, n, wx, sx, rx, wy, sy, ry, wk, sk, rk, nulls ? ", nulls" : "");
    uint64_t *cx = th_malloc(n * 8), *cy = th_malloc(n * 8), *ck = th_malloc(n * 8);
    uint8_t *valid = th_malloc((n + 7) / 8);
    for (uint64_t i = 0; i < n; i++) {
      cx[i] = wx ? th_below(&th.rng, (uint64_t)1 << wx) : 0;
      cy[i] = wy ? th_below(&th.rng, (uint64_t)1 << wy) : 0;
      ck[i] = th_below(&th.rng, (uint64_t)1 << wk);
    }
    for (uint64_t i = 0; i < (n + 7) / 8; i++) valid[i] = (uint8_t)th_u64(&th.rng);
    twin x = {0}, y = {0}, key = {0};
    if (twin_create(ctx, n, wx, rx, sx, cx, nulls ? valid : NULL, &x) &&
        twin_create(ctx, n, wy, ry, sy, cy, NULL, &y) &&
        twin_create(ctx, n, wk, rk, sk, ck, nulls ? valid : NULL, &key)) {
      for (int grouped = 0; grouped < 2; grouped++) {
        ps_query_result *rd = NULL, *rf = NULL;
        if (CHECK_OK(ctx, run(ctx, n, x.dec, y.dec, grouped ? key.dec : NULL, &rd)) &&
            CHECK_OK(ctx, run(ctx, n, x.flt, y.flt, grouped ? key.flt : NULL, &rf)))
          compare(rd, rf, (uint32_t)grouped);
        ps_query_result_destroy(rd);
        ps_query_result_destroy(rf);
      }
    }
    ps_column_destroy(x.dec);
    ps_column_destroy(x.flt);
    ps_column_destroy(y.dec);
    ps_column_destroy(y.flt);
    ps_column_destroy(key.dec);
    ps_column_destroy(key.flt);
    free(cx);
    free(cy);
    free(ck);
    free(valid);
  }
  ps_context_destroy(ctx);
  return th_finish();
}
