#!/usr/bin/env bash
# Builds the libFuzzer targets (tools/fuzz/: the table reader, the expression
# parser/binder, the SELECT parser, the public API's descriptors and expression
# building) with
# clang, -fsanitize=fuzzer,address,undefined, in their own build directory,
# and runs each one starting from its seed corpus in the repository
# (tools/fuzz/corpus_<target>). Prints a table of executions, coverage
# (libFuzzer's edge count "cov" and feature count "ft") and corpus size per
# target. Exits nonzero when a target finds a crash, a leak or a timeout; the
# reproducer is left in the work directory (printed at the end).
#   ci/fuzz.sh                  each target for FUZZ_SECONDS (default 30), one after another
#   ci/fuzz.sh --long SECONDS   each target for SECONDS, all at once (one core each), at
#                               nice 19; the work corpora are kept between runs
#   FUZZ_RUNS       with --long: also stop a target after this many executions
#   FUZZ_FORK       with --long: run each target as libFuzzer's fork mode with
#                   this many worker processes (one core each; executions and
#                   coverage are the whole run's)
#   FUZZ_BUILD_DIR  build directory (default build-fuzz)
#   FUZZ_TARGETS    targets to run (default "table expr select api merge")
#   CC_FUZZ         clang to use (default clang)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${FUZZ_BUILD_DIR:-build-fuzz}
secs=${FUZZ_SECONDS:-30}
long=0
if [ "${1:-}" = --long ]; then
  [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "usage: ci/fuzz.sh [--long SECONDS]" >&2; exit 2; }
  long=1 secs=$2
fi
[[ -z ${FUZZ_RUNS:-} || ${FUZZ_RUNS} =~ ^[0-9]+$ ]] || { echo "ci/fuzz.sh: FUZZ_RUNS must be a number" >&2; exit 2; }
[[ -z ${FUZZ_FORK:-} || ${FUZZ_FORK} =~ ^[1-9][0-9]*$ ]] || { echo "ci/fuzz.sh: FUZZ_FORK must be a positive number" >&2; exit 2; }
[[ -z ${FUZZ_FORK:-} || $long -eq 1 ]] || { echo "ci/fuzz.sh: FUZZ_FORK needs --long" >&2; exit 2; }
targets=${FUZZ_TARGETS:-table expr select api merge}
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
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" >/dev/null
fuzz_bins=()
for t in $targets; do fuzz_bins+=("fuzz_$t"); done
cmake --build "$build" -j"$(nproc)" --target "${fuzz_bins[@]}"

work="$build/fuzz-work"
mkdir -p "$work"
declare -A opts=(
  [table]="-max_len=16384"
  [expr]="-max_len=512 -dict=$root/tools/fuzz/expr.dict"
  [select]="-max_len=768 -dict=$root/tools/fuzz/select.dict"
  [api]="-max_len=4096"
  [merge]="-max_len=1024"
)

# run TARGET: one libFuzzer session over work/corpus_TARGET (seeded from the
# repository; the short mode starts from the seeds alone each time).
run() {
  local t=$1 corpus="$work/corpus_$1"
  [ "$long" -eq 1 ] || rm -rf "$corpus"
  mkdir -p "$corpus"
  cp -n "tools/fuzz/corpus_$t"/* "$corpus/"
  local t0=$SECONDS
  local runs=""
  [ -n "${FUZZ_RUNS:-}" ] && runs="-runs=$FUZZ_RUNS"
  [ -n "${FUZZ_FORK:-}" ] && runs="$runs -fork=$FUZZ_FORK"
  # The status is kept, not left to set -e: a target that stops at a finding
  # (or is interrupted) still gets its time written, for the table.
  local rc=0
  # shellcheck disable=SC2086  # opts holds several options; runs is one or none
  (cd "$work" && ${nice:-} "$build/tools/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 $runs ${opts[$t]} "$corpus") >"$work/$t.log" 2>&1 || rc=$?
  echo $((SECONDS - t0)) >"$work/$t.seconds" # the time it ran: less than asked when it stopped at a finding
  return $rc
}

status=0
pids=()
nice=""
[ "$long" -eq 1 ] && nice="nice -n 19"
# The long mode runs every target at once (at nice 19); the short mode as
# many at a time as there are CPUs.
at_once=$(nproc)
[ "$long" -eq 1 ] && at_once=0
for t in $targets; do
  echo "== fuzz_$t: ${secs}s (log $work/$t.log)"
  if [ "$at_once" -gt 0 ] && [ "${#pids[@]}" -ge "$at_once" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
  run "$t" &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait "$p" || status=1; done

# The table: libFuzzer's last "#N DONE/pulse cov: C ft: F corp: K/S" line and
# its final stats (executions, peak memory). In fork mode the workers' stats
# stay in their own logs; the parent's last "#N: cov: ..." line counts the
# whole run's executions.
printf '\n%-8s %8s %12s %9s %8s %8s %14s %s\n' target seconds executions execs/s cov ft corpus result
for t in $targets; do
  log="$work/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  [ -n "${FUZZ_FORK:-}" ] && execs=$(sed -n 's/^#\([0-9]*\): cov: .*/\1/p' "$log" | tail -n 1)
  line=$(grep -E '^#[0-9]+' "$log" | grep ' cov: ' | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$line")
  corp=$(sed -n 's/.* corp: \([0-9]*\(\/[0-9]*[a-zA-Z]*\)\{0,1\}\).*/\1/p' <<<"$line")
  result=ok
  # A slow unit (libFuzzer's note on an input over 10 s, which a loaded
  # machine produces) is not a failure; a crash, leak, timeout or OOM is.
  if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |deadly signal|written to \./(crash|leak|timeout|oom)-' "$log"; then
    result="FAILED: $(grep -oE '(crash|leak|timeout|oom)-[0-9a-f]+' "$log" | head -n 1)"
    status=1
    grep -E '^==[0-9]+==ERROR|^SUMMARY: ' "$log" | head -n 3
  fi
  ran=$(cat "$work/$t.seconds" 2>/dev/null || echo "$secs")
  printf '%-8s %8s %12s %9s %8s %8s %14s %s\n' "$t" "$ran" "${execs:-?}" \
    "$([ -n "$execs" ] && echo $((execs / (ran > 0 ? ran : 1))) || echo ?)" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
[ "$status" -eq 0 ] || echo "ci/fuzz.sh: a target failed; reproducers and logs in $work" >&2
exit $status
