#!/usr/bin/env bash
# A short check on the GPU machine between full ci/gpu.sh runs (device time is
# scarce): build with CUDA (sm_90), the cuda tests matching QUICK_TESTS,
# compute-sanitizer over QUICK_MEMCHECK ("test" or "tool:test"), the benchmark cases QUICK_BENCH (also with each
# environment setting of QUICK_AB over QUICK_AB_CASES, for A/B comparisons), and ncu profiles
# (QUICK_NCU: entries "CASES:WIDTHS:KERNEL_REGEX", ';'-separated; WIDTHS may be
# empty) with the detailed sections. Logs and JSON go to $OUT; a table last.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
BUILD=${BUILD_DIR:-build-quick}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export PACKSCAN_REQUIRE_CUDA=1
QUICK_TESTS=${QUICK_TESTS:-'^(filter_ids|select|filter_edge|chunking|device_buffers|api|errors)\.cuda$|^cuda_'}
QUICK_MEMCHECK=${QUICK_MEMCHECK:-test_filter_ids}
QUICK_BENCH=${QUICK_BENCH:-lt,lt_count,ids_1pct,ids_50pct}
QUICK_AB=${QUICK_AB:-}
QUICK_AB_CASES=${QUICK_AB_CASES:-$QUICK_BENCH}
QUICK_NCU=${QUICK_NCU:-}
summary=()
note() { summary+=("$(printf '%-28s %s' "$1" "$2")"); echo "== $1: $2"; }

t0=$SECONDS
if cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPACKSCAN_WITH_CUDA=ON \
  -DPACKSCAN_WERROR=ON >"$OUT/configure.log" 2>&1 && cmake --build "$BUILD" -j16 >"$OUT/build.log" 2>&1; then
  note build "PASS $((SECONDS - t0))s"
else
  note build "FAIL $((SECONDS - t0))s"
  tail -n 40 "$OUT/build.log"
  printf '%s\n' "${summary[@]}"
  exit 1
fi

t0=$SECONDS
(cd "$BUILD" && timeout 240 ctest -R "$QUICK_TESTS" --output-on-failure -j12 --timeout 200) >"$OUT/ctest.log" 2>&1
rc=$?
note ctest "$([ $rc -eq 0 ] && echo PASS || echo "FAIL rc=$rc") $((SECONDS - t0))s $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -n 1)"
[ $rc -eq 0 ] || grep -E "Failed|FAIL" "$OUT/ctest.log" | head -n 20

# Entries "test" (memcheck) or "tool:test" (racecheck, synccheck, initcheck).
for spec in $QUICK_MEMCHECK; do
  tool=memcheck t=$spec
  [[ $spec == *:* ]] && tool=${spec%%:*} t=${spec#*:}
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  t0=$SECONDS
  (cd "$BUILD/tests" && timeout 120 compute-sanitizer --tool "$tool" "${extra[@]}" --report-api-errors no \
    --error-exitcode 86 "./$t" cuda) >"$OUT/$tool-$t.log" 2>&1
  rc=$?
  note "$tool $t" "rc=$rc ($([ $rc -eq 124 ] && echo 'stopped at 120s, partial' || tail -n 1 "$OUT/$tool-$t.log")) $((SECONDS - t0))s"
done

exe=$BUILD/bench/packscan_bench
t0=$SECONDS
timeout 200 "$exe" --backend cuda --cases "$QUICK_BENCH" --json "$OUT/bench.json" >"$OUT/bench.log" 2>&1
note bench "rc=$? $((SECONDS - t0))s"
i=0
for ab in $QUICK_AB; do
  i=$((i + 1))
  t0=$SECONDS
  env "$ab" timeout 120 "$exe" --backend cuda --cases "$QUICK_AB_CASES" --json "$OUT/bench-ab$i.json" >"$OUT/bench-ab$i.log" 2>&1
  note "bench $ab" "rc=$? $((SECONDS - t0))s"
done

IFS=';' read -r -a specs <<<"$QUICK_NCU"
for spec in "${specs[@]}"; do
  [ -n "$spec" ] || continue
  IFS=':' read -r cases widths kern <<<"$spec"
  t0=$SECONDS
  mkdir -p "$OUT/ncu"
  log="$OUT/ncu/${cases}-${widths:-all}-${kern//[^a-z_]/}.log"
  timeout 90 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section LaunchStats --section InstructionStats -k "regex:$kern" --launch-skip 1 --launch-count 1 \
    "$exe" --backend cuda --cases "$cases" ${widths:+--widths "$widths"} --reps 1 --sample 4096 >"$log" 2>&1
  note "ncu $cases ${widths} $kern" "rc=$? $((SECONDS - t0))s"
done

# The device tool brings back only 8 files: every log goes into one archive,
# the JSON stays beside it.
(cd "$OUT" && tar -czf logs.tar.gz --exclude=logs.tar.gz --exclude='*.json' . &&
  find . -mindepth 1 ! -name logs.tar.gz ! -name '*.json' -exec rm -rf {} +)
echo
echo "===== bench ====="
tar -xzOf "$OUT/logs.tar.gz" ./bench.log | grep -E "^(case|lt|ids|tree|colcol|like|between|nulls|small|copy|table|ssb|tpch|aggregate|gather|refine|mask|row_ids)" | cut -c1-150
for i in 1 2 3 4; do
  tar -xzOf "$OUT/logs.tar.gz" "./bench-ab$i.log" >/tmp/ab.log 2>/dev/null || continue
  echo "----- bench-ab$i.log"
  grep -E "^(lt|ids|tree|colcol|like|between|nulls|small)" /tmp/ab.log | cut -c1-150
done
echo
echo "===== summary ====="
printf '%s\n' "${summary[@]}"
