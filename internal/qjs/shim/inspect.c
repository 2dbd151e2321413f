/*
 * inspect.c: the validation of an executor step by the engine that runs
 * it. qjs_inspect_step compiles a step as session_step would (strict
 * global code, top-level await and return) without running it, and reports
 * what the executor's rules need: the syntax error and its position, or
 * the globals the step declares and names, its local bindings and its
 * import() calls (JS_InspectStep, patch 0008). Nothing runs and nothing is
 * read through the realm's objects (no getter, toJSON or toString a
 * program put there takes part): the report is written here, in C.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "quickjs.h"
#include "cutils.h"

#define EXPORT(name) __attribute__((export_name(#name), visibility("default")))

static void put_json_string(DynBuf *b, const char *s, size_t len)
{
    size_t i;
    dbuf_putc(b, '"');
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            dbuf_putc(b, '\\');
            dbuf_putc(b, c);
        } else if (c < 0x20) {
            dbuf_printf(b, "\\u%04x", c);
        } else {
            dbuf_putc(b, c);
        }
    }
    dbuf_putc(b, '"');
}

static void put_json_value(JSContext *ctx, DynBuf *b, JSValueConst v)
{
    size_t len;
    const char *s;
    if (!JS_IsString(v)) {
        dbuf_putstr(b, "null");
        return;
    }
    s = JS_ToCStringLen(ctx, &len, v);
    if (!s) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        dbuf_putstr(b, "null");
        return;
    }
    put_json_string(b, s, len);
    JS_FreeCString(ctx, s);
}

struct inspection {
    JSContext *ctx;
    DynBuf *b;
    int n;
};

static void inspected(void *opaque, int kind, JSAtom name, int line, int col)
{
    struct inspection *in = opaque;
    dbuf_printf(in->b, "%s[%d,", in->n++ ? "," : "", kind);
    if (name == JS_ATOM_NULL) {
        dbuf_putstr(in->b, "null");
    } else {
        JSValue s = JS_AtomToString(in->ctx, name);
        put_json_value(in->ctx, in->b, s);
        JS_FreeValue(in->ctx, s);
    }
    dbuf_printf(in->b, ",%d,%d]", line, col);
}

/* own reads an own data property of an error the parser made */
static JSValue own(JSContext *ctx, JSValueConst obj, const char *name)
{
    JSPropertyDescriptor d;
    JSAtom a = JS_NewAtom(ctx, name);
    int r;
    if (a == JS_ATOM_NULL)
        return JS_UNDEFINED;
    r = JS_GetOwnProperty(ctx, &d, obj, a);
    JS_FreeAtom(ctx, a);
    if (r <= 0) {
        if (r < 0)
            JS_FreeValue(ctx, JS_GetException(ctx));
        return JS_UNDEFINED;
    }
    JS_FreeValue(ctx, d.getter);
    JS_FreeValue(ctx, d.setter);
    return d.value;
}

static int own_int(JSContext *ctx, JSValueConst obj, const char *name)
{
    JSValue v = own(ctx, obj, name);
    int32_t n = 0;
    if (JS_IsNumber(v))
        JS_ToInt32(ctx, &n, v);
    JS_FreeValue(ctx, v);
    return n;
}

/* put_error reports the pending exception: the compiler's error, or what
   stopped the inspection (the stack, memory) */
static void put_error(JSContext *ctx, DynBuf *b)
{
    JSValue e = JS_GetException(ctx), v;
    dbuf_putstr(b, "{\"ok\":false,\"message\":");
    if (JS_IsObject(e)) {
        v = own(ctx, e, "message");
        put_json_value(ctx, b, v);
        JS_FreeValue(ctx, v);
        dbuf_printf(b, ",\"line\":%d,\"column\":%d,\"importModule\":", own_int(ctx, e, "lineNumber"),
                    own_int(ctx, e, "columnNumber"));
        v = own(ctx, e, "importModule");
        put_json_value(ctx, b, v);
        JS_FreeValue(ctx, v);
    } else {
        put_json_value(ctx, b, e);
        dbuf_putstr(b, ",\"line\":0,\"column\":0,\"importModule\":null");
    }
    dbuf_putc(b, '}');
    JS_FreeValue(ctx, e);
}

/* The step qjs_inspect_step kept, for session_step to run: a step is
   compiled once, validated and run. */
static JSValue kept_step = JS_UNDEFINED;

/* inspect_take_step hands over the kept step (JS_UNDEFINED if none) */
JSValue inspect_take_step(void)
{
    JSValue fn = kept_step;
    kept_step = JS_UNDEFINED;
    return fn;
}

/* qjs_inspect_step compiles src[0:len] (NUL after it), named filename, as
   a step and returns a buffer the host frees (qjs_free): its text's length
   (uint32, little endian), then the text, JSON:
     {"ok":true,"items":[[kind,name,line,column],...]}   (kinds: JS_INSPECT_*)
     {"ok":false,"message":"...","line":1,"column":4,
      "importModule":"x"}    (importModule: patch 0008's static import, or null)
   NULL when memory ran out. flags are session_step's (STEP_*, shim.h):
   with STEP_BUDGET compiled with the operation budget, with STEP_SLOPPY
   as sloppy code; with STEP_KEPT the compiled step is kept for the step
   run with STEP_KEPT (ENTRY_STEP). Any step kept before is dropped. */
EXPORT(qjs_inspect_step) uint8_t *qjs_inspect_step(JSContext *ctx, const char *src, uint32_t len, const char *filename,
                                                   int32_t flags)
{
    DynBuf b;
    JSValue fn;
    int r;
    dbuf_init(&b);
    dbuf_put_u32(&b, 0);
    JS_FreeValue(ctx, inspect_take_step());
    fn = JS_Eval(ctx, src, len, filename,
                 JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_ASYNC | JS_EVAL_FLAG_STEP | JS_EVAL_FLAG_COMPILE_ONLY |
                     ((flags & 2) ? 0 : JS_EVAL_FLAG_STRICT) | ((flags & 1) ? JS_EVAL_FLAG_BUDGET : 0));
    if (!JS_IsException(fn)) {
        struct inspection in = {ctx, &b, 0};
        dbuf_putstr(&b, "{\"ok\":true,\"items\":[");
        r = JS_InspectStep(ctx, fn, inspected, &in);
        if (r == 0 && (flags & 4))
            kept_step = fn;
        else
            JS_FreeValue(ctx, fn);
        if (r == 0) {
            dbuf_putstr(&b, "]}");
            goto done;
        }
        b.size = 4; /* the error instead */
    }
    put_error(ctx, &b);
 done:
    if (b.error) {
        dbuf_free(&b);
        return NULL;
    }
    put_u32(b.buf, (uint32_t)(b.size - 4));
    return b.buf; /* dbuf's realloc is the libc's: qjs_free frees it */
}
