/* See json.h. */
#include "json.h"

#include <math.h>

void json_init(json_w *w, FILE *f, int wrap)
{
    *w = (json_w){.f = f, .wrap = wrap};
}

bool json_finish(json_w *w)
{
    fputc('\n', w->f);
    return !ferror(w->f);
}

static void newline(json_w *w, int depth)
{
    fputc('\n', w->f);
    for (int i = 0; i < depth; ++i)
        fputs("  ", w->f);
}

/* The "has items" flag of the container at depth d (0 = outermost). */
static bool *has_items(json_w *w, int d)
{
    return &w->has_items[d < JSON_MAX_DEPTH ? d : JSON_MAX_DEPTH - 1];
}

/* Separator before a value or key at the current level. */
static void item(json_w *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0)
        return;
    bool *has = has_items(w, w->depth - 1);
    if (*has)
        fputc(',', w->f);
    if (w->depth <= w->wrap)
        newline(w, w->depth);
    else if (*has)
        fputc(' ', w->f);
    *has = true;
}

static void begin(json_w *w, char c)
{
    item(w);
    fputc(c, w->f);
    *has_items(w, w->depth) = false;
    ++w->depth;
}

static void end(json_w *w, char c)
{
    --w->depth;
    if (w->depth < w->wrap && *has_items(w, w->depth))
        newline(w, w->depth);
    fputc(c, w->f);
}

void json_obj_begin(json_w *w)
{
    begin(w, '{');
}

void json_obj_end(json_w *w)
{
    end(w, '}');
}

void json_arr_begin(json_w *w)
{
    begin(w, '[');
}

void json_arr_end(json_w *w)
{
    end(w, ']');
}

static void raw_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void json_key(json_w *w, const char *key)
{
    item(w);
    raw_str(w->f, key);
    fputs(": ", w->f);
    w->after_key = true;
}

void json_str(json_w *w, const char *s)
{
    if (!s) {
        json_null(w);
        return;
    }
    item(w);
    raw_str(w->f, s);
}

void json_num(json_w *w, double v)
{
    if (!isfinite(v)) {
        json_null(w);
        return;
    }
    item(w);
    /* integral values (counts) exactly, others to 6 significant digits */
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        fprintf(w->f, "%.0f", v);
    else
        fprintf(w->f, "%.6g", v);
}

void json_uint(json_w *w, uint64_t v)
{
    item(w);
    fprintf(w->f, "%llu", (unsigned long long)v);
}

void json_int(json_w *w, int64_t v)
{
    item(w);
    fprintf(w->f, "%lld", (long long)v);
}

void json_bool(json_w *w, bool v)
{
    item(w);
    fputs(v ? "true" : "false", w->f);
}

void json_null(json_w *w)
{
    item(w);
    fputs("null", w->f);
}

void json_kstr(json_w *w, const char *key, const char *s)
{
    json_key(w, key);
    json_str(w, s);
}

void json_knum(json_w *w, const char *key, double v)
{
    json_key(w, key);
    json_num(w, v);
}

void json_kuint(json_w *w, const char *key, uint64_t v)
{
    json_key(w, key);
    json_uint(w, v);
}

void json_kbool(json_w *w, const char *key, bool v)
{
    json_key(w, key);
    json_bool(w, v);
}
