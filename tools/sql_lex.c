/* The SQL lexer shared by expr_parse.c and select_parse.c (see sql_lex.h). */
#include "sql_lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int sql_fail(sql_error *err, int *failed, size_t pos, const char *fmt, ...) {
  if (failed && *failed) return -1;
  if (failed) *failed = 1;
  err->pos = pos;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return -1;
}

int sql_is_ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
int sql_is_ident_char(unsigned char c) { return sql_is_ident_start(c) || (c >= '0' && c <= '9') || c == '$'; }
int sql_is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Comparison operators of a WHERE-expression; sets tok's kind and op, or fails. */
static int lex_cmp(const char *s, size_t len, size_t start, size_t *i, sql_token *t, sql_error *err) {
  unsigned char c = (unsigned char)s[start];
  t->kind = TK_CMP;
  switch (c) {
    case '=':
      t->op = PS_EQ;
      if (*i < len && s[*i] == '=') ++*i;
      return 0;
    case '!':
      if (*i < len && s[*i] == '=') {
        ++*i;
        t->op = PS_NE;
        return 0;
      }
      return sql_fail(err, NULL, start, "unexpected character '!' (did you mean '!='?)");
    case '<':
      t->op = PS_LT;
      if (*i < len && s[*i] == '=') {
        ++*i;
        t->op = PS_LE;
      } else if (*i < len && s[*i] == '>') {
        ++*i;
        t->op = PS_NE;
      }
      return 0;
    case '>':
      t->op = PS_GT;
      if (*i < len && s[*i] == '=') {
        ++*i;
        t->op = PS_GE;
      }
      return 0;
    default:
      if (c >= 32 && c < 127) return sql_fail(err, NULL, start, "unexpected character '%c'", c);
      return sql_fail(err, NULL, start, "unexpected byte 0x%02x", c);
  }
}

int sql_lex(const char *s, size_t len, size_t *pos, sql_token *t, sql_lex_mode mode, sql_error *err) {
  while (*pos < len && sql_is_space((unsigned char)s[*pos])) ++*pos;
  size_t start = *pos;
  t->pos = start;
  t->len = 0;
  if (start >= len) {
    t->kind = TK_EOF;
    return 0;
  }
  unsigned char c = (unsigned char)s[start];
  size_t i = start;
  if (sql_is_ident_start(c)) {
    while (i < len && sql_is_ident_char((unsigned char)s[i])) i++;
    t->kind = TK_IDENT;
  } else if (is_digit(c) || (c == '.' && i + 1 < len && is_digit((unsigned char)s[i + 1]))) {
    while (i < len && is_digit((unsigned char)s[i])) i++;
    if (i < len && s[i] == '.') {
      i++;
      while (i < len && is_digit((unsigned char)s[i])) i++;
    }
    /* In a statement "1.2.3" is one malformed number; a WHERE-expression
     * reads it as 1.2 and .3 and its parser says what it expected instead. */
    if (mode == SQL_LEX_STATEMENT && i < len && s[i] == '.') return sql_fail(err, NULL, start, "malformed number");
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
      size_t j = i + 1;
      if (j < len && (s[j] == '+' || s[j] == '-')) j++;
      if (j < len && is_digit((unsigned char)s[j])) {
        while (j < len && is_digit((unsigned char)s[j])) j++;
        i = j;
      }
    }
    if (i < len && sql_is_ident_char((unsigned char)s[i])) return sql_fail(err, NULL, start, "malformed number");
    t->kind = TK_NUMBER;
  } else if (c == '\'' || c == '"') {
    i++;
    for (;;) {
      if (i >= len)
        return sql_fail(err, NULL, start, c == '\'' ? "unterminated string literal" : "unterminated quoted identifier");
      if ((unsigned char)s[i] == c) {
        if (i + 1 < len && (unsigned char)s[i + 1] == c) {
          i += 2;
          continue;
        }
        i++;
        break;
      }
      i++;
    }
    t->kind = c == '\'' ? TK_STRING : TK_QIDENT;
  } else {
    i++;
    switch (c) {
      case '(':
        t->kind = TK_LPAREN;
        break;
      case ')':
        t->kind = TK_RPAREN;
        break;
      case ',':
        t->kind = TK_COMMA;
        break;
      case '+':
        t->kind = TK_PLUS;
        break;
      case '-':
        t->kind = TK_MINUS;
        break;
      default:
        if (mode == SQL_LEX_EXPR) {
          if (lex_cmp(s, len, start, &i, t, err)) return -1;
        } else if (c == '*') {
          t->kind = TK_STAR;
        } else if (c == '/') {
          t->kind = TK_SLASH;
        } else if (c == ';') {
          t->kind = TK_SEMI;
        } else {
          t->kind = TK_OTHER;
          while (i < len && (s[i] == '=' || s[i] == '>')) i++; /* <=, <>, >=, ==, != as one token */
        }
        break;
    }
  }
  t->len = i - start;
  *pos = i;
  return 0;
}

int sql_word_eq(const char *s, size_t len, const char *kw) {
  size_t n = strlen(kw);
  if (len != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c >= 'a' && c <= 'z') c = (char)(c - 32);
    if (c != kw[i]) return 0;
  }
  return 1;
}

int sql_tok_is_kw(const char *src, const sql_token *t, const char *kw) {
  return t->kind == TK_IDENT && sql_word_eq(src + t->pos, t->len, kw);
}

void sql_describe(const char *src, const sql_token *t, char *out, size_t n) {
  if (t->kind == TK_EOF) {
    snprintf(out, n, "end of input");
    return;
  }
  size_t k = t->len > 40 ? 40 : t->len;
  char buf[48];
  for (size_t i = 0; i < k; i++) {
    unsigned char c = (unsigned char)src[t->pos + i];
    buf[i] = c >= 32 && c != 127 ? (char)c : '?';
  }
  buf[k] = 0;
  snprintf(out, n, "'%s%s'", buf, t->len > 40 ? "..." : "");
}

size_t sql_unquote(const char *src, const sql_token *t, char *out) {
  char q = src[t->pos];
  size_t k = 0;
  for (size_t i = t->pos + 1; i < t->pos + t->len - 1; i++) {
    out[k++] = src[i];
    if (src[i] == q) i++; /* doubled quote */
  }
  out[k] = 0;
  return k;
}
