#!/usr/bin/env bash
# shellcheck disable=SC2317  # the step functions are called through step()
# The check of a machine with an NVIDIA GPU and the CUDA toolkit: builds with
# CUDA for sm_90 and runs the tests on every backend, compute-sanitizer over
# the CUDA tests, and the benchmarks, in stages:
#
#   ci/gpu.sh [--out DIR] STAGE...
#
#   tests       device info, build with CUDA (sm_90), NVIDIA's OpenCL
#               registered as an ICD; every test but the OpenCL ones
#               (reference, host, tools, cuda: a missing CUDA device
#               fails), the OpenCL tests on NVIDIA's driver and the cuda
#               tests on the general kernels, side by side
#   pocl        the OpenCL tests on PoCL at full size
#   sanitizers [TOOL...]
#               compute-sanitizer memcheck, racecheck, synccheck and
#               initcheck (or the TOOLs named), each over every CUDA test
#               program to completion, at the sanitizer test size
#               (PACKSCAN_TEST_QUICK=2: tests/README.md; big at 10^7 rows).
#               The tools run side by side, each SAN_JOBS (default 3)
#               programs at once, longest first. A program that does not
#               finish inside the budget, or never starts, is a failure;
#               each program's time is logged, and each tool's note reads
#               "N of N complete, 0 reports". With `pocl` in the same call,
#               the PoCL tests run beside them on the CPU with ctest -j4
#               (POCL_JOBS) and PoCL's threads per program capped at 2
#               (POCL_CPU_MAX_CU_NUM): `ci/gpu.sh sanitizers pocl`. Each
#               program's log is sanitizer-<TOOL>/NN-<test>.log in the
#               archive; ci/gpu-dry-run.sh checks this stage without a GPU
#               (a stub compute-sanitizer). compute-sanitizer sometimes
#               loses track of a kernel launch under load ("Internal
#               Sanitizer Error") and counts that as an error: a program
#               whose only counted errors are such lines runs once more, and
#               the rerun's result is its result. The first attempt's log
#               stays in the archive (NN-<test>.first-attempt.txt) and the
#               note says how many were rerun.
#   bench       the benchmarks (CUDA, OpenCL on NVIDIA) and ncu's
#               speed-of-light profiles
#   quick       a short check between full runs: the QUICK_* knobs below
# Several stages may be named in one call (`ci/gpu.sh tests pocl`). Run it
# from the repository or any copy of it (a `git archive` of a commit, for
# example); every stage builds first, incrementally when BUILD_DIR is there.
# Registering NVIDIA's OpenCL driver writes /etc/OpenCL/vendors/nvidia.icd, so
# the OpenCL-on-NVIDIA tests need root (or that file in place); nvcc,
# compute-sanitizer and ncu are taken from PATH and /usr/local/cuda/bin.
#
# Results. Every step logs to its own file (NN-<step>.log) and a failing step
# is recorded and the stage goes on. At the end DIR (--out DIR, or the
# environment's OUT; default gpu-out/ in the repository; a relative path is
# taken from the directory the script was started in) holds:
#   gpu-<stages>.tar.gz      every step's log, the sanitizers' per-program
#                            logs and the benchmark JSONs
#   summary-<stages>.txt     one line per step: PASS, FAIL or SKIP, seconds,
#                            a note; also printed last
#   bench.json, bench-opencl.json
#                            the benchmarks' results, where the stage ran them
#                            (bench/README.md describes the format)
# Exit status 1 if any step failed, 2 for a usage error.
#
# Knobs (environment): BUILD_DIR (default build-gpu); JOBS (parallel build
# jobs, default the number of CPUs); GPU_CI_BUDGET_S (default 540 s) bounds
# the whole call, so that a stage fits a 10-minute job: steps that would
# start after it are skipped (reported, and a failure for the sanitizers);
# SAN_JOBS, POCL_JOBS, POCL_CPU_MAX_CU_NUM (above); SAN_TESTS, a ctest regex:
# only the cuda test programs it matches (to re-run a few after a fix; the
# stage's note then counts those).
# quick: QUICK_TESTS (ctest regex), QUICK_MEMCHECK ("test" or "tool:test"
# entries), QUICK_BENCH (bench cases), QUICK_NCU ("CASES:WIDTHS:KERNEL_REGEX"
# entries, ';'-separated; WIDTHS may be empty).
set -uo pipefail
START_DIR=$PWD
cd "$(dirname "$0")/.." || exit 1

usage() {
  echo "usage: ci/gpu.sh [--out DIR] STAGE... (tests, pocl, sanitizers [TOOL...], bench, quick); see the header" >&2
  exit 2
}
stages=() san_tools=()
OUT=${OUT:-}
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage; OUT=$2; shift ;;
    --out=*) OUT=${1#--out=} ;;
    tests | pocl | sanitizers | bench | quick) stages+=("$1") ;;
    memcheck | racecheck | synccheck | initcheck) san_tools+=("$1") ;;
    *) usage ;;
  esac
  shift
done
((${#stages[@]})) || usage
((${#san_tools[@]})) || san_tools=(memcheck racecheck synccheck initcheck)
has_stage() { [[ " ${stages[*]} " == *" $1 "* ]]; }

if [ -z "$OUT" ]; then OUT=$PWD/gpu-out; elif [[ $OUT != /* ]]; then OUT=$START_DIR/$OUT; fi
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 16)}
BUILD=${BUILD_DIR:-build-gpu}
BUDGET=${GPU_CI_BUDGET_S:-540}
LOGS=$(mktemp -d /tmp/packscan-gpu-logs.XXXXXX)
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export PACKSCAN_REQUIRE_CUDA=1
T_START=$SECONDS

names=() results=() secs=() notes=()
failed=0
n_step=0

record() { # record NAME RESULT SECONDS NOTE
  names+=("$1") results+=("$2") secs+=("$3") notes+=("$4")
  [ "$2" = FAIL ] && failed=1
  printf '[%s] %s (%ss)%s\n' "$2" "$1" "$3" "${4:+ - $4}"
}

left() { echo $((BUDGET - (SECONDS - T_START))); }

# finish NAME LOG RC SECONDS: records a step from its exit status (0 PASS,
# 77 SKIP with its last log line as the reason, else FAIL with the log's tail).
finish() {
  local name=$1 log=$2 rc=$3 dt=$4
  if [ "$rc" -eq 0 ]; then
    # A passing step may leave a note as its last log line ("NOTE: ...").
    record "$name" PASS "$dt" "$(tail -n 1 "$log" | sed -n 's/^NOTE: //p')"
  elif [ "$rc" -eq 77 ]; then
    record "$name" SKIP "$dt" "$(tail -n 1 "$log")"
  else
    record "$name" FAIL "$dt" "exit $rc, log $(basename "$log")"
    echo "----- last lines of $(basename "$log") -----"
    tail -n 25 "$log"
    echo "-----"
  fi
}

# next_log NAME: the log file of the next step. Called as $(next_log), a
# subshell: the caller counts the steps (n_step) first.
next_log() { echo "$LOGS/$(printf '%02d' "$n_step")-$1.log"; }

# step NAME FUNCTION [ARGS...]: runs FUNCTION in this shell (it may set
# variables for later steps) with output to its log.
step() {
  local name=$1 log t0=$SECONDS rc
  shift
  n_step=$((n_step + 1))
  log=$(next_log "$name")
  if [ "$(left)" -le 0 ]; then
    record "$name" SKIP 0 "time budget of ${BUDGET}s spent"
    return
  fi
  "$@" >"$log" 2>&1
  rc=$?
  finish "$name" "$log" "$rc" $((SECONDS - t0))
}

# pstep NAME FUNCTION [ARGS...]: starts a step in the background; pwait waits
# for all started ones and records them in the order they were started.
# For steps that do not contend for the same thing (tests that are not
# timed; the sanitizers, each bound by its own CPU-side instrumentation).
pending=()
pstep() {
  local name=$1 log
  shift
  n_step=$((n_step + 1))
  log=$(next_log "$name")
  if [ "$(left)" -le 0 ]; then
    record "$name" SKIP 0 "time budget of ${BUDGET}s spent"
    return
  fi
  # The step's own time, not the time until pwait.
  (t0=$SECONDS; "$@" >"$log" 2>&1; echo "$? $((SECONDS - t0))" >"$log.rc") &
  pending+=("$name|$log")
}
pwait() {
  wait
  local e name log dt rc
  for e in "${pending[@]}"; do
    IFS='|' read -r name log <<<"$e"
    read -r rc dt <"$log.rc" 2>/dev/null || { rc=1 dt=0; }
    rm -f "$log.rc"
    finish "$name" "$log" "$rc" "$dt"
  done
  pending=()
}

# ---- steps ------------------------------------------------------------------

device_info() {
  nvidia-smi || return 1
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,mig.mode.current --format=csv
  nvcc --version
  cmake --version | head -n 1
  command -v compute-sanitizer
}

HAVE_OPENCL=ON
configure() {
  local args=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
    -DPACKSCAN_WITH_CUDA=ON -DPACKSCAN_WERROR=ON -DPACKSCAN_CUDA_LINEINFO=ON)
  if timeout 300 cmake "${args[@]}"; then return 0; fi
  # Without OpenCL development files the CUDA side can still be checked.
  echo "configure with OpenCL failed; retrying with PACKSCAN_WITH_OPENCL=OFF"
  HAVE_OPENCL=OFF
  rm -rf "$BUILD"
  timeout 300 cmake "${args[@]}" -DPACKSCAN_WITH_OPENCL=OFF
  return 1
}

build() { timeout 400 cmake --build "$BUILD" -j"$JOBS"; }

# Only after a failed build: the same without warnings as errors, so that a
# new host-compiler warning (this machine's gcc is not CI's) does not hide
# every GPU result. The failed build stays recorded.
build_no_werror() {
  timeout 120 cmake "$BUILD" -DPACKSCAN_WERROR=OFF && timeout 400 cmake --build "$BUILD" -j"$JOBS"
}

find_nvidia_opencl() {
  local d
  for d in /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64 \
    /usr/lib /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu/nvidia/current; do
    if [ -e "$d/libnvidia-opencl.so.1" ]; then
      echo "$d/libnvidia-opencl.so.1"
      return 0
    fi
  done
  ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}' | grep . ||
    find / -xdev -name 'libnvidia-opencl.so.1' 2>/dev/null | head -n 1 | grep .
}

register_icd() {
  [ "$HAVE_OPENCL" = ON ] || { echo "OpenCL backend not built"; return 77; }
  local lib
  lib=$(find_nvidia_opencl) || {
    echo "libnvidia-opencl.so.1 not found"
    return 1
  }
  mkdir -p /etc/OpenCL/vendors
  echo "$lib" >/etc/OpenCL/vendors/nvidia.icd
  echo "wrote /etc/OpenCL/vendors/nvidia.icd -> $lib"
  ls -l /etc/OpenCL/vendors
  if command -v clinfo >/dev/null; then clinfo -l; else echo "(clinfo not installed)"; fi
}

# Every test but the OpenCL ones, which run next on each platform by name.
ctest_all() (
  cd "$BUILD" || exit 1
  timeout 420 ctest -LE opencl -E '^thrust_consumer_build$' -FA thrust_consumer --output-on-failure -j12 --timeout 300
  rc=$?
  cp Testing/Temporary/LastTest.log "$LOGS/ctest-all-LastTest.log" 2>/dev/null
  exit "$rc"
)

ctest_opencl() { # ctest_opencl PLATFORM [JOBS]
  [ "$HAVE_OPENCL" = ON ] || { echo "OpenCL backend not built"; return 77; }
  if [ "$1" = Portable ] && ! grep -qsl pocl /etc/OpenCL/vendors/*.icd; then
    echo "no PoCL ICD in /etc/OpenCL/vendors"
    return 77
  fi
  local limit
  limit=$(left)
  [ "$limit" -gt 10 ] || { echo "no time left for the OpenCL tests"; return 77; }
  (cd "$BUILD" && PACKSCAN_OPENCL_PLATFORM=$1 timeout "$limit" ctest -L opencl -FA thrust_consumer --output-on-failure \
    -j"${2:-8}" --timeout "$limit")
}

# The cuda tests, one per line: "NAME<TAB>DIR<TAB>COMMAND" (COMMAND quoted as
# CMake writes it, for eval; DIR where ctest would run it). The names come from
# ctest (-FA: not the Thrust consumer's build fixture, which ctest would add);
# the commands from the add_test lines of the CTestTestfile.cmake files, since
# `ctest -N -V` prints no path for an executable that is not there yet (the
# Thrust consumer's). Longest first (each tool runs several at once, and the
# list ends with the short ones): the order of SAN_ORDER, then the rest.
SAN_ORDER="tools.stream.cuda select.cuda zones.cuda query.cuda delta.cuda decimal.cuda float_map.cuda tools.e2e.cuda
  arrow.cuda progress.cuda host_columns.cuda filter_ids.cuda filter_edge.cuda tools.select.cuda float_cmpcol.cuda
  filter_edge_spec.cuda float_arith.cuda query_partial.cuda multi_device.cuda float_sum.cuda filter_random.cuda
  opencl_row_ids.cuda tools.time.cuda thrust.cuda cuda_arrow.cuda big_query.cuda"
cuda_test_list() {
  local names name f line files=() sorted=() o
  names=$( (cd "$BUILD" && ctest -N -L cuda -FA thrust_consumer ${SAN_TESTS:+-R "$SAN_TESTS"}) |
    sed -n 's/^ *Test *#[0-9]*: //p')
  [ -n "$names" ] || return 1
  mapfile -t files < <(find "$BUILD" -name CTestTestfile.cmake -not -path '*/thrust_consumer/*')
  for o in $SAN_ORDER; do grep -qx -F "$o" <<<"$names" && sorted+=("$o"); done
  for name in $names; do [[ " $SAN_ORDER " == *[[:space:]]"$name"[[:space:]]* ]] || sorted+=("$name"); done
  for name in "${sorted[@]}"; do
    line=
    for f in "${files[@]}"; do
      # CMake 3 writes add_test([=[NAME]=] ...), CMake 4 add_test("NAME" ...).
      line=$(grep -m 1 -F -e "add_test([=[$name]=] " -e "add_test(\"$name\" " "$f") && break
    done
    if [ -z "$line" ]; then
      printf '%s\t\t\n' "$name"
      continue
    fi
    line=${line#"add_test([=[$name]=] "}
    line=${line#"add_test(\"$name\" "}
    printf '%s\t%s\t%s\n' "$name" "$(dirname "$f")" "${line%)}"
  done
}

# san_reports LOG: the errors and hazards that LOG's summary lines count.
san_reports() {
  sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p; s/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$1" |
    awk '{s += $1} END {print s + 0}'
}

# san_run TOOL NAME DIR COMMAND LOG: one run of a program under
# compute-sanitizer's TOOL, limited to what is left of the budget; returns its
# exit status (125: not run, the budget is spent).
san_run() {
  local tool=$1 name=$2 dir=$3 cmd=$4 log=$5 extra=(--report-api-errors no) limit rc
  # API errors are not reported: the tests provoke some on purpose (a device
  # allocation too large to succeed); the statuses they map to are checked.
  [ "$tool" = memcheck ] && extra+=(--leak-check full)
  limit=$(left)
  if [ "$limit" -le 5 ]; then
    echo "not run: the stage's budget is spent" >"$log"
    return 125
  fi
  (
    cd "$dir" || exit 1
    eval "set -- $cmd"
    # racecheck checks shared memory inside each kernel; with launches from
    # many host threads at once it loses track of them and counts that as a
    # hazard (ci/probes/racecheck_threads.cu, docs/gpu-runs.md). threads.cuda's
    # kernels are those of every other program; under racecheck it runs them
    # from one host thread.
    [ "$tool" = racecheck ] && [ "$name" = threads.cuda ] && export PACKSCAN_TEST_THREADS=1
    echo "== compute-sanitizer --tool $tool ${extra[*]} $* (limit ${limit}s)"
    exec timeout "$limit" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 86 "$@"
  ) >"$log" 2>&1
  rc=$?
  # A test that made no CUDA call (e.g. one with nothing to check yet).
  grep -q 'terminated before first instrumented API call' "$log" && rc=0
  return "$rc"
}

# san_one TOOL NAME DIR COMMAND LOG: one program under compute-sanitizer's
# TOOL (san_run); writes "RC SECONDS" to LOG.res, or "RC SECONDS rerun
# FIRST_SECONDS" when it ran twice (SECONDS for both runs).
#
# compute-sanitizer sometimes loses track of a kernel launch when the machine
# is loaded (racecheck over tools.stream.cuda, 10 programs at once: "Internal
# Sanitizer Error: Detected a failure to track a kernel launch", counted as
# "1 hazard (1 error)", exit 86; 0 hazards when run alone). Such an error is
# the tool's, not a finding in the program, so a run that failed with the
# error exit code, whose log has that line and whose summaries count no more
# errors than it has such lines, runs once more; its result is the program's.
# A log with a real report besides (an "Invalid __global__ read", a race)
# counts more errors than internal ones and is not rerun, nor is a program
# that failed by itself, nor a second internal error. The first attempt's log
# is kept next to the program's as NN-<test>.first-attempt.txt (a name the
# summary's *.log does not count).
san_one() {
  local tool=$1 name=$2 dir=$3 cmd=$4 log=$5 t0=$SECONDS t1 rc internal rerun=
  san_run "$tool" "$name" "$dir" "$cmd" "$log"
  rc=$?
  internal=$(grep -c 'Internal Sanitizer Error' "$log")
  if [ "$rc" -eq 86 ] && [ "$internal" -gt 0 ] && [ "$(san_reports "$log")" -le "$internal" ]; then
    if [ "$(left)" -le 5 ]; then
      echo "== not rerun after the tool's internal error: the stage's budget is spent" >>"$log"
    else
      mv "$log" "${log%.log}.first-attempt.txt"
      t1=$SECONDS
      san_run "$tool" "$name" "$dir" "$cmd" "$log"
      rc=$?
      rerun=" rerun $((t1 - t0))"
    fi
  fi
  echo "$rc $((SECONDS - t0))$rerun" >"$log.res"
}

# sanitize TOOL: every cuda test program under compute-sanitizer's TOOL to
# completion, SAN_JOBS (default 3) at once, longest first: one that is still
# running when the stage's budget ends, or that never started, is a failure,
# not a partial pass. Each program's log follows, in list order (a rerun's
# first attempt before it, its lines marked), then one line per program (its
# time) and the tool's summary.
sanitize() {
  local tool=$1 jobs=${SAN_JOBS:-3} list name dir cmd i=0 n=0 bad=0 reports=0 rc dt rerun dt1 r log listed
  local first again reruns=0 note
  command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found"; return 1; }
  list=$(cuda_test_list) || { echo "no cuda tests listed by ctest -N -L cuda"; return 1; }
  local dirlog=$LOGS/sanitizer-$tool
  mkdir -p "$dirlog"
  while IFS=$'\t' read -r name dir cmd; do
    i=$((i + 1))
    log=$dirlog/$(printf '%02d' "$i")-$name.log
    # The program is a path (a test binary) or a name on PATH (`sh` for the
    # tests that are scripts, e.g. tools.stream.cuda).
    if [ -z "$cmd" ] || ! (eval "set -- $cmd" && command -v -- "${1:-}" >/dev/null); then
      echo "no executable for $name: '$cmd' (not built?)" >"$log"
      echo "127 0" >"$log.res"
      continue
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    # Not the list's stdin: a program that reads its input (script(1) in
    # tools.stream.cuda forwards it to a terminal) would eat the rest of the
    # list, and the programs after it would never start.
    san_one "$tool" "$name" "$dir" "$cmd" "$log" </dev/null &
  done <<<"$list"
  wait
  for log in "$dirlog"/*.log; do
    name=$(basename "$log" .log)
    name=${name#*-}
    rerun='' dt1=''
    read -r rc dt rerun dt1 <"$log.res" 2>/dev/null || { rc=1 dt=0; }
    n=$((n + 1))
    first=${log%.log}.first-attempt.txt
    again=
    if [ -n "$rerun" ]; then
      reruns=$((reruns + 1))
      again=" on a rerun after the tool's internal error in the first attempt (${dt1}s; its log kept as $(basename "$first"))"
      echo "== $tool $name: first attempt, the tool's internal error (kept as $(basename "$first")):"
      sed 's/^/first attempt| /' "$first"
      echo "== $tool $name: rerun:"
    fi
    cat "$log"
    r=$(san_reports "$log")
    reports=$((reports + r))
    case $rc in
      0)
        if [ -n "$rerun" ]; then
          echo "== $tool $name: ok after a rerun (${dt}s in all): the tool's internal error in the first attempt (${dt1}s), its log kept as $(basename "$first")"
        else
          echo "== $tool $name: ok (${dt}s)"
        fi
        ;;
      124) echo "== $tool $name: FAILED: stopped at the budget after ${dt}s (not complete)$again"; bad=$((bad + 1)) ;;
      125) echo "== $tool $name: FAILED: not run, the stage's budget was spent$again"; bad=$((bad + 1)) ;;
      127) echo "== $tool $name: FAILED: no executable"; bad=$((bad + 1)) ;;
      *) echo "== $tool $name: FAILED (exit $rc, ${dt}s)$again"; bad=$((bad + 1)) ;;
    esac
  done
  echo "== $tool: per program:"
  for log in "$dirlog"/*.log; do
    rerun='' again=''
    read -r rc dt rerun _ <"$log.res" 2>/dev/null || { rc=1 dt=0; }
    [ -n "$rerun" ] && again="  (rerun after the tool's internal error)"
    printf '   %-28s rc %-3s %5ss%s\n' "$(basename "$log" .log | cut -d- -f2-)" "$rc" "$dt" "$again"
  done
  # Every listed program must have its log: a loop cut short is a failure,
  # not a smaller stage.
  listed=$(grep -c . <<<"$list")
  if [ "$n" -ne "$listed" ]; then
    echo "== $tool: FAILED: $((listed - n)) of the $listed listed programs never started"
    bad=$((bad + listed - n))
    n=$listed
  fi
  note=
  [ "$reruns" -gt 0 ] && note=", $reruns rerun after the tool's internal error"
  echo "$tool: $((n - bad)) of $n complete, $reports reports$note"
  [ "$bad" -eq 0 ] && [ "$reports" -eq 0 ] || return 1
  echo "NOTE: $n of $n complete, 0 reports$note"
}

bench() {
  local exe=$BUILD/bench/packscan_bench
  [ -x "$exe" ] || { echo "no $exe"; return 77; }
  local limit=$(($(left) < 150 ? $(left) : 150))
  [ "$limit" -gt 10 ] || { echo "no time left for the benchmark"; return 77; }
  timeout "$limit" "$exe" --backend cuda --json "$LOGS/bench.json"
  local rc=$?
  [ "$rc" -eq 124 ] && echo "benchmark stopped at the ${limit}s limit" && return 77
  return "$rc"
}

# The width sweep on OpenCL (NVIDIA's driver) in the same run, for the
# OpenCL-vs-CUDA comparison.
bench_opencl() {
  [ "$HAVE_OPENCL" = ON ] || { echo "OpenCL backend not built"; return 77; }
  local exe=$BUILD/bench/packscan_bench
  [ -x "$exe" ] || { echo "no $exe"; return 77; }
  local limit=$(($(left) < 90 ? $(left) : 90))
  [ "$limit" -gt 10 ] || { echo "no time left for the benchmark"; return 77; }
  PACKSCAN_OPENCL_PLATFORM=NVIDIA timeout "$limit" "$exe" --backend opencl --json "$LOGS/bench-opencl.json"
  local rc=$?
  [ "$rc" -eq 124 ] && echo "benchmark stopped at the ${limit}s limit" && return 77
  return "$rc"
}

# The cuda tests again with the fast paths off (the tests' internal option
# fast_paths=0), so the general kernel is checked on the programs the
# single-range, SET, range-tree and fused row-id kernels would otherwise take.
# (The Thrust consumer's tests are built against the installed package, where
# the internal options do not exist: they run in ctest-all.)
ctest_cuda_general() (
  cd "$BUILD" || exit 1
  PACKSCAN_TEST_OPTIONS=fast_paths=0 timeout 240 ctest -L cuda -E '^(big|thrust)' -FA thrust_consumer --output-on-failure -j8 \
    --timeout 200
)

# Hardware counters for the main kernels (speed of light, occupancy), when ncu
# can read them: the first launches of each kernel in a few benchmark cases.
ncu_profile() {
  command -v ncu >/dev/null || { echo "ncu not found"; return 77; }
  local exe=$BUILD/bench/packscan_bench spec
  [ -x "$exe" ] || { echo "no $exe"; return 77; }
  # -k matches the function name without template arguments (ncu's default
  # "function" base): range_direct_kernel covers widths 1-16 of `lt`.
  for spec in "lt:range_direct_kernel|range_async_kernel|range_kernel:44" "like_contains:set_kernel|like_dict_kernel:4" \
    "tree:tree_kernel:2" "colcol:eval_words_kernel:2" "ids_1pct:range_ids_kernel|init_ids:4"; do
    local cases=${spec%%:*} rest=${spec#*:}
    local kern=${rest%:*} count=${rest##*:}
    local limit=$(($(left) < 60 ? $(left) : 60))
    [ "$limit" -gt 10 ] || { echo "no time left for ncu"; return 77; }
    echo "== ncu $cases ($kern, $count launches, limit ${limit}s)"
    timeout "$limit" ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
      -k "regex:$kern" --launch-count "$count" "$exe" --backend cuda --cases "$cases" --rows 268435456 --reps 1 ||
      echo "== ncu $cases: exit $?"
  done
}

# ---- quick: a short check between full runs ----------------------------------

QUICK_TESTS=${QUICK_TESTS:-'^(filter_ids|select|filter_edge|chunking|device_buffers|api|errors)\.cuda$|^cuda_'}
QUICK_MEMCHECK=${QUICK_MEMCHECK:-test_filter_ids}
QUICK_BENCH=${QUICK_BENCH:-lt,lt_count,ids_1pct,ids_50pct}
QUICK_NCU=${QUICK_NCU:-}

quick_tests() (
  cd "$BUILD" || exit 1
  timeout 240 ctest -R "$QUICK_TESTS" -FA thrust_consumer --output-on-failure -j12 --timeout 200
)

quick_sanitize() { # entries "test" (memcheck) or "tool:test"
  local spec tool t extra bad=0
  for spec in $QUICK_MEMCHECK; do
    tool=memcheck t=$spec
    [[ $spec == *:* ]] && tool=${spec%%:*} t=${spec#*:}
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    echo "== $tool $t"
    (cd "$BUILD/tests" && timeout 120 compute-sanitizer --tool "$tool" "${extra[@]}" --report-api-errors no \
      --error-exitcode 86 "./$t" cuda) || { echo "== FAILED (exit $?)"; bad=1; }
  done
  return "$bad"
}

quick_bench() {
  local exe=$BUILD/bench/packscan_bench
  timeout 200 "$exe" --backend cuda --cases "$QUICK_BENCH" --json "$LOGS/bench.json"
}

quick_ncu() {
  local exe=$BUILD/bench/packscan_bench spec cases widths kern specs
  IFS=';' read -r -a specs <<<"$QUICK_NCU"
  for spec in "${specs[@]}"; do
    [ -n "$spec" ] || continue
    IFS=':' read -r cases widths kern <<<"$spec"
    echo "== ncu $cases ${widths:-all} $kern"
    timeout 90 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section ComputeWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section LaunchStats --section InstructionStats -k "regex:$kern" --launch-skip 1 --launch-count 1 \
      "$exe" --backend cuda --cases "$cases" ${widths:+--widths "$widths"} --reps 1 --sample 4096 ||
      echo "== ncu $cases: exit $?"
  done
}

# ---- run ----------------------------------------------------------------------

step device-info device_info
# Device facts on the console too (short).
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>/dev/null
step configure configure
step build build
[ "${results[-1]}" = FAIL ] && step build-without-werror build_no_werror
if has_stage tests || has_stage pocl; then step opencl-icd register_icd; fi

# The Thrust layer's consumer project (the fixture of the thrust tests), built
# once before the suites that run in parallel: they leave the fixture out
# (-FA), since three builds into one directory at once would race.
thrust_consumer() (cd "$BUILD" && timeout 300 ctest -R '^thrust_consumer_build$' --output-on-failure)
# The sanitizers need it too: thrust.cuda and thrust_example.cuda run its programs.
if has_stage tests || has_stage pocl || has_stage quick || has_stage sanitizers; then
  step thrust-consumer thrust_consumer
fi
if has_stage tests; then
  # Not timed: the three suites share the GPU and the CPUs.
  pstep ctest-all ctest_all
  pstep ctest-opencl-nvidia ctest_opencl NVIDIA
  pstep ctest-cuda-general ctest_cuda_general
  pwait
fi
if has_stage pocl && has_stage sanitizers; then
  # Beside the sanitizers (started first, so that it keeps the full size):
  # 4 programs at once, 2 PoCL threads each, next to their 12 processes.
  POCL_CPU_MAX_CU_NUM=${POCL_CPU_MAX_CU_NUM:-2} pstep ctest-opencl-pocl ctest_opencl Portable "${POCL_JOBS:-4}"
elif has_stage pocl; then
  step ctest-opencl-pocl ctest_opencl Portable
fi
if has_stage sanitizers; then
  # The tools side by side (each is bound by its own CPU-side instrumentation),
  # on the sanitizer test size; big at 10^7 rows (its 5*10^9 rows run in `tests`).
  export PACKSCAN_TEST_QUICK=2 PACKSCAN_BIG_ROWS=10000000
  for tool in "${san_tools[@]}"; do pstep "sanitizer-$tool" sanitize "$tool"; done
  unset PACKSCAN_TEST_QUICK PACKSCAN_BIG_ROWS
fi
pwait
if has_stage bench; then
  # The benchmarks alone on the machine.
  step bench bench
  step bench-opencl bench_opencl
  step ncu ncu_profile
fi
if has_stage quick; then
  step quick-tests quick_tests
  step quick-sanitize quick_sanitize
  step quick-bench quick_bench
  [ -n "$QUICK_NCU" ] && step quick-ncu quick_ncu
fi

# ---- results --------------------------------------------------------------------

# DIR: one archive of every log and JSON, the summary, and the two main
# benchmark JSONs beside them (see the header).
tag=$(IFS=-; echo "${stages[*]}")
for f in bench bench-opencl; do [ -f "$LOGS/$f.json" ] && cp "$LOGS/$f.json" "$OUT/$f.json"; done
{
  printf '%-22s %-6s %6s  %s\n' STEP RESULT SECS NOTE
  for i in "${!names[@]}"; do
    printf '%-22s %-6s %6s  %s\n' "${names[$i]}" "${results[$i]}" "${secs[$i]}" "${notes[$i]}"
  done
  printf 'stage %s: total %ss; %s\n' "${stages[*]}" "$((SECONDS - T_START))" \
    "$([ $failed -eq 0 ] && echo 'all passed' || echo 'FAILURES')"
} >"$LOGS/summary.txt"
cp "$LOGS/summary.txt" "$OUT/summary-$tag.txt"
tar -C "$LOGS" -czf "$OUT/gpu-$tag.tar.gz" .
if has_stage bench || has_stage quick; then
  echo
  echo "===== bench ====="
  for f in "$LOGS"/*bench*.log; do
    [ -f "$f" ] || continue
    echo "----- $(basename "$f")"
    grep -E "^(case|lt|ids|tree|colcol|like|between|nulls|small|copy)" "$f" | cut -c1-150
  done
fi
echo
echo "===== summary (logs: $OUT/gpu-$tag.tar.gz) ====="
cat "$LOGS/summary.txt"
exit $failed
