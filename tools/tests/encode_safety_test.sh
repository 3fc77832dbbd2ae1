#!/bin/sh
# `packscan encode` never destroys a file: it refuses an output that is the
# input (by any name), and a failed, interrupted or killed encode leaves the
# file already at the output path as it was.
# usage: encode_safety_test.sh PATH/TO/packscan WORKDIR
set -u
. "$(dirname "$0")/check.sh"

printf 'id,name\n1,apple\n2,banana\n' >x.csv
cp x.csv x.orig

# The output is the input: by the same name, through a symlink, a hard
# link, or stdin redirected from it.
expect 1 "same file" "$P" encode x.csv x.csv
has err.txt "the output x.csv is the input x.csv (the same file); nothing was written" "same file message"
intact x.csv x.orig "same file"
ln -s x.csv sym.csv
expect 1 "symlinked output" "$P" encode x.csv sym.csv
has err.txt "the output sym.csv is the input x.csv" "symlink message"
intact x.csv x.orig "symlinked output"
[ -L sym.csv ] || fail "the symlink was replaced"
expect 1 "symlinked input" "$P" encode sym.csv x.csv
intact x.csv x.orig "symlinked input"
ln x.csv hard.csv
expect 1 "hard link" "$P" encode hard.csv x.csv
has err.txt "the output x.csv is the input hard.csv" "hard link message"
intact x.csv x.orig "hard link"
expect 1 "stdin" sh -c '"$1" encode - x.csv <x.csv' sh "$P"
has err.txt "the output x.csv is the input (stdin)" "stdin message"
intact x.csv x.orig "stdin"
ls ./*.tmp* >/dev/null 2>&1 && fail "a temporary file was left: $(ls ./*.tmp*)"

# A table written through a symlink replaces the file the link points to.
expect 0 "encode" "$P" encode -q x.csv t.pst
cp t.pst t.orig
ln -s t.pst link.pst
printf 'id,name\n7,cherry\n' >y.csv
expect 0 "through a symlink" "$P" encode -q y.csv link.pst
[ -L link.pst ] || fail "encode replaced the symlink link.pst instead of its target"
expect 0 "query through the link" "$P" query link.pst "id = 7"
[ "$(cat out.txt)" = "1" ] || fail "the link's target was not replaced: $(cat out.txt)"
cp t.orig t.pst

# A failed encode (a bad row) leaves the previous table.
printf 'id,name\n1\n' >bad.csv
expect 1 "bad rows" "$P" encode bad.csv t.pst
intact t.pst t.orig "failed encode"

# Killed while reading its input (a FIFO holds it mid-CSV): the previous
# table stays, and no temporary file is left.
if mkfifo in.fifo 2>/dev/null; then
  "$P" encode -q in.fifo t.pst >out.txt 2>err.txt &
  pid=$!
  exec 3>in.fifo
  printf 'id,name\n1,apple\n2,banana\n' >&3
  sleep 0.3
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  exec 3>&-
  intact t.pst t.orig "killed mid-encode"
  ls ./t.pst.tmp* >/dev/null 2>&1 && fail "killed mid-read left $(ls ./t.pst.tmp*)"
  rm -f in.fifo
else
  fail "mkfifo failed: cannot test a kill mid-encode"
fi

# Killed at several moments of a larger encode: the output is always either
# the previous table, byte for byte, or a complete new one that verifies.
awk 'BEGIN { print "id,price,name"; for (i = 0; i < 200000; i++) printf "%d,%d.%02d,n%d\n", i, i % 977, i % 100, i % 5000 }' >big.csv
for delay in 0.05 0.15 0.3 0.6; do
  cp t.orig t.pst
  "$P" encode -q big.csv t.pst >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if ! cmp -s t.pst t.orig; then
    "$P" info t.pst >out.txt 2>err.txt || fail "killed after ${delay}s: t.pst is neither the old table nor a valid one"
    has out.txt "200000 rows" "killed after ${delay}s: the new table"
  fi
  rm -f t.pst.tmp*
done

finish encode_safety "encode safety"
