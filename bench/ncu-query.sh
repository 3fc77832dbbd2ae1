#!/usr/bin/env bash
# Hardware counters of the query kernels (issue 14: where a target is missed,
# say why): Nsight Compute on the query cases of packscan_bench at the bench's
# table size, one report per case, and a short text summary of each profiled
# launch (bench/ncu_summary.py): achieved DRAM throughput, SM throughput,
# registers, occupancy, the top stall reasons.
#
#   bench/ncu-query.sh [-b BUILD] [-o OUT] [-c CASES] [-k REGEX] [-s SKIP] [-n COUNT]
#                      [-r TABLE_ROWS] [--dry-run]
#
# Each case runs `packscan_bench --backend cuda --cases CASE --reps 1` under
# ncu; the bench runs a prepared query 2 times to warm up and once timed, so by
# default the first run's launches are skipped and the second run's are
# profiled (-s 2 -n 2: the partials and the merge kernel of one ps_query_run).
# Writes OUT/ncu-CASE.ncu-rep, OUT/ncu-CASE.csv (the raw page), OUT/ncu-CASE.log
# (ncu's and the bench's output) and OUT/summary.txt. Exit status: 0, 1 when
# ncu or the summary failed for a case, 2 on a usage error, 77 when ncu or the
# bench is missing.
set -u

usage() {
  cat <<'EOF'
usage: bench/ncu-query.sh [options]
  -b, --build DIR        build tree holding bench/packscan_bench (default: build)
  -o, --out DIR          where reports and summary.txt go (default: ncu-query)
  -c, --cases LIST       comma-separated query cases: ssb_q1_1 ssb_q1_2 ssb_q1_3
                         tpch_q6 tpch_q1 (default: ssb_q1_1,tpch_q1)
  -k, --kernel REGEX     kernels to profile, ncu's -k regex: (default: query_)
  -s, --launch-skip N    matching launches to skip first (default: 2)
  -n, --launch-count N   matching launches to profile (default: 2)
  -r, --table-rows N     rows of the bench's tables (default: the bench's, 120000000 on a GPU)
      --dry-run          print the commands, run nothing (needs neither ncu nor a GPU)
  -h, --help             this text
EOF
}

die_usage() {
  echo "ncu-query.sh: $*" >&2
  usage >&2
  exit 2
}

NCU=${NCU:-ncu}
BUILD=build OUT=ncu-query CASES=ssb_q1_1,tpch_q1 REGEX=query_ SKIP=2 COUNT=2 ROWS="" DRY=0
need_value() { if [ $# -lt 2 ] || [ -z "$2" ]; then die_usage "$1 needs a value"; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    -b | --build) need_value "$@"; BUILD=$2; shift 2 ;;
    -o | --out) need_value "$@"; OUT=$2; shift 2 ;;
    -c | --cases) need_value "$@"; CASES=$2; shift 2 ;;
    -k | --kernel) need_value "$@"; REGEX=$2; shift 2 ;;
    -s | --launch-skip) need_value "$@"; SKIP=$2; shift 2 ;;
    -n | --launch-count) need_value "$@"; COUNT=$2; shift 2 ;;
    -r | --table-rows) need_value "$@"; ROWS=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done

is_count() { [[ $1 =~ ^[0-9]+$ ]]; }
is_count "$SKIP" || die_usage "--launch-skip '$SKIP' is not a count"
if ! is_count "$COUNT" || [ "$COUNT" -lt 1 ]; then die_usage "--launch-count '$COUNT' is not a positive count"; fi
[ -z "$ROWS" ] || { is_count "$ROWS" && [ "$ROWS" -ge 64 ]; } || die_usage "--table-rows '$ROWS' is not a row count >= 64"
IFS=, read -r -a case_list <<<"$CASES"
for c in "${case_list[@]}"; do
  case $c in
    ssb_q1_1 | ssb_q1_2 | ssb_q1_3 | tpch_q6 | tpch_q1) ;;
    *) die_usage "'$c' is not a query case (ssb_q1_1 ssb_q1_2 ssb_q1_3 tpch_q6 tpch_q1)" ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
exe=$BUILD/bench/packscan_bench
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats
  --section WarpStateStats)
metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum

# --dry-run: the command as a line one can paste (plain words unquoted).
show() {
  local a line=""
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,+-]+$ ]]; then line+="$a "; else line+="$(printf '%q' "$a") "; fi
  done
  echo "${line% }"
}

if [ "$DRY" = 0 ]; then
  command -v "$NCU" >/dev/null || { echo "ncu-query.sh: $NCU not found"; exit 77; }
  [ -x "$exe" ] || { echo "ncu-query.sh: no $exe (build with -DPACKSCAN_WITH_CUDA=ON)"; exit 77; }
  mkdir -p "$OUT" || exit 2
  : >"$OUT/summary.txt"
fi

status=0
for c in "${case_list[@]}"; do
  rep=$OUT/ncu-$c
  bench_args=(--backend cuda --cases "$c" --reps 1)
  [ -n "$ROWS" ] && bench_args+=(--table-rows "$ROWS")
  echo "== $c: ncu -k regex:$REGEX, launches $SKIP.. ($COUNT)"
  if [ "$DRY" = 1 ]; then
    show "$NCU" --clock-control none "${sections[@]}" --metrics "$metrics" -k "regex:$REGEX" --launch-skip "$SKIP" \
      --launch-count "$COUNT" -f -o "$rep" "$exe" "${bench_args[@]}"
    show "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-units base
    show python3 "$here/ncu_summary.py" "$rep.csv"
    continue
  fi
  "$NCU" --clock-control none "${sections[@]}" --metrics "$metrics" -k "regex:$REGEX" --launch-skip "$SKIP" \
    --launch-count "$COUNT" -f -o "$rep" "$exe" "${bench_args[@]}" >"$rep.log" 2>&1
  rc=$?
  if [ "$rc" != 0 ]; then
    echo "== $c: ncu or the bench failed (exit $rc); the end of $rep.log:"
    tail -20 "$rep.log"
    status=1
    [ -f "$rep.ncu-rep" ] || continue
  fi
  grep -E "^(case|$c) " "$rep.log" | tail -2
  if "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-units base >"$rep.csv" 2>>"$rep.log" &&
    { echo "== $c"; python3 "$here/ncu_summary.py" "$rep.csv"; } >>"$OUT/summary.txt"; then
    :
  else
    echo "== $c: could not summarize $rep.ncu-rep (see $rep.log)"
    status=1
  fi
done
[ "$DRY" = 1 ] || cat "$OUT/summary.txt"
exit $status
