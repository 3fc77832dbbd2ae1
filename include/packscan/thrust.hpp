/*
 * packscan/thrust.hpp — the contract's Thrust interface over the C API.
 *
 * A header-only C++17 layer: FORInfo and DICTInfo describe compressed
 * columns; filterLiteral, compareColumns, AND, OR and NOT return a
 * packscan::selection, a lazily evaluated sequence of bool whose begin() and
 * end() are random-access Thrust iterators. The C library stays the single
 * implementation: combining selections builds one ps_expr tree, and the first
 * read evaluates that tree once, in one fused C call, into a selection bitmap
 * (Arrow layout) that the selection owns. The iterator reads bit i of it.
 *
 *   packscan::session s("auto");
 *   packscan::session_scope use(s);  // the contract's signatures use this session
 *   auto sel = packscan::AND(packscan::filterLiteral(price, 4000, priceInfo, packscan::less()),
 *                            packscan::filterLiteral(name, "ab%", nameInfo, packscan::like()));
 *   auto hits = thrust::count(sel.begin(), sel.end(), true);
 *
 * Where the bitmap lives: compiled by nvcc with Thrust's CUDA device system,
 * in device memory (read it with device policies and in kernels; a "cuda"
 * session writes it there, a host backend's bitmap is copied there); compiled
 * for Thrust's host systems (CPP, OMP), in host memory (reference and OpenCL
 * backends, and cuda through ps_filter). selection::memory() tells which.
 *
 * Errors are C++ exceptions (packscan::error, carrying the ps_status and the
 * context's message). The contract's functions return their sequence by value
 * and the evaluation happens later, on the first read inside begin(): neither
 * has room for a status out-parameter, and Thrust itself reports failures by
 * throwing (thrust::system_error). Nothing throws across the C library.
 *
 * Lifetimes: a session outlives its selections. Host cdata (and validity,
 * dictionaries) is copied when filterLiteral / compareColumns return; device
 * cdata (FORInfo::memory == PS_MEMORY_DEVICE, CUDA only) is used in place and
 * must outlive the selection. Leaves over the same cdata address and the same
 * description share one library column while any selection of the session
 * holds it (one copy, and one of the C library's 16 columns per tree): a
 * caller that rewrites a host buffer in place for a new batch lets the old
 * selections go first. AND, OR and NOT consume their operands (move them in):
 * the tree is built from their expressions without a copy.
 *
 * Streams (CUDA): begin() evaluates on the session's stream and waits, so the
 * bitmap is complete for any later stream. begin(policy) with a CUDA policy
 * (thrust::cuda::par.on(stream), thrust::device) evaluates on that policy's
 * stream without waiting: algorithms on the same stream read it in order.
 * A destroyed selection's device bitmap goes back to its session for the
 * next selection (no cudaMalloc / cudaFree per query; at most four kept).
 * Destroying it first waits, as cudaFree would, for the work that may still
 * read it: the policy's stream after begin(policy), the device after begin();
 * work reading it on another stream after begin(policy) must be ordered
 * before the policy's stream by the caller.
 */
#ifndef PACKSCAN_THRUST_HPP
#define PACKSCAN_THRUST_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "packscan.h"

/* The CUDA interop (device bitmaps, device cdata, streams) needs the CUDA
 * runtime headers and a library built with the CUDA backend: on under nvcc
 * with Thrust's CUDA device system; the includer may define
 * PACKSCAN_THRUST_CUDA itself (0: host bitmaps under nvcc too). */
#ifndef PACKSCAN_THRUST_CUDA
#if defined(__CUDACC__) && defined(THRUST_DEVICE_SYSTEM) && THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#define PACKSCAN_THRUST_CUDA 1
#else
#define PACKSCAN_THRUST_CUDA 0
#endif
#endif
#if PACKSCAN_THRUST_CUDA
#include <cuda_runtime_api.h>
#include <thrust/system/cuda/execution_policy.h>

#include "packscan_cuda.h"
#endif

#if defined(__CUDACC__)
#define PACKSCAN_HD __host__ __device__
#else
#define PACKSCAN_HD
#endif

namespace packscan {

/* ---- errors ------------------------------------------------------------- */

/** What every failure throws: the status and the library's message. */
class error : public std::runtime_error {
 public:
  error(ps_status status, const std::string &what) : std::runtime_error(what), status_(status) {}
  ps_status status() const noexcept { return status_; }

 private:
  ps_status status_;
};

namespace detail {
[[noreturn]] inline void fail(ps_status st, const char *call, const std::string &detail) {
  std::string msg = std::string("packscan: ") + call + ": " + ps_status_name(st);
  if (!detail.empty()) msg += ": " + detail;
  throw error(st, msg);
}
/* Throws when a C call on ctx failed, with the context's message. */
inline void check(ps_context *ctx, ps_status st, const char *call) {
  if (st != PS_OK) fail(st, call, ctx ? ps_context_last_error(ctx) : "");
}
}  // namespace detail

/* ---- sessions ------------------------------------------------------------- */

namespace detail {
struct column_cache;
struct bitmap_pool;
}  // namespace detail

/** A ps_context, owned (created from a backend name) or borrowed (an existing
 *  C context, e.g. one the engine already uses). Movable, not copyable. */
class session {
 public:
  /** backend: "auto", "reference", "opencl" or "cuda". Throws packscan::error
   *  (PS_ERR_NO_BACKEND, PS_ERR_NO_DEVICE, ...) when it cannot be created. */
  explicit session(const char *backend = "auto") {
    ps_context_options opts;
    ps_context_options_init(&opts);
    opts.backend = backend;
    create(opts);
  }
  explicit session(const ps_context_options &opts) { create(opts); }
  /** Uses ctx without taking ownership; ctx must outlive the session. */
  static session borrow(ps_context *ctx) {
    if (!ctx) detail::fail(PS_ERR_INVALID_ARGUMENT, "session::borrow", "ctx is NULL");
    return session(ctx, false);
  }
  session(session &&o) noexcept
      : ctx_(std::exchange(o.ctx_, nullptr)),
        owned_(o.owned_),
        columns_(std::move(o.columns_)),
        bitmaps_(std::move(o.bitmaps_)) {}
  session &operator=(session &&o) noexcept {
    if (this != &o) {
      release();
      ctx_ = std::exchange(o.ctx_, nullptr);
      owned_ = o.owned_;
      columns_ = std::move(o.columns_);
      bitmaps_ = std::move(o.bitmaps_);
    }
    return *this;
  }
  session(const session &) = delete;
  session &operator=(const session &) = delete;
  ~session() { release(); }

  ps_context *get() const noexcept { return ctx_; }
  const char *backend() const { return ps_context_backend(ctx_); }

#if PACKSCAN_THRUST_CUDA
  /** Runs this session's calls on the caller's stream (ps_cuda_set_stream). */
  void set_stream(cudaStream_t stream) { detail::check(ctx_, ps_cuda_set_stream(ctx_, stream), "ps_cuda_set_stream"); }
#endif

 private:
  session(ps_context *ctx, bool owned) : ctx_(ctx), owned_(owned) {}
  void create(const ps_context_options &opts) {
    char err[512] = "";
    ps_status st = ps_context_create(&opts, err, sizeof err, &ctx_);
    if (st != PS_OK) detail::fail(st, "ps_context_create", err);
  }
  void release() noexcept {
    bitmaps_.reset(); /* its buffers go before the context */
    columns_.reset();
    if (ctx_ && owned_) ps_context_destroy(ctx_);
    ctx_ = nullptr;
  }
  ps_context *ctx_ = nullptr;
  bool owned_ = true;

 public:
  /* Internal: the columns that live selections of this session read, and
   * (CUDA) device bitmaps of past selections kept for the next ones. */
  std::shared_ptr<detail::column_cache> columns_;
  std::shared_ptr<detail::bitmap_pool> bitmaps_;
};

namespace detail {
inline session *&current_slot() {
  static thread_local session *current = nullptr;
  return current;
}
}  // namespace detail

/** Makes s the session of the contract's signatures (those without a session
 *  argument) on this thread until the scope ends; scopes nest. */
class session_scope {
 public:
  explicit session_scope(session &s) : previous_(detail::current_slot()) { detail::current_slot() = &s; }
  ~session_scope() { detail::current_slot() = previous_; }
  session_scope(const session_scope &) = delete;
  session_scope &operator=(const session_scope &) = delete;

 private:
  session *previous_;
};

/** The innermost session_scope's session on this thread; throws when none is
 *  open (a hidden default context would pick a device behind the caller's back). */
inline session &current_session() {
  session *s = detail::current_slot();
  if (!s)
    detail::fail(PS_ERR_INVALID_ARGUMENT, "current_session",
                 "no packscan::session_scope is open on this thread (open one, or pass the session first)");
  return *s;
}

/* ---- column descriptions ------------------------------------------------------ */

/** Meta information of a frame-of-reference compressed column (the contract's
 *  FORInfo; docs/design.md gives the format). Value of row i: M + code[i]
 *  (integers), (M + code[i]) / 10^scale (floats); code i is stream bits
 *  [i*bits, (i+1)*bits), least significant first. At bits = 8, 16, 32, 64 the
 *  stream is a plain little-endian array of codes — the contract's "bytes per
 *  record" format, e.g. values 100..4000 stored as unsigned short X - 100,
 *  four to a 64-bit word: FORInfo::bytes_per_record(PS_TYPE_INT64, n, 2, 100). */
struct FORInfo {
  ps_type type = PS_TYPE_INT64;           /* logical type: integers, float32, float64 */
  std::uint64_t n = 0;                    /* total number of records */
  std::uint32_t bits = 0;                 /* bits per record, 0..64 (the contract's bpr * 8) */
  ps_reference M = {0};                   /* minimum M: M.i for signed and float types, M.u for unsigned */
  std::uint32_t scale = 0;                /* floats: decimal scale 0..18; integers 0 */
  const std::uint8_t *validity = nullptr; /* optional Arrow validity bitmap (1 = valid), ceil(n/8) bytes */
  ps_memory memory = PS_MEMORY_HOST;      /* where cdata and validity are (device: CUDA sessions) */

  FORInfo() = default;
  /** M as a signed number; for an unsigned type it must not be negative
   *  (set M.u directly for references above INT64_MAX). */
  FORInfo(ps_type type_, std::uint64_t n_, std::uint32_t bits_, std::int64_t M_, std::uint32_t scale_ = 0,
          const std::uint8_t *validity_ = nullptr)
      : type(type_), n(n_), bits(bits_), scale(scale_), validity(validity_) {
    bool is_unsigned = type_ >= PS_TYPE_UINT8 && type_ <= PS_TYPE_UINT64;
    if (is_unsigned && M_ < 0)
      detail::fail(PS_ERR_INVALID_ARGUMENT, "FORInfo",
                   "M = " + std::to_string(M_) + " is negative for unsigned type " +
                       (ps_type_name(type_) ? ps_type_name(type_) : "?"));
    if (is_unsigned)
      M.u = static_cast<std::uint64_t>(M_);
    else
      M.i = M_;
  }
  /** The description of an encoded or hand-built C column (its data pointer is
   *  not kept: cdata is passed to filterLiteral / compareColumns). */
  explicit FORInfo(const ps_for_desc &d)
      : type(d.type), n(d.n), bits(d.width), M(d.reference), scale(d.scale), validity(d.validity) {}
  /** The contract's byte-aligned columns: bpr bytes per record (1, 2, 4, 8). */
  static FORInfo bytes_per_record(ps_type type, std::uint64_t n, std::uint32_t bpr, std::int64_t M) {
    if (bpr != 1 && bpr != 2 && bpr != 4 && bpr != 8)
      detail::fail(PS_ERR_INVALID_ARGUMENT, "FORInfo::bytes_per_record",
                   "bpr = " + std::to_string(bpr) + " (expected 1, 2, 4 or 8)");
    return FORInfo(type, n, 8 * bpr, M);
  }

  /** Bytes of the packed stream: ceil(n * bits / 8), without overflow. */
  std::uint64_t data_size() const { return n / 8 * bits + (n % 8 * bits + 7) / 8; }
  /** The C description over cdata. */
  ps_for_desc desc(const void *cdata) const {
    ps_for_desc d;
    ps_for_desc_init(&d);
    d.type = type;
    d.n = n;
    d.width = bits;
    d.scale = scale;
    d.reference = M;
    d.data = cdata;
    d.data_size = data_size();
    d.validity = validity;
    d.validity_size = validity ? (n + 7) / 8 : 0;
    return d;
  }
};

/** Meta information of a dictionary-compressed string column (the contract's
 *  DICTInfo): the dictionary (host memory, Arrow utf8 layout, copied by the
 *  library) and the FOR description of the compressed index list (unsigned
 *  type), whose packed stream is the cdata argument. */
struct DICTInfo {
  ps_dict_desc dict;
  FORInfo codes;

  DICTInfo(const ps_dict_desc &dict_, const FORInfo &codes_) : dict(dict_), codes(codes_) {}
  /** count strings at offsets[0..count] (32-bit) into bytes; sorted: the
   *  caller asserts strictly ascending byte order (checked). */
  DICTInfo(std::uint64_t count, const std::int32_t *offsets, const std::uint8_t *bytes, bool sorted,
           const FORInfo &codes_)
      : codes(codes_) {
    ps_dict_desc_init(&dict);
    dict.count = count;
    dict.offsets32 = offsets;
    dict.bytes = bytes;
    dict.bytes_size = offsets && count ? static_cast<std::uint64_t>(offsets[count]) : 0;
    dict.sorted = sorted;
  }
};

/* ---- predicates ------------------------------------------------------------ */

/* The comparison structs are also ordinary binary operators (host and device). */
#define PACKSCAN_CMP_(name, cmp, expr)                                    \
  struct name {                                                           \
    static constexpr ps_cmp op = cmp;                                     \
    template <class A, class B>                                           \
    PACKSCAN_HD constexpr bool operator()(const A &a, const B &b) const { \
      return expr;                                                        \
    }                                                                     \
  };
PACKSCAN_CMP_(equal_to, PS_EQ, a == b)
PACKSCAN_CMP_(not_equal_to, PS_NE, a != b)
PACKSCAN_CMP_(less, PS_LT, a < b)
PACKSCAN_CMP_(less_equal, PS_LE, a <= b)
PACKSCAN_CMP_(greater, PS_GT, a > b)
PACKSCAN_CMP_(greater_equal, PS_GE, a >= b)
#undef PACKSCAN_CMP_

/** SQL LIKE on strings ('%' any sequence, '_' one UTF-8 character); the
 *  literal is the pattern. escape: -1 none, else the escape byte (0..127). */
struct like {
  int escape = -1;
};
/** SQL NOT LIKE (NULL rows stay unselected). */
struct not_like {
  int escape = -1;
};

/** An exact decimal literal, unscaled / 10^scale, compared exactly as SQL
 *  compares `123.45` (docs/design.md, "Numeric literals"): decimal{12345, 2}
 *  is 123.45; the unscaled value is a two's complement 128-bit number (hi:lo). */
struct decimal {
  std::uint64_t lo = 0;
  std::int64_t hi = 0;
  std::uint32_t scale = 0;
  decimal() = default;
  decimal(std::int64_t unscaled, std::uint32_t s)
      : lo(static_cast<std::uint64_t>(unscaled)), hi(unscaled < 0 ? -1 : 0), scale(s) {}
  decimal(std::uint64_t lo_, std::int64_t hi_, std::uint32_t s) : lo(lo_), hi(hi_), scale(s) {}
};

namespace detail {
template <class P, class = void>
struct is_comparison : std::false_type {};
template <class P>
struct is_comparison<P, std::void_t<decltype(P::op)>> : std::is_same<std::remove_cv_t<decltype(P::op)>, ps_cmp> {};
template <class P>
constexpr bool is_like_v = std::is_same_v<P, like> || std::is_same_v<P, not_like>;

template <class T>
ps_literal literal(const T &v) {
  if constexpr (std::is_same_v<T, bool>) {
    static_assert(!std::is_same_v<T, bool>, "packscan: a bool literal has no column type to compare with");
    return ps_literal{};
  } else if constexpr (std::is_same_v<T, decimal>) {
    return ps_lit_decimal128(v.lo, v.hi, v.scale);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return ps_lit_int(static_cast<std::int64_t>(v));
  } else if constexpr (std::is_integral_v<T>) {
    return ps_lit_uint(static_cast<std::uint64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    static_assert(sizeof(T) <= sizeof(double), "packscan: long double literals are not supported");
    return ps_lit_float(static_cast<double>(v));
  } else {
    static_assert(std::is_convertible_v<const T &, std::string_view>,
                  "packscan: literals are integers, floating point numbers, packscan::decimal or strings");
    std::string_view s(v);
    return ps_lit_str(s.data(), s.size());
  }
}

struct expr_deleter {
  void operator()(ps_expr *e) const noexcept { ps_expr_destroy(e); }
};
struct column_deleter {
  void operator()(ps_column *c) const noexcept { ps_column_destroy(c); }
};
struct buffer_deleter {
  void operator()(ps_buffer *b) const noexcept { ps_buffer_destroy(b); }
};
using expr_ptr = std::unique_ptr<ps_expr, expr_deleter>;
using column_ptr = std::unique_ptr<ps_column, column_deleter>;
using buffer_ptr = std::unique_ptr<ps_buffer, buffer_deleter>;

/* A library column and the buffers wrapping the caller's device memory
 * under it (declared first: destroyed after the column that reads them). */
struct column_holder {
  std::vector<buffer_ptr> buffers;
  column_ptr column;
};

/* What a column is made from. Leaves over the same cdata and description
 * share one library column while a selection holds it: one copy of host data,
 * and one column of the C library's limit on distinct columns per tree. */
struct column_key {
  const void *cdata;
  FORInfo x;
  bool is_dict;
  ps_dict_desc dict;
  bool operator==(const column_key &o) const {
    return cdata == o.cdata && x.type == o.x.type && x.n == o.x.n && x.bits == o.x.bits && x.M.u == o.x.M.u &&
           x.scale == o.x.scale && x.validity == o.x.validity && x.memory == o.x.memory && is_dict == o.is_dict &&
           (!is_dict || (dict.count == o.dict.count && dict.offsets32 == o.dict.offsets32 &&
                         dict.offsets64 == o.dict.offsets64 && dict.bytes == o.dict.bytes &&
                         dict.bytes_size == o.dict.bytes_size && (dict.sorted != 0) == (o.dict.sorted != 0)));
  }
};

struct column_cache {
  std::vector<std::pair<column_key, std::weak_ptr<column_holder>>> entries;
};

/* What an expression tree needs alive: its columns. */
struct resources {
  std::vector<std::shared_ptr<column_holder>> columns;
  void merge(resources &&o) {
    for (auto &c : o.columns) columns.push_back(std::move(c));
    o.columns.clear();
  }
};

/** Reads bit i of an Arrow bitmap (LSB first): the iterator's functor. */
struct bit_reader {
  const std::uint8_t *bits;
  PACKSCAN_HD bool operator()(std::int64_t i) const { return (bits[i >> 3] >> (i & 7)) & 1u; }
};

#if PACKSCAN_THRUST_CUDA
/* The stream of a CUDA execution policy (thrust::cuda::par.on(s): s); absent
 * for host policies. */
template <class P, class = void>
struct policy_stream {
  static constexpr bool cuda = false;
  static cudaStream_t get(const P &) { return nullptr; }
};
template <class P>
struct policy_stream<P, std::void_t<decltype(thrust::cuda_cub::stream(std::declval<P &>()))>> {
  static constexpr bool cuda = true;
  static cudaStream_t get(const P &p) { return thrust::cuda_cub::stream(const_cast<P &>(p)); }
};

/* Device bitmaps of a session's destroyed selections, kept for its next
 * ones: a cudaMalloc and a cudaFree per query would cost more than reading
 * the bitmap. At most four are kept. */
struct bitmap_pool {
  std::vector<ps_buffer *> free;
  bitmap_pool() = default;
  bitmap_pool(const bitmap_pool &) = delete;
  bitmap_pool &operator=(const bitmap_pool &) = delete;
  ~bitmap_pool() {
    for (ps_buffer *b : free) ps_buffer_destroy(b);
  }
  /* A kept buffer of at least bytes (and not much more), or NULL. */
  ps_buffer *take(std::uint64_t bytes) {
    for (std::size_t i = 0; i < free.size(); i++) {
      std::uint64_t size = ps_buffer_size(free[i]);
      if (size >= bytes && size <= 2 * bytes + 256) {
        ps_buffer *b = free[i];
        free.erase(free.begin() + static_cast<std::ptrdiff_t>(i));
        return b;
      }
    }
    return nullptr;
  }
  void give(ps_buffer *b) {
    free.push_back(b);
    if (free.size() > 4) {
      ps_buffer_destroy(free.front());
      free.erase(free.begin());
    }
  }
};

/* Returns a selection's device bitmap to its session's pool once the work
 * that may read it is done (a later selection may write it on another
 * stream), as cudaFree would wait; destroys it when the session is gone. */
struct pooled_deleter {
  std::weak_ptr<bitmap_pool> pool;
  cudaStream_t stream = nullptr;
  bool on_stream = false;
  void operator()(ps_buffer *b) const noexcept {
    std::shared_ptr<bitmap_pool> p = pool.lock();
    if (!p) {
      ps_buffer_destroy(b);
      return;
    }
    if (on_stream)
      (void)cudaStreamSynchronize(stream);
    else
      (void)cudaDeviceSynchronize();
    p->give(b);
  }
};
using bitmap_ptr = std::unique_ptr<ps_buffer, pooled_deleter>;
#else
using bitmap_ptr = buffer_ptr;
#endif
}  // namespace detail

/* ---- selections ------------------------------------------------------------- */

/** A lazily evaluated sequence of bool, one per row: TRUE where the whole
 *  predicate is TRUE (SQL three-valued logic; NULL and FALSE rows read false).
 *  Owns its expression tree, the columns it built and, once read, the bitmap.
 *  Movable, not copyable. */
class selection {
 public:
  using iterator = thrust::transform_iterator<detail::bit_reader, thrust::counting_iterator<std::int64_t>, bool>;

  /* A moved-from selection throws when read (its tree is gone). */
  selection(selection &&o) noexcept
      : res_(std::move(o.res_)),
        expr_(std::move(o.expr_)),
        pool_(std::move(o.pool_)),
        host_bits_(std::move(o.host_bits_)),
        device_bits_(std::move(o.device_bits_)),
#if PACKSCAN_THRUST_CUDA
        cuda_bits_(std::move(o.cuda_bits_)),
#endif
        ctx_(o.ctx_),
        rows_(o.rows_),
        bits_(std::exchange(o.bits_, nullptr)),
        count_(o.count_),
        count_known_(o.count_known_),
        device_(o.device_) {
  }
  /* Not defaulted: the old tree must go before the columns it reads. */
  selection &operator=(selection &&o) noexcept {
    if (this != &o) {
      device_bits_.reset();
      expr_.reset();
      res_ = std::move(o.res_);
      expr_ = std::move(o.expr_);
      pool_ = std::move(o.pool_);
      host_bits_ = std::move(o.host_bits_);
      device_bits_ = std::move(o.device_bits_);
#if PACKSCAN_THRUST_CUDA
      cuda_bits_ = std::move(o.cuda_bits_);
#endif
      ctx_ = o.ctx_;
      rows_ = o.rows_;
      bits_ = std::exchange(o.bits_, nullptr);
      count_ = o.count_;
      count_known_ = o.count_known_;
      device_ = o.device_;
    }
    return *this;
  }
  selection(const selection &) = delete;
  selection &operator=(const selection &) = delete;

  /** Rows. */
  std::uint64_t size() const { return rows_; }
  /** Evaluates (once; waits for it) and returns the first row's iterator. */
  iterator begin() {
    evaluate(false, {});
    return at(0);
  }
  iterator end() {
    evaluate(false, {});
    return at(rows_);
  }
  /** As begin() / end(), evaluated on a CUDA policy's stream without waiting
   *  (host policies: as begin()). */
  template <class Policy>
  iterator begin(const Policy &policy) {
    evaluate_for(policy);
    return at(0);
  }
  template <class Policy>
  iterator end(const Policy &policy) {
    evaluate_for(policy);
    return at(rows_);
  }
  /** The selection bitmap (Arrow layout, ceil(n/8) bytes, in memory()). */
  const std::uint8_t *bitmap() {
    evaluate(false, {});
    return bits_;
  }
  /** Where the bitmap is (evaluates first). */
  ps_memory memory() {
    evaluate(false, {});
    return device_ ? PS_MEMORY_DEVICE : PS_MEMORY_HOST;
  }
  /** Selected rows, as the C library counted them. */
  std::uint64_t count() {
    evaluate(false, {});
    if (!count_known_) {
      detail::check(ctx_, ps_filter_count(ctx_, expr_.get(), &count_), "ps_filter_count");
      count_known_ = true;
    }
    return count_;
  }
  /** The expression tree (still owned by the selection), for C calls such as
   *  ps_filter_row_ids_device on the same predicate. */
  const ps_expr *expr() const { return expr_.get(); }
  ps_context *context() const { return ctx_; }

  /* Internal: adopt a built expression and its resources. */
  selection(ps_context *ctx, ps_expr *expr, detail::resources &&res, std::weak_ptr<detail::bitmap_pool> pool)
      : res_(std::move(res)), expr_(expr), pool_(std::move(pool)), ctx_(ctx), rows_(ps_expr_rows(expr)) {}

 private:
  friend selection AND(selection, selection);
  friend selection OR(selection, selection);
  friend selection NOT(selection);

  iterator at(std::uint64_t i) const {
    return iterator(thrust::counting_iterator<std::int64_t>(static_cast<std::int64_t>(i)), detail::bit_reader{bits_});
  }

  template <class Policy>
  void evaluate_for(const Policy &policy) {
#if PACKSCAN_THRUST_CUDA
    if constexpr (detail::policy_stream<Policy>::cuda) {
      evaluate(true, detail::policy_stream<Policy>::get(policy));
      return;
    }
#endif
    (void)policy;
    evaluate(false, {});
  }

  struct no_stream {};
#if PACKSCAN_THRUST_CUDA
  using stream_t = cudaStream_t;
#else
  using stream_t = no_stream;
#endif

  void evaluate(bool on_stream, stream_t stream) {
    (void)on_stream;
    (void)stream;
    if (bits_) return;
#if PACKSCAN_THRUST_CUDA
    if (std::string_view(ps_context_backend(ctx_)) == "cuda") {
      /* Whole 32-bit words: the C call writes the bitmap word by word. */
      std::uint64_t bytes = rows_ ? ((rows_ + 31) / 32) * 4 : 4;
      std::shared_ptr<detail::bitmap_pool> pool = pool_.lock();
      ps_buffer *buf = pool ? pool->take(bytes) : nullptr;
      if (!buf) detail::check(ctx_, ps_buffer_create(ctx_, bytes, &buf), "ps_buffer_create");
      detail::bitmap_ptr owned(buf, detail::pooled_deleter{pool_, stream, on_stream});
      ps_status st;
      if (on_stream) {
        cudaStream_t previous = nullptr;
        detail::check(ctx_, ps_cuda_get_stream(ctx_, &previous), "ps_cuda_get_stream");
        detail::check(ctx_, ps_cuda_set_stream(ctx_, stream), "ps_cuda_set_stream");
        st = ps_filter_device(ctx_, expr_.get(), buf, 0, nullptr);
        ps_status restored = ps_cuda_set_stream(ctx_, previous);
        detail::check(ctx_, st, "ps_filter_device");
        detail::check(ctx_, restored, "ps_cuda_set_stream");
      } else {
        st = ps_filter_device(ctx_, expr_.get(), buf, 0, &count_);
        detail::check(ctx_, st, "ps_filter_device");
        count_known_ = true;
      }
      void *p = nullptr;
      detail::check(ctx_, ps_buffer_cuda_ptr(buf, &p), "ps_buffer_cuda_ptr");
      device_bits_ = std::move(owned);
      device_ = true;
      bits_ = static_cast<const std::uint8_t *>(p);
      return;
    }
#endif
    std::vector<std::uint8_t> host((rows_ + 7) / 8 ? (rows_ + 7) / 8 : 1, 0);
    detail::check(ctx_, ps_filter(ctx_, expr_.get(), host.data(), host.size(), &count_), "ps_filter");
    count_known_ = true;
#if PACKSCAN_THRUST_CUDA
    /* Built for Thrust's CUDA system, the iterator is read on the GPU whatever
     * the backend: a host backend's bitmap is copied there. */
    void *p = nullptr;
    if (cudaMalloc(&p, host.size()) != cudaSuccess)
      detail::fail(PS_ERR_DEVICE_OUT_OF_MEMORY, "cudaMalloc", std::to_string(host.size()) + " bytes for the bitmap");
    cuda_bits_.reset(p);
    if (cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice) != cudaSuccess)
      detail::fail(PS_ERR_DEVICE, "cudaMemcpy", "copying the bitmap to the device");
    device_ = true;
    bits_ = static_cast<const std::uint8_t *>(p);
#else
    host_bits_ = std::move(host);
    bits_ = host_bits_.data();
#endif
  }

  /* Destruction runs bottom-up: the bitmap, the tree, then its columns. */
  detail::resources res_;
  detail::expr_ptr expr_;
  std::weak_ptr<detail::bitmap_pool> pool_;
  std::vector<std::uint8_t> host_bits_;
  detail::bitmap_ptr device_bits_;
#if PACKSCAN_THRUST_CUDA
  struct cuda_deleter {
    void operator()(void *p) const noexcept { cudaFree(p); }
  };
  std::unique_ptr<void, cuda_deleter> cuda_bits_;
#endif
  ps_context *ctx_ = nullptr;
  std::uint64_t rows_ = 0;
  const std::uint8_t *bits_ = nullptr;
  std::uint64_t count_ = 0;
  bool count_known_ = false;
  bool device_ = false;
};

/* ---- building leaves ----------------------------------------------------------- */

namespace detail {
/* A new column over cdata in ctx. */
inline std::shared_ptr<column_holder> create_column(ps_context *ctx, const void *cdata, const FORInfo &x,
                                                    const ps_dict_desc *dict) {
  auto holder = std::make_shared<column_holder>();
  ps_for_desc d = x.desc(cdata);
  ps_column *col = nullptr;
  if (x.memory == PS_MEMORY_HOST) {
    if (dict)
      check(ctx, ps_column_create_dict(ctx, dict, &d, &col), "ps_column_create_dict");
    else
      check(ctx, ps_column_create_for(ctx, &d, &col), "ps_column_create_for");
  } else if (x.memory == PS_MEMORY_DEVICE) {
#if PACKSCAN_THRUST_CUDA
    /* The caller's device memory, wrapped in place (no copy). */
    ps_buffer *data = nullptr, *validity = nullptr;
    if (d.data_size)
      check(ctx, ps_buffer_wrap_cuda(ctx, const_cast<void *>(cdata), d.data_size, &data), "ps_buffer_wrap_cuda");
    else
      check(ctx, ps_buffer_create(ctx, 4, &data), "ps_buffer_create");
    holder->buffers.emplace_back(data);
    if (x.validity) {
      check(ctx, ps_buffer_wrap_cuda(ctx, const_cast<std::uint8_t *>(x.validity), d.validity_size, &validity),
            "ps_buffer_wrap_cuda");
      holder->buffers.emplace_back(validity);
    }
    if (dict)
      check(ctx, ps_column_create_dict_device(ctx, dict, &d, data, 0, validity, 0, &col),
            "ps_column_create_dict_device");
    else
      check(ctx, ps_column_create_for_device(ctx, &d, data, 0, validity, 0, &col), "ps_column_create_for_device");
#else
    fail(PS_ERR_UNSUPPORTED, "FORInfo",
         "memory = PS_MEMORY_DEVICE needs the CUDA interop (compile with nvcc and Thrust's CUDA device system)");
#endif
  } else {
    fail(PS_ERR_INVALID_ARGUMENT, "FORInfo",
         "memory = " + std::to_string(static_cast<int>(x.memory)) + " (expected PS_MEMORY_HOST or PS_MEMORY_DEVICE)");
  }
  holder->column.reset(col);
  return holder;
}
/* The session's column over cdata (shared, see column_key), recorded in res. */
inline ps_column *make_for_column(session &s, const void *cdata, const FORInfo &x, const ps_dict_desc *dict,
                                  resources &res) {
  if (!s.columns_) s.columns_ = std::make_shared<column_cache>();
  auto &entries = s.columns_->entries;
  column_key key{cdata, x, dict != nullptr, dict ? *dict : ps_dict_desc{}};
  std::shared_ptr<column_holder> holder;
  for (std::size_t i = 0; i < entries.size();) {
    if (entries[i].second.expired()) {
      entries[i] = std::move(entries.back());
      entries.pop_back();
      continue;
    }
    if (!holder && entries[i].first == key) holder = entries[i].second.lock();
    i++;
  }
  if (!holder) {
    holder = create_column(s.get(), cdata, x, dict);
    entries.emplace_back(key, holder);
  }
  res.columns.push_back(holder);
  return holder->column.get();
}
inline ps_column *make_column(session &s, const void *cdata, const FORInfo &x, resources &res) {
  return make_for_column(s, cdata, x, nullptr, res);
}
inline ps_column *make_column(session &s, const void *cdata, const DICTInfo &x, resources &res) {
  return make_for_column(s, cdata, x.codes, &x.dict, res);
}
inline selection adopt(session &s, ps_status st, ps_expr *e, resources &&res, const char *call) {
  check(s.get(), st, call);
#if PACKSCAN_THRUST_CUDA
  if (!s.bitmaps_) s.bitmaps_ = std::make_shared<bitmap_pool>();
#endif
  return selection(s.get(), e, std::move(res), s.bitmaps_);
}
}  // namespace detail

/** cdata[i] pred literal, for each row of a FOR column (the contract's
 *  filterLiteral). Integers compare exactly across types; floats as IEEE
 *  doubles; NULL rows are UNKNOWN. */
template <class T, class Predicate>
selection filterLiteral(session &s, const void *cdata, T literal, const FORInfo &x, Predicate) {
  static_assert(detail::is_comparison<Predicate>::value,
                "packscan: FOR columns take equal_to, not_equal_to, less, less_equal, greater or greater_equal");
  ps_context *ctx = s.get();
  detail::resources res;
  ps_column *col = detail::make_column(s, cdata, x, res);
  ps_expr *e = nullptr;
  ps_status st = ps_expr_compare(ctx, col, Predicate::op, detail::literal(literal), &e);
  return detail::adopt(s, st, e, std::move(res), "ps_expr_compare");
}

/** cdata[i] pred literal on a dictionary column: a comparison (bytewise
 *  order) against a string, or like / not_like with the literal as pattern. */
template <class T, class Predicate>
selection filterLiteral(session &s, const void *cdata, T literal, const DICTInfo &x, Predicate pred) {
  static_assert(detail::is_comparison<Predicate>::value || detail::is_like_v<Predicate>,
                "packscan: dictionary columns take a comparison, like or not_like");
  ps_context *ctx = s.get();
  detail::resources res;
  ps_column *col = detail::make_column(s, cdata, x, res);
  ps_expr *e = nullptr;
  ps_literal lit = detail::literal(literal);
  if constexpr (detail::is_like_v<Predicate>) {
    if (lit.kind != PS_LIT_STRING)
      detail::fail(PS_ERR_TYPE_MISMATCH, "filterLiteral", "like / not_like need a string pattern");
    ps_status st =
        ps_expr_like(ctx, col, lit.v.s.ptr, lit.v.s.len, pred.escape, std::is_same_v<Predicate, not_like> ? 1 : 0, &e);
    return detail::adopt(s, st, e, std::move(res), "ps_expr_like");
  } else {
    (void)pred;
    ps_status st = ps_expr_compare(ctx, col, Predicate::op, lit, &e);
    return detail::adopt(s, st, e, std::move(res), "ps_expr_compare");
  }
}

/** cdataA[i] pred cdataB[i] (the contract's compareColumns): Info is FORInfo
 *  (any numeric types, widths and references) or DICTInfo (same or different
 *  dictionaries, bytewise order). Both columns must have the same rows. */
template <class Info, class Predicate>
selection compareColumns(session &s, const void *cdataA, const void *cdataB, const Info &aInfo, const Info &bInfo,
                         Predicate) {
  static_assert(std::is_same_v<Info, FORInfo> || std::is_same_v<Info, DICTInfo>,
                "packscan: compareColumns takes two FORInfo or two DICTInfo");
  static_assert(detail::is_comparison<Predicate>::value, "packscan: compareColumns takes a comparison predicate");
  ps_context *ctx = s.get();
  detail::resources res;
  ps_column *a = detail::make_column(s, cdataA, aInfo, res);
  ps_column *b = detail::make_column(s, cdataB, bInfo, res);
  ps_expr *e = nullptr;
  ps_status st = ps_expr_compare_columns(ctx, a, Predicate::op, b, &e);
  return detail::adopt(s, st, e, std::move(res), "ps_expr_compare_columns");
}

/** cdata[i] IS NULL / IS NOT NULL (never UNKNOWN). */
template <class Info>
selection isNull(session &s, const void *cdata, const Info &x, bool negate = false) {
  ps_context *ctx = s.get();
  detail::resources res;
  ps_column *col = detail::make_column(s, cdata, x, res);
  ps_expr *e = nullptr;
  ps_status st = ps_expr_is_null(ctx, col, negate ? 1 : 0, &e);
  return detail::adopt(s, st, e, std::move(res), "ps_expr_is_null");
}

/* The contract's signatures, on the current session (session_scope). */
template <class T, class Info, class Predicate>
selection filterLiteral(const void *cdata, T literal, const Info &x, Predicate pred) {
  return filterLiteral(current_session(), cdata, std::move(literal), x, pred);
}
template <class Info, class Predicate>
selection compareColumns(const void *cdataA, const void *cdataB, const Info &aInfo, const Info &bInfo, Predicate pred) {
  return compareColumns(current_session(), cdataA, cdataB, aInfo, bInfo, pred);
}
template <class Info>
selection isNull(const void *cdata, const Info &x, bool negate = false) {
  return isNull(current_session(), cdata, x, negate);
}

/* ---- combining: one tree, no evaluation -------------------------------------------- */

namespace detail {
inline void same_context(const selection &a, const selection &b, const char *what) {
  if (a.context() != b.context()) fail(PS_ERR_INVALID_ARGUMENT, what, "operands belong to different sessions");
}
}  // namespace detail

/** A[i] AND B[i] (Kleene). Consumes both operands. */
inline selection AND(selection A, selection B) {
  detail::same_context(A, B, "AND");
  ps_expr *e = nullptr;
  detail::check(A.ctx_, ps_expr_and(A.ctx_, A.expr_.get(), B.expr_.get(), &e), "ps_expr_and");
  A.expr_.release();
  B.expr_.release();
  A.res_.merge(std::move(B.res_));
  return selection(A.ctx_, e, std::move(A.res_), A.pool_);
}
/** A[i] OR B[i] (Kleene). Consumes both operands. */
inline selection OR(selection A, selection B) {
  detail::same_context(A, B, "OR");
  ps_expr *e = nullptr;
  detail::check(A.ctx_, ps_expr_or(A.ctx_, A.expr_.get(), B.expr_.get(), &e), "ps_expr_or");
  A.expr_.release();
  B.expr_.release();
  A.res_.merge(std::move(B.res_));
  return selection(A.ctx_, e, std::move(A.res_), A.pool_);
}
/** NOT A[i] (NOT UNKNOWN stays UNKNOWN: unselected). Consumes its operand. */
inline selection NOT(selection A) {
  ps_expr *e = nullptr;
  detail::check(A.ctx_, ps_expr_not(A.ctx_, A.expr_.get(), &e), "ps_expr_not");
  A.expr_.release();
  return selection(A.ctx_, e, std::move(A.res_), A.pool_);
}

}  // namespace packscan

#undef PACKSCAN_HD

#endif /* PACKSCAN_THRUST_HPP */
