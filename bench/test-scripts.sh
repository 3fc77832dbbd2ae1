#!/usr/bin/env bash
# Checks of bench/'s scripts that need no GPU (the ctest bench.scripts):
# ncu-query.sh's argument handling and the commands its --dry-run prints,
# query-compare.sh's argument handling, ncu_summary.py's self-test, kcache-extract.py
# over a kernel cache the bench filled (where an OpenCL device is there), ab.py's
# table over two variants on the reference backend.
#   bench/test-scripts.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: bench/test-scripts.sh BUILD_DIR}
fails=0 checks=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect STATUS PATTERN -- command...: the exit status is STATUS and the
# output (stdout and stderr) matches the extended regex PATTERN ("" = any).
expect() {
  local want=$1 pattern=$2
  shift 3
  "$@" >"$out" 2>&1
  local got=$?
  checks=$((checks + 1))
  if [ "$got" != "$want" ] || { [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$out"; }; then
    fails=$((fails + 1))
    echo "FAIL: $* -> exit $got (expected $want), output:"
    sed 's/^/    /' "$out" | head -20
    [ -n "$pattern" ] && echo "    (expected a line matching: $pattern)"
  fi
}

ncu_query=$here/ncu-query.sh
expect 0 "^usage: bench/ncu-query.sh" -- bash "$ncu_query" --help
expect 2 "unknown argument '--bogus'" -- bash "$ncu_query" --bogus
expect 2 "'lt' is not a query case" -- bash "$ncu_query" --dry-run -c ssb_q1_1,lt
expect 2 "'' is not a query case" -- bash "$ncu_query" --dry-run -c ,
expect 2 "-c needs a value" -- bash "$ncu_query" --dry-run -c ""
expect 2 "--launch-count '0' is not a positive count" -- bash "$ncu_query" --dry-run -n 0
expect 2 "--launch-skip 'x' is not a count" -- bash "$ncu_query" --dry-run -s x
expect 2 "--table-rows '12' is not a row count" -- bash "$ncu_query" --dry-run -r 12
expect 2 "-o needs a value" -- bash "$ncu_query" --dry-run -o
# the dry run prints one profile per case: the sections, the kernel filter,
# the launches, the bench's arguments, then the import and the summary
expect 0 "ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum -k regex:query_ --launch-skip 2 --launch-count 2 -f -o out/ncu-tpch_q1 b/bench/packscan_bench --backend cuda --cases tpch_q1 --reps 1 --table-rows 2000000" \
  -- bash "$ncu_query" --dry-run -b b -o out -r 2000000
expect 0 "^ncu --import out/ncu-ssb_q1_1.ncu-rep --csv --page raw --print-units base" -- bash "$ncu_query" --dry-run -b b -o out
expect 0 "ncu_summary.py out/ncu-ssb_q1_3.csv" -- bash "$ncu_query" --dry-run -o out -c ssb_q1_3 -k 'query_partials$' -s 0 -n 1
expect 0 '-k regex:query_partials\\\$ --launch-skip 0 --launch-count 1' -- bash "$ncu_query" --dry-run -o out -c ssb_q1_3 -k 'query_partials$' -s 0 -n 1
# without ncu, or without a bench, a skip: 77
expect 77 "/nonexistent/ncu not found" -- env NCU=/nonexistent/ncu bash "$ncu_query" -b "$build" -o "$build/ncu-none"
expect 77 "no /nonexistent/bench/packscan_bench" -- env NCU=bash bash "$ncu_query" -b /nonexistent -o "$build/ncu-none"

expect 0 "self-test passed" -- python3 "$here/ncu_summary.py" --self-test
expect 2 "no header row with 'Kernel Name'" -- python3 "$here/ncu_summary.py" "$here/README.md"

compare=$here/query-compare.sh
expect 0 "^usage: bench/query-compare.sh" -- bash "$compare" --help
expect 2 "unknown argument '--bogus'" -- bash "$compare" --bogus
expect 2 "backends must be two" -- bash "$compare" -B cuda
expect 2 "no .*packscan_bench" -- bash "$compare" -b /nonexistent -o "$build/qc-none"

# kcache-extract.py over a disk kernel cache the bench filled (where an OpenCL
# device is there: PoCL in CI): one line per file naming its build, a payload
# of the size the file declares; a truncated file is named and fails the run.
extract=$here/kcache-extract.py
expect 2 "is not a directory" -- python3 "$extract" /nonexistent "$build/kx-none"
kc=$build/bench-kcache-test
rm -rf "$kc" "$kc.out" && mkdir -p "$kc"
if "$build/bench/packscan_bench" --backend opencl --cases lt --widths 8 --rows 4096 --reps 1 --kernel-cache "$kc" \
  >"$out" 2>&1; then
  files=$(find "$kc" -type f | wc -l)
  expect 0 "\[kind [0-9]+, work-group [0-9]+\] entries: .*; shape: generic" -- python3 "$extract" "$kc" "$kc.out"
  lines=$(python3 "$extract" "$kc" "$kc.out" | wc -l)
  checks=$((checks + 1))
  if [ "$files" -lt 1 ] || [ "$lines" != "$files" ]; then
    fails=$((fails + 1))
    echo "FAIL: the bench left $files cache files; kcache-extract.py printed $lines lines"
  fi
  first=$(find "$kc" -type f | sort | head -n 1)
  size=$(python3 "$extract" "$kc" "$kc.out" | awk -v f="$(basename "$first")" '$1 == f {print $3}')
  checks=$((checks + 1))
  if [ -z "$size" ] || [ "$(stat -c %s "$kc.out/$(basename "$first")".*)" != "$size" ]; then
    fails=$((fails + 1))
    echo "FAIL: $(basename "$first"): payload written is not the $size bytes the file declares"
  fi
  head -c 100 "$first" >"$kc/truncated"
  expect 1 "truncated: sizes do not match the file \(100 bytes\)" -- python3 "$extract" "$kc" "$kc.out"
else
  echo "kcache-extract.py: no OpenCL device for the bench, its cache checks not run"
fi
rm -rf "$kc" "$kc.out"

# ab.py: usage errors, then two variants alternated on the reference backend
# (small inputs): a row per case and width with each round's median and the
# ratio column; a variant the bench refuses fails the run (exit 1).
ab=$here/ab.py
expect 2 "at least two --variant" -- python3 "$ab" --build "$build" --variant a=
expect 2 "is not NAME=OPTIONS" -- python3 "$ab" --build "$build" --variant a --variant b=
expect 2 "variant names must differ" -- python3 "$ab" --build "$build" --variant a= --variant a=--general
expect 2 "--rounds 0 is not a positive count" -- python3 "$ab" --build "$build" --rounds 0 --variant a= --variant b=
expect 2 "no .*packscan_bench" -- python3 "$ab" --build /nonexistent --variant a= --variant b=
expect 0 "^lt +8 +[0-9.]+ / [0-9.]+ +[0-9.]+ / [0-9.]+ +[0-9.]+$" -- python3 "$ab" --build "$build" --backend reference \
  --cases lt --rounds 2 --out "$build/ab-test" --variant base= --variant general=--general -- --rows 4096 --reps 1 --widths 8
expect 0 "^\| case \| w \| base \| general \| general/base \|$" -- python3 "$ab" --build "$build" --backend reference \
  --cases lt --rounds 1 --markdown --out "$build/ab-test" --variant base= --variant general=--general -- --rows 4096 --reps 1 --widths 8
expect 1 "bad round 1 failed" -- python3 "$ab" --build "$build" --backend reference --cases lt --rounds 1 \
  --out "$build/ab-test" --variant base= --variant bad=--no-such-option -- --rows 4096 --reps 1 --widths 8
rm -rf "$build/ab-test"

echo "$checks checks, $fails failed"
[ "$fails" = 0 ]
