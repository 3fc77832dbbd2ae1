#!/bin/sh
# Tests of the packscan command itself: exit codes, messages, output formats.
# usage: cli_test.sh PATH/TO/packscan WORKDIR
set -u
. "$(dirname "$0")/check.sh"

cat >t.csv <<'CSV'
id,price,day,name,note
1,12.50,1994-01-01,apple,"hello, world"
2,3.1,1994-02-03,banana,
3,,1995-12-31,"che""rry","multi
line"
4,-0.25,,apple,""
5,100,2000-02-29,,x
CSV

expect 0 "encode" "$P" encode t.csv t.pst
has out.txt "5 rows, 5 columns" "encode summary"
has out.txt "decimal(2)" "encode summary types"
has out.txt "dict/3" "encode summary dict"
expect 0 "encode progress" "$P" encode --progress t.csv tp.pst
has err.txt "column 5 of 5: note" "progress covers the columns"
has err.txt "encoding \[#*\] 100%" "progress reaches 100%"
has err.txt "writing tp.pst" "progress covers writing"
# lossless float columns (docs/float-encoding.md): mph is no decimal at one scale
printf 'knots,mph\n1,1.15078\n13,14.960139999999999\n9,10.357019999999999\n13,14.960139999999999\n0,0\n' >f.csv
expect 0 "encode floats" "$P" encode -t mph:float f.csv f.pst
has out.txt "float64/ALP" "encode summary: the float mapping"
expect 0 "info floats" "$P" info f.pst
has out.txt "FOR ALP e" "info: the float mapping"
expect 0 "query floats" "$P" query f.pst "mph > 1.0357019999999999e1"
has out.txt "^2$" "float comparison count"
expect 0 "compare float columns" "$P" query f.pst "mph > knots"
has out.txt "^4$" "a lossless float column against an integer column"
expect 0 "compare float columns, equal" "$P" query f.pst "knots = mph OR mph < knots"
has out.txt "^1$" "a lossless float column equal to an integer column (0 = 0)"
expect 0 "select floats" "$P" query --select mph --format csv f.pst "knots = 9"
has out.txt "^10.357019999999999$" "float value printed as it reads back"
expect 0 "sum floats" "$P" query --format csv f.pst "SELECT SUM(mph), AVG(mph) FROM t WHERE knots > 0"
has out.txt "^41.428079999999994,10.357019999999999$" "float SUM and AVG: the exact sums rounded once (math.fsum)"
expect 0 "float arithmetic" "$P" query --format csv f.pst "SELECT SUM(mph * 2), MAX(mph - knots) FROM t WHERE knots > 0"
has out.txt "^82.85615999999999,1.960139999999999$" "arithmetic on a float column: per-row doubles, their exact sum rounded once (math.fsum)"
printf 'a,b\n1,2\n' >small.csv
expect 0 "encode small" "$P" encode small.csv small.pst
has out.txt "(0\.0[1-9][0-9]*x: the table is larger than the CSV)" "ratio below 1"
grep -q " 0.0x" out.txt && fail "ratio printed as 0.0x: $(cat out.txt)"
expect 0 "info" "$P" info t.pst
has out.txt "checksums ok" "info"
has out.txt "date" "info date"
has out.txt "FOR ref -25 scale 2" "info decimal"
has out.txt "zone maps" "info zone maps"
has out.txt "^id  *4096  *1 " "info zone map of a column"

# --sort-by: by day, then name; nulls last; stable
expect 0 "encode --sort-by" "$P" encode -q --sort-by day,name t.csv sorted.pst
expect 0 "sorted rows" "$P" query sorted.pst "id > 0" --select id --no-header
[ "$(tr '\n' ' ' <out.txt)" = "1 2 3 5 4 " ] || fail "sort-by day,name: $(tr '\n' ' ' <out.txt)"
expect 0 "sorted by name" "$P" encode -q --sort-by name t.csv byname.pst
expect 0 "sorted rows by name" "$P" query byname.pst "id > 0" --select id --no-header
[ "$(tr '\n' ' ' <out.txt)" = "1 4 2 3 5 " ] || fail "sort-by name (stable, nulls last): $(tr '\n' ' ' <out.txt)"
expect 2 "sort-by unknown column" "$P" encode -q --sort-by nope t.csv bad.pst
has err.txt "no column 'nope'" "sort-by unknown column message"

expect 0 "count" "$P" query t.pst "price > 3"
[ "$(cat out.txt)" = "3" ] || fail "count: $(cat out.txt)"
expect 0 "rows" "$P" query t.pst "name = 'apple' OR day >= DATE '1995-01-01'" --rows
[ "$(tr '\n' ' ' <out.txt)" = "0 2 3 4 " ] || fail "rows: $(cat out.txt)"
expect 0 "flip" "$P" query t.pst "3 < price" --rows
[ "$(tr '\n' ' ' <out.txt)" = "0 1 4 " ] || fail "flip: $(cat out.txt)"
expect 0 "select" "$P" query t.pst "id >= 3" --select "id,price,day,name,note"
printf 'id,price,day,name,note\n3,,1995-12-31,"che""rry","multi\nline"\n4,-0.25,,apple,""\n5,100.00,2000-02-29,,x\n' >want.txt
cmp -s out.txt want.txt || { fail "select output"; cat out.txt; }
expect 0 "select host" "$P" query t.pst "id >= 3" --select "id,price,day,name,note" --host-gather
cmp -s out.txt want.txt || { fail "select output (host)"; cat out.txt; }
expect 0 "select star" "$P" query t.pst "note IS NULL" --select '*' --no-header
[ "$(cat out.txt)" = "2,3.10,1994-02-03,banana," ] || fail "select star: $(cat out.txt)"
expect 0 "bitmap" "$P" query t.pst "id != 2" --bitmap bm.bin
[ "$(wc -c <bm.bin | tr -d ' ')" = "1" ] || fail "bitmap size"
[ "$(od -An -tu1 bm.bin | tr -d ' ')" = "29" ] || fail "bitmap bits: $(od -An -tu1 bm.bin)"
expect 0 "timing" "$P" query t.pst "id < 3" --timing --repeat 3 --explain
has err.txt "backend: " "timing backend"
has err.txt "rows/s" "timing rows/s"
has err.txt "expression: id < 3" "explain"
expect 0 "like escape" "$P" query t.pst "name LIKE 'che\"%' ESCAPE '\\'"
[ "$(cat out.txt)" = "1" ] || fail "like escape: $(cat out.txt)"

# timestamps, dates and times: inferred, queried with literals of any precision, shown as text
cat >ts.csv <<'CSV'
id,ts,ms,t
1,2024-09-05 07:53:23,2024-09-05T07:53:23.5Z,07:53:23
2,2024-09-05 07:53:24,2024-09-05T07:53:23.123+02:00,23:59:59
3,2024-09-04,1969-12-31 23:59:59.999,00:00
4,,,12:00:00
CSV
expect 0 "encode timestamps" "$P" encode ts.csv ts.pst
has out.txt "ts .*timestamp " "timestamp inferred"
has out.txt "ms .*timestamp(3)" "millisecond unit inferred"
has out.txt "t .*time " "time inferred"
expect 0 "info timestamps" "$P" info ts.pst
has out.txt "v1.3" "table format version 1.3"
has out.txt "FOR ref 2024-09-04 00:00:00 " "timestamp reference shown as text"
has out.txt "FOR ref 1969-12-31 23:59:59.999 " "millisecond reference shown as text"
expect 0 "timestamp literal" "$P" query ts.pst "ts = '2024-09-05 07:53:23'" --rows
[ "$(tr '\n' ' ' <out.txt)" = "0 " ] || fail "timestamp literal: $(cat out.txt)"
expect 0 "timestamp between" "$P" query ts.pst "ts BETWEEN DATE '2024-09-05' AND TIMESTAMP '2024-09-05 23:59:59'" --rows
[ "$(tr '\n' ' ' <out.txt)" = "0 1 " ] || fail "timestamp between: $(cat out.txt)"
expect 0 "finer literal" "$P" query ts.pst "ts > '2024-09-05 07:53:23.5'" --rows
[ "$(tr '\n' ' ' <out.txt)" = "1 " ] || fail "finer literal: $(cat out.txt)"
expect 0 "finer equality" "$P" query ts.pst "ts = '2024-09-05 07:53:23.5'"
[ "$(cat out.txt)" = "0" ] || fail "finer equality: $(cat out.txt)"
expect 0 "time literal" "$P" query ts.pst "t >= TIME '12:00'" --rows
[ "$(tr '\n' ' ' <out.txt)" = "1 3 " ] || fail "time literal: $(cat out.txt)"
expect 0 "timestamps shown as text" "$P" query ts.pst "id > 0" --select ts,ms,t --format csv --order-by ms
printf 'ts,ms,t\n2024-09-04 00:00:00,1969-12-31 23:59:59.999,00:00:00\n2024-09-05 07:53:24,2024-09-05 05:53:23.123,23:59:59\n2024-09-05 07:53:23,2024-09-05 07:53:23.500,07:53:23\n,,12:00:00\n' >want.txt
cmp -s out.txt want.txt || { fail "timestamps shown as text"; cat out.txt; }
expect 1 "timestamp vs integer" "$P" query ts.pst "ts = 5"
has err.txt "write TIMESTAMP 'yyyy-mm-dd hh:mm:ss'" "timestamp mismatch hint"
printf 'a\n2024-09-05 07:53:23.1\n' >tsbad.csv
expect 0 "typed timestamp unit" "$P" encode -t a:timestamp tsbad.csv tsbad.pst
printf 'a\n2024-09-05 07:53:23.1234\n' >tsbad.csv
expect 1 "typed timestamp(3) too fine" "$P" encode -t 'a:timestamp(3)' tsbad.csv tsbad.pst
has err.txt "has more fraction digits than timestamp(3)" "typed timestamp digits message"

# inference: exponents, booleans, money, padded numbers, fallbacks with a warning, delimiters
printf 'e,flag,fare,padded,w\n1e5,TRUE,$12.50," 1",1\n-2.5E-3,false,-$3,2 ,x\n' >inf.csv
expect 0 "encode inference" "$P" encode -q inf.csv inf.pst
has err.txt "column 5 'w' is stored as strings: line 3 has 'x', not a number like most values; --types 'w:decimal'" "fallback warning"
has err.txt "'\$' signs dropped" "money note"
expect 0 "boolean query" "$P" query inf.pst "flag = TRUE AND fare > 12.4 AND e >= 1e5 AND padded = 1" --select flag,fare,e --format json
[ "$(cat out.txt)" = '{"flag":true,"fare":12.50,"e":100000.0000}' ] || fail "boolean query: $(cat out.txt)"
expect 1 "boolean mismatch" "$P" query inf.pst "flag = 1"
has err.txt "write TRUE or FALSE" "boolean mismatch hint"
printf 'a\tb\n1\t2\n' >tab.csv
expect 0 "tab detected" "$P" encode tab.csv tab.pst
has out.txt "delimiter: tab (detected" "tab detected"
printf 'Price,Name\n1.5,a\n' >ci.csv
expect 0 "types case-insensitive" "$P" encode -t price:decimal,NAME:string ci.csv ci.pst
has out.txt "Price .*decimal(1)" "types case-insensitive"

# exact decimal literals: a number with a '.' compares exactly with integer and decimal columns
printf 'x,price\n9007199254740993,0.10\n9007199254740992,0.20\n' >exact.csv
expect 0 "encode exact" "$P" encode -q exact.csv exact.pst
for q in "x = 9007199254740993.0:0" "x = 9007199254740992.5:" "x < 9007199254740992.5:1" \
         "price = 0.10000000000000000001:" "price > 0.10000000000000000001:1" "price = 0.1:0" \
         "price IN (0.1, 0.25):0" "price BETWEEN 0.1 AND 0.2:0 1" "price <= 1e-1:0"; do
  expect 0 "exact: ${q%%:*}" "$P" query exact.pst "${q%%:*}" --rows
  [ "$(tr '\n' ' ' <out.txt | sed 's/ $//')" = "${q#*:}" ] || fail "exact: ${q%%:*}: $(cat out.txt)"
done
expect 0 "explain decimal" "$P" query exact.pst "x = 9007199254740993.0 AND price < 2.5e-1" --explain
has err.txt "expression: (x = 9007199254740993.0 AND price < 0.25e0)" "explain decimal and double"

# 40 equalities ORed on one column: one IN list
q=$(awk 'BEGIN { for (i = 0; i < 40; i++) printf "%sid = %d", i ? " OR " : "", i }')
expect 0 "long OR of equalities" "$P" query t.pst "$q"
[ "$(cat out.txt)" = "5" ] || fail "long OR of equalities: $(cat out.txt)"
q=$(awk 'BEGIN { for (i = 0; i < 40; i++) printf "%s(id = %d AND price > 0)", i ? " OR " : "", i }')
expect 1 "predicate limit" "$P" query t.pst "$q"
has err.txt "PS_ERR_LIMIT: .*64 instructions" "predicate limit message"

# a dictionary of unique strings: info says what was chosen and what it costs
awk 'BEGIN { print "id,code"; for (i = 0; i < 500; i++) printf "%d,key-%d-%d\n", i, i * 7919 % 10007, i }' >uniq.csv
expect 0 "encode unique strings" "$P" encode -q uniq.csv uniq.pst
expect 0 "info unique strings" "$P" info uniq.pst
has out.txt "note: 'code': 500 distinct strings in 500 values: dictionary .* more than plain strings" "info dictionary note"
"$P" info t.pst | grep -q "^note:" && fail "dictionary note on a table that does not need one"

# output formats, ORDER BY, LIMIT, --rows with --select
expect 0 "format table" "$P" query t.pst "id > 0" --select id,price,name,note --format table
printf ' id |  price | name    | note\n----+--------+---------+--------------\n  1 |  12.50 | apple   | hello, world\n  2 |   3.10 | banana  | NULL\n  3 |   NULL | che"rry | multi\\nline\n  4 |  -0.25 | apple   | \n  5 | 100.00 | NULL    | x\n' >want.txt
cmp -s out.txt want.txt || { fail "format table"; cat out.txt; }
expect 0 "format json" "$P" query t.pst "id >= 3" --select '*' --format JSON
printf '{"id":3,"price":null,"day":"1995-12-31","name":"che\\"rry","note":"multi\\nline"}\n{"id":4,"price":-0.25,"day":null,"name":"apple","note":""}\n{"id":5,"price":100.00,"day":"2000-02-29","name":null,"note":"x"}\n' >want.txt
cmp -s out.txt want.txt || { fail "format json"; cat out.txt; }
expect 0 "order desc nulls last" "$P" query t.pst "id > 0" --rows --order-by "price DESC"
[ "$(tr '\n' ' ' <out.txt)" = "4 0 1 3 2 " ] || fail "order desc: $(cat out.txt)"
expect 0 "order asc nulls last" "$P" query t.pst "id > 0" --rows --order-by "price"
[ "$(tr '\n' ' ' <out.txt)" = "3 1 0 4 2 " ] || fail "order asc: $(cat out.txt)"
expect 0 "order two keys, limit" "$P" query t.pst "id > 0" --select ID --order-by "name asc, id desc" --limit 3 --no-header
[ "$(tr '\n' ' ' <out.txt)" = "4 1 2 " ] || fail "order two keys: $(cat out.txt)"
expect 0 "order by date, string" "$P" query t.pst "id > 0" --select day --order-by '"day" DESC' --limit 2 --no-header
[ "$(tr '\n' ' ' <out.txt)" = "2000-02-29 1995-12-31 " ] || fail "order by date: $(cat out.txt)"
expect 0 "limit 0" "$P" query t.pst "id > 0" --select id --limit 0
[ "$(cat out.txt)" = "id" ] || fail "limit 0: $(cat out.txt)"
expect 0 "rows with select" "$P" query t.pst "name = 'apple'" --rows --select name,price --format csv
printf 'row_id,name,price\n0,apple,12.50\n3,apple,-0.25\n' >want.txt
cmp -s out.txt want.txt || { fail "rows with select"; cat out.txt; }
expect 0 "rows with select host" "$P" query t.pst "name = 'apple'" --rows --select name,price --format csv --host-gather
cmp -s out.txt want.txt || { fail "rows with select (host)"; cat out.txt; }
expect 0 "rows header" "$P" query t.pst "id = 2" --rows --header
[ "$(tr '\n' ' ' <out.txt)" = "row_id 1 " ] || fail "rows header: $(cat out.txt)"
expect 1 "order unknown" "$P" query t.pst "id > 0" --rows --order-by "zz"
has err.txt "unknown column 'zz'" "order unknown"
expect 1 "order bad direction" "$P" query t.pst "id > 0" --rows --order-by "id up"
has err.txt "expected ASC, DESC" "order bad direction"

# the shell, through stdin: statements, dot commands, errors that do not end the session
cat >shell.in <<'SQL'
.help
id > 2
WHERE id > 2;
SELECT COUNT(*) WHERE name = 'apple'
SELECT id, name FROM t WHERE id > 1 ORDER BY name DESC LIMIT 2;
nosuch > 1
.format json
SELECT price, day WHERE price > 3 ORDER BY price LIMIT 1
.headers off
.format csv
SELECT id LIMIT 2
.timer on
id = 1
.timer off
.frob
.quit
id > 0
SQL
"$P" shell t.pst <shell.in >out.txt 2>err.txt
[ $? = 1 ] || fail "shell: a script with failed statements exits 1"
printf '3
3
2
id,name
3,"che""rry"
2,banana
{"price":3.10,"day":"1994-02-03"}
1
2
1
Run Time: evaluate' >want.txt
# the output without the .help text, up to the first words of the timer line
grep -v "^  \|^Statements\|^Dot commands\|^Expressions\|^NOT; literals" out.txt | head -c "$(wc -c <want.txt)" >got.txt
cmp -s got.txt want.txt || { fail "shell output"; cat out.txt; }
has out.txt "^  .timer on|off" "shell .help"
has err.txt "unknown column 'nosuch'" "shell error message"
has err.txt "unknown command '.frob'" "shell unknown dot command"
has err.txt "(line 6 of the input)" "shell error line number"
grep -q "^5$" out.txt && fail "shell: a statement after .quit ran"
printf 'id > 2\n' | "$P" shell t.pst >out.txt 2>err.txt || fail "shell: a clean script exits 0"
[ "$(cat out.txt)" = "3" ] || fail "shell clean: $(cat out.txt)"
# aggregates in the shell (select_is_aggregate routes them to cmd_select.c), on its open context
printf '.format csv\nSELECT name, count(*), sum(price) GROUP BY name;\nSELECT count(*) WHERE id > 2\nSELECT sum(nosuch)\nSELECT max(price * 2) AS m\nSELECT name, sum(price) / count(*) AS r GROUP BY name HAVING sum(price) > 3 ORDER BY r DESC LIMIT 2\n' |
  "$P" shell --backend reference t.pst >out.txt 2>err.txt
[ $? = 1 ] || fail "shell aggregates: the failed statement makes the exit status 1"
printf 'name,count(*),sum(price)\napple,2,12.25\nbanana,1,3.10\n"che""rry",1,\n,1,100.00\n3\nm\n200.00\nname,r\n,100.000000\napple,6.125000\n' >want.txt
cmp -s out.txt want.txt || { fail "shell aggregates output"; cat out.txt; }
has err.txt "error at column 12: unknown column 'nosuch'" "shell aggregate error"
expect 1 "shell not a table" "$P" shell t.csv </dev/null
has err.txt "packscan encode t.csv" "shell not a table hint"
# ... and through a pseudo-terminal (script(1)): the banner, the prompt, a table by default
if command -v script >/dev/null 2>&1; then
  printf 'SELECT id WHERE id < 3\n.quit\n' | script -qec "'$P' shell t.pst" /dev/null >out.txt 2>&1
  tr -d '\r' <out.txt >pty.txt
  has pty.txt "shell: t.pst, 5 rows, 5 columns" "pty banner"
  has pty.txt "packscan> " "pty prompt"
  # the input's echo may land before or after the prompt
  grep -Eq "^(packscan> )? id$" pty.txt || { fail "pty: a table header by default"; cat pty.txt; }
  has pty.txt "^  1$" "pty table row"
else
  echo "note: script(1) not found: the shell's terminal mode was not tested"
fi

# errors: syntax (caret), unknown column, type mismatch
expect 1 "syntax error" "$P" query t.pst "price > 3 AND (id < 2"
has err.txt "error at column 22: expected ')'" "syntax message"
has err.txt "^" "caret"
expect 1 "unknown column" "$P" query t.pst "pricey > 3"
has err.txt "unknown column 'pricey'" "unknown column"
expect 1 "type mismatch" "$P" query t.pst "name > 3"
has err.txt "column 'name' is string" "type mismatch"
expect 1 "bad backend" "$P" query t.pst "id = 1" --backend nosuch
has err.txt "nosuch" "bad backend message"
grep -q "PS_ERR_NO_BACKEND: PS_ERR_NO_BACKEND" err.txt && fail "status name printed twice: $(cat err.txt)"
has err.txt "PS_ERR_NO_BACKEND: unknown backend 'nosuch'" "bad backend status"
expect 0 "backends" "$P" backends
has out.txt "^reference  yes" "backends: reference usable"
has out.txt "^auto (packscan query, shell): reference below" "backends: auto"
expect 0 "timing says why" "$P" query t.pst "id = 1" --timing
has err.txt "backend: reference (auto: 5 rows, below" "timing: auto's choice"
expect 0 "timing asked" "$P" query t.pst "id = 1" --timing --backend reference
has err.txt "backend: reference (asked for with --backend reference)" "timing: asked backend"
expect 1 "double-quoted string" "$P" query t.pst 'name = "apple"'
has err.txt "a string literal takes single quotes: 'apple'" "double-quoted string hint"
expect 1 "query a csv" "$P" query t.csv "id = 1"
has err.txt "not a packscan table" "query a csv"
has err.txt "packscan encode t.csv TABLE.pst" "query a csv hint"
printf 'a\n' >tiny.csv
expect 1 "query a tiny csv" "$P" info tiny.csv
has err.txt "not a packscan table" "tiny csv is not a table"
expect 1 "select unknown" "$P" query t.pst "id = 1" --select id,zz
has err.txt "unknown column 'zz'" "select unknown"

# usage errors
expect 2 "no args" "$P"
expect 2 "bad command" "$P" frobnicate
expect 2 "query missing expr" "$P" query t.pst
expect 2 "bad option" "$P" query --frob t.pst "id = 1"
expect 2 "limit without rows" "$P" query t.pst "id = 1" --limit 3
expect 2 "bad format" "$P" query t.pst "id = 1" --select id --format xml
expect 2 "bad limit" "$P" query t.pst "id = 1" --rows --limit x
expect 2 "bad delimiter" "$P" encode -d '""' t.csv x.pst
expect 0 "help" "$P" query --help

# encode: bad rows reported with lines, nothing written; delimiter; stdin; types
printf 'a,b\n1,2\n3\n4,5,6\n' >bad.csv
expect 1 "bad rows" "$P" encode bad.csv bad.pst
has err.txt "line 3: expected 2 fields, found 1" "bad row line 3"
has err.txt "line 4: expected 2 fields, found 3" "bad row line 4"
[ ! -e bad.pst ] || fail "a failed encode wrote a table"
printf 'a;b\n1;x,y\n' | "$P" encode -d ';' -q - semi.pst >out.txt 2>err.txt || fail "stdin encode"
expect 0 "semi query" "$P" query semi.pst "b = 'x,y'" --select b --no-header
[ "$(cat out.txt)" = '"x,y"' ] || fail "semicolon: $(cat out.txt)"
printf 'a;b\n1;x,y\n' | "$P" encode -q - semi2.pst >out.txt 2>err.txt || fail "stdin encode, detected ';'"
expect 0 "semi detected query" "$P" query semi2.pst "b = 'x,y'" --select b --no-header
[ "$(cat out.txt)" = '"x,y"' ] || fail "semicolon: $(cat out.txt)"
printf 'a,b\n1,2\nx,3\n' >typed.csv
expect 1 "typed bad value" "$P" encode -t a:int typed.csv typed.pst
has err.txt "line 3, column 1 'a': 'x' is not a 64-bit integer" "typed bad value"
expect 1 "missing input" "$P" encode nosuch.csv x.pst
has err.txt "nosuch.csv" "missing input message"

# corrupt and truncated tables: clean errors
cp t.pst c.pst
size=$(wc -c <t.pst | tr -d ' ')
printf '\377' | dd of=c.pst bs=1 seek=$((size - 3)) conv=notrunc 2>/dev/null
expect 1 "corrupt" "$P" query c.pst "id = 1"
has err.txt "checksum mismatch" "corrupt message"
expect 0 "no-verify opens" "$P" info --no-verify c.pst
head -c 100 t.pst >tr.pst
expect 1 "truncated" "$P" info tr.pst
has err.txt "truncated" "truncated message"
expect 1 "not a table" "$P" info t.csv
has err.txt "not a packscan table" "magic message"

# the demo, small
expect 0 "demo" "$P" demo --rows 20000 --repeat 1 --out demo.pst
has out.txt "Q6" "demo Q6"
expect 0 "demo table" "$P" query demo.pst "l_shipmode = 'MAIL' AND l_discount >= 0.05" --select l_orderkey,l_discount,l_shipdate --no-header
[ -s out.txt ] || fail "demo table query printed nothing"

# SELECT statements (the reference backend: tools.select.<backend> covers the others)
R="--backend reference"
expect 0 "select sum" "$P" query $R --format csv t.pst "SELECT count(*), sum(price * 2), avg(price), min(day), max(name) FROM t WHERE id > 1;"
printf 'count(*),sum(price * 2),avg(price),min(day),max(name)\n4,205.70,34.283333,1994-02-03,"che""rry"\n' >want.txt
cmp -s out.txt want.txt || { fail "select sum output"; cat out.txt; }
expect 0 "select group" "$P" query $R t.pst "SELECT name, count(*) AS n GROUP BY name" --format json
printf '{"name":"apple","n":2}\n{"name":"banana","n":1}\n{"name":"che\\"rry","n":1}\n{"name":null,"n":1}\n' >want.txt
cmp -s out.txt want.txt || { fail "select group output"; cat out.txt; }
expect 0 "select explain" "$P" query $R t.pst "select sum(id) where name like 'a%'" --explain --timing --format table
has err.txt "statement: SELECT SUM(id) WHERE name LIKE 'a%'" "select explain"
has err.txt "groups: 1" "select timing"
has out.txt "sum(id)" "select table header"
expect 1 "select caret" "$P" query $R t.pst "SELECT sum(price) GROUP BY nmae"
has err.txt "error at column 28: unknown column 'nmae'" "select caret message"
has err.txt "                           ^" "select caret"
expect 1 "select syntax" "$P" query $R t.pst "SELECT sum(price / 2)"
has err.txt "error at column 18: division inside an aggregate is not supported" "select syntax message"
# HAVING, ORDER BY (DESC puts NULL last, as DuckDB), LIMIT / OFFSET, division of aggregates
expect 0 "select order" "$P" query $R --format csv t.pst \
  "SELECT name, sum(price) AS total, count(*) GROUP BY name HAVING count(*) >= 1 ORDER BY total DESC, name LIMIT 2 OFFSET 1"
printf 'name,total,count(*)\napple,12.25,2\nbanana,3.10,1\n' >want.txt
cmp -s out.txt want.txt || { fail "select order output"; cat out.txt; }
expect 1 "select distinct" "$P" query $R t.pst "SELECT sum(DISTINCT name)"
has err.txt "error at column 12: SUM(DISTINCT ...) is not supported" "select distinct message"
printf 'id,at,ok,t\n1,2024-09-05 07:53:23,true,07:00:00\n2,2024-09-06 08:00:00,false,08:30:00\n3,2024-09-05 09:00:00,true,\n' >ts.csv
expect 0 "select types encode" "$P" encode -q ts.csv ts.pst
expect 0 "select types" "$P" query $R --format csv ts.pst "SELECT ok, count(*), min(at), max(t), max(ok), sum(id) GROUP BY ok"
printf 'ok,count(*),min(at),max(t),max(ok),sum(id)\nfalse,1,2024-09-06 08:00:00,08:30:00,false,2\ntrue,2,2024-09-05 07:53:23,07:00:00,true,4\n' >want.txt
cmp -s out.txt want.txt || { fail "select types output"; cat out.txt; }
expect 0 "select types json" "$P" query $R --format json ts.pst "SELECT ok, min(at) WHERE at < '2024-09-06 00:00:00' GROUP BY ok"
[ "$(cat out.txt)" = '{"ok":true,"min(at)":"2024-09-05 07:53:23"}' ] || fail "select types json: $(cat out.txt)"
# booleans, timestamps (a literal finer than the seconds column) and times in HAVING and ORDER BY
expect 0 "select types having" "$P" query $R --format csv ts.pst \
  "SELECT ok, min(at) AS first, max(t) GROUP BY ok HAVING ok = TRUE OR min(at) > TIMESTAMP '2024-09-06 07:59:59.5' ORDER BY first DESC"
printf 'ok,first,max(t)\nfalse,2024-09-06 08:00:00,08:30:00\ntrue,2024-09-05 07:53:23,07:00:00\n' >want.txt
cmp -s out.txt want.txt || { fail "select types having output"; cat out.txt; }
expect 0 "select time having" "$P" query $R --format csv ts.pst "SELECT ok GROUP BY ok HAVING max(t) >= '08:30:00' AND NOT ok"
[ "$(cat out.txt)" = "$(printf 'ok\nfalse')" ] || fail "select time having: $(cat out.txt)"
expect 2 "select --rows" "$P" query $R t.pst "SELECT count(*)" --rows
has err.txt "a SELECT prints its own result" "select --rows message"

# GROUP BY on a key of 2^31 possible values (2000 distinct): past a table of
# every possible key, the groups the rows hold
awk 'BEGIN { print "k,g,v"; for (i = 0; i < 3000; i++) print (i * 7919 % 2000) * 1000003 "," i % 3 "," i }' >wide.csv
expect 0 "encode wide keys" "$P" encode -q wide.csv wide.pst
expect 0 "select wide group" "$P" query $R --format csv wide.pst "SELECT k, count(*) AS n, sum(v) AS s GROUP BY k"
[ "$(wc -l <out.txt)" = 2001 ] || fail "select wide group: $(wc -l <out.txt) lines, expected 2001"
[ "$(sed -n 2p out.txt)" = "0,2,2000" ] || fail "select wide group: first group $(sed -n 2p out.txt)"
[ "$(tail -n 1 out.txt)" = "1999005997,2,2642" ] || fail "select wide group: last group $(tail -n 1 out.txt)"
expect 0 "select wide two keys" "$P" query $R --format csv wide.pst "SELECT g, k, max(v) GROUP BY g, k"
[ "$(wc -l <out.txt)" = 3001 ] || fail "select wide two keys: $(wc -l <out.txt) lines, expected 3001"
# DELTA: encode's default (auto) keeps a sorted column as DELTA; queries and
# --select read it exactly as its FOR twin
awk 'BEGIN { print "ts,k,v"; for (i = 0; i < 5000; i++) printf "%d,%d,%d\n", 1700000000 + 3 * i + (i % 7 == 0), int(i / 700), (i * 7919) % 1000 }' >delta.csv
expect 0 "encode auto" "$P" encode delta.csv delta.pst
has out.txt "^ts  *int64  *DELTA" "auto keeps a sorted column as DELTA"
expect 0 "encode for" "$P" encode -q -e for delta.csv for.pst
for t in delta for; do
  expect 0 "query $t" "$P" query $R $t.pst "SELECT k, count(*), sum(ts), min(v), max(ts), avg(v) WHERE ts >= 1700001000 GROUP BY k"
  mv out.txt sql_$t.txt
  expect 0 "select $t" "$P" query $R $t.pst "ts > 1700003000 AND v < 500" --select ts,k,v --no-header
  mv out.txt sel_$t.txt
done
[ "$(wc -l <sql_delta.txt)" -eq 9 ] && [ "$(wc -l <sel_delta.txt)" -gt 1000 ] || fail "DELTA table: $(head -3 sql_delta.txt)"
cmp -s sql_delta.txt sql_for.txt || fail "a query of the DELTA table differs from the FOR table's"
cmp -s sel_delta.txt sel_for.txt || fail "--select of the DELTA table differs from the FOR table's"

finish cli "CLI"
