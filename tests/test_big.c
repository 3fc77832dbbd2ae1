/*
 * big: a column of more than 2^32 rows (default 5,000,000,003 rows at 1 bit,
 * 625 MB, with a validity bitmap) filtered on one device: the bitmap of
 * x == 1 is the packed stream itself AND the validity, so every byte (the
 * ones around row 2^32 and the 3 tail bits included) and the count are known
 * without an oracle pass. Registered for cuda (big.cuda); runs by hand on any
 * backend: PACKSCAN_BIG_ROWS=<n> test_big <backend>. Then the same column
 * host-resident, streamed through 256 MB of staging, on a context of one
 * device and on a context over two (device 0 twice, or PACKSCAN_TEST_DEVICES
 * "0,1"): the counts and the host bitmap again. Last, zone maps across row
 * 2^32: a sorted column (0 before row b = 2^32 + 1000, 1 from there on)
 * whose blocks are ALL FALSE, ALL TRUE and one MAYBE straddling b.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static uint64_t popcount_bytes(const uint8_t *p, uint64_t nb) {
  uint64_t c = 0, i = 0;
  for (; i + 8 <= nb; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    c += (uint64_t)__builtin_popcountll(w);
  }
  for (; i < nb; i++) c += (uint64_t)__builtin_popcount(p[i]);
  return c;
}

/* Fills want with f(data, valid) over nb bytes, bits past n cleared. */
static void expected(uint8_t *want, const uint8_t *data, const uint8_t *valid, uint64_t n, int kind) {
  uint64_t nb = (n + 7) / 8;
  for (uint64_t i = 0; i < nb; i++) {
    uint8_t d = data[i], v = valid[i];
    want[i] = kind == 0 ? (uint8_t)(d & v) : kind == 1 ? (uint8_t)(~d & v) : (uint8_t)~v;
  }
  if (n % 8) want[nb - 1] &= (uint8_t)((1u << (n % 8)) - 1);
}

static void check_bitmap(const uint8_t *got, const uint8_t *want, uint64_t nb, const char *label) {
  if (memcmp(got, want, nb) == 0) {
    th.checks++;
    return;
  }
  uint64_t i = 0;
  while (got[i] == want[i]) i++;
  th_fail(__FILE__, __LINE__, "%s: byte %llu (rows %llu..%llu) is 0x%02x, expected 0x%02x", label,
          (unsigned long long)i, (unsigned long long)i * 8, (unsigned long long)i * 8 + 7, got[i], want[i]);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "big");
  ps_context *ctx = th_context(0);
  uint64_t n = 5000000003ull;
  const char *env = getenv("PACKSCAN_BIG_ROWS");
  if (env && *env) n = strtoull(env, NULL, 10);
  uint64_t nb = (n + 7) / 8;
  printf("rows=%llu (%.1f MB per bitmap)\n", (unsigned long long)n, nb / 1e6);
  uint8_t *data = th_malloc(nb), *valid = th_malloc(nb), *want = th_malloc(nb), *got = th_malloc(nb + 8);
  th_rng r;
  th_rng_seed(&r, th.seed);
  for (uint64_t i = 0; i < nb; i += 8) {
    uint64_t x = th_u64(&r);
    memcpy(data + i, &x, nb - i < 8 ? nb - i : 8);
  }
  for (uint64_t i = 0; i < nb; i++) valid[i] = i % 97 == 5 ? (uint8_t)th_u64(&r) : 0xFF;
  /* a recognizable pattern across row 2^32 (byte 2^29) */
  if (nb > (1ull << 29) + 8)
    for (uint64_t i = (1ull << 29) - 8; i < (1ull << 29) + 8; i++) data[i] = (uint8_t)(0x81 ^ i);

  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_UINT8;
  d.n = n;
  d.width = 1;
  d.data = data;
  d.data_size = nb;
  d.validity = valid;
  d.validity_size = nb;
  ps_column *col = NULL;
  if (!CHECK_OK(ctx, ps_column_create_for(ctx, &d, &col))) return th_finish();
  static const char *const names[] = {"x == 1", "NOT(x == 1)", "x IS NULL"};
  for (int kind = 0; kind < 3; kind++) {
    th_case("%s", names[kind]);
    ps_expr *e = NULL, *e1 = NULL;
    ps_status st = kind == 2 ? ps_expr_is_null(ctx, col, 0, &e) : ps_expr_compare(ctx, col, PS_EQ, ps_lit_int(1), &e);
    if (CHECK_OK(ctx, st) && kind == 1) {
      if (CHECK_OK(ctx, ps_expr_not(ctx, e, &e1))) e = e1;
    }
    if (!e) continue;
    expected(want, data, valid, n, kind);
    uint64_t want_count = popcount_bytes(want, nb);
    memset(got, 0xAB, nb + 8);
    uint64_t count = 0;
    if (CHECK_OK(ctx, ps_filter(ctx, e, got, nb + 8, &count))) {
      check_bitmap(got, want, nb, "host bitmap");
      CHECKF(got[nb] == 0xAB && got[nb + 7] == 0xAB, "bytes past ceil(n/8) written");
      CHECKF(count == want_count, "count %llu, expected %llu", (unsigned long long)count,
             (unsigned long long)want_count);
    }
    count = 0;
    if (CHECK_OK(ctx, ps_filter_count(ctx, e, &count)))
      CHECKF(count == want_count, "ps_filter_count %llu, expected %llu", (unsigned long long)count,
             (unsigned long long)want_count);
    if (kind == 0) {
      ps_buffer *buf = NULL;
      if (CHECK_OK(ctx, ps_buffer_create(ctx, nb + 8, &buf))) {
        count = 0;
        if (CHECK_OK(ctx, ps_filter_device(ctx, e, buf, 8, &count))) {
          CHECK(count == want_count);
          memset(got, 0, nb);
          if (CHECK_OK(ctx, ps_buffer_read(ctx, buf, 8, got, nb))) check_bitmap(got, want, nb, "device bitmap");
        }
        ps_buffer_destroy(buf);
      }
    }
    ps_expr_destroy(e);
  }
  ps_column_destroy(col);

  /* host-resident: one device, then two */
  int32_t devs[2] = {0, 0};
  const char *denv = getenv("PACKSCAN_TEST_DEVICES");
  if (denv && *denv) sscanf(denv, "%d,%d", &devs[0], &devs[1]);
  for (int ndev = 1; ndev <= 2; ndev++) {
    th_case("host-resident, %d device%s", ndev, ndev > 1 ? "s" : "");
    ps_context_options o;
    th_options(&o, th.backend, 0);
    o.device_memory_limit = (uint64_t)3 << 28;
    o.device_count = (uint32_t)ndev;
    o.devices = devs;
    char err[512];
    ps_context *hctx = NULL;
    if (!CHECKF(ps_context_create(&o, err, sizeof err, &hctx) == PS_OK, "context: %s", err)) continue;
    ps_column *hc = NULL;
    ps_expr *e = NULL;
    if (CHECK_OK(hctx, ps_column_create_for_host(hctx, &d, &hc)) &&
        CHECK_OK(hctx, ps_expr_compare(hctx, hc, PS_EQ, ps_lit_int(1), &e))) {
      expected(want, data, valid, n, 0);
      const uint64_t want_count = popcount_bytes(want, nb);
      uint64_t count = 0;
      memset(got, 0xAB, nb + 8);
      if (CHECK_OK(hctx, ps_filter(hctx, e, got, nb + 8, &count))) {
        check_bitmap(got, want, nb, "host-resident bitmap");
        CHECKF(count == want_count, "host-resident count %llu, expected %llu", (unsigned long long)count,
               (unsigned long long)want_count);
      }
      count = 0;
      if (CHECK_OK(hctx, ps_filter_count(hctx, e, &count)))
        CHECKF(count == want_count, "host-resident ps_filter_count %llu, expected %llu", (unsigned long long)count,
               (unsigned long long)want_count);
    }
    ps_expr_destroy(e);
    ps_column_destroy(hc);
    ps_context_destroy(hctx);
  }
  /* zone maps across row 2^32 */
  {
    const uint64_t b = n > (1ull << 33) ? (1ull << 32) + 1000 : n / 2 + 7;
    th_case("zones, x == 1 from row %llu", (unsigned long long)b);
    memset(data, 0, nb);
    for (uint64_t i = b; i < n; i++) data[i / 8] |= (uint8_t)(1u << (i % 8));
    ps_for_desc z = d;
    z.validity = NULL;
    z.validity_size = 0;
    ps_column *zc = NULL;
    ps_expr *e = NULL;
    if (CHECK_OK(ctx, ps_column_create_for(ctx, &z, &zc)) && CHECK_OK(ctx, ps_column_compute_zones(ctx, zc)) &&
        CHECK_OK(ctx, ps_expr_compare(ctx, zc, PS_EQ, ps_lit_int(1), &e))) {
      ps_context_scan_stats_reset(ctx);
      uint64_t count = 0;
      memset(got, 0xAB, nb + 8);
      if (CHECK_OK(ctx, ps_filter(ctx, e, got, nb + 8, &count))) {
        memcpy(want, data, nb);
        check_bitmap(got, want, nb, "zone-pruned bitmap");
        CHECKF(count == n - b, "zone-pruned count %llu, expected %llu", (unsigned long long)count,
               (unsigned long long)(n - b));
      }
      ps_scan_stats st = {sizeof st, 0, 0, 0, 0};
      CHECK_OK(ctx, ps_context_scan_stats(ctx, &st));
      CHECKF(st.rows_skipped > 0 && st.rows_all_true > 0 && st.rows_scanned < n / 100 + 65536,
             "zone maps decided %llu false and %llu true rows, scanned %llu", (unsigned long long)st.rows_skipped,
             (unsigned long long)st.rows_all_true, (unsigned long long)st.rows_scanned);
      count = 0;
      if (CHECK_OK(ctx, ps_filter_count(ctx, e, &count))) CHECK(count == n - b);
    }
    ps_expr_destroy(e);
    ps_column_destroy(zc);
  }
  free(data);
  free(valid);
  free(want);
  free(got);
  ps_context_destroy(ctx);
  return th_finish();
}
