/* Host check of the CUDA LIKE dictionary kernel's logic (kernels_cuda/
 * like_entry.cuh, with core/ps_like_nfa.h compiled by nvcc as CUDA C++): the
 * kernel's word assembly (bit `lane` of word w = entry first + 32w + lane,
 * zero past count) emulated on the CPU over random dictionaries and
 * patterns, compared with the core's ps_like_match. Runs without a GPU. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host_check.h"
#include "like_entry.cuh"

extern "C" {  // core/internal.h and core/like.h (plain C, no extern "C" guards)
size_t ps_like_compile(const uint8_t *p, size_t plen, int escape, int *tok);
int ps_like_match(const uint8_t *s, size_t slen, const int *tok, size_t nt, uint8_t *scratch);
int ps_like_nfa_build(const int *tok, size_t nt, ps_like_nfa *nfa);
}

static std::mt19937_64 rng;

static std::string pieces(const char *const *from, size_t n, size_t max_pieces) {
  std::string s;
  for (size_t i = rng() % (max_pieces + 1); i > 0; i--) s += from[rng() % n];
  return s;
}

int main() {
  rng.seed(th_host_init("cuda_like"));
  static const char *const str_pieces[] = {"a", "b", "ab", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9d\x84\x9e",
                                           "\xff", "\x80", "\xe2\x82", "\xed\xa0\x80", "",
                                           "abaab", "bbabbabab"};
  static const char *const pat_pieces[] = {"%",  "_",     "a",   "b",    "\xc3\xa9", "\xe2\x82\xac",
                                           "\xff", "\x80", "\\%", "baab", "abba"};
  long checked = 0, matched = 0;
  for (int round = 0; round < 40; round++) {
    const size_t d = 1 + rng() % 3000;
    std::vector<std::string> dict(d);
    std::vector<uint64_t> offsets(d + 1, 0);
    std::string bytes;
    for (size_t j = 0; j < d; j++) {
      /* every fifth entry long: the run test's positions go 32 at a time */
      dict[j] = pieces(str_pieces, sizeof str_pieces / sizeof *str_pieces, j % 5 == 4 ? 24 : 8);
      bytes += dict[j];
      offsets[j + 1] = bytes.size();
    }
    for (int pi = 0; pi < 20; pi++) {
      const std::string pat = pieces(pat_pieces, sizeof pat_pieces / sizeof *pat_pieces, 6);
      std::vector<int> tok(pat.size() + 1);
      const size_t nt = ps_like_compile((const uint8_t *)pat.data(), pat.size(), '\\', tok.data());
      ps_cuda_like_params p;
      std::memset(&p, 0, sizeof p);
      if (!ps_like_nfa_build(tok.data(), nt, &p.nfa)) continue;
      p.offsets = offsets.data();
      /* the bytes at every alignment (the run test loads words where they are 4-byte aligned) */
      const size_t pad = rng() % 4;
      std::string padded = std::string(pad, 'a') + bytes;
      p.bytes = (const uint8_t *)padded.data() + pad;
      p.first = rng() % d;
      p.count = 1 + rng() % (d - p.first);
      const uint64_t words = (p.count + 31) / 32;
      for (uint64_t w = 0; w < words; w++) {
        uint32_t bits = 0;
        for (unsigned lane = 0; lane < 32; lane++)  // what __ballot_sync gathers
          bits |= (uint32_t)(ps_cuda_like_entry(p, p.nfa.lit, w * 32 + lane) != 0) << lane;
        for (unsigned lane = 0; lane < 32; lane++) {
          const uint64_t k = w * 32 + lane;
          int want = 0;
          if (k < p.count) {
            const std::string &s = dict[p.first + k];
            std::vector<uint8_t> scratch(2 * (s.size() + 1));
            want = ps_like_match((const uint8_t *)s.data(), s.size(), tok.data(), nt, scratch.data());
          }
          checked++;
          matched += want;
          TH_EXPECT((int)((bits >> lane) & 1u) == want, "pattern '%s', entry %llu ('%s'): kernel %u, ps_like_match %d",
                    pat.c_str(), (unsigned long long)(p.first + k),
                    k < p.count ? dict[p.first + k].c_str() : "(past count)", (bits >> lane) & 1u, want);
        }
      }
    }
  }
  printf("%ld bits checked, %ld set\n", checked, matched);
  TH_EXPECT(matched > 0, "no entry matched any pattern");
  return th_host_finish();
}
