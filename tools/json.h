/* A small streaming JSON writer shared by vkc-info and vkc-bench.
 *
 * Values are written in order; the writer keeps the commas and, up to
 * `wrap` levels deep, puts each element on its own indented line (deeper
 * containers stay on one line). Strings are escaped here, once. Not
 * thread-safe: one writer per FILE. */
#ifndef VKC_TOOLS_JSON_H
#define VKC_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16 /* nesting beyond this is not supported */

typedef struct json_w {
    FILE *f;
    int wrap;  /* levels whose elements go on lines of their own */
    int depth; /* open containers */
    bool has_items[JSON_MAX_DEPTH];
    bool after_key;
} json_w;

void json_init(json_w *w, FILE *f, int wrap);
/* Finish the document (a newline); false when writing failed. */
bool json_finish(json_w *w);

void json_obj_begin(json_w *w);
void json_obj_end(json_w *w);
void json_arr_begin(json_w *w);
void json_arr_end(json_w *w);
/* The key of the next value in an object. */
void json_key(json_w *w, const char *key);

/* NULL writes null. */
void json_str(json_w *w, const char *s);
/* Not finite writes null; an integral value exactly, others as "%.6g". */
void json_num(json_w *w, double v);
void json_uint(json_w *w, uint64_t v);
void json_int(json_w *w, int64_t v);
void json_bool(json_w *w, bool v);
void json_null(json_w *w);

/* key + value in one call. */
void json_kstr(json_w *w, const char *key, const char *s);
void json_knum(json_w *w, const char *key, double v);
void json_kuint(json_w *w, const char *key, uint64_t v);
void json_kbool(json_w *w, const char *key, bool v);

#endif
