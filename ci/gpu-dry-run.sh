#!/usr/bin/env bash
# A dry run of `ci/gpu.sh sanitizers` on a machine without a GPU, to check the
# script's own logic: the list of cuda test programs, the parallel runner, the
# per-program times, the rerun after compute-sanitizer's internal error and
# the summary. It needs a CPU build (build/, default CPU_BUILD; a relative or
# absolute path) and nvcc (to configure a CUDA tree, which is never built).
#
# The fake CUDA tree ($DRY_BUILD, default build-gpu-dry) holds the CPU build's
# programs; a stub compute-sanitizer on PATH runs each program on
# $STUB_BACKEND (default reference) instead of cuda; a stub cmake skips the
# build; programs only a CUDA build has (test_cuda_arrow, the Thrust
# consumer's) are stubs that pass. The stub reports what it is told to:
# STUB_REPORT=<program suffix> a real error in that program (under
# STUB_REPORT_TOOL, default memcheck); STUB_INTERNAL=<program suffix> under
# racecheck, the tool's own "Internal Sanitizer Error" counted as 1 hazard
# (exit 86) on the first STUB_INTERNAL_TIMES (default 1) calls for it, counted
# in a file under $DRY_OUT, clean after that. Runs of the stage, memcheck and
# racecheck:
#   1. clean: each tool must note "N of N complete, 0 reports" (N: every
#      program ctest lists; the stub reads its input to the end, so a runner
#      that let a program read the program list would start fewer);
#   2. memcheck reports an error in test_corrupt: its step must fail with
#      "1 reports" and no rerun, racecheck's must still pass;
# and over three short programs (SAN_TESTS):
#   3. racecheck's internal error once in test_errors: the program is rerun,
#      racecheck passes with "M of M complete, 0 reports, 1 rerun ...", its
#      first attempt's log is in the archive; memcheck passes, no rerun;
#   4. the internal error on both calls: racecheck fails with "1 reports";
#   5. the internal error and a real race in one log (test_limits): no rerun,
#      racecheck fails with "2 reports".
# Exit status 0 when all hold. Logs under $DRY_OUT (default /tmp/gpu-dry-run).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
CPU_BUILD=${CPU_BUILD:-build}
DRY_BUILD=${DRY_BUILD:-build-gpu-dry}
DRY_OUT=${DRY_OUT:-/tmp/gpu-dry-run}
[ -x "$CPU_BUILD/tests/test_select" ] || { echo "no CPU build in $CPU_BUILD (ci/build.sh first)" >&2; exit 2; }
rm -rf "$DRY_OUT"
mkdir -p "$DRY_OUT/stub"

cmake -S . -B "$DRY_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPACKSCAN_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  >"$DRY_OUT/configure.log" 2>&1 || { echo "configuring $DRY_BUILD with CUDA failed (nvcc?)" >&2; exit 2; }
for d in tests tools bench; do
  for f in "$CPU_BUILD/$d"/*; do
    [[ $f == /* ]] || f=$PWD/$f
    [ -f "$f" ] && [ -x "$f" ] && ln -sf "$f" "$DRY_BUILD/$d/$(basename "$f")"
  done
done
mkdir -p "$DRY_BUILD/thrust_consumer/build"
for f in tests/test_cuda_arrow thrust_consumer/build/test_thrust_cuda thrust_consumer/build/thrust_quickstart; do
  printf '#!/bin/sh\necho "stub %s $*"\n' "$f" >"$DRY_BUILD/$f"
  chmod +x "$DRY_BUILD/$f"
done

cat >"$DRY_OUT/stub/compute-sanitizer" <<'EOF'
#!/usr/bin/env bash
tool=memcheck
while [[ ${1:-} == --* ]]; do
  [ "$1" = --tool ] && tool=$2
  shift 2
done
prog=$1
shift
# Read all input first, as a program that forwards its input would (script(1)
# in tools.stream): the runner must not hand it anything it still needs.
cat >/dev/null
args=()
for a in "$@"; do
  [ "$a" = cuda ] && a=${STUB_BACKEND:-reference}
  args+=("$a")
done
internal=0 report=0
if [[ -n ${STUB_INTERNAL:-} && $prog == *"$STUB_INTERNAL" && $tool == racecheck ]]; then
  count=$STUB_STATE/internal-$tool-$(basename "$prog")
  calls=$(($(cat "$count" 2>/dev/null || echo 0) + 1))
  echo "$calls" >"$count"
  [ "$calls" -le "${STUB_INTERNAL_TIMES:-1}" ] && internal=1
fi
[[ -n ${STUB_REPORT:-} && $prog == *"$STUB_REPORT" && $tool == "${STUB_REPORT_TOOL:-memcheck}" ]] && report=1
echo "stub compute-sanitizer --tool $tool: $prog ${args[*]} (PACKSCAN_TEST_QUICK=${PACKSCAN_TEST_QUICK:-})"
if [ "$internal" -eq 1 ]; then
  echo "========= COMPUTE-SANITIZER"
  echo "========= Internal Sanitizer Error: Detected a failure to track a kernel launch. Future records might be incomplete"
  echo "========="
fi
"$prog" "${args[@]}"
rc=$?
if [ "$report" -eq 1 ]; then
  if [ "$tool" = racecheck ]; then
    echo "========= Error: Race reported between Write access at k+0x10 in k.cu:1:k() and Read access at k+0x20 in k.cu:2:k() [4 hazards] (stub)"
  else
    echo "========= Invalid __global__ read of size 4 (stub)"
  fi
fi
n=$((internal + report))
if [ "$tool" = racecheck ]; then
  case $n in
    0) echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" ;;
    1) echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)" ;;
    *) echo "========= RACECHECK SUMMARY: $n hazards displayed ($n errors, 0 warnings)" ;;
  esac
else
  case $n in
    0) echo "========= ERROR SUMMARY: 0 errors" ;;
    1) echo "========= ERROR SUMMARY: 1 error" ;;
    *) echo "========= ERROR SUMMARY: $n errors" ;;
  esac
fi
[ "$n" -gt 0 ] && exit 86
exit "$rc"
EOF
cat >"$DRY_OUT/stub/cmake" <<'EOF'
#!/usr/bin/env bash
[ "${1:-}" = --build ] && { echo "stub cmake: no build"; exit 0; }
exec /usr/bin/cmake "$@"
EOF
chmod +x "$DRY_OUT/stub/compute-sanitizer" "$DRY_OUT/stub/cmake"

run() { # run NAME [ENV...]: the stage with memcheck and racecheck, results in $DRY_OUT/NAME
  local name=$1
  shift
  mkdir -p "$DRY_OUT/$name.stub"
  env PATH="$DRY_OUT/stub:$PATH" BUILD_DIR="$DRY_BUILD" GPU_CI_BUDGET_S="${GPU_CI_BUDGET_S:-500}" \
    STUB_STATE="$DRY_OUT/$name.stub" "$@" bash ci/gpu.sh --out "$DRY_OUT/$name" sanitizers memcheck racecheck >"$DRY_OUT/$name.log" 2>&1
}

steplog() { # steplog NAME TOOL: the log of run NAME's step for TOOL
  tar -xzOf "$DRY_OUT/$1/gpu-sanitizers.tar.gz" --wildcards "*-sanitizer-$2.log"
}

bad=0
run clean
n=$(grep -c $'^[^\t]' <<<"$(cd "$DRY_BUILD" && ctest -N -L cuda -FA thrust_consumer | sed -n 's/^ *Test *#[0-9]*: //p')")
for tool in memcheck racecheck; do
  if grep -q "^sanitizer-$tool *PASS .*$n of $n complete, 0 reports" "$DRY_OUT/clean/summary-sanitizers.txt"; then
    echo "clean, $tool: $n of $n complete, 0 reports: ok"
  else
    echo "clean, $tool: FAILED (see $DRY_OUT/clean.log)"
    bad=1
  fi
done
run report STUB_REPORT=test_corrupt
if grep -q "^sanitizer-memcheck *FAIL" "$DRY_OUT/report/summary-sanitizers.txt" &&
  grep -q "^memcheck: $((n - 1)) of $n complete, 1 reports$" "$DRY_OUT/report.log" &&
  grep -q "^sanitizer-racecheck *PASS" "$DRY_OUT/report/summary-sanitizers.txt" &&
  ! tar -tzf "$DRY_OUT/report/gpu-sanitizers.tar.gz" | grep -q first-attempt; then
  echo "a memcheck report in test_corrupt: memcheck failed with 1 report, racecheck passed: ok"
else
  echo "a memcheck report in test_corrupt: not seen as expected (see $DRY_OUT/report.log)"
  bad=1
fi
# Three short programs (each well under a second on the reference backend).
export SAN_TESTS='^(corrupt|errors|limits)\.cuda$'
m=$(cd "$DRY_BUILD" && ctest -N -L cuda -R "$SAN_TESTS" | grep -c '^ *Test *#')
[ "$m" -eq 3 ] || { echo "SAN_TESTS $SAN_TESTS: $m programs listed, not 3"; bad=1; }
run internal STUB_INTERNAL=test_errors
if grep -q "^sanitizer-racecheck *PASS .*$m of $m complete, 0 reports, 1 rerun after the tool's internal error$" \
  "$DRY_OUT/internal/summary-sanitizers.txt" &&
  grep -q "^sanitizer-memcheck *PASS .*$m of $m complete, 0 reports$" "$DRY_OUT/internal/summary-sanitizers.txt" &&
  steplog internal racecheck | grep -q "^== racecheck errors.cuda: ok after a rerun" &&
  [ "$(steplog internal racecheck | grep -c "^   errors.cuda .*rc 0 .*(rerun after")" -eq 1 ] &&
  [ "$(steplog internal racecheck | grep -c "^   ")" -eq "$m" ] &&
  ! steplog internal memcheck | grep -q "first attempt\|after a rerun\|rerun after" &&
  [ "$(tar -tzf "$DRY_OUT/internal/gpu-sanitizers.tar.gz" | grep -c 'first-attempt')" -eq 1 ] &&
  tar -tzf "$DRY_OUT/internal/gpu-sanitizers.tar.gz" | grep -q 'sanitizer-racecheck/[0-9]*-errors.cuda.first-attempt.txt$' &&
  [ "$(cat "$DRY_OUT/internal.stub/internal-racecheck-test_errors")" -eq 2 ]; then
  echo "racecheck's internal error once in errors.cuda: rerun, racecheck passed with 1 rerun, memcheck passed: ok"
else
  echo "racecheck's internal error once in errors.cuda: not seen as expected (see $DRY_OUT/internal.log)"
  bad=1
fi
run internal2 STUB_INTERNAL=test_errors STUB_INTERNAL_TIMES=2
if grep -q "^sanitizer-racecheck *FAIL" "$DRY_OUT/internal2/summary-sanitizers.txt" &&
  grep -q "^racecheck: $((m - 1)) of $m complete, 1 reports, 1 rerun after the tool's internal error$" "$DRY_OUT/internal2.log" &&
  steplog internal2 racecheck | grep -q "^== racecheck errors.cuda: FAILED (exit 86, .*) on a rerun" &&
  grep -q "^sanitizer-memcheck *PASS .*$m of $m complete, 0 reports$" "$DRY_OUT/internal2/summary-sanitizers.txt" &&
  [ "$(cat "$DRY_OUT/internal2.stub/internal-racecheck-test_errors")" -eq 2 ]; then
  echo "racecheck's internal error twice in errors.cuda: racecheck failed with 1 report after one rerun: ok"
else
  echo "racecheck's internal error twice in errors.cuda: not seen as expected (see $DRY_OUT/internal2.log)"
  bad=1
fi
run mixed STUB_INTERNAL=test_limits STUB_REPORT=test_limits STUB_REPORT_TOOL=racecheck
if grep -q "^sanitizer-racecheck *FAIL" "$DRY_OUT/mixed/summary-sanitizers.txt" &&
  grep -q "^racecheck: $((m - 1)) of $m complete, 2 reports$" "$DRY_OUT/mixed.log" &&
  ! tar -tzf "$DRY_OUT/mixed/gpu-sanitizers.tar.gz" | grep -q first-attempt &&
  [ "$(cat "$DRY_OUT/mixed.stub/internal-racecheck-test_limits")" -eq 1 ]; then
  echo "the internal error and a race in one log (limits.cuda): not rerun, racecheck failed with 2 reports: ok"
else
  echo "the internal error and a race in one log (limits.cuda): not seen as expected (see $DRY_OUT/mixed.log)"
  bad=1
fi
echo "racecheck, one internal error, per program:"
steplog internal racecheck | grep "^   \|^== racecheck errors.cuda: ok"
echo "memcheck, clean run, per program:"
steplog clean memcheck | grep "^   "
exit "$bad"
