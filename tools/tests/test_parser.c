/* Parser tests: every operator, precedence, literal forms, error positions. */
#include <stdio.h>
#include <string.h>

#include "expr.h"

static int failures;

static void ok(const char *src, const char *want) {
  expr_arena a = {0};
  ast_node *n;
  expr_error e;
  if (expr_parse(src, strlen(src), &a, &n, &e)) {
    printf("FAIL: '%s': unexpected error at %zu: %s\n", src, e.pos, e.msg);
    failures++;
  } else {
    tbuf b = {0};
    expr_to_string(n, &b);
    tbuf_putc(&b, 0);
    if (strcmp((char *)b.p, want)) {
      printf("FAIL: '%s'\n  got:  %s\n  want: %s\n", src, (char *)b.p, want);
      failures++;
    } else {
      /* The canonical text parses back to itself. */
      expr_arena a2 = {0};
      ast_node *n2;
      tbuf b2 = {0};
      if (expr_parse((char *)b.p, b.len - 1, &a2, &n2, &e) || expr_to_string(n2, &b2) || tbuf_putc(&b2, 0) ||
          strcmp((char *)b2.p, want)) {
        printf("FAIL: canonical text of '%s' does not round trip\n", src);
        failures++;
      }
      tbuf_free(&b2);
      expr_arena_free(&a2);
    }
    tbuf_free(&b);
  }
  expr_arena_free(&a);
}

/* col: expected 0-based byte position of the error; msg: a substring. */
static void bad(const char *src, size_t pos, const char *msg) {
  expr_arena a = {0};
  ast_node *n;
  expr_error e;
  if (!expr_parse(src, strlen(src), &a, &n, &e)) {
    printf("FAIL: '%s' parsed but should fail (%s)\n", src, msg);
    failures++;
  } else if (e.pos != pos || !strstr(e.msg, msg)) {
    printf("FAIL: '%s'\n  got:  at %zu: %s\n  want: at %zu: ...%s...\n", src, e.pos, e.msg, pos, msg);
    failures++;
  }
  expr_arena_free(&a);
}

int main(void) {
  /* comparison operators, both spellings */
  ok("a = 1", "a = 1");
  ok("a == 1", "a = 1");
  ok("a != 1", "a != 1");
  ok("a <> 1", "a != 1");
  ok("a < 1", "a < 1");
  ok("a <= 1", "a <= 1");
  ok("a > 1", "a > 1");
  ok("a >= 1", "a >= 1");
  ok("a=b", "a = b");
  ok("a<=b", "a <= b");
  /* numbers with a '.' are exact decimals (up to 38 digits); an exponent makes a double */
  ok("x = 9007199254740993.0", "x = 9007199254740993.0");
  ok("x = 0.10000000000000000001", "x = 0.10000000000000000001");
  ok("x = -12345678901234567890123456789.5", "x = -12345678901234567890123456789.5");
  ok("x = 1.50", "x = 1.50");
  bad("x = 123456789012345678901234567890123456789.0", 4, "numeric literal");
  /* a leading WHERE and trailing semicolons, as copied from SQL */
  ok("WHERE a = 1", "a = 1");
  ok("  where a = 1 AND b < 2;", "(a = 1 AND b < 2)");
  ok("a = 1 ;; \n", "a = 1");
  ok("where NOT a = 1", "(NOT a = 1)");
  ok("s = 'x;'", "s = 'x;'");
  /* ... while a column named "where" stays one */
  ok("where = 1", "where = 1");
  ok("WHERE IS NULL", "WHERE IS NULL");
  ok("where BETWEEN 1 AND 2", "where BETWEEN 1 AND 2");
  bad(";", 0, "empty expression");
  bad("WHERE", 5, "expected a comparison operator");
  bad("a = 1; b = 2", 5, "unexpected character ';'");
  /* literal on the left flips the operator */
  ok("5 < x", "x > 5");
  ok("5 <= x", "x >= 5");
  ok("5 > x", "x < 5");
  ok("5 >= x", "x <= 5");
  ok("5 = x", "x = 5");
  ok("5 <> x", "x != 5");
  ok("'abc' <= s", "s >= 'abc'");
  /* literals */
  ok("a = -9223372036854775808", "a = -9223372036854775808");
  ok("a = 9223372036854775807", "a = 9223372036854775807");
  ok("a = 18446744073709551615", "a = 18446744073709551615");
  ok("a = +7", "a = 7");
  ok("a = - 7", "a = -7");
  ok("a = 0.5", "a = 0.5");
  ok("a = .5", "a = 0.5");
  ok("a = 5.", "a = 5.0");
  ok("a = 1e3", "a = 1000e0");
  ok("a < -0.0", "a < 0.0"); /* an exact decimal has no negative zero */
  ok("a < 1e300", "a < 1.0000000000000001e+300");
  ok("a = -2.5E-1", "a = -0.25e0");
  ok("s = 'it''s'", "s = 'it''s'");
  ok("s = ''", "s = ''");
  ok("s = 'a,b (c)'", "s = 'a,b (c)'");
  ok("d >= DATE '1994-01-01'", "d >= DATE '1994-01-01'");
  ok("d >= date '2000-02-29'", "d >= DATE '2000-02-29'");
  ok("date = DATE '1970-01-01'", "date = DATE '1970-01-01'");
  ok("\"my col\" = 1", "\"my col\" = 1");
  ok("\"a\"\"b\" = 1", "\"a\"\"b\" = 1");
  ok("\"and\" = 1", "\"and\" = 1");
  ok("\"x\" = 1", "\"x\" = 1"); /* quoting is kept: it means an exact-case match */
  /* BETWEEN, IN, LIKE, IS NULL */
  ok("a BETWEEN 1 AND 5", "a BETWEEN 1 AND 5");
  ok("a not between -1 and 5.5", "a NOT BETWEEN -1 AND 5.5");
  ok("a BETWEEN b AND c", "a BETWEEN b AND c");
  ok("5 BETWEEN b AND c", "5 BETWEEN b AND c");
  ok("a IN (1)", "a IN (1)");
  ok("a IN (1, -2, 3.5)", "a IN (1, -2, 3.5)");
  ok("s NOT IN ('x','y')", "s NOT IN ('x', 'y')");
  ok("d in (DATE '1994-01-01', '1995-01-01')", "d IN (DATE '1994-01-01', '1995-01-01')");
  ok("s LIKE 'a%'", "s LIKE 'a%'");
  ok("s NOT LIKE '%a_b%'", "s NOT LIKE '%a_b%'");
  ok("s LIKE 'a!%%' ESCAPE '!'", "s LIKE 'a!%%' ESCAPE '!'");
  ok("s like 'x''%' escape ''''", "s LIKE 'x''%' ESCAPE ''''");
  ok("s IS NULL", "s IS NULL");
  ok("s is not null", "s IS NOT NULL");
  /* precedence: NOT > AND > OR, and parentheses */
  ok("a = 1 OR b = 2 AND c = 3", "(a = 1 OR (b = 2 AND c = 3))");
  ok("a = 1 AND b = 2 OR c = 3", "((a = 1 AND b = 2) OR c = 3)");
  ok("NOT a = 1 AND b = 2", "((NOT a = 1) AND b = 2)");
  ok("NOT a = 1 OR NOT b = 2", "((NOT a = 1) OR (NOT b = 2))");
  ok("NOT (a = 1 OR b = 2)", "(NOT (a = 1 OR b = 2))");
  ok("NOT NOT a = 1", "(NOT (NOT a = 1))");
  ok("(a = 1 OR b = 2) AND c = 3", "((a = 1 OR b = 2) AND c = 3)");
  ok("((((a = 1))))", "a = 1");
  ok("a BETWEEN 1 AND 2 AND b = 3", "(a BETWEEN 1 AND 2 AND b = 3)");
  ok("a BETWEEN 1 AND 2 OR b BETWEEN 3 AND 4", "(a BETWEEN 1 AND 2 OR b BETWEEN 3 AND 4)");
  /* chains are balanced */
  ok("a=1 OR a=2 OR a=3 OR a=4", "((a = 1 OR a = 2) OR (a = 3 OR a = 4))");
  ok("a=1 and b=2 and c=3", "(a = 1 AND (b = 2 AND c = 3))");
  /* keywords are case-insensitive; whitespace anywhere */
  ok("\ta\n=\r1\nAnD\tb\n<>\n2 ", "(a = 1 AND b != 2)");
  /* identifiers: letters, digits, _, $, UTF-8 */
  ok("l_quantity_2 = 1", "l_quantity_2 = 1");
  ok("pr\xc3\xa9x = 1", "pr\xc3\xa9x = 1");

  /* errors point at the offending token */
  bad("", 0, "empty expression");
  bad("   ", 0, "empty expression");
  bad("(a = 1", 6, "expected ')'");
  bad("a = 1)", 5, "unbalanced ')'");
  bad("a = 1 b = 2", 6, "expected AND, OR or the end");
  bad("a", 1, "expected a comparison operator");
  bad("a 1", 2, "expected a comparison operator");
  bad("a =", 3, "expected a column or literal, found end of input");
  bad("a = AND", 4, "found keyword 'AND'");
  bad("a = 1 AND", 9, "expected a column or literal");
  bad("a = 1 OR OR b = 2", 9, "found keyword 'OR'");
  bad("a = 'abc", 4, "unterminated string literal");
  bad("\"abc = 1", 0, "unterminated quoted identifier");
  bad("\"\" = 1", 0, "empty quoted identifier");
  bad("a = 18446744073709551616", 4, "integer literal out of range");
  bad("a = -9223372036854775809", 4, "integer literal out of range");
  bad("a = 1e999", 4, "numeric literal out of range");
  bad("a = 12abc", 4, "malformed number");
  bad("a = -b", 5, "expected a number after '-'");
  bad("a = NULL", 4, "use IS NULL");
  bad("a IS 1", 5, "expected NULL after IS");
  bad("a IS NOT 1", 9, "expected NULL after IS NOT");
  bad("a NOT 1", 6, "expected BETWEEN, IN or LIKE after NOT");
  bad("a BETWEEN 1 OR 2", 12, "expected AND in BETWEEN");
  bad("a BETWEEN 1", 11, "expected AND in BETWEEN");
  bad("5 BETWEEN 1 AND b", 0, "needs columns as both bounds");
  bad("a IN 1", 5, "expected '(' after IN");
  bad("a IN ()", 6, "expected a literal");
  bad("a IN (1, b)", 9, "literals only");
  bad("a IN (1 2)", 8, "expected ',' or ')'");
  bad("a IN (1,", 8, "expected a literal");
  bad("5 IN (1)", 0, "IN needs a column");
  bad("a LIKE b", 7, "expected a 'pattern' string");
  bad("a LIKE 'x' ESCAPE 'ab'", 18, "exactly one ASCII character");
  bad("a LIKE 'x' ESCAPE", 17, "expected a one-character string");
  bad("'x' LIKE 'y'", 0, "LIKE needs a column");
  bad("1 IS NULL", 0, "IS NULL needs a column");
  bad("1 = 2", 2, "two literals");
  bad("'a' < 'b'", 4, "two literals");
  bad("a ! 1", 2, "unexpected character '!'");
  bad("a = 1 ; b", 6, "unexpected character ';'");
  bad("a = #", 4, "unexpected character '#'");
  bad("a = \x01", 4, "unexpected byte 0x01");
  bad("d = DATE '1994-13-01'", 9, "invalid date");
  bad("d = DATE '1994-02-30'", 9, "invalid date");
  bad("d = DATE '94-01-01'", 9, "invalid date");
  bad("NOT", 3, "expected a column or literal");
  bad("()", 1, "expected a column or literal, found ')'");
  bad("a = 1 AND (b = 2 OR (c = 3)", 27, "to close the '(' at column 11");

  /* nesting is bounded; deep input is an error, not a stack overflow */
  {
    tbuf deep = {0};
    for (int i = 0; i < 100000; i++) tbuf_putc(&deep, '(');
    tbuf_printf(&deep, "a = 1");
    expr_arena a = {0};
    ast_node *n;
    expr_error e;
    if (!expr_parse((char *)deep.p, deep.len, &a, &n, &e) || !strstr(e.msg, "nested too deeply")) {
      printf("FAIL: deep parentheses\n");
      failures++;
    }
    expr_arena_free(&a);
    deep.len = 0;
    for (int i = 0; i < 100000; i++) tbuf_printf(&deep, "NOT ");
    tbuf_printf(&deep, "a = 1");
    if (!expr_parse((char *)deep.p, deep.len, &a, &n, &e) || !strstr(e.msg, "nested too deeply")) {
      printf("FAIL: deep NOT\n");
      failures++;
    }
    expr_arena_free(&a);
    /* every accepted expression's canonical text parses back: "(NOT x)" is
     * two levels of it, so 100 NOTs are the most (found by fuzz_select) */
    deep.len = 0;
    tbuf want = {0};
    for (int i = 0; i < 100; i++) tbuf_printf(&deep, "NOT ");
    for (int i = 0; i < 100; i++) tbuf_printf(&want, "(NOT ");
    tbuf_printf(&deep, "a = 1");
    tbuf_printf(&want, "a = 1");
    for (int i = 0; i < 100; i++) tbuf_putc(&want, ')');
    tbuf_putc(&deep, 0);
    tbuf_putc(&want, 0);
    ok((char *)deep.p, (char *)want.p);
    deep.len = 0;
    for (int i = 0; i < 101; i++) tbuf_printf(&deep, "NOT ");
    tbuf_printf(&deep, "a = 1");
    tbuf_putc(&deep, 0);
    bad((char *)deep.p, 400, "nested too deeply (more than 200 levels written back");
    /* AND and OR alternating in parentheses: one level each, and the outer
     * chain's own parentheses one more; 199 parentheses are the most */
    for (int p = 199; p <= 200; p++) {
      deep.len = 0;
      for (int i = 0; i < p; i++) tbuf_printf(&deep, "a = %d %s (", i, i % 2 ? "OR" : "AND");
      const size_t last = deep.len;
      tbuf_printf(&deep, "a = %d AND a = %d", p, p + 1);
      for (int i = 0; i < p; i++) tbuf_putc(&deep, ')');
      if (p == 199) {
        if (expr_parse((char *)deep.p, deep.len, &a, &n, &e)) {
          printf("FAIL: 199 nested AND/OR groups: %s\n", e.msg);
          failures++;
        } else {
          tbuf b = {0};
          expr_to_string(n, &b);
          expr_arena a2 = {0};
          if (expr_parse((char *)b.p, b.len, &a2, &n, &e)) {
            printf("FAIL: 199 nested AND/OR groups: the canonical text does not parse back: %s\n", e.msg);
            failures++;
          }
          expr_arena_free(&a2);
          tbuf_free(&b);
        }
      } else if (!expr_parse((char *)deep.p, deep.len, &a, &n, &e) || e.pos != last ||
                 !strstr(e.msg, "nested too deeply")) {
        printf("FAIL: 200 nested AND/OR groups: want an error at %zu, got at %zu: %s\n", last, e.pos, e.msg);
        failures++;
      }
      expr_arena_free(&a);
    }
    tbuf_free(&want);
    /* a long OR chain is fine (balanced, not nested) */
    deep.len = 0;
    for (int i = 0; i < 50000; i++) tbuf_printf(&deep, "%sa = %d", i ? " OR " : "", i);
    if (expr_parse((char *)deep.p, deep.len, &a, &n, &e)) {
      printf("FAIL: long OR chain: %s\n", e.msg);
      failures++;
    }
    expr_arena_free(&a);
    tbuf_free(&deep);
  }
  /* an embedded NUL byte is an error at its position, not the end of input */
  {
    expr_arena a = {0};
    ast_node *n;
    expr_error e;
    if (!expr_parse("a = 1\0 OR b = 2", 15, &a, &n, &e) || e.pos != 5) {
      printf("FAIL: embedded NUL\n");
      failures++;
    }
    expr_arena_free(&a);
  }
  /* the caret display counts characters, not bytes */
  {
    expr_error e = {6, "x"};
    FILE *f = tmpfile();
    expr_print_error(f, "\xc3\xa9\xc3\xa9 = ?", 8, &e);
    rewind(f);
    char buf[256] = {0};
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    if (!got || !strstr(buf, "error at column 5: x") || !strstr(buf, "\n      ^")) {
      printf("FAIL: caret line:\n%s\n", buf);
      failures++;
    }
  }
  if (failures) {
    printf("%d parser test(s) failed\n", failures);
    return 1;
  }
  printf("parser: all tests passed\n");
  return 0;
}
