/* The shared SQL lexer: token kinds, spans and errors in both modes, named
 * cases where the two grammars read the same text differently. */
#include <stdio.h>
#include <string.h>

#include "sql_lex.h"

static int failures;

static const char kind_letter[] = "EIQNS(),+-*/;CO"; /* by sql_tok_kind */

/* Lexes src to the end: each token as its kind letter and text
 * ("I[a] C[<=] N[1]"), or "error P: message" where it fails. */
static void tokens(const char *src, sql_lex_mode mode, char *out, size_t n) {
  size_t pos = 0, len = strlen(src), k = 0;
  out[0] = 0;
  for (;;) {
    sql_token t;
    sql_error e;
    if (sql_lex(src, len, &pos, &t, mode, &e)) {
      snprintf(out + k, n - k, "%serror %zu: %s", k ? " " : "", e.pos, e.msg);
      return;
    }
    if (t.kind == TK_EOF) return;
    int w = snprintf(out + k, n - k, "%s%c[%.*s]", k ? " " : "", kind_letter[t.kind], (int)t.len, src + t.pos);
    if (w < 0 || (size_t)w >= n - k) return;
    k += (size_t)w;
  }
}

static void check(const char *src, sql_lex_mode mode, const char *want) {
  char got[512];
  tokens(src, mode, got, sizeof got);
  if (strcmp(got, want)) {
    printf("FAIL: %s '%s'\n  got:  %s\n  want: %s\n", mode == SQL_LEX_EXPR ? "expr" : "statement", src, got, want);
    failures++;
  }
}

static void both(const char *src, const char *want) {
  check(src, SQL_LEX_EXPR, want);
  check(src, SQL_LEX_STATEMENT, want);
}

int main(void) {
  /* what both grammars read alike */
  both("", "");
  both("  \t\n", "");
  both("a_1$ \xc3\xa9t\xc3\xa9 _x", "I[a_1$] I[\xc3\xa9t\xc3\xa9] I[_x]");
  both("\"a \"\"b\"\"\" 'it''s' ''", "Q[\"a \"\"b\"\"\"] S['it''s'] S['']");
  both("1 12.5 .5 5. 1e5 2.5E-3 7e+2 1e",
       "N[1] N[12.5] N[.5] N[5.] N[1e5] N[2.5E-3] N[7e+2] error 29: malformed number");
  both("(a, -b) + c", "([(] I[a] ,[,] -[-] I[b] )[)] +[+] I[c]");
  both("12abc", "error 0: malformed number");
  both("1e5x", "error 0: malformed number");
  both("x 'open", "I[x] error 2: unterminated string literal");
  both("x \"open", "I[x] error 2: unterminated quoted identifier");
  both("'a''", "error 0: unterminated string literal");
  /* a second '.': one malformed number in a statement, two numbers in an expression */
  check("1.2.3", SQL_LEX_EXPR, "N[1.2] N[.3]");
  check("1.2.3", SQL_LEX_STATEMENT, "error 0: malformed number");
  check("x = 1..2", SQL_LEX_EXPR, "I[x] C[=] N[1.] N[.2]");
  check("x = 1..2", SQL_LEX_STATEMENT, "I[x] O[=] error 4: malformed number");
  /* operators: comparisons in an expression; passed through whole in a statement */
  check("= == != <> < <= > >=", SQL_LEX_EXPR, "C[=] C[==] C[!=] C[<>] C[<] C[<=] C[>] C[>=]");
  check("= == != <> < <= > >=", SQL_LEX_STATEMENT, "O[=] O[==] O[!=] O[<>] O[<] O[<=] O[>] O[>=]");
  check("a<=>b", SQL_LEX_EXPR, "I[a] C[<=] C[>] I[b]");
  check("a<=>b", SQL_LEX_STATEMENT, "I[a] O[<=>] I[b]");
  check("* / ;", SQL_LEX_STATEMENT, "*[*] /[/] ;[;]");
  check("a * 2", SQL_LEX_EXPR, "I[a] error 2: unexpected character '*'");
  check("a ; b", SQL_LEX_EXPR, "I[a] error 2: unexpected character ';'");
  check("a ! b", SQL_LEX_EXPR, "I[a] error 2: unexpected character '!' (did you mean '!='?)");
  check("a @ b", SQL_LEX_EXPR, "I[a] error 2: unexpected character '@'");
  check("a \x01 b", SQL_LEX_EXPR, "I[a] error 2: unexpected byte 0x01");
  check("a @ ! b", SQL_LEX_STATEMENT, "I[a] O[@] O[!] I[b]");

  /* the comparison operators' values */
  static const struct {
    const char *src;
    ps_cmp op;
  } ops[] = {{"=", PS_EQ}, {"==", PS_EQ}, {"!=", PS_NE}, {"<>", PS_NE},
             {"<", PS_LT}, {"<=", PS_LE}, {">", PS_GT},  {">=", PS_GE}};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    size_t pos = 0;
    sql_token t;
    sql_error e;
    if (sql_lex(ops[i].src, strlen(ops[i].src), &pos, &t, SQL_LEX_EXPR, &e) || t.kind != TK_CMP || t.op != ops[i].op) {
      printf("FAIL: '%s' is not comparison %d\n", ops[i].src, (int)ops[i].op);
      failures++;
    }
  }

  /* keywords in any case; token text for messages */
  const char *src = "select SeLeCt selects \"SELECT\"";
  size_t pos = 0, len = strlen(src);
  sql_token t[4];
  sql_error e;
  for (int i = 0; i < 4; i++) sql_lex(src, len, &pos, &t[i], SQL_LEX_STATEMENT, &e);
  if (!sql_tok_is_kw(src, &t[0], "SELECT") || !sql_tok_is_kw(src, &t[1], "SELECT") ||
      sql_tok_is_kw(src, &t[2], "SELECT") || sql_tok_is_kw(src, &t[3], "SELECT")) {
    printf("FAIL: keyword comparison\n");
    failures++;
  }
  char d[64];
  sql_describe(src, &t[3], d, sizeof d);
  if (strcmp(d, "'\"SELECT\"'")) {
    printf("FAIL: describe: %s\n", d);
    failures++;
  }
  const char *longer = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";
  pos = 0;
  sql_lex(longer, strlen(longer), &pos, &t[0], SQL_LEX_EXPR, &e);
  sql_describe(longer, &t[0], d, sizeof d);
  if (strcmp(d, "'abcdefghijklmnopqrstuvwxyzabcdefghijklmn...'")) {
    printf("FAIL: describe long: %s\n", d);
    failures++;
  }
  const char *ctl = "'a\tb'";
  pos = 0;
  sql_lex(ctl, strlen(ctl), &pos, &t[0], SQL_LEX_EXPR, &e);
  sql_describe(ctl, &t[0], d, sizeof d);
  if (strcmp(d, "''a?b''")) {
    printf("FAIL: describe control byte: %s\n", d);
    failures++;
  }
  pos = len;
  sql_lex(src, len, &pos, &t[0], SQL_LEX_EXPR, &e);
  sql_describe(src, &t[0], d, sizeof d);
  if (t[0].kind != TK_EOF || t[0].pos != len || strcmp(d, "end of input")) {
    printf("FAIL: end of input: %s\n", d);
    failures++;
  }

  /* unquoting */
  const char *q = "'it''s' \"a\"\"b\" ''";
  pos = 0;
  const char *want[] = {"it's", "a\"b", ""};
  for (int i = 0; i < 3; i++) {
    char buf[32];
    sql_lex(q, strlen(q), &pos, &t[0], SQL_LEX_EXPR, &e);
    size_t n = sql_unquote(q, &t[0], buf);
    if (n != strlen(want[i]) || strcmp(buf, want[i])) {
      printf("FAIL: unquote %d: [%s]\n", i, buf);
      failures++;
    }
  }

  if (failures)
    printf("%d failure(s)\n", failures);
  else
    printf("all sql_lex tests passed\n");
  return failures != 0;
}
