#!/usr/bin/env bash
# Builds the libFuzzer targets of the packscan command (the table reader and
# the WHERE-expression parser/binder) with clang, -fsanitize=fuzzer,address,
# undefined, in their own build directory, and runs each for FUZZ_SECONDS
# (default 30). Exits nonzero when a target finds a crash, a leak or a timeout;
# the reproducer is left in the work directory (printed at the end).
#   FUZZ_BUILD_DIR  build directory (default build-fuzz)
#   FUZZ_SECONDS    seconds per target (default 30)
#   CC_FUZZ         clang to use (default clang)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${FUZZ_BUILD_DIR:-build-fuzz}
secs=${FUZZ_SECONDS:-30}
cc=${CC_FUZZ:-clang}
mkdir -p "$build"
build=$(cd "$build" && pwd)
# clang and its runtime (libFuzzer, sanitizers) from Debian, when missing.
if ! command -v "$cc" >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-dev ||
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev
fi
command -v "$cc" >/dev/null || { echo "ci/fuzz.sh: $cc not found (apt-get install clang)" >&2; exit 1; }

# The library is instrumented for coverage too (fuzzer-no-link); only the
# targets link libFuzzer's main. OpenCL and CUDA are not needed here.
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPACKSCAN_FUZZ=ON -DPACKSCAN_WITH_OPENCL=OFF -DPACKSCAN_WITH_CUDA=OFF \
  -DPACKSCAN_BUILD_TESTS=OFF -DPACKSCAN_BUILD_BENCH=OFF -DPACKSCAN_WERROR=OFF \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake --build "$build" -j"$(nproc)" --target fuzz_table fuzz_expr fuzz_select packscan_cli

work="$build/fuzz-work"
mkdir -p "$work/corpus_table" "$work/corpus_expr" "$work/corpus_select"
cp tools/fuzz/corpus_expr/* "$work/corpus_expr/"
cp tools/fuzz/corpus_select/* "$work/corpus_select/"
# Seed tables: written by the tool itself, so the fuzzer starts from valid files.
printf 'id,price,day,name\n1,12.50,1994-01-01,apple\n2,,1995-06-30,\n3,-0.25,,"b,c"\n' >"$work/seed.csv"
ASAN_OPTIONS=detect_leaks=0 "$build/tools/packscan" encode -q "$work/seed.csv" "$work/corpus_table/seed1.pst"
printf 'x\n7\n7\n' >"$work/seed2.csv"
ASAN_OPTIONS=detect_leaks=0 "$build/tools/packscan" encode -q "$work/seed2.csv" "$work/corpus_table/seed2.pst"

status=0
run() {
  local name=$1
  shift
  echo "== $name: ${secs}s"
  if ! (cd "$work" && "$build/tools/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$@"); then
    echo "ci/fuzz.sh: $name failed; reproducer in $work (crash-*, leak-*, timeout-*)" >&2
    status=1
  fi
}
run fuzz_table -max_len=16384 corpus_table
run fuzz_expr -max_len=512 -dict="$root/tools/fuzz/expr.dict" corpus_expr
run fuzz_select -max_len=768 -dict="$root/tools/fuzz/select.dict" corpus_select
exit $status
