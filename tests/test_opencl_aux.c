/*
 * opencl_aux: what the public API cannot reach: a program whose SET leaf may
 * index past its aux words (the core's lowering never builds one). Calls the
 * backend's eval entry directly (core/internal.h) with hand-built programs:
 *  - aux_a + every code the data holds inside aux, but the code limit
 *    reaching past it (the kernels check every index): exact bits, PS_OK;
 *  - a code past aux: PS_ERR_INTERNAL (the kernels' PS_FILTER_CORRUPT_AUX);
 *    the same code under a null: PS_OK;
 *  - aux_a itself past aux: every valid row, PS_ERR_INTERNAL;
 * on words.cl (internal option opencl_jit on) in its CPU and GPU variants,
 * on filter.cl specialized for the shape after words.cl's launch was
 * refused, and on the generic filter.cl (opencl_jit off), widths 5, 20, 33,
 * 200 rows. Also on the
 * reference backend for the first case (it trusts aux bounds, so only the
 * in-bounds case is compared there).
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "internal.h"
#include "tcol.h"

enum { N = 200 };

/* Runs a one-SET program on ctx; returns the status, the bitmap in bits. */
static ps_status run(ps_context *ctx, uint32_t w, const uint64_t *codes, const uint8_t *valid, uint64_t code_limit,
                     uint32_t aux_a, const uint32_t *aux, uint32_t aux_words, uint32_t negate, uint8_t *bits) {
  uint8_t packed[N * 8 + 16];
  memset(packed, 0, sizeof packed);
  tcol_pack(packed, N, w, codes);
  const uint64_t data_bytes = (N * (uint64_t)w + 7) / 8, nb = (N + 7) / 8;
  ps_buffer *data = NULL, *vbuf = NULL, *abuf = NULL, *out = NULL;
  ps_status st = ps_buffer_create(ctx, data_bytes, &data);
  if (st == PS_OK) st = ps_buffer_write(ctx, data, 0, packed, data_bytes);
  if (st == PS_OK && valid) st = ps_buffer_create(ctx, nb, &vbuf);
  if (st == PS_OK && valid) st = ps_buffer_write(ctx, vbuf, 0, valid, nb);
  if (st == PS_OK) st = ps_buffer_create(ctx, aux_words ? aux_words * 4u : 4u, &abuf);
  if (st == PS_OK && aux_words) st = ps_buffer_write(ctx, abuf, 0, aux, aux_words * 4u);
  if (st == PS_OK) st = ps_buffer_create(ctx, nb, &out);
  if (st == PS_OK) {
    static ps_program prog; /* large: not on the stack */
    memset(&prog, 0, sizeof prog);
    prog.n_insns = 1;
    prog.n_cols = 1;
    prog.stack_depth = 1;
    prog.aux_words = aux_words;
    prog.cols[0].code_limit = code_limit;
    prog.cols[0].data_bytes = data_bytes;
    prog.cols[0].validity_bytes = valid ? nb : 0;
    prog.cols[0].width = w;
    prog.cols[0].kind = PS_KIND_UNSIGNED;
    prog.cols[0].flags = valid ? PS_COLF_VALIDITY : 0;
    prog.insns[0].op = PS_OP_SET;
    prog.insns[0].flags = negate;
    prog.insns[0].aux_a = aux_a;
    ps_eval_args a;
    memset(&a, 0, sizeof a);
    a.prog = &prog;
    a.rows = N;
    a.data[0] = data->mem;
    if (vbuf) a.validity[0] = vbuf->mem;
    if (aux_words) a.aux = abuf->mem;
    a.aux_host = aux;
    a.bitmap = out->mem;
    uint64_t count = 0;
    a.count = &count;
    st = ctx->ops->eval(ctx->be, &a);
    if (st == PS_OK) st = ps_buffer_read(ctx, out, 0, bits, nb);
  }
  ps_buffer_destroy(out);
  ps_buffer_destroy(abuf);
  ps_buffer_destroy(vbuf);
  ps_buffer_destroy(data);
  return st;
}

static void cases(ps_context *ctx, const char *kernel) {
  static const uint32_t widths[] = {5, 20, 33};
  uint32_t aux[4];
  for (int i = 0; i < 4; i++) aux[i] = (uint32_t)th_u64(&th.rng);
  for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
    const uint32_t w = widths[wi];
    const uint64_t limit = w == 5 ? 31 : 1000; /* past aux's 128 bits either way */
    const uint32_t aux_a = 40;                 /* bits 40..127 usable: codes 0..87 */
    uint64_t codes[N];
    uint8_t valid[(N + 7) / 8];
    for (int i = 0; i < N; i++) codes[i] = th_below(&th.rng, w == 5 ? 32 : 88);
    memset(valid, 0xff, sizeof valid);
    for (uint32_t negate = 0; negate < 2; negate++) {
      th_case("%s w=%u negate=%u: codes inside aux, limit past it", kernel, w, negate);
      uint8_t bits[(N + 7) / 8];
      ps_status st = run(ctx, w, codes, NULL, limit, aux_a, aux, 4, negate, bits);
      if (CHECK_OK(ctx, st))
        for (int i = 0; i < N; i++) {
          const uint64_t k = aux_a + codes[i];
          const int want = (int)(((aux[k / 32] >> (k % 32)) & 1) ^ negate);
          if (!CHECKF(((bits[i / 8] >> (i % 8)) & 1) == want, "row %d (code %llu): got %d, expected %d", i,
                      (unsigned long long)codes[i], !want, want))
            break;
        }
    }
    /* At 5 bits every code (up to 31) indexes inside aux: the host proves
     * it and the kernels check nothing; the cases below need room past aux. */
    if (w == 5) continue;
    uint64_t past[N];
    memcpy(past, codes, sizeof past);
    past[137] = 88 + th_below(&th.rng, 900); /* bit 128 or more: past aux, and below the limit */
    th_case("%s w=%u: a code past aux", kernel, w);
    uint8_t bits[(N + 7) / 8];
    CHECK_STATUS(ctx, run(ctx, w, past, NULL, limit, aux_a, aux, 4, 0, bits), PS_ERR_INTERNAL);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "aux"));
    th_case("%s w=%u: a code past aux under a null", kernel, w);
    valid[137 / 8] &= (uint8_t)~(1u << (137 % 8));
    CHECK_OK(ctx, run(ctx, w, past, valid, limit, aux_a, aux, 4, 0, bits));
    CHECK(((bits[137 / 8] >> (137 % 8)) & 1) == 0);
    th_case("%s w=%u: aux_a past aux", kernel, w);
    CHECK_STATUS(ctx, run(ctx, w, codes, NULL, limit, 128, aux, 4, 0, bits), PS_ERR_INTERNAL);
    th_case("%s w=%u: aux_a past aux, every row null", kernel, w);
    memset(valid, 0, sizeof valid);
    CHECK_OK(ctx, run(ctx, w, codes, valid, limit, 4096, aux, 4, 1, bits));
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "opencl_aux");
  if (th_is_reference()) {
    printf("the reference backend trusts aux bounds: nothing to test\n");
    return th_finish();
  }
  static const int jit[] = {PS_OPT_ON, PS_OPT_ON, PS_OPT_ON, PS_OPT_OFF};
  static const int words[] = {PS_OPT_WORDS_AUTO, PS_OPT_WORDS_STAGED, PS_OPT_WORDS_REFUSED, PS_OPT_WORDS_AUTO};
  static const char *const names[] = {"words.cl", "words.cl staged", "filter.cl specialized", "filter.cl"};
  for (int k = 0; k < 4; k++) {
    ps_context *ctx = th_context(0);
    ps_internal_options o = *ps_context_internal_options(ctx);
    o.opencl_jit = jit[k];
    o.opencl_words = words[k];
    if (!CHECK_OK(ctx, ps_context_set_internal_options(ctx, &o))) return th_finish();
    cases(ctx, names[k]);
    ps_context_destroy(ctx);
  }
  return th_finish();
}
