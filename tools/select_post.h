/* What select_run.c (the binder of aggregates and keys) and select_post.c
 * (values of groups: HAVING, ORDER BY, LIMIT, computed items) share. */
#ifndef PSTOOL_SELECT_POST_H
#define PSTOOL_SELECT_POST_H

#include "select_run.h"

/* Types of values outside aggregates (vx_node.rtype). Dates count days,
 * timestamps and times seconds at their unit's scale, booleans 0 and 1. */
enum { RT_NULL = 0, RT_NUM, RT_STR, RT_DATE, RT_TS, RT_TIME, RT_BOOL };

/* Binds the aggregate v (VX_AGG) to a new aggregate of the query, or with
 * share to an existing one equal to it (the same canonical text), so that
 * HAVING and ORDER BY reuse the SELECT list's aggregates (each item keeps
 * its own, in order). Sets v->slot, rtype and rscale. 0, or -1 with e set. */
int select_bind_agg(select_plan *p, vx_node *v, int share, expr_error *e);
/* The GROUP BY key column k names, or -1 (not a key). */
int select_key_of(select_plan *p, const vx_node *v, expr_error *e);
/* Binds a value of the group (a SELECT item that is not a bare aggregate or
 * key): aggregates through select_bind_agg, columns as keys. */
int select_bind_result(select_plan *p, vx_node *v, expr_error *e);
/* Binds HAVING and ORDER BY (after the items, whose aliases they may name). */
int select_bind_post(select_plan *p, expr_error *e);
/* "number", "string", "date"... for messages. */
const char *select_rtype_name(int t);
/* The type of a column's own values. */
int select_rtype_of_show(select_show s);

#endif
