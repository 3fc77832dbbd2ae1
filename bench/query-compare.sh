#!/usr/bin/env bash
# The query and after-filter cases (--cases tables) on two backends in one
# call, then bench/compare.py on their JSON: issue 14's "OpenCL on NVIDIA
# within 1.5x of CUDA on every query case", with each run's own copy
# bandwidth and % of copy beside the times.
#
#   bench/query-compare.sh [-b BUILD] [-o OUT] [-B FIRST,SECOND] [-p PLATFORM] [-x RATIO] [-- BENCH OPTIONS]
#
# Writes OUT/FIRST.json, OUT/SECOND.json (packscan_bench --json), their
# console output in OUT/FIRST.log and OUT/SECOND.log, and the table in
# OUT/compare.txt (also printed). Exit status: 0; 1 when a bench check failed
# or a case is over RATIO; 2 on a usage error or a run that did not finish.
set -u

usage() {
  cat <<'EOF'
usage: bench/query-compare.sh [options] [-- packscan_bench options]
  -b, --build DIR         build tree holding bench/packscan_bench (default: build)
  -o, --out DIR           where the JSON, logs and compare.txt go (default: query-compare)
  -B, --backends A,B      the two backends, A first (default: cuda,opencl)
  -p, --platform P        OpenCL platform, index or part of its name (default: NVIDIA when
                          A or B is opencl and the first is cuda, else the bench's choice)
  -x, --max-ratio R       mark and fail cases where B takes more than R times A (default: 1.5)
  -h, --help              this text
Everything after -- goes to both packscan_bench runs (e.g. --table-rows 2000000 --reps 5).
EOF
}

die_usage() {
  echo "query-compare.sh: $*" >&2
  usage >&2
  exit 2
}

BUILD=build OUT=query-compare BACKENDS=cuda,opencl PLATFORM="" RATIO=1.5
need_value() { if [ $# -lt 2 ] || [ -z "$2" ]; then die_usage "$1 needs a value"; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    -b | --build) need_value "$@"; BUILD=$2; shift 2 ;;
    -o | --out) need_value "$@"; OUT=$2; shift 2 ;;
    -B | --backends) need_value "$@"; BACKENDS=$2; shift 2 ;;
    -p | --platform) need_value "$@"; PLATFORM=$2; shift 2 ;;
    -x | --max-ratio) need_value "$@"; RATIO=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done
IFS=, read -r -a pair <<<"$BACKENDS"
[ ${#pair[@]} = 2 ] || die_usage "backends must be two, comma-separated (got '$BACKENDS')"
[[ $RATIO =~ ^[0-9]+(\.[0-9]+)?$ ]] || die_usage "--max-ratio '$RATIO' is not a number"
[ -z "$PLATFORM" ] && [ "${pair[0]}" = cuda ] && [ "${pair[1]}" = opencl ] && PLATFORM=NVIDIA

here=$(cd "$(dirname "$0")" && pwd)
exe=$BUILD/bench/packscan_bench
[ -x "$exe" ] || { echo "query-compare.sh: no $exe" >&2; exit 2; }
mkdir -p "$OUT" || exit 2

status=0
for be in "${pair[@]}"; do
  args=(--backend "$be" --cases tables --json "$OUT/$be.json")
  [ "$be" = opencl ] && [ -n "$PLATFORM" ] && args+=(--opencl-platform "$PLATFORM")
  echo "== $exe ${args[*]} $*"
  "$exe" "${args[@]}" "$@" 2>&1 | tee "$OUT/$be.log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" = 1 ]; then
    status=1 # a check failed; the JSON is still there
  elif [ "$rc" != 0 ]; then
    echo "query-compare.sh: packscan_bench --backend $be exited $rc" >&2
    exit 2
  fi
done
python3 "$here/compare.py" "$OUT/${pair[0]}.json" "$OUT/${pair[1]}.json" --max-ratio "$RATIO" --require tables |
  tee "$OUT/compare.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || status=$((rc > status ? rc : status))
exit $status
