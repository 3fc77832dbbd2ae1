#!/bin/sh
# The rule for the files the packscan command writes (tools/outfile.h): an
# output that is the input is refused for every kind of input (a CSV, a Parquet
# or Arrow file handed to Python, stdin); a regular file is replaced through a
# temporary file and keeps its mode (and owner, as root); a pipe, FIFO or
# device is written in place, never renamed over; a dangling symlink is
# refused, the link left as it is.
# usage: output_files_test.sh PATH/TO/packscan WORKDIR
set -u
. "$(dirname "$0")/check.sh"
mode_of() { stat -c %a "$1"; }

printf 'id,name\n1,apple\n2,banana\n' >x.csv
"$P" encode -q x.csv ref.pst || { echo "FAIL: cannot encode x.csv"; exit 1; }

# A Parquet, Feather or Arrow input is handed to $PYTHON -m packscan encode;
# the command refuses an output that is that input before running it. The
# stand-in for Python replaces its output, as a table written there would.
cat >fake_python <<'EOF'
#!/bin/sh
for last; do :; done
echo replaced >"$last"
EOF
chmod +x fake_python
for ext in parquet feather arrow; do
  printf 'PAR1 not really\n' >"d.$ext"
  cp "d.$ext" d.orig
  expect 1 "$ext same name" env PYTHON=./fake_python "$P" encode "d.$ext" "d.$ext"
  has err.txt "the output d.$ext is the input d.$ext (the same file); nothing was written" "$ext same name"
  intact "d.$ext" d.orig "$ext same name"
  ln -s "d.$ext" "link.$ext"
  expect 1 "$ext through a symlink" env PYTHON=./fake_python "$P" encode "d.$ext" "link.$ext"
  has err.txt "the output link.$ext is the input d.$ext" "$ext through a symlink"
  intact "d.$ext" d.orig "$ext through a symlink"
  expect 1 "$ext from a symlink" env PYTHON=./fake_python "$P" encode "link.$ext" "d.$ext"
  intact "d.$ext" d.orig "$ext from a symlink"
done
# ... and hands over any other output.
expect 0 "parquet to a new file" env PYTHON=./fake_python "$P" encode d.parquet new.pst
[ "$(cat new.pst 2>/dev/null)" = replaced ] || fail "the Parquet input was not handed to \$PYTHON"

# A symlink to the standard output (what /dev/stdout is) into a pipe: the table
# goes down the pipe, the summary to stderr, and the link stays. A private
# link, so that a broken build replaces this one and not /dev/stdout.
ln -s /proc/self/fd/1 stdout.lnk
"$P" encode x.csv stdout.lnk 2>sum.txt | cat >piped.pst
[ -L stdout.lnk ] || fail "encode to a link to the standard output replaced the link"
intact piped.pst ref.pst "the table written to a pipe through a link to /proc/self/fd/1"
has sum.txt "2 rows, 2 columns" "the summary of a table written to the standard output"
if [ -L stdout.lnk ]; then
  "$P" encode -q x.csv /dev/stdout | cat >piped2.pst
  intact piped2.pst ref.pst "the table written to /dev/stdout into a pipe"
  [ -L /dev/stdout ] || fail "/dev/stdout is no longer a symlink"
fi
# /dev/stdout redirected to a file: written through the shell's descriptor.
"$P" encode x.csv /dev/stdout >redirected.pst 2>sum.txt
intact redirected.pst ref.pst "the table written to /dev/stdout redirected to a file"

# A FIFO: written in place for the process reading it, never replaced.
mkfifo out.fifo || fail "mkfifo failed"
cat out.fifo >from_fifo.pst &
reader=$!
expect 0 "encode to a FIFO" "$P" encode -q x.csv out.fifo
if [ -p out.fifo ]; then
  wait "$reader"
  intact from_fifo.pst ref.pst "the table read from the FIFO"
else
  fail "the FIFO out.fifo was replaced by a $(stat -c %F out.fifo)"
  kill "$reader" 2>/dev/null
  wait "$reader" 2>/dev/null
fi
ls ./*.tmp* >/dev/null 2>&1 && fail "a temporary file was left: $(ls ./*.tmp*)"

# A dangling symlink is refused: neither the link nor its target is written.
ln -s missing.pst dangling.pst
expect 1 "dangling symlink" "$P" encode -q x.csv dangling.pst
has err.txt "dangling.pst is a symbolic link to a file that does not exist; nothing was written" "dangling message"
[ -L dangling.pst ] || fail "the dangling symlink was replaced"
[ -e missing.pst ] && fail "the dangling symlink's target was created"

# Modes: a replaced file keeps its own (whatever the umask), also through a
# symlink; a new file gets 0666 less the umask.
cp ref.pst private.pst
chmod 600 private.pst
expect 0 "over a 0600 table" "$P" encode -q x.csv private.pst
[ "$(mode_of private.pst)" = 600 ] || fail "a 0600 table became $(mode_of private.pst)"
cp ref.pst shared.pst
chmod 640 shared.pst
expect 0 "over a 0640 table, umask 077" sh -c 'umask 077; "$1" encode -q x.csv shared.pst' sh "$P"
[ "$(mode_of shared.pst)" = 640 ] || fail "a 0640 table became $(mode_of shared.pst) under umask 077"
ln -s private.pst private.lnk
chmod 604 private.pst
expect 0 "over a 0604 table through a symlink" "$P" encode -q x.csv private.lnk
[ -L private.lnk ] || fail "the symlink private.lnk was replaced"
[ "$(mode_of private.pst)" = 604 ] || fail "a 0604 table written through a symlink became $(mode_of private.pst)"
expect 0 "new table, umask 027" sh -c 'umask 027; "$1" encode -q x.csv new027.pst' sh "$P"
[ "$(mode_of new027.pst)" = 640 ] || fail "a new table under umask 027 is $(mode_of new027.pst)"
expect 0 "new table, umask 002" sh -c 'umask 002; "$1" encode -q x.csv new002.pst' sh "$P"
[ "$(mode_of new002.pst)" = 664 ] || fail "a new table under umask 002 is $(mode_of new002.pst)"
# The owner too, where the process may give it (root).
if [ "$(id -u)" = 0 ]; then
  cp ref.pst owned.pst
  chown 4321:4322 owned.pst
  expect 0 "over another user's table" "$P" encode -q x.csv owned.pst
  [ "$(stat -c %u:%g owned.pst)" = 4321:4322 ] || fail "the owner became $(stat -c %u:%g owned.pst)"
fi

# query --bitmap: the same rule. Never the table queried; a FIFO in place; a
# file's mode kept.
cp ref.pst q.pst
expect 1 "--bitmap onto the table" "$P" query q.pst "id = 2" --bitmap q.pst
has err.txt "the output q.pst is the input q.pst" "--bitmap onto the table"
intact q.pst ref.pst "--bitmap onto the table"
printf 'old' >bits
chmod 600 bits
expect 0 "--bitmap over a 0600 file" "$P" query q.pst "id = 2" --bitmap bits
[ "$(od -An -tx1 bits | tr -d ' ')" = 02 ] || fail "--bitmap wrote $(od -An -tx1 bits)"
[ "$(mode_of bits)" = 600 ] || fail "--bitmap: a 0600 file became $(mode_of bits)"
rm -f out.fifo && mkfifo out.fifo
cat out.fifo >bits_from_fifo &
reader=$!
expect 0 "--bitmap to a FIFO" "$P" query q.pst "id = 2" --bitmap out.fifo
if [ -p out.fifo ]; then
  wait "$reader"
  [ "$(od -An -tx1 bits_from_fifo | tr -d ' ')" = 02 ] || fail "--bitmap through a FIFO: $(od -An -tx1 bits_from_fifo)"
else
  fail "--bitmap replaced the FIFO"
  kill "$reader" 2>/dev/null
  wait "$reader" 2>/dev/null
fi

# demo --out reads its table back, so it takes a regular file only.
expect 2 "demo --out a FIFO" "$P" demo --rows 1000 --out out.fifo
has err.txt "is not a regular file" "demo --out a FIFO"
[ -p out.fifo ] || fail "demo --out replaced the FIFO"

finish output_files "output file"
