/*
 * failure.c: how a run ends, told to the host: its value (OP_DONE) or what
 * it threw (OP_FAILED). The texts of a failure (an error's name, message,
 * stack and file name, a thrown value's text) are cut here, before they
 * cross: each to MAX_ERROR_TEXT UTF-16 code units (a string's length),
 * the head and the tail kept around a line that says how much was cut, as
 * the host's ClipText writes it; each line of a stack to MAX_FRAME_TEXT,
 * the line's marker without line breaks. The host reads no more than what
 * is kept. A thrown value that is not an Error is described without
 * running any of its code (no toString, no toJSON).
 *
 * The texts are JavaScript strings throughout, cut with the realm's own
 * String.prototype methods, captured before any program runs: a string's
 * length and its code units are the engine's, whatever the text holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "shim.h"
#include "kernel.h"

enum { N_SLICE, N_CHAR_CODE_AT, N_INDEX_OF, N_CONCAT, N_SYMBOL_TO_STRING, N_NATIVES };
static JSValue natives[N_NATIVES] = {JS_UNDEFINED};
static const char natives_src[] = "[String.prototype.slice, String.prototype.charCodeAt, String.prototype.indexOf, "
                                  "String.prototype.concat, Symbol.prototype.toString]";

/* ---- strings ---- */

static JSValue call_native(JSContext *ctx, int f, JSValueConst this_val, int argc, JSValueConst *argv)
{
    return JS_Call(ctx, natives[f], this_val, argc, argv);
}

/* length is the length of the string s, in UTF-16 code units. */
static int64_t length(JSContext *ctx, JSValueConst s)
{
    JSValue n = JS_GetPropertyStr(ctx, s, "length");
    int64_t len = 0;
    JS_ToInt64(ctx, &len, n);
    JS_FreeValue(ctx, n);
    return len;
}

static int code_unit(JSContext *ctx, JSValueConst s, int64_t i)
{
    JSValue a = JS_NewInt64(ctx, i), c = call_native(ctx, N_CHAR_CODE_AT, s, 1, (JSValueConst *)&a);
    int32_t u = 0;
    JS_ToInt32(ctx, &u, c);
    JS_FreeValue(ctx, c);
    return u;
}

static JSValue slice(JSContext *ctx, JSValueConst s, int64_t from, int64_t to)
{
    JSValue a[2] = {JS_NewInt64(ctx, from), JS_NewInt64(ctx, to)};
    return call_native(ctx, N_SLICE, s, 2, (JSValueConst *)a);
}

/* concat is a + b, both taken. */
static JSValue concat(JSContext *ctx, JSValue a, JSValue b)
{
    JSValue r;
    if (JS_IsException(a) || JS_IsException(b)) {
        JS_FreeValue(ctx, a);
        JS_FreeValue(ctx, b);
        return JS_EXCEPTION;
    }
    r = call_native(ctx, N_CONCAT, a, 1, (JSValueConst *)&b);
    JS_FreeValue(ctx, a);
    JS_FreeValue(ctx, b);
    return r;
}

static JSValue concat_str(JSContext *ctx, JSValue a, const char *b)
{
    return concat(ctx, a, JS_NewString(ctx, b));
}

/* marker is the line that says k code units were cut (nl: on a line of
   its own), its number grouped by thousands. */
static int marker(char *buf, size_t size, int64_t k, int nl)
{
    char digits[24], grouped[32];
    int n = snprintf(digits, sizeof digits, "%lld", (long long)k), i, o = 0;
    for (i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            grouped[o++] = ',';
        grouped[o++] = digits[i];
    }
    grouped[o] = 0;
    return snprintf(buf, size, "%s... [truncated %s characters] ...%s", nl ? "\n" : "", grouped, nl ? "\n" : "");
}

/* cut_around is s[from:to] if it has at most max code units, else its head
   and tail around the marker (nl: the marker on a line of its own), max
   code units in all; a surrogate pair is never split. */
static JSValue cut_around(JSContext *ctx, JSValueConst s, int64_t from, int64_t to, int64_t max, int nl)
{
    int64_t n = to - from, keep = max, head, tail;
    char m[96];
    int i, ml;
    if (n <= max)
        return from == 0 && to == length(ctx, s) ? JS_DupValue(ctx, s) : slice(ctx, s, from, to);
    for (i = 0; i < 3; i++) /* the marker's length depends on the count */
        keep = max - marker(m, sizeof m, n - keep, nl);
    head = keep >> 1;
    tail = keep - head;
    for (;;) {
        int c;
        if (head > 0 && (c = code_unit(ctx, s, from + head - 1)) >= 0xd800 && c <= 0xdbff)
            head--;
        if (tail > 0 && (c = code_unit(ctx, s, to - tail)) >= 0xdc00 && c <= 0xdfff)
            tail--;
        ml = marker(m, sizeof m, n - head - tail, nl);
        if (head + tail + ml <= max || head + tail == 0)
            return concat(ctx, concat_str(ctx, slice(ctx, s, from, from + head), m), slice(ctx, s, to - tail, to));
        if (head > tail)
            head--;
        else
            tail--;
    }
}

static JSValue clip(JSContext *ctx, JSValueConst s)
{
    return cut_around(ctx, s, 0, length(ctx, s), MAX_ERROR_TEXT, 1);
}

/* clip_stack cuts each line of a stack to MAX_FRAME_TEXT and the stack to
   MAX_ERROR_TEXT: the innermost frames are kept, and a last line says how
   much of the rest was cut. */
static JSValue clip_stack(JSContext *ctx, JSValueConst s)
{
    int64_t n = length(ctx, s), i = 0, outlen = 0;
    JSValue out, nl;
    if (n <= MAX_FRAME_TEXT)
        return JS_DupValue(ctx, s);
    out = JS_NewString(ctx, "");
    nl = JS_NewString(ctx, "\n");
    while (i < n && !JS_IsException(out)) {
        JSValue a[2] = {nl, JS_NewInt64(ctx, i)}, jv = call_native(ctx, N_INDEX_OF, s, 2, (JSValueConst *)a), line;
        int64_t j = -1, linelen, sep = outlen == 0 ? 0 : 1;
        JS_ToInt64(ctx, &j, jv);
        JS_FreeValue(ctx, jv);
        if (j < 0)
            j = n;
        line = cut_around(ctx, s, i, j, MAX_FRAME_TEXT, 0);
        if (JS_IsException(line)) {
            JS_FreeValue(ctx, out);
            out = JS_EXCEPTION;
            break;
        }
        linelen = length(ctx, line);
        /* a line before the last leaves room for the marker */
        if (outlen + sep + linelen > MAX_ERROR_TEXT - (j < n ? 64 : 0)) {
            char m[96];
            JS_FreeValue(ctx, line);
            marker(m, sizeof m, n - i, 0);
            out = concat_str(ctx, sep ? concat_str(ctx, out, "\n") : out, m);
            break;
        }
        out = concat(ctx, sep ? concat_str(ctx, out, "\n") : out, line);
        outlen += sep + linelen;
        i = j + 1;
    }
    JS_FreeValue(ctx, nl);
    return out;
}

/* ---- texts of values ---- */

/* caught reports whether the pending exception is one a catch clause
   catches, and if so drops it, as `try { ... } catch {}` would. */
static int caught(JSContext *ctx)
{
    if (JS_IsUncatchableException(ctx))
        return 0;
    JS_FreeValue(ctx, JS_GetException(ctx));
    return 1;
}

/* read is o[name] if it is a string, else undefined; a read that throws
   gives undefined too. */
static JSValue read(JSContext *ctx, JSValueConst o, const char *name)
{
    JSValue v = JS_GetPropertyStr(ctx, o, name);
    if (JS_IsException(v))
        return caught(ctx) ? JS_UNDEFINED : JS_EXCEPTION;
    if (!JS_IsString(v)) {
        JS_FreeValue(ctx, v);
        return JS_UNDEFINED;
    }
    return v;
}

/* read_number is o[name] if it is a number, else 0. */
static JSValue read_number(JSContext *ctx, JSValueConst o, const char *name)
{
    JSValue v = JS_GetPropertyStr(ctx, o, name);
    if (JS_IsException(v))
        return caught(ctx) ? JS_NewInt32(ctx, 0) : JS_EXCEPTION;
    if (!JS_IsNumber(v)) {
        JS_FreeValue(ctx, v);
        return JS_NewInt32(ctx, 0);
    }
    return v;
}

static JSValue bracketed(JSContext *ctx, const char *kind)
{
    char b[64];
    snprintf(b, sizeof b, "[%s]", kind);
    return JS_NewString(ctx, b);
}

/* shown_text is the text of x inside a thrown value's text. */
static JSValue shown_text(JSContext *ctx, JSValue x)
{
    JSValue r;
    if (JS_IsString(x)) {
        JSValue c = clip(ctx, x);
        r = JS_IsException(c) ? c : JS_JSONStringify(ctx, c, JS_UNDEFINED, JS_UNDEFINED);
        JS_FreeValue(ctx, c);
    } else if (JS_IsFunction(ctx, x))
        r = JS_NewString(ctx, "[function]");
    else if (JS_IsSymbol(x))
        r = call_native(ctx, N_SYMBOL_TO_STRING, x, 0, NULL);
    else if (JS_IsObject(x))
        r = bracketed(ctx, codec_kind(ctx, x));
    else
        r = JS_ToString(ctx, x);
    JS_FreeValue(ctx, x);
    return r;
}

/* text_of describes a thrown value that is not an Error without running
   any of its code: no toString, no toJSON, only what structured clone
   reads (an object's own enumerable keys, and their values until the text
   is 300 code units long). */
static JSValue text_of(JSContext *ctx, JSValueConst v)
{
    JSPropertyEnum *tab;
    uint32_t n, i;
    const char *kind;
    int array;
    JSValue text;
    if (JS_IsSymbol(v))
        return call_native(ctx, N_SYMBOL_TO_STRING, v, 0, NULL);
    if (JS_IsFunction(ctx, v))
        return JS_NewString(ctx, "[function]");
    if (!JS_IsObject(v))
        return JS_ToString(ctx, v);
    kind = codec_kind(ctx, v);
    if (strcmp(kind, "object") != 0 && strcmp(kind, "array") != 0)
        return bracketed(ctx, kind);
    array = kind[0] == 'a';
    if (JS_GetOwnPropertyNames(ctx, &tab, &n, v, JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY) < 0)
        return caught(ctx) ? bracketed(ctx, kind) : JS_EXCEPTION;
    text = JS_NewString(ctx, array ? "[" : "{");
    for (i = 0; i < n && !JS_IsException(text) && length(ctx, text) < 300; i++) {
        JSValue x = JS_GetProperty(ctx, v, tab[i].atom), shown;
        if (JS_IsException(x))
            shown = caught(ctx) ? JS_NewString(ctx, "[unreadable]") : JS_EXCEPTION;
        else
            shown = shown_text(ctx, x);
        if (i > 0)
            text = concat_str(ctx, text, ", ");
        if (!array) {
            JSValue k = JS_AtomToString(ctx, tab[i].atom), q;
            q = JS_IsException(k) ? k : JS_JSONStringify(ctx, k, JS_UNDEFINED, JS_UNDEFINED);
            JS_FreeValue(ctx, k);
            text = concat_str(ctx, concat(ctx, text, q), ": ");
        }
        text = concat(ctx, text, shown);
    }
    JS_FreePropertyEnum(ctx, tab, n);
    return concat_str(ctx, text, array ? "]" : "}");
}

/* ---- the outcome ---- */

/* put_text makes s the slot of the string v, its text in *str until the
   caller frees it. -1 with an exception pending. */
static int put_text(JSContext *ctx, struct slot *s, JSValueConst v, const char **str)
{
    size_t len;
    if (!(*str = JS_ToCStringLen(ctx, &len, v)))
        return -1;
    slot_ptr(s, TAG_STRING, *str, len);
    return 0;
}

/* report_failure tells the host that the run failed in phase with the
   thrown value e (OP_FAILED), its texts cut. -1 with an exception
   pending. */
static int report_failure(JSContext *ctx, int phase, JSValueConst e)
{
    struct slot slots[9];
    const char *strs[4] = {0};
    JSValue t[4] = {JS_UNDEFINED, JS_UNDEFINED, JS_UNDEFINED, JS_UNDEFINED}, line = JS_UNDEFINED,
            column = JS_UNDEFINED;
    static const char *const names[4] = {"name", "message", "stack", "fileName"};
    int i, r = -1, fn = host_error_of(ctx, e);

    if (JS_IsError(ctx, e)) {
        for (i = 0; i < 4; i++) {
            JSValue v = read(ctx, e, names[i]);
            if (JS_IsException(v))
                goto done;
            if (JS_IsUndefined(v))
                v = JS_NewString(ctx, i == 0 ? "Error" : "");
            t[i] = JS_IsException(v) ? v : i == 2 ? clip_stack(ctx, v) : clip(ctx, v);
            JS_FreeValue(ctx, v);
            if (JS_IsException(t[i]))
                goto done;
        }
        line = read_number(ctx, e, "lineNumber");
        if (JS_IsException(line) || JS_IsException(column = read_number(ctx, e, "columnNumber")))
            goto done;
    } else {
        JSValue text = text_of(ctx, e);
        if (JS_IsException(text))
            goto done;
        t[0] = JS_NewString(ctx, "Error");
        t[1] = clip(ctx, text);
        JS_FreeValue(ctx, text);
        t[2] = JS_NewString(ctx, "");
        t[3] = JS_NewString(ctx, "");
        line = column = JS_NewInt32(ctx, 0);
    }
    slot_num(&slots[0], OP_FAILED);
    slot_num(&slots[1], phase);
    for (i = 0; i < 4; i++) {
        if (JS_IsException(t[i]) || put_text(ctx, &slots[2 + i], t[i], &strs[i]) < 0)
            goto done;
    }
    {
        double l = 0, c = 0;
        JS_ToFloat64(ctx, &l, line);
        JS_ToFloat64(ctx, &c, column);
        slot_num(&slots[6], l);
        slot_num(&slots[7], c);
    }
    slot_num(&slots[8], fn);
    r = kernel_op(ctx, slots, 9);
done:
    for (i = 0; i < 4; i++) {
        JS_FreeCString(ctx, strs[i]);
        JS_FreeValue(ctx, t[i]);
    }
    JS_FreeValue(ctx, line);
    JS_FreeValue(ctx, column);
    return r;
}

/* fail reports the thrown value e; if reporting it fails (the heap is
   exhausted), it tells the host so (OP_OUT_OF_MEMORY). An uncatchable
   exception (a stop) goes on. */
JSValue fail(JSContext *ctx, int phase, JSValueConst e)
{
    struct slot s;
    if (report_failure(ctx, phase, e) == 0)
        return JS_UNDEFINED;
    if (!caught(ctx))
        return JS_EXCEPTION;
    slot_num(&s, OP_OUT_OF_MEMORY);
    return kernel_op(ctx, &s, 1) < 0 ? JS_EXCEPTION : JS_UNDEFINED;
}

/* fail_caught reports the pending exception as fail does, in phase, when
   a catch clause would catch it; otherwise (a stop, out of memory) it
   stays pending. */
JSValue fail_caught(JSContext *ctx, int phase)
{
    JSValue e, r;
    if (JS_IsUncatchableException(ctx))
        return JS_EXCEPTION;
    e = JS_GetException(ctx);
    r = fail(ctx, phase, e);
    JS_FreeValue(ctx, e);
    return r;
}

/* fail_pending is fail_caught in PHASE_RUN once the kernel is readied
   (ENTRY_INIT): a queueMicrotask callback threw (realm.c). Before, the
   exception stays pending. */
JSValue fail_pending(JSContext *ctx)
{
    if (!JS_IsFunction(ctx, natives[N_SLICE]))
        return JS_EXCEPTION;
    return fail_caught(ctx, PHASE_RUN);
}

/* done_mode is how done encodes: a run's result (ENC_RESULT), or a
   session's step value, shown (ENC_STEP). */
static int done_mode = ENC_RESULT;

/* done_for_steps says what done finishes from now on: the steps of a
   session (session_step), or a run (run_job). */
void done_for_steps(int steps) { done_mode = steps ? ENC_STEP : ENC_RESULT; }

/* done tells the host the run's value (OP_DONE): a primitive as it is, any
   other value encoded. A value that cannot be encoded fails the run: a
   run's result that cannot cross (a function, a symbol, a WeakMap, in it
   or as it) with a DataCloneError that says where it was; a step's value
   is shown, its functions and symbols dropped. */
JSValue done(JSContext *ctx, JSValueConst v)
{
    struct slot slots[3];
    const char *str = NULL;
    uint8_t *p = NULL;
    size_t len;
    int r;
    slot_num(&slots[0], OP_DONE);
    switch (JS_VALUE_GET_NORM_TAG(v)) {
    case JS_TAG_UNDEFINED:
        slots[2].tag = TAG_UNDEFINED;
        break;
    case JS_TAG_NULL:
        slots[2].tag = TAG_NULL;
        break;
    case JS_TAG_BOOL:
        slots[2].tag = JS_VALUE_GET_BOOL(v) ? TAG_TRUE : TAG_FALSE;
        break;
    case JS_TAG_INT:
    case JS_TAG_FLOAT64: {
        double d = 0;
        JS_ToFloat64(ctx, &d, v);
        slot_num(&slots[2], d);
        break;
    }
    case JS_TAG_STRING:
    case JS_TAG_STRING_ROPE:
        if (put_text(ctx, &slots[2], v, &str) < 0)
            return JS_EXCEPTION;
        break;
    default:
        if (codec_encode(ctx, v, done_mode, &p, &len) < 0)
            return fail_caught(ctx, PHASE_RUN);
        slot_ptr(&slots[2], TAG_BYTES, p, len);
    }
    slot_num(&slots[1], p ? 1 : 0);
    if (slots[2].tag != TAG_NUMBER && slots[2].tag != TAG_STRING && slots[2].tag != TAG_BYTES) {
        slots[2].len = 0;
        slots[2].u.ptr = 0;
    }
    r = kernel_op(ctx, slots, 3);
    JS_FreeCString(ctx, str);
    js_free(ctx, p);
    return r < 0 ? JS_EXCEPTION : JS_UNDEFINED;
}

/* js_fail is fail(e) in phase magic, as a function: a reaction of the
   run's promises (run.c, session.c). */
static JSValue js_fail(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    (void)this_val;
    (void)data;
    return fail(ctx, magic, argc > 0 ? argv[0] : JS_UNDEFINED);
}

/* js_done is done(value), as a function. */
static JSValue js_done(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    (void)this_val;
    (void)magic;
    (void)data;
    return done(ctx, argc > 0 ? argv[0] : JS_UNDEFINED);
}

/* The outcome's functions, made by failure_init: C functions with data,
   which QuickJS calls without a frame of their own. */
static JSValue outcome_fns[N_OUTCOME_FNS] = {JS_UNDEFINED};

JSValueConst outcome_fn(int which) { return outcome_fns[which]; }

/* failure_init captures the natives the texts are cut with and makes the
   functions of the outcome (ENTRY_INIT). */
int failure_init(JSContext *ctx)
{
    JSValue list = JS_Eval(ctx, natives_src, sizeof natives_src - 1, "<failure>", JS_EVAL_TYPE_GLOBAL);
    int i, err = 0;
    if (JS_IsException(list))
        return -1;
    for (i = 0; i < N_NATIVES; i++)
        natives[i] = JS_GetPropertyUint32(ctx, list, (uint32_t)i);
    JS_FreeValue(ctx, list);
    outcome_fns[OUTCOME_DONE] = JS_NewCFunctionData(ctx, js_done, 1, 0, 0, NULL);
    outcome_fns[OUTCOME_LINK_FAILED] = JS_NewCFunctionData(ctx, js_fail, 1, PHASE_LINK, 0, NULL);
    outcome_fns[OUTCOME_FAILED] = JS_NewCFunctionData(ctx, js_fail, 1, PHASE_RUN, 0, NULL);
    for (i = 0; i < N_OUTCOME_FNS; i++)
        err |= JS_IsException(outcome_fns[i]);
    return err ? -1 : 0;
}
