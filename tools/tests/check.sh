# What the shell tests of the packscan command share, sourced first by each
# (usage: SCRIPT PATH/TO/packscan WORKDIR): P, the command; WORKDIR emptied
# and made the current directory; fail, expect, has, intact and finish.
P=$1
W=$2
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect STATUS DESCRIPTION -- command...; output in out.txt / err.txt
expect() {
  want=$1; shift; what=$1; shift
  "$@" >out.txt 2>err.txt
  got=$?
  [ "$got" = "$want" ] || { fail "$what: exit $got, expected $want"; cat err.txt; }
}
has() { grep -q -- "$2" "$1" || { fail "$3: '$2' not in $1:"; cat "$1"; }; }
intact() { cmp -s "$1" "$2" || fail "$3: $1 was changed"; }
# finish NAME WHAT: the count of failed WHAT checks and exit 1, or NAME passed.
finish() {
  if [ "$fails" -ne 0 ]; then
    echo "$fails $2 check(s) failed"
    exit 1
  fi
  echo "$1: all tests passed"
}
