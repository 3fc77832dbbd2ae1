#!/usr/bin/env bash
# A dry run of `ci/gpu.sh sanitizers` on a machine without a GPU, to check the
# script's own logic: the list of cuda test programs, the parallel runner, the
# per-program times and the summary. It needs a CPU build (build/, default
# CPU_BUILD) and nvcc (to configure a CUDA tree, which is never built).
#
# The fake CUDA tree ($DRY_BUILD, default build-gpu-dry) holds the CPU build's
# programs; a stub compute-sanitizer on PATH runs each program on
# $STUB_BACKEND (default reference) instead of cuda; a stub cmake skips the
# build; programs only a CUDA build has (test_cuda_arrow, the Thrust
# consumer's) are stubs that pass. Two runs of the stage, memcheck and
# racecheck:
#   1. clean: each tool must note "N of N complete, 0 reports" (N: every
#      program ctest lists; the stub reads its input to the end, so a runner
#      that let a program read the program list would start fewer);
#   2. memcheck reports an error in test_corrupt: its step must fail with
#      "1 reports", racecheck's must still pass.
# Exit status 0 when both hold. Logs under $DRY_OUT (default /tmp/gpu-dry-run).
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
    [ -f "$f" ] && [ -x "$f" ] && ln -sf "$PWD/$f" "$DRY_BUILD/$d/$(basename "$f")"
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
echo "stub compute-sanitizer --tool $tool: $prog ${args[*]} (PACKSCAN_TEST_QUICK=${PACKSCAN_TEST_QUICK:-})"
"$prog" "${args[@]}"
rc=$?
if [[ -n ${STUB_REPORT:-} && $prog == *"$STUB_REPORT" && $tool == memcheck ]]; then
  echo "========= Invalid __global__ read of size 4 (stub)"
  echo "========= ERROR SUMMARY: 1 error"
  exit 86
fi
if [ "$tool" = racecheck ]; then
  echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
else
  echo "========= ERROR SUMMARY: 0 errors"
fi
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
  env PATH="$DRY_OUT/stub:$PATH" BUILD_DIR="$DRY_BUILD" GPU_CI_BUDGET_S="${GPU_CI_BUDGET_S:-500}" \
    "$@" bash ci/gpu.sh --out "$DRY_OUT/$name" sanitizers memcheck racecheck >"$DRY_OUT/$name.log" 2>&1
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
  grep -q "^memcheck: $((n - 1)) of $n complete, 1 reports" "$DRY_OUT/report.log" &&
  grep -q "^sanitizer-racecheck *PASS" "$DRY_OUT/report/summary-sanitizers.txt"; then
  echo "a memcheck report in test_corrupt: memcheck failed with 1 report, racecheck passed: ok"
else
  echo "a memcheck report in test_corrupt: not seen as expected (see $DRY_OUT/report.log)"
  bad=1
fi
echo "memcheck, clean run, per program:"
tar -xzOf "$DRY_OUT/clean/gpu-sanitizers.tar.gz" --wildcards '*-sanitizer-memcheck.log' | grep "^   "
exit "$bad"
