/* SELECT parser tests: the grammar of select.h, canonical text round trips,
 * and error positions and messages. */
#include <stdio.h>
#include <string.h>

#include "select.h"

static int failures;

static void ok(const char *src, const char *want) {
  expr_arena a = {0};
  select_stmt s;
  expr_error e;
  if (select_parse(src, strlen(src), &a, &s, &e)) {
    printf("FAIL: '%s': unexpected error at %zu: %s\n", src, e.pos, e.msg);
    failures++;
    expr_arena_free(&a);
    return;
  }
  tbuf b = {0};
  select_to_string(&s, &b);
  tbuf_putc(&b, 0);
  if (strcmp((char *)b.p, want)) {
    printf("FAIL: '%s'\n  got:  %s\n  want: %s\n", src, (char *)b.p, want);
    failures++;
  } else {
    /* The canonical text parses back to itself. */
    expr_arena a2 = {0};
    select_stmt s2;
    tbuf b2 = {0};
    if (select_parse((char *)b.p, b.len - 1, &a2, &s2, &e) || select_to_string(&s2, &b2) || tbuf_putc(&b2, 0) ||
        strcmp((char *)b2.p, want)) {
      printf("FAIL: canonical text of '%s' does not round trip (%s)\n", src, b2.p ? (char *)b2.p : e.msg);
      failures++;
    }
    tbuf_free(&b2);
    expr_arena_free(&a2);
  }
  tbuf_free(&b);
  expr_arena_free(&a);
}

/* pos: the expected 0-based byte position of the error; msg: a substring of it. */
static void bad(const char *src, size_t pos, const char *msg) {
  expr_arena a = {0};
  select_stmt s;
  expr_error e;
  if (!select_parse(src, strlen(src), &a, &s, &e)) {
    printf("FAIL: '%.120s' parsed but should fail (%s)\n", src, msg);
    failures++;
  } else if (e.pos != pos || !strstr(e.msg, msg)) {
    printf("FAIL: '%.120s'\n  got:  at %zu: %s\n  want: at %zu: ...%s...\n", src, e.pos, e.msg, pos, msg);
    failures++;
  }
  expr_arena_free(&a);
}

/* Positions inside the parsed tree are the statement's, not the slice's. */
static void positions(void) {
  const char *src = "SELECT sum(a), count(*) FROM t WHERE b > 3 AND c = 'x' GROUP BY g";
  expr_arena a = {0};
  select_stmt s;
  expr_error e;
  if (select_parse(src, strlen(src), &a, &s, &e)) {
    printf("FAIL: positions: %s\n", e.msg);
    failures++;
    return;
  }
  size_t b = (size_t)(strstr(src, "b >") - src), c = (size_t)(strstr(src, "c =") - src);
  const ast_node *w = s.where;
  if (w->kind != AST_AND || w->left->a.pos != b || w->right->a.pos != c || w->right->b.pos != c + 4 ||
      s.where_pos != b) {
    printf("FAIL: WHERE positions not moved to the statement's (%zu %zu)\n", w->left->a.pos, w->right->a.pos);
    failures++;
  }
  if (s.items[0].pos != 7 || s.items[0].end != 13 || s.items[1].pos != 15 || s.items[1].end != 23) {
    printf("FAIL: item spans %zu..%zu %zu..%zu\n", s.items[0].pos, s.items[0].end, s.items[1].pos, s.items[1].end);
    failures++;
  }
  if (s.nkeys != 1 || s.keys[0].pos != strlen(src) - 1) {
    printf("FAIL: key position\n");
    failures++;
  }
  expr_arena_free(&a);

  const char *c2 = "SELECT SUM(CASE WHEN x IN (1, 2) THEN y ELSE 0 END) FROM t";
  if (select_parse(c2, strlen(c2), &a, &s, &e) || s.items[0].arg->kind != VX_CASE ||
      s.items[0].arg->whens[0].cond->a.pos != (size_t)(strstr(c2, "x IN") - c2) ||
      s.items[0].arg->whens[0].cond->list[1].pos != (size_t)(strstr(c2, "2)") - c2)) {
    printf("FAIL: CASE condition positions\n");
    failures++;
  }
  expr_arena_free(&a);
}

/* Deep nesting and long chains end in a clean error, never a crash. */
static void limits(void) {
  char buf[70000];
  size_t k = 0;
  k += (size_t)snprintf(buf, sizeof buf, "SELECT SUM(");
  for (int i = 0; i < 1000; i++) buf[k++] = '(';
  buf[k++] = 'a';
  for (int i = 0; i < 1000; i++) buf[k++] = ')';
  buf[k++] = ')';
  buf[k] = 0;
  bad(buf, 11 + SELECT_MAX_DEPTH, "nested too deeply");
  k = (size_t)snprintf(buf, sizeof buf, "SELECT SUM(a");
  for (int i = 0; i < 10000; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "+a");
  snprintf(buf + k, sizeof buf - k, ")");
  bad(buf, 11 + SELECT_MAX_NODES, "more than 4096 parts"); /* the + after the 4096th part (SUM is one) */
  /* the canonical text of what parses nests no deeper: a chain of 4000 parts, 60 minus signs */
  tbuf want = {0};
  tbuf_printf(&want, "SELECT SUM(a");
  for (int i = 0; i < 1999; i++) tbuf_printf(&want, " + a");
  tbuf_printf(&want, ")");
  tbuf_putc(&want, 0);
  ok((const char *)want.p, (const char *)want.p);
  tbuf_free(&want);
  k = (size_t)snprintf(buf, sizeof buf, "SELECT SUM(2 * ");
  for (int i = 0; i < 60; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "-");
  snprintf(buf + k, sizeof buf - k, "a * 5)");
  ok(buf, buf);
  k = (size_t)snprintf(buf, sizeof buf, "SELECT SUM(");
  for (int i = 0; i < 100; i++) k += (size_t)snprintf(buf + k, sizeof buf - k, "-");
  snprintf(buf + k, sizeof buf - k, "a)");
  bad(buf, 11 + SELECT_MAX_DEPTH, "nested too deeply");
  k = (size_t)snprintf(buf, sizeof buf, "SELECT ");
  for (int i = 0; i < SELECT_MAX_ITEMS + 1; i++)
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%scount(*)", i ? "," : "");
  bad(buf, 7 + 9 * SELECT_MAX_ITEMS, "more than 64 items");
}

int main(void) {
  /* aggregates, spellings, case-insensitive keywords */
  ok("SELECT count(*)", "SELECT COUNT(*)");
  ok("select COUNT ( * ) from lineitem", "SELECT COUNT(*) FROM lineitem");
  ok("SELECT count(x), Sum(x), MIN(x), max(x), avg(x)", "SELECT COUNT(x), SUM(x), MIN(x), MAX(x), AVG(x)");
  ok("SELECT sum(price * discount), count(*) WHERE flag = 'A' GROUP BY flag",
     "SELECT SUM(price * discount), COUNT(*) WHERE flag = 'A' GROUP BY flag");
  ok("  SELECT count(*) ;  ", "SELECT COUNT(*)");
  /* precedence and associativity: * over + -, left to right */
  ok("SELECT sum(a + b * c)", "SELECT SUM(a + b * c)");
  ok("SELECT sum((a + b) * c)", "SELECT SUM((a + b) * c)");
  ok("SELECT sum(((a)))", "SELECT SUM(a)");
  ok("SELECT sum(a - b - c)", "SELECT SUM(a - b - c)");
  ok("SELECT sum(a - (b - c))", "SELECT SUM(a - (b - c))");
  ok("SELECT sum(a + (b + c))", "SELECT SUM(a + (b + c))");
  ok("SELECT sum(a * (b * c))", "SELECT SUM(a * (b * c))");
  ok("SELECT sum((a - b) * c)", "SELECT SUM((a - b) * c)");
  ok("SELECT sum(a * b * c)", "SELECT SUM(a * b * c)");
  ok("SELECT sum(a*(1-d)*(1+t))", "SELECT SUM(a * (1 - d) * (1 + t))");
  /* numbers are exact: integers and decimals */
  ok("SELECT sum(x * 0.05), sum(x + 12.50), sum(-3 * x), sum(x - -2)",
     "SELECT SUM(x * 0.05), SUM(x + 12.50), SUM(-3 * x), SUM(x - -2)");
  ok("SELECT sum(x * .5), sum(x * 5.)", "SELECT SUM(x * 0.5), SUM(x * 5)");
  ok("SELECT sum(9223372036854775807 + x)", "SELECT SUM(9223372036854775807 + x)");
  ok("SELECT sum(0.000000000000000001 * x)", "SELECT SUM(0.000000000000000001 * x)");
  /* unary signs */
  ok("SELECT sum(-x)", "SELECT SUM(-x)");
  ok("SELECT sum(- -x)", "SELECT SUM(--x)");
  ok("SELECT sum(-(-5))", "SELECT SUM(- -5)");
  ok("SELECT sum(-x * y)", "SELECT SUM(-x * y)");
  ok("SELECT sum(+x)", "SELECT SUM(x)");
  ok("SELECT sum(- (5))", "SELECT SUM(-(5))");
  ok("SELECT sum(-(a * b))", "SELECT SUM(-(a * b))");
  /* CASE */
  ok("SELECT sum(CASE WHEN m IN ('MAIL', 'SHIP') THEN 1 ELSE 0 END)",
     "SELECT SUM(CASE WHEN m IN ('MAIL', 'SHIP') THEN 1 ELSE 0 END)");
  ok("SELECT sum(case when a < 1 then x when a between 1 and 2 and b is null then y end)",
     "SELECT SUM(CASE WHEN a < 1 THEN x WHEN (a BETWEEN 1 AND 2 AND b IS NULL) THEN y END)");
  ok("SELECT sum(CASE WHEN (a < 1) OR (b > 2) THEN CASE WHEN c = 1 THEN 2 ELSE 3 END * x ELSE -x END)",
     "SELECT SUM(CASE WHEN (a < 1 OR b > 2) THEN CASE WHEN c = 1 THEN 2 ELSE 3 END * x ELSE -x END)");
  ok("SELECT sum(CASE WHEN s LIKE 'PROMO%' THEN p * (1 - d) ELSE 0 END)",
     "SELECT SUM(CASE WHEN s LIKE 'PROMO%' THEN p * (1 - d) ELSE 0 END)");
  /* group keys, aliases, quoting */
  ok("SELECT flag, status, count(*) GROUP BY flag, status", "SELECT flag, status, COUNT(*) GROUP BY flag, status");
  ok("SELECT count(*) AS n, sum(x) total FROM t GROUP BY g", "SELECT COUNT(*) AS n, SUM(x) AS total FROM t GROUP BY g");
  ok("SELECT \"group\", sum(\"a b\") AS \"sum\" FROM \"my table\" GROUP BY \"group\"",
     "SELECT \"group\", SUM(\"a b\") AS sum FROM \"my table\" GROUP BY \"group\"");
  ok("SELECT count, count(count) GROUP BY count", "SELECT count, COUNT(count) GROUP BY count");
  ok("SELECT sum(x) WHERE d >= DATE '1994-01-01' AND d < DATE '1995-01-01' AND q < 24",
     "SELECT SUM(x) WHERE (d >= DATE '1994-01-01' AND (d < DATE '1995-01-01' AND q < 24))");
  ok("SELECT count(*) WHERE s = 'GROUP BY'", "SELECT COUNT(*) WHERE s = 'GROUP BY'");
  ok("SELECT count(*) WHERE (a = 1 OR b = 2) GROUP BY c;", "SELECT COUNT(*) WHERE (a = 1 OR b = 2) GROUP BY c");
  ok("SELECT count(*) WHERE NOT a IS NULL", "SELECT COUNT(*) WHERE (NOT a IS NULL)");

  /* values of groups, HAVING, ORDER BY, LIMIT, OFFSET */
  ok("select sum(x) / 2", "SELECT SUM(x) / 2");
  ok("select sum(x) + count(*) * 2, -sum(x), a + 1 group by a",
     "SELECT SUM(x) + COUNT(*) * 2, -SUM(x), a + 1 GROUP BY a");
  ok("select sum(a) / (sum(b) / count(*)) r", "SELECT SUM(a) / (SUM(b) / COUNT(*)) AS r");
  ok("select sum(a) / sum(b) / 2, (sum(a) - 1) * 2", "SELECT SUM(a) / SUM(b) / 2, (SUM(a) - 1) * 2");
  ok("select ABS(sum(x)), Coalesce(min(x), max(x), 0), coalesce(sum(x))",
     "SELECT abs(SUM(x)), coalesce(MIN(x), MAX(x), 0), SUM(x)");
  ok("select coalesce(sum(x), coalesce(min(x), 1))", "SELECT coalesce(SUM(x), MIN(x), 1)");
  ok("select a, count(*) group by a having count(*) > 1 and not (a = 'x' or a is null)",
     "SELECT a, COUNT(*) GROUP BY a HAVING COUNT(*) > 1 AND NOT (a = 'x' OR a IS NULL)");
  ok("select a group by a having (sum(x) + 1) * 2 >= 3 or a in ('it''s', 'b') and a not between 'c' and 'd'",
     "SELECT a GROUP BY a HAVING (SUM(x) + 1) * 2 >= 3 OR a IN ('it''s', 'b') AND a NOT BETWEEN 'c' AND 'd'");
  ok("select a group by a having ((min(d) <> DATE '2024-01-01')) and max(t) < timestamp '2024-01-01 10:00' "
     "and a is not null and a not in (1) and sum(x) != null",
     "SELECT a GROUP BY a HAVING MIN(d) <> DATE '2024-01-01' AND MAX(t) < TIMESTAMP '2024-01-01 10:00' AND "
     "a IS NOT NULL AND a NOT IN (1) AND SUM(x) <> NULL");
  ok("select a, sum(x) s group by a order by s desc, 1, sum(y) asc nulls first, a nulls last limit 10 offset 5",
     "SELECT a, SUM(x) AS s GROUP BY a ORDER BY s DESC, 1, SUM(y) NULLS FIRST, a NULLS LAST LIMIT 10 OFFSET 5");
  ok("select count(*) limit 0;", "SELECT COUNT(*) LIMIT 0");
  ok("select count(*) offset 3", "SELECT COUNT(*) OFFSET 3");
  ok("select count(*) having count(*) = 0 order by count(*)", "SELECT COUNT(*) HAVING COUNT(*) = 0 ORDER BY COUNT(*)");
  /* date functions and COUNT(DISTINCT) */
  ok("select year(d), Date_Trunc('MONTH', \"t s\"), count(distinct x) group by year(d), date_trunc('month', \"t s\")",
     "SELECT extract(year FROM d), date_trunc('month', \"t s\"), COUNT(DISTINCT x) GROUP BY extract(year FROM d), "
     "date_trunc('month', \"t s\")");
  ok("SELECT date_part('dow', d), dayofyear(d), extract(second from t) GROUP BY dayofweek(d)",
     "SELECT extract(dow FROM d), extract(doy FROM d), extract(second FROM t) GROUP BY extract(dow FROM d)");
  ok("select count(*) where a > 1 order by 1", "SELECT COUNT(*) WHERE a > 1 ORDER BY 1");
  ok("select b, count(*) group by b having b = true or b <> false",
     "SELECT b, COUNT(*) GROUP BY b HAVING b = TRUE OR b <> FALSE");
  ok("select b group by b having not b and (b) or b order by 1",
     "SELECT b GROUP BY b HAVING NOT b = TRUE AND b = TRUE OR b = TRUE ORDER BY 1");
  /* items classified by their tree, as their canonical text reads back */
  ok("select +a, (sum(x)) group by a order by (2)", "SELECT a, SUM(x) GROUP BY a ORDER BY 2");
  bad("SELECT +x, count(*)", 7, "column 'x' is neither inside an aggregate nor in GROUP BY");
  ok("select +'a', -null, +true, 'b' c", "SELECT 'a', -NULL, TRUE, 'b' AS c");

  /* errors: where, and what */
  bad("", 0, "expected SELECT, found end of input");
  bad("x > 5", 0, "expected SELECT");
  bad("SELECT", 6, "expected an aggregate (COUNT, SUM, MIN, MAX, AVG) or a GROUP BY column, found end of input");
  bad("SELECT count(*),", 16, "expected an aggregate");
  bad("SELECT *", 7, "SELECT * lists rows");
  bad("SELECT sum(*)", 11, "only COUNT takes '*'");
  bad("SELECT sum()", 11, "SUM needs an argument");
  bad("SELECT count()", 13, "COUNT(*) counts rows");
  bad("SELECT sum(DISTINCT x)", 11, "SUM(DISTINCT ...) is not supported (COUNT(DISTINCT x) is)");
  bad("SELECT DISTINCT a", 7, "SELECT DISTINCT is not supported");
  bad("SELECT sum(x", 12, "expected ')' to close the '(' at column 11, found end of input");
  bad("SELECT sum((x + 1)", 18, "expected ')' to close the '(' at column 11");
  bad("SELECT sum(x / 2)", 13, "division inside an aggregate is not supported");
  bad("SELECT sum(x) OVER (PARTITION BY a)", 14, "OVER is not supported");
  bad("SELECT count(*) FILTER (WHERE a = 1)", 16, "FILTER is not supported");
  bad("SELECT abs(x, y)", 12, "expected ')' to close the '(' at column 11, found ','");
  bad("SELECT coalesce(sum(x), 1", 25, "expected ',' or ')' to close the '(' at column 16");
  bad("SELECT CASE a WHEN 1 THEN 1 END", 12, "expected WHEN after CASE");
  ok("select case when sum(x) > 1 then 1 when a is null and not a = 2 then 2 else -0.5 end group by a",
     "SELECT CASE WHEN SUM(x) > 1 THEN 1 WHEN a IS NULL AND NOT a = 2 THEN 2 ELSE -0.5 END GROUP BY a");
  bad("SELECT floor(sum(x))", 7, "unknown function 'floor'");
  bad("SELECT sum(sum(x))", 11, "aggregates cannot be nested");
  bad("SELECT sum(abs(x))", 11, "abs inside an aggregate is not supported");
  bad("SELECT median(x)", 7, "unknown function 'median'");
  bad("SELECT sum('a')", 11, "a string is not a value");
  bad("SELECT sum(x * 1e3)", 15, "exponent is not exact");
  bad("SELECT sum(x * 12345678901234567890)", 15, "numeric literal out of range");
  bad("SELECT sum(x * 0.1234567890123456789)", 15, "numeric literal out of range");
  bad("SELECT sum(x * 1.2.3)", 15, "malformed number");
  bad("SELECT sum(x * 12ab)", 15, "malformed number");
  bad("SELECT sum(x +)", 14, "expected a column, a number, CASE or '(', found ')'");
  bad("SELECT sum(from)", 11, "found keyword 'from'");
  bad("SELECT x", 7, "column 'x' is neither inside an aggregate nor in GROUP BY");
  bad("SELECT count(*), x WHERE a = 1", 17, "neither inside an aggregate nor in GROUP BY");
  bad("SELECT count(*) FROM", 20, "expected a table name after FROM, found end of input");
  bad("SELECT count(*) FROM where", 21, "expected a table name after FROM, found keyword 'where'");
  bad("SELECT count(*) WHERE", 21, "expected a condition after WHERE, found end of input");
  bad("SELECT count(*) WHERE GROUP BY a", 22, "expected a condition after WHERE, found 'GROUP'");
  bad("SELECT count(*) WHERE a >", 25, "expected a column or literal, found end of input");
  bad("SELECT count(*) WHERE a > 1 AND (b < 2 GROUP BY c", 39, "expected ')' to close the '(' at column 33");
  bad("SELECT count(*) WHERE a = 'x", 26, "unterminated string literal");
  bad("SELECT count(*) WHERE a = 1) GROUP BY b", 27, "unbalanced ')'");
  bad("SELECT count(*) WHERE a ~ 1", 24, "unexpected character '~'");
  bad("SELECT count(*) WHERE a > GROUP BY b", 26, "expected a column or literal, found keyword 'GROUP'");
  bad("SELECT count(*) GROUP a", 22, "expected BY after GROUP, found 'a'");
  bad("SELECT count(*) GROUP BY", 24, "expected a column after GROUP BY, found end of input");
  bad("SELECT count(*) GROUP BY a, b, c", 31, "GROUP BY takes at most 2 columns");
  bad("SELECT count(*) GROUP BY a + 1", 27, "GROUP BY takes columns, not expressions");
  bad("SELECT count(*) GROUP BY a ORDER a", 33, "expected BY after ORDER, found 'a'");
  bad("SELECT count(*) GROUP BY a ORDER BY", 35, "expected an aggregate, a GROUP BY column, a number or '('");
  bad("SELECT count(*) GROUP BY a ORDER BY a NULLS", 43, "expected FIRST or LAST after NULLS, found end of input");
  bad("SELECT count(*) GROUP BY a ORDER BY a DESC ASC", 43, "expected the end of the statement, found 'ASC'");
  bad("SELECT count(*) GROUP BY a HAVING", 33, "expected an aggregate, a GROUP BY column, a number or '('");
  bad("SELECT count(*) GROUP BY a HAVING count(*) 1", 43,
      "expected a comparison (= <> < <= > >=), BETWEEN, IN or IS NULL in HAVING, found '1'");
  bad("SELECT count(*) GROUP BY a HAVING a LIKE 'x%'", 36, "LIKE is not supported in HAVING");
  bad("SELECT count(*) GROUP BY a HAVING count(*) > 1 AND (a = 1", 57, "expected ')' to close the '(' at column 52");
  bad("SELECT count(*) GROUP BY a HAVING count(*) BETWEEN 1 OR 2", 53, "expected AND in BETWEEN, found 'OR'");
  bad("SELECT count(*) GROUP BY a HAVING a NOT LIKE 'x'", 40, "expected BETWEEN or IN after NOT, found 'LIKE'");
  bad("SELECT count(*) GROUP BY a HAVING a IN 1", 39, "expected '(' after IN, found '1'");
  bad("SELECT count(*) GROUP BY a HAVING a IS 1", 39, "expected NULL after IS, found '1'");
  bad("SELECT count(*) GROUP BY a HAVING count(*) => 1", 43, "expected a comparison");
  bad("SELECT count(*) LIMIT", 21, "expected a row count (digits) after LIMIT, found end of input");
  bad("SELECT count(*) LIMIT -1", 22, "expected a row count (digits) after LIMIT, found '-'");
  bad("SELECT count(*) LIMIT 1.5", 22, "expected a row count (digits) after LIMIT, found '1.5'");
  bad("SELECT count(*) LIMIT 99999999999999999999", 22, "LIMIT count out of range");
  bad("SELECT count(*) OFFSET x", 23, "expected a row count (digits) after OFFSET, found 'x'");
  bad("SELECT count(*) LIMIT 1 ORDER BY 1", 24, "expected the end of the statement, found 'ORDER'");
  bad("SELECT count(*) ORDER BY 1 HAVING count(*) > 1", 27, "expected the end of the statement, found 'HAVING'");
  bad("SELECT count(*) WHERE a = 1; x", 29, "expected the end of the statement, found 'x'");
  bad("SELECT count(*) x y", 18,
      "expected ',', FROM, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT or the end of the statement, found 'y'");
  bad("SELECT count(*) AS", 18, "expected an alias after AS, found end of input");
  bad("SELECT count(*) AS from", 19, "expected an alias after AS, found keyword 'from'");
  bad("SELECT sum(CASE x WHEN 1 THEN 2 END)", 16, "CASE x WHEN v form is not supported");
  bad("SELECT sum(CASE WHEN THEN 1 END)", 21, "expected a condition after WHEN, found 'THEN'");
  bad("SELECT sum(CASE WHEN a = 1 ELSE 1 END)", 27, "expected THEN after the WHEN condition, found 'ELSE'");
  bad("SELECT sum(CASE WHEN a = 1)", 26, "expected THEN after the WHEN condition, found ')'");
  bad("SELECT sum(CASE WHEN a = THEN 1 END)", 25, "expected a column or literal, found keyword 'THEN'");
  bad("SELECT sum(CASE WHEN a = 1 AND THEN 1 END)", 31, "found keyword 'THEN'");
  bad("SELECT sum(CASE WHEN a = 1 THEN 1 ELSE 0)", 40,
      "expected WHEN, ELSE or END in the CASE at column 12, found ')'");
  bad("SELECT sum(CASE WHEN a = 1 THEN 'x' END)", 32, "a string is not a value");
  bad("SELECT sum(\"\")", 11, "empty quoted identifier");
  bad("SELECT sum(\"a)", 11, "unterminated quoted identifier");
  bad("SELECT sum(x) @", 14, "expected the end of the statement, found '@'");
  /* which SELECTs the shell hands to the aggregate path */
  static const struct {
    const char *src;
    int want;
  } agg[] = {{"SELECT sum(x)", 1},
             {"select a, count(*) group by a", 1},
             {"SELECT a GROUP BY a", 1},
             {"SELECT count(x) WHERE y > 1", 1},
             {"SELECT count(*), max(y)", 1},
             {"SELECT count(*) WHERE y > 1", 0},
             {"SELECT COUNT ( * )", 0},
             {"SELECT a, b WHERE c = 'sum(x)' ORDER BY a LIMIT 3", 0},
             {"SELECT * WHERE count > 1", 0},
             {"SELECT counter, total FROM t", 0},
             {"count(x) > 1", 0},
             {"SELECT sum(x", 1},
             {"SELECT a WHERE s = 'GROUP'", 0},
             {"SELECT count(*) / 2", 1},
             {"SELECT count(*) AS n HAVING count(*) > 1", 1},
             {"SELECT count(*) AS n WHERE a > 1", 1},
             {"SELECT count(*) WHERE a > 1 LIMIT 1", 1},
             {"SELECT (count(*)) WHERE a > 1;", 0}};
  for (size_t i = 0; i < sizeof agg / sizeof *agg; i++)
    if (select_is_aggregate(agg[i].src, strlen(agg[i].src)) != agg[i].want) {
      printf("FAIL: select_is_aggregate('%s') != %d\n", agg[i].src, agg[i].want);
      failures++;
    }
  positions();
  limits();
  if (failures) {
    printf("%d failures\n", failures);
    return 1;
  }
  printf("all SELECT parser tests passed\n");
  return 0;
}
