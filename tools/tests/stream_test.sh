#!/bin/sh
# Tables streamed from their mapped file (--device-memory-limit, --host-resident)
# and tables split across a context of two devices (--devices) give byte for
# byte the output of tables copied to one device, in `query`,
# SELECTs and `shell`; bad sizes are usage errors naming the option and value;
# the progress bar never reaches pipes and shows on a terminal.
# usage: stream_test.sh PATH/TO/packscan WORKDIR BACKEND
set -u
P=$1
W=$2.$$ # its own directory: a GPU check may run the same test twice at once
B=$3
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$W" || exit 1
fails=0
fail() { echo "FAIL [$B]: $*"; fails=$((fails + 1)); }
has() { grep -q -- "$2" "$1" || { fail "$3: '$2' not in $1:"; cat "$1"; }; }

# 70,000 rows (more than the 65,536 of a device's first part): a sorted key (DELTA where the encoder may choose it), a
# scattered int, a decimal with nulls, dates, strings with nulls.
awk 'BEGIN {
  print "id,k,price,day,name";
  split("apple,banana,cherry,date,elder,fig,grape", names, ",");
  for (i = 1; i <= 70000; i++) {
    k = (i * 7919) % 1000;
    price = (i % 13 == 0) ? "" : sprintf("%d.%02d", (i * 31) % 500, i % 100);
    d = 1 + (i * 17) % 28;
    day = sprintf("%04d-%02d-%02d", 1995 + int(i / 4000), 1 + (i % 12), d);
    name = (i % 11 == 0) ? "" : names[1 + (i * 3) % 7];
    print i "," k "," price "," day "," name;
  }
}' >t.csv
"$P" encode -q -e for t.csv t.pst || fail "encode -e for"
"$P" encode -q -e delta t.csv delta.pst || fail "encode -e delta"
# No device of the backend (cuda where CUDA is compiled in but there is no
# GPU): skipped (77), unless the run demands CUDA (PACKSCAN_REQUIRE_CUDA=1).
if ! "$P" query --backend "$B" t.pst "k < 0" >probe.txt 2>&1 && grep -q "PS_ERR_NO_DEVICE" probe.txt; then
  if [ "$B" = cuda ] && [ "${PACKSCAN_REQUIRE_CUDA:-0}" = 1 ]; then
    fail "no CUDA device, and PACKSCAN_REQUIRE_CUDA=1:"
    cat probe.txt
    exit 1
  fi
  echo "stream_test [$B]: skipped, no device: $(cat probe.txt)"
  cd / && rm -rf "$W"
  exit 77
fi
"$P" info delta.pst >info.txt 2>&1
has info.txt "DELTA" "the DELTA table has DELTA columns"

cat >script.sql <<'SQL'
k < 500 AND name IN ('apple', 'cherry')
SELECT COUNT(*) WHERE price IS NULL OR day < DATE '1997-06-01'
SELECT id, price, day, name WHERE k BETWEEN 10 AND 20 ORDER BY price DESC, id LIMIT 40
SELECT name, count(*), sum(price), min(day), max(id) WHERE k > 100 GROUP BY name
SELECT k, count(*), avg(price) WHERE name LIKE '%e%' GROUP BY k
SELECT id, count(*) GROUP BY id
SELECT sum(price * 2 + k), count(name) WHERE NOT (k >= 900)
SQL

# run MODE-NAME OPTIONS...: the same statements as a query, a SELECT, --rows,
# --bitmap and a shell script, stdout into out.MODE-NAME.*, stderr must stay
# empty (no progress bar in a pipe)
run() {
  m=$1; shift
  for tbl in t delta; do
    o=out.$tbl.$m
    "$P" query --backend "$B" "$@" $tbl.pst "day >= DATE '2001-01-01' AND price > 10" --rows >$o.rows 2>$o.err ||
      fail "$m $tbl: --rows exit $?"
    "$P" query --backend "$B" "$@" $tbl.pst "k < 300" --select id,price,day,name --order-by price,id >$o.select 2>>$o.err ||
      fail "$m $tbl: --select exit $?"
    "$P" query --backend "$B" "$@" --bitmap $o.bitmap $tbl.pst "name = 'fig' OR price < 5" >$o.count 2>>$o.err ||
      fail "$m $tbl: --bitmap exit $?"
    "$P" query --backend "$B" "$@" $tbl.pst "SELECT name, count(*), sum(price), avg(k) WHERE id > 1000 GROUP BY name" \
      >$o.sql 2>>$o.err || fail "$m $tbl: SELECT exit $?"
    "$P" shell --backend "$B" "$@" $tbl.pst <script.sql >$o.shell 2>>$o.err || fail "$m $tbl: shell exit $?"
    [ -s $o.err ] && { fail "$m $tbl: stderr is not empty:"; cat $o.err; }
  done
}
# where the tests pick an OpenCL platform by PACKSCAN_OPENCL_PLATFORM, every
# run names it (--opencl-platform), so that --devices 0,0 is that platform's
# device 0 twice: a comparison of one device with itself
PLAT=
[ "$B" = opencl ] && PLAT=${PACKSCAN_OPENCL_PLATFORM:-}
# The modes run at once, each in its own subshell (its own output files; its
# failures counted in fails.MODE): a process under compute-sanitizer takes
# seconds to start, and the modes' fifty in a row outlasted the sanitizer
# stage's budget.
run_bg() { (fails=0; run "$@"; echo $fails >fails.$1) & }
run_bg plain ${PLAT:+--opencl-platform "$PLAT"}
run_bg limit64k --device-memory-limit 64K ${PLAT:+--opencl-platform "$PLAT"}
run_bg host --host-resident ${PLAT:+--opencl-platform "$PLAT"}
# a context over two devices (device 0 twice: any machine has it)
run_bg devices --devices 0,0 ${PLAT:+--opencl-platform "$PLAT"}
run_bg devices_host --devices 0,0 --host-resident --device-memory-limit 64K ${PLAT:+--opencl-platform "$PLAT"}
wait
modes="limit64k host devices devices_host"
for m in plain $modes; do
  [ -f fails.$m ] || { fail "mode $m did not finish"; continue; }
  fails=$((fails + $(cat fails.$m)))
done
for tbl in t delta; do
  for m in $modes; do
    for f in rows select bitmap count sql shell; do
      cmp -s out.$tbl.plain.$f out.$tbl.$m.$f || fail "$tbl: $m's $f output differs from the device-resident one"
    done
  done
done
# the DELTA table holds the same values: the same output (ORDER BY and
# --host-gather decode its columns on the host)
for f in rows select bitmap count sql shell; do
  cmp -s out.t.plain.$f out.delta.plain.$f || fail "the DELTA table's $f output differs from the FOR table's"
done
"$P" query --backend "$B" delta.pst "k < 300" --select id,price,day,name --host-gather >out.txt 2>err.txt ||
  fail "--host-gather on the DELTA table: $(cat err.txt)"
"$P" query --backend "$B" t.pst "k < 300" --select id,price,day,name >want.txt 2>err.txt
cmp -s out.txt want.txt || fail "--host-gather on the DELTA table: the output differs"
[ "$(wc -l <out.t.plain.shell)" -gt 100 ] || fail "the shell script printed too little: $(wc -l <out.t.plain.shell)"
[ "$(cat out.t.plain.count)" -gt 0 ] || fail "the count is 0"

# --timing says how the columns live: the table's 40,000 rows take more than 64K
"$P" query --backend "$B" --timing --device-memory-limit 64K t.pst "k < 5" >/dev/null 2>err.txt
has err.txt "columns: host-resident, streamed from the mapped file" "a table over the limit streams"
"$P" query --backend "$B" --timing --device-memory-limit 1G t.pst "SELECT count(*)" >/dev/null 2>err.txt
has err.txt "columns: copied to the device" "a table under the limit is copied"
"$P" query --backend "$B" --timing t.pst "k < 5" >/dev/null 2>err.txt
has err.txt "columns: copied to the device" "no limit: copied"
"$P" query --backend "$B" --timing --host-resident delta.pst "SELECT count(*)" >/dev/null 2>err.txt
has err.txt "columns: host-resident" "--host-resident streams"

# sizes: accepted forms, and bad values refused naming the option and the value
for v in 65536 64K 64k 64KiB 64KB 1M 2G 1T; do
  "$P" query --backend reference --device-memory-limit "$v" t.pst "k < 5" >out.txt 2>err.txt || fail "size '$v' refused"
done
for v in 10 65535 63K 12x 1.5G -5 "" K 99999999999T 18446744073709551616; do
  "$P" query --backend "$B" --device-memory-limit "$v" t.pst "k < 5" >out.txt 2>err.txt
  rc=$?
  [ $rc = 2 ] || fail "size '$v': exit $rc, expected 2"
  has err.txt "packscan query: --device-memory-limit '$v': expected a size of at least 64K" "size '$v' message"
done
"$P" query --backend "$B" t.pst "SELECT count(*)" --device-memory-limit=10 >out.txt 2>err.txt
[ $? = 2 ] || fail "SELECT with a bad size: not a usage error"
has err.txt "device-memory-limit '10'" "SELECT bad size message"
"$P" shell --backend "$B" --device-memory-limit 3X t.pst </dev/null >out.txt 2>err.txt
[ $? = 2 ] || fail "shell with a bad size: not a usage error"
has err.txt "packscan shell: --device-memory-limit '3X'" "shell bad size message"
"$P" query --backend "$B" t.pst "k < 5" --device-memory-limit >out.txt 2>err.txt
[ $? = 2 ] || fail "a missing size: not a usage error"
has err.txt "option '--device-memory-limit' needs a value" "missing size message"

# On a terminal (script(1)) the bar is drawn (here at once: --progress-delay 0)
# and erased before the result; --no-progress draws none. script(1) forwards
# its input to the terminal: each one reads /dev/null or the pipe given, never
# the input this test was started with.
if command -v script >/dev/null 2>&1; then
  script -qec "'$P' query --backend $B --progress-delay 0 --device-memory-limit 64K t.pst 'k < 500'" /dev/null \
    </dev/null >pty.txt 2>&1
  tr -d '\r' <pty.txt >pty2.txt
  has pty2.txt "scanning \[" "the bar on a terminal"
  has pty2.txt "scanning \[#*\] 100%" "the bar reaches 100%"
  has pty2.txt "$(printf '\033')\[K35000$" "the bar erased (ESC [K) before the count"
  script -qec "'$P' query --backend $B --progress-delay 0 --no-progress t.pst 'k < 500'" /dev/null </dev/null >pty.txt 2>&1
  grep -q "scanning" pty.txt && fail "--no-progress drew a bar: $(cat pty.txt)"
  # A scan that ends before the delay draws nothing: an explicit delay that
  # no scan here reaches, so that a loaded machine cannot draw the bar.
  script -qec "'$P' query --backend $B --progress-delay 600 t.pst 'k < 500'" /dev/null </dev/null >pty.txt 2>&1
  grep -q "scanning" pty.txt && fail "a scan shorter than the delay drew a bar: $(cat pty.txt)"
  printf 'SELECT k, count(*) GROUP BY k\n.quit\n' |
    script -qec "'$P' shell --backend $B --progress-delay 0 --host-resident t.pst" /dev/null >pty.txt 2>&1
  tr -d '\r' <pty.txt >pty2.txt
  has pty2.txt "scanning \[" "the shell's bar on a terminal"
else
  echo "note: script(1) not found: the progress bar on a terminal was not tested"
fi

[ $fails = 0 ] && echo "stream_test [$B]: all passed" && cd / && rm -rf "$W"
[ $fails = 0 ]
