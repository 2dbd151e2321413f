/*
 * hostcall.c: calls of the host's functions. A host function of a run
 * (js_host_fn) calls the host's function HOST_FN with OP_CALL and its
 * primitive arguments as slots, or OP_CALL_ENCODED and its argument list
 * encoded (codec.c); the host answers in qjs_ctl.ret (see shim.c): a
 * value (a primitive, text, JSON text, or bytes of the codec's format,
 * decoded here), an error to throw, or the id of an asynchronous call,
 * whose promise waits here until the host settles it (ENTRY_SETTLE). No
 * JavaScript runs on the way, and no text is made of a value. A function
 * qjs_def_host_func defines (a sandbox of the host's own, with no run)
 * calls the host's function of that number.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"
#include "kernel.h"

/* host_text fetches the text the host left for host_result, its length in
   qjs_ctl.ret.len, NUL-terminated, in QuickJS's heap; NULL (an exception
   pending) when out of memory. */
char *host_text(JSContext *ctx, uint32_t *plen)
{
    uint32_t len = qjs_ctl.ret.len;
    char *buf = js_malloc(ctx, (size_t)len + 1);
    if (!buf)
        return NULL;
    host_result(buf);
    buf[len] = 0;
    if (plen)
        *plen = len;
    return buf;
}

/* put_plain writes a into s if it is undefined, null, a boolean or a
   number, and returns 1; 0 for any other value. */
static inline __attribute__((always_inline)) int put_plain(struct slot *s, JSValueConst a)
{
    s->len = 0;
    s->u.ptr = 0;
    switch (JS_VALUE_GET_NORM_TAG(a)) {
    case JS_TAG_UNDEFINED:
        s->tag = TAG_UNDEFINED;
        return 1;
    case JS_TAG_NULL:
        s->tag = TAG_NULL;
        return 1;
    case JS_TAG_BOOL:
        s->tag = JS_VALUE_GET_BOOL(a) ? TAG_TRUE : TAG_FALSE;
        return 1;
    case JS_TAG_INT:
        s->tag = TAG_NUMBER;
        s->u.num = JS_VALUE_GET_INT(a);
        return 1;
    case JS_TAG_FLOAT64:
        s->tag = TAG_NUMBER;
        s->u.num = JS_VALUE_GET_FLOAT64(a);
        return 1;
    }
    return 0;
}

/* encode_args writes argv[0:n] as slots; strs[i] keeps the text of slot i
   until free_args. -1 with an exception pending. */
static int encode_args(JSContext *ctx, int n, JSValueConst *argv, struct slot *slots, const char **strs)
{
    int i;
    memset(strs, 0, sizeof(*strs) * (size_t)n);
    for (i = 0; i < n; i++) {
        JSValueConst a = argv[i];
        struct slot *s = &slots[i];
        size_t len;
        JSValue str;
        const uint8_t *bytes;
        if (put_plain(s, a))
            continue;
        if (codec_is_bytes(ctx, a, &bytes, &len)) {
            slot_ptr(s, TAG_BYTES, bytes, len);
            continue;
        }
        if (JS_IsString(a)) {
            s->tag = TAG_STRING;
            str = JS_DupValue(ctx, a);
        } else {
            s->tag = TAG_JSON;
            str = JS_JSONStringify(ctx, a, JS_UNDEFINED, JS_UNDEFINED);
            if (JS_IsException(str))
                return -1;
            if (JS_IsUndefined(str)) { /* a function, a symbol */
                s->tag = TAG_UNDEFINED;
                continue;
            }
        }
        strs[i] = JS_ToCStringLen(ctx, &len, str);
        JS_FreeValue(ctx, str);
        if (!strs[i])
            return -1;
        s->len = (uint32_t)len;
        s->u.ptr = (uint32_t)(uintptr_t)strs[i];
    }
    return 0;
}

static void free_args(JSContext *ctx, int n, const char **strs)
{
    int i;
    for (i = 0; i < n; i++)
        JS_FreeCString(ctx, strs[i]);
}

/* ANSWER_SIZE is the buffer a host call offers the host for its answer's
   text: text shorter than it comes with the answer, in one crossing,
   longer text is fetched with host_result. */
#define ANSWER_SIZE 512
static char answer_buf[ANSWER_SIZE];

/* offer_answer offers answer_buf for the text of the next host call's
   answer: its address in qjs_ctl.ret.u.ptr, its size in qjs_ctl.ret.len.
   The host puts text that fits there, NUL-terminated, and answers with
   u.ptr still set; otherwise u.ptr is 0 (see answer_text). */
static void offer_answer(void)
{
    qjs_ctl.ret.u.ptr = (uint32_t)(uintptr_t)answer_buf;
    qjs_ctl.ret.len = ANSWER_SIZE;
}

/* answer_text is the text of the host's answer, NUL-terminated: in
   answer_buf (*owned 0), or fetched into QuickJS's heap (*owned 1: the
   caller frees it). NULL with an exception pending. Text in answer_buf is
   made into a value before any JavaScript can run, which could make
   another host call and overwrite it. */
static char *answer_text(JSContext *ctx, uint32_t *len, int *owned)
{
    if (qjs_ctl.ret.u.ptr == (uint32_t)(uintptr_t)answer_buf && qjs_ctl.ret.len < ANSWER_SIZE) {
        *len = qjs_ctl.ret.len;
        *owned = 0;
        return answer_buf;
    }
    *owned = 1;
    return host_text(ctx, len);
}

static JSValue syntax_error_proto = JS_UNDEFINED;

/* parse_json is the value of JSON text p[0:len] a JSON host function
   answered, or a TypeError that says why it has none. What the parser
   threw is told apart by its prototype and its own message: no getter of
   the program's runs. */
static JSValue parse_json(JSContext *ctx, const char *p, uint32_t len)
{
    JSValue ret = JS_ParseJSON(ctx, p, len, "<host reply>"), e, proto;
    JSPropertyDescriptor d;
    JSAtom a;
    int syntax, has;
    if (!JS_IsException(ret) || JS_IsUncatchableException(ctx))
        return ret;
    e = JS_GetException(ctx);
    proto = JS_IsObject(e) ? JS_GetPrototype(ctx, e) : JS_UNDEFINED;
    syntax = JS_IsObject(proto) && JS_VALUE_GET_PTR(proto) == JS_VALUE_GET_PTR(syntax_error_proto);
    JS_FreeValue(ctx, proto);
    if (syntax) { /* the parser reports its stack's end as a SyntaxError */
        a = JS_NewAtom(ctx, "message");
        has = JS_GetOwnProperty(ctx, &d, e, a);
        JS_FreeAtom(ctx, a);
        if (has < 0)
            JS_FreeValue(ctx, JS_GetException(ctx));
        if (has > 0) {
            const char *m = JS_IsString(d.value) ? JS_ToCString(ctx, d.value) : NULL;
            syntax = !m || strcmp(m, "stack overflow") != 0;
            JS_FreeCString(ctx, m);
            JS_FreeValue(ctx, d.value);
            JS_FreeValue(ctx, d.getter);
            JS_FreeValue(ctx, d.setter);
        }
    }
    JS_FreeValue(ctx, e);
    return JS_ThrowTypeError(ctx, syntax ? "airlock: the host function returned text that is not JSON" :
        "airlock: the sandbox could not hold the answer of the host function (out of memory, or nested too deep)");
}

static JSValue host_error(JSContext *ctx, const char *text, size_t len, int fn);
static JSValue rethrow_marked(JSContext *ctx, int fn);

/* host_value is the value the host sent as a slot of tag, its text or
   bytes p[0:len] (a NUL after them) or its number num: a primitive, a
   string, JSON text parsed, the codec's encoding decoded (its host
   functions made), or for TAG_ERROR an Error of message p, thrown. fn is
   the host function whose answer it is, whose errors are marked as its
   own (rethrow_marked), or -1; json: a JSON host function's answer, whose
   text that does not parse throws a TypeError that says so. */
JSValue host_value(JSContext *ctx, int tag, const char *p, uint32_t len, double num, int fn, int json)
{
    JSValue v;
    switch (tag) {
    case TAG_UNDEFINED:
        return JS_UNDEFINED;
    case TAG_NULL:
        return JS_NULL;
    case TAG_FALSE:
        return JS_FALSE;
    case TAG_TRUE:
        return JS_TRUE;
    case TAG_NUMBER:
        return JS_NewFloat64(ctx, num);
    case TAG_STRING:
        return JS_NewStringLen(ctx, p, len);
    case TAG_JSON:
        if (json)
            return parse_json(ctx, p, len);
        v = JS_ParseJSON(ctx, p, len, "<host>");
        break;
    case TAG_BYTES:
        v = codec_decode(ctx, (const uint8_t *)p, len, host_fn_new);
        break;
    case TAG_ERROR:
        if (fn >= 0)
            v = host_error(ctx, p, len, fn);
        else {
            JSValue msg = JS_NewStringLen(ctx, p, len);
            if (JS_IsException(msg))
                return msg;
            v = JS_NewError(ctx);
            if (JS_IsException(v) ||
                JS_DefinePropertyValueStr(ctx, v, "message", msg, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0) {
                JS_FreeValue(ctx, v);
                return JS_EXCEPTION;
            }
        }
        return JS_IsException(v) ? v : JS_Throw(ctx, v);
    default:
        return JS_ThrowInternalError(ctx, "host call: bad answer");
    }
    if (JS_IsException(v) && fn >= 0)
        return rethrow_marked(ctx, fn);
    return v;
}

/* slot_value is host_value of a slot the host wrote in a guest buffer (an
   entry's argument, kernel.h). */
JSValue slot_value(JSContext *ctx, const struct slot *s, int fn, int json)
{
    return host_value(ctx, s->tag, (const char *)(uintptr_t)s->u.ptr, s->len, s->tag == TAG_NUMBER ? s->u.num : 0,
                      fn, json);
}

static JSValue async_call(JSContext *ctx, int32_t id, int fn, int json);

/* answer_value is the value of the host's answer in qjs_ctl.ret to a call
   of host function fn (-1: a function of qjs_def_host_func's, which cannot
   answer asynchronously), as host_value makes it, or the promise of an
   asynchronous call. */
static JSValue answer_value(JSContext *ctx, int fn, int json)
{
    int tag = qjs_ctl.ret.tag, owned;
    uint32_t len;
    char *buf;
    JSValue v;
    switch (tag) {
    case TAG_STRING:
    case TAG_JSON:
    case TAG_ERROR:
    case TAG_BYTES:
        break;
    case TAG_ASYNC:
        if (fn >= 0)
            return async_call(ctx, (int32_t)qjs_ctl.ret.u.num, fn, json);
        return JS_ThrowInternalError(ctx, "host call: bad answer");
    default:
        return host_value(ctx, tag, NULL, 0, qjs_ctl.ret.u.num, fn, json);
    }
    if (!(buf = answer_text(ctx, &len, &owned)))
        return JS_EXCEPTION;
    v = host_value(ctx, tag, buf, len, 0, fn, json);
    if (owned)
        js_free(ctx, buf);
    return v;
}

/* ---- functions of the host's own (a sandbox without a kernel) ---- */

static JSValue js_host_func(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    int r;
    (void)this_val;
    (void)data;

    if (argc > MAX_SLOTS)
        return JS_ThrowRangeError(ctx, "a host function takes at most %d arguments", MAX_SLOTS);
    if (encode_args(ctx, argc, argv, slots, strs) < 0) {
        free_args(ctx, argc, strs);
        return JS_EXCEPTION;
    }
    offer_answer();
    r = host_call(magic, slots, argc);
    free_args(ctx, argc, strs);
    if (r != 0)
        return JS_ThrowInternalError(ctx, "host call failed");
    return answer_value(ctx, -1, 0);
}

/* qjs_def_host_func defines globalThis[name] as a function that calls the
   host's function number fn. Returns 0, or -1. */
EXPORT(qjs_def_host_func) int32_t qjs_def_host_func(JSContext *ctx, const char *name, int32_t fn)
{
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue f = JS_NewCFunctionData(ctx, js_host_func, 0, fn, 0, NULL);
    int r;
    if (JS_IsException(f)) {
        JS_FreeValue(ctx, global);
        return -1;
    }
    r = JS_DefinePropertyValueStr(ctx, global, name, f, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_FreeValue(ctx, global);
    return r < 0 ? -1 : 0;
}

/* ---- the kernel's operations (kernel.h) ---- */

/* new_list makes an array of vals, defined as own elements: assigning them
   would run a setter a program put on Array.prototype. */
static JSValue new_list(JSContext *ctx, int n, JSValueConst *vals)
{
    JSValue list = JS_NewArray(ctx);
    int i;
    if (JS_IsException(list))
        return list;
    for (i = 0; i < n; i++) {
        if (JS_DefinePropertyValueUint32(ctx, list, (uint32_t)i, JS_DupValue(ctx, vals[i]), JS_PROP_C_W_E) < 0) {
            JS_FreeValue(ctx, list);
            return JS_EXCEPTION;
        }
    }
    return list;
}

int is_primitive(JSValueConst v)
{
    switch (JS_VALUE_GET_NORM_TAG(v)) {
    case JS_TAG_INT:
    case JS_TAG_FLOAT64:
    case JS_TAG_BOOL:
    case JS_TAG_NULL:
    case JS_TAG_UNDEFINED:
    case JS_TAG_STRING:
    case JS_TAG_STRING_ROPE: /* a concatenation, a string all the same */
        return 1;
    }
    return 0;
}

/* throw_stop throws the uncatchable error that ends a program the host
   stopped during a host call: its text, not an Error, so that no stack
   trace is built for it (the host reads only the outcome it already has,
   or the stop). */
static JSValue throw_stop(JSContext *ctx)
{
    JSValue e = JS_NewString(ctx, "InternalError: interrupted");
    if (JS_IsException(e))
        return e;
    JS_Throw(ctx, e);
    JS_SetUncatchableException(ctx, 1);
    return JS_EXCEPTION;
}

/* kernel_op calls the host's function HOST_FN with the n slots (the
   operation first, kernel.h) and leaves its answer in qjs_ctl.ret. 0, or -1 with an
   exception pending: the call failed (the sandbox is spent), or the host
   stopped the program during the call (a step's budget spent, a final
   answer given, the run's outcome known), which ends it here, not at the
   next interrupt check, thousands of operations later. */
int kernel_op(JSContext *ctx, struct slot *slots, int n)
{
    offer_answer();
    if (host_call(HOST_FN, slots, n) != 0) {
        JS_ThrowInternalError(ctx, "host call failed");
        return -1;
    }
    if (qjs_ctl.soft || qjs_ctl.stop) {
        throw_stop(ctx);
        return -1;
    }
    return 0;
}

/* js_kernel_op is a hook of the kernel's for operation magic: its
   arguments (primitives) after the operation, the answer a value
   (internal/intl's host function, OP_INTL). */
static JSValue js_kernel_op(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic,
                            JSValue *data)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    int r;
    (void)this_val;
    (void)data;
    if (argc + 1 > MAX_SLOTS)
        return JS_ThrowRangeError(ctx, "a host function takes at most %d arguments", MAX_SLOTS);
    slot_num(&slots[0], magic);
    if (encode_args(ctx, argc, argv, slots + 1, strs) < 0) {
        free_args(ctx, argc, strs);
        return JS_EXCEPTION;
    }
    r = kernel_op(ctx, slots, argc + 1);
    free_args(ctx, argc, strs);
    return r < 0 ? JS_EXCEPTION : answer_value(ctx, -1, 0);
}

JSValue kernel_op_function(JSContext *ctx, int op, const char *name)
{
    JSValue f = JS_NewCFunctionData(ctx, js_kernel_op, 0, op, 0, NULL);
    if (!JS_IsException(f) &&
        JS_DefinePropertyValueStr(ctx, f, "name", JS_NewString(ctx, name), JS_PROP_CONFIGURABLE) < 0) {
        JS_FreeValue(ctx, f);
        return JS_EXCEPTION;
    }
    return f;
}

/* ---- errors of host functions ----
 *
 * Each error a call of a host function threw, or rejected its promise
 * with, is remembered with the function's id (a WeakMap the shim keeps): an
 * executor tells a failing tool from failing code by the identity of what
 * was thrown (failure.c reads it).
 */

static JSValue host_errors = JS_UNDEFINED, weakmap_get, weakmap_set, error_ctor;

/* mark_host_error remembers e as an error of host function fn. -1 with an
   exception pending (out of memory). */
static int mark_host_error(JSContext *ctx, JSValueConst e, int fn)
{
    JSValue a[2], r;
    if (!JS_IsObject(e))
        return 0;
    a[0] = e;
    a[1] = JS_NewInt32(ctx, fn);
    r = JS_Call(ctx, weakmap_set, host_errors, 2, (JSValueConst *)a);
    if (JS_IsException(r))
        return -1;
    JS_FreeValue(ctx, r);
    return 0;
}

/* host_error_of is the id of the host function whose call threw e, or -1. */
int host_error_of(JSContext *ctx, JSValueConst e)
{
    JSValue r;
    int fn = -1;
    if (!JS_IsObject(e) || !JS_IsObject(host_errors))
        return -1;
    r = JS_Call(ctx, weakmap_get, host_errors, 1, &e);
    if (JS_IsException(r))
        JS_FreeValue(ctx, JS_GetException(ctx));
    else if (JS_VALUE_GET_TAG(r) == JS_TAG_INT)
        fn = JS_VALUE_GET_INT(r);
    JS_FreeValue(ctx, r);
    return fn;
}

/* rethrow_marked marks the pending exception as host function fn's and
   leaves it pending, as a catch clause that rethrows would; an uncatchable
   one goes on unmarked. Returns JS_EXCEPTION. */
static JSValue rethrow_marked(JSContext *ctx, int fn)
{
    JSValue e;
    if (JS_IsUncatchableException(ctx))
        return JS_EXCEPTION;
    e = JS_GetException(ctx);
    if (mark_host_error(ctx, e, fn) < 0) {
        JS_FreeValue(ctx, e);
        return JS_EXCEPTION;
    }
    return JS_Throw(ctx, e);
}

/* host_error makes the Error of a host function fn that failed with the
   message text[0:len] (with the Error constructor, so that its stack is
   the caller's frames), marked. */
static JSValue host_error(JSContext *ctx, const char *text, size_t len, int fn)
{
    JSValue msg = JS_NewStringLen(ctx, text, len), e;
    if (JS_IsException(msg))
        return msg;
    e = JS_CallConstructor(ctx, error_ctor, 1, (JSValueConst *)&msg);
    JS_FreeValue(ctx, msg);
    if (!JS_IsException(e) && mark_host_error(ctx, e, fn) < 0) {
        JS_FreeValue(ctx, e);
        return JS_EXCEPTION;
    }
    return e;
}

/* ---- pending asynchronous calls ----
 *
 * An asynchronous host function's call returns a promise at once; the host
 * settles it later (ENTRY_SETTLE, settle_call) by the call's id, which the
 * host chose. The promises' resolving functions wait here, in a table keyed
 * by that id (open addressing), until then, or until the session's next
 * step forgets them (ENTRY_RESET, reset_calls).
 */

struct pending_call {
    int32_t id, fn; /* fn -1: a free entry */
    int32_t json;   /* a JSON host function's call */
    JSValue resolve, reject;
};

static struct pending_call *calls;
static uint32_t calls_cap, calls_n; /* cap: a power of two, or 0 */

static uint32_t call_slot(int32_t id) { return ((uint32_t)id * 2654435761u) & (calls_cap - 1); }

static struct pending_call *find_call(int32_t id)
{
    uint32_t i;
    if (!calls_n)
        return NULL;
    for (i = call_slot(id); calls[i].fn >= 0; i = (i + 1) & (calls_cap - 1)) {
        if (calls[i].id == id)
            return &calls[i];
    }
    return NULL;
}

/* add_call keeps the resolving functions of call id of host function fn
   (taken). -1 with an exception pending. */
static int add_call(JSContext *ctx, int32_t id, int fn, int json, JSValue *funcs)
{
    uint32_t i;
    if ((calls_n + 1) * 2 > calls_cap) { /* at most half full */
        uint32_t cap = calls_cap ? calls_cap * 2 : 16, old = calls_cap;
        struct pending_call *t = js_malloc(ctx, sizeof(*t) * cap), *o = calls;
        if (!t)
            return -1;
        for (i = 0; i < cap; i++)
            t[i].fn = -1;
        calls = t;
        calls_cap = cap;
        for (i = 0; i < old; i++) {
            if (o[i].fn >= 0) {
                uint32_t j = call_slot(o[i].id);
                while (calls[j].fn >= 0)
                    j = (j + 1) & (cap - 1);
                calls[j] = o[i];
            }
        }
        js_free(ctx, o);
    }
    for (i = call_slot(id); calls[i].fn >= 0; i = (i + 1) & (calls_cap - 1))
        ;
    calls[i].id = id;
    calls[i].fn = fn;
    calls[i].json = json;
    calls[i].resolve = funcs[0];
    calls[i].reject = funcs[1];
    calls_n++;
    return 0;
}

/* take_call removes the entry e, keeping the table's probe sequences whole
   (the entries after it move back into the hole). */
static void take_call(struct pending_call *e)
{
    uint32_t i = (uint32_t)(e - calls), j = i, k;
    calls[i].fn = -1;
    calls_n--;
    for (;;) {
        j = (j + 1) & (calls_cap - 1);
        if (calls[j].fn < 0)
            return;
        k = call_slot(calls[j].id);
        /* calls[j] stays if its home k lies cyclically in (i, j] */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        calls[i] = calls[j];
        calls[j].fn = -1;
        i = j;
    }
}

/* async_call makes the promise of an asynchronous call id of host
   function fn. */
static JSValue async_call(JSContext *ctx, int32_t id, int fn, int json)
{
    JSValue funcs[2], p = JS_NewPromiseCapability(ctx, funcs);
    if (JS_IsException(p))
        return p;
    if (add_call(ctx, id, fn, json, funcs) < 0) {
        JS_FreeValue(ctx, funcs[0]);
        JS_FreeValue(ctx, funcs[1]);
        JS_FreeValue(ctx, p);
        return JS_EXCEPTION;
    }
    return p;
}

/* settle_call is ENTRY_SETTLE (kernel.h): it settles the promise of
   asynchronous call id, slots[0], fulfilled with the value of slots[1] (a
   value as an answer is one, host_value), or rejected with the Error a
   TAG_ERROR slot makes, or with what decoding the value threw. An unknown
   id (a call the session forgot) is ignored. */
JSValue settle_call(JSContext *ctx, struct slot *slots, int argc)
{
    struct pending_call *e, c;
    JSValue v, r;
    int ok = 1;
    if (argc != 2 || slots[0].tag != TAG_NUMBER)
        return JS_ThrowTypeError(ctx, "airlock: bad settle");
    if (!(e = find_call((int32_t)slots[0].u.num)))
        return JS_UNDEFINED;
    c = *e;
    take_call(e);
    v = slot_value(ctx, &slots[1], c.fn, c.json);
    if (JS_IsException(v) && !JS_IsUncatchableException(ctx)) {
        v = JS_GetException(ctx); /* the promise is rejected with it */
        ok = 0;
        if (mark_host_error(ctx, v, c.fn) < 0) {
            JS_FreeValue(ctx, v);
            v = JS_EXCEPTION;
        }
    }
    if (JS_IsException(v))
        r = v;
    else {
        r = JS_Call(ctx, ok ? c.resolve : c.reject, JS_UNDEFINED, 1, (JSValueConst *)&v);
        JS_FreeValue(ctx, v);
    }
    JS_FreeValue(ctx, c.resolve);
    JS_FreeValue(ctx, c.reject);
    return r;
}

/* reset_calls is ENTRY_RESET: it forgets every pending call, whose
   promises never settle. */
void reset_calls(JSContext *ctx)
{
    uint32_t i;
    for (i = 0; i < calls_cap; i++) {
        if (calls[i].fn >= 0) {
            JS_FreeValue(ctx, calls[i].resolve);
            JS_FreeValue(ctx, calls[i].reject);
            calls[i].fn = -1;
        }
    }
    calls_n = 0;
}

/* ---- host functions of a run ---- */

/* host_fn_primitives calls host function id with arguments that are all
   primitives (OP_CALL), written out for the call a program makes most: the
   slots are filled here, the text of string arguments is the only thing
   freed after the call, and a number answer, or a string answer in
   answer_buf, is made here. It returns 1 with the call's value in *res, or
   0 when an argument is not a primitive (call_encoded calls with those). */
static int host_fn_primitives(JSContext *ctx, int id, int argc, JSValueConst *argv, JSValue *res)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    int i, r, nstr = 0;
    JSValue ret;

    slot_num(&slots[0], OP_CALL);
    slot_num(&slots[1], id);
    for (i = 0; i < argc; i++) {
        JSValueConst a = argv[i];
        struct slot *s = &slots[i + 2];
        if (put_plain(s, a))
            continue;
        switch (JS_VALUE_GET_NORM_TAG(a)) {
        case JS_TAG_STRING:
        case JS_TAG_STRING_ROPE: {
            size_t len;
            const char *str = JS_ToCStringLen(ctx, &len, a);
            if (!str) {
                ret = JS_EXCEPTION;
                goto done;
            }
            strs[nstr++] = str;
            slot_ptr(s, TAG_STRING, str, len);
            break;
        }
        default:
            for (i = 0; i < nstr; i++)
                JS_FreeCString(ctx, strs[i]);
            return 0;
        }
    }
    r = kernel_op(ctx, slots, argc + 2);
    if (r < 0) {
        ret = JS_EXCEPTION;
        goto done;
    }
    /* the commonest answers, made here */
    if (qjs_ctl.ret.tag == TAG_NUMBER)
        ret = JS_NewFloat64(ctx, qjs_ctl.ret.u.num);
    else if (qjs_ctl.ret.tag == TAG_STRING && qjs_ctl.ret.u.ptr == (uint32_t)(uintptr_t)answer_buf &&
             qjs_ctl.ret.len < ANSWER_SIZE)
        ret = JS_NewStringLen(ctx, answer_buf, qjs_ctl.ret.len);
    else
        ret = answer_value(ctx, id, 0);
done:
    for (i = 0; i < nstr; i++)
        JS_FreeCString(ctx, strs[i]);
    *res = ret;
    return 1;
}


/* call_json calls JSON host function id (OP_CALL, one argument): its
   arguments cross as the JSON text of their list, far cheaper than the
   codec, and a synchronous answer, JSON text, is parsed here. */
static JSValue call_json(JSContext *ctx, int id, int argc, JSValueConst *argv)
{
    struct slot slots[3];
    JSValue list = new_list(ctx, argc, argv), text;
    const char *s;
    size_t len;
    int r;
    if (JS_IsException(list))
        return list;
    text = JS_JSONStringify(ctx, list, JS_UNDEFINED, JS_UNDEFINED);
    JS_FreeValue(ctx, list);
    if (JS_IsException(text))
        return text;
    s = JS_IsString(text) ? JS_ToCStringLen(ctx, &len, text) : NULL;
    if (!s && !JS_IsString(text))
        JS_ThrowTypeError(ctx, "airlock: the arguments have no JSON text");
    JS_FreeValue(ctx, text);
    if (!s)
        return JS_EXCEPTION;
    slot_num(&slots[0], OP_CALL);
    slot_num(&slots[1], id);
    slot_ptr(&slots[2], TAG_STRING, s, len);
    r = kernel_op(ctx, slots, 3);
    JS_FreeCString(ctx, s);
    return r < 0 ? JS_EXCEPTION : answer_value(ctx, id, 1);
}

/* call_encoded calls host function id with its argument list encoded
   (OP_CALL_ENCODED). An argument that cannot be encoded throws, marked as
   the function's: a value that cannot cross, a DataCloneError that says
   where it was ("argument 1.items[2]: a function cannot leave the
   sandbox"). report's and final_answer's arguments (FN_SHOWN) take the
   same rule: they carry a run's or an agent's result out. */
static JSValue call_encoded(JSContext *ctx, int id, int argc, JSValueConst *argv)
{
    struct slot slots[3];
    JSValue list = new_list(ctx, argc, argv);
    uint8_t *p;
    size_t len;
    int r;
    if (JS_IsException(list))
        return rethrow_marked(ctx, id);
    r = codec_encode(ctx, list, ENC_ARGS, &p, &len);
    JS_FreeValue(ctx, list);
    if (r < 0)
        return rethrow_marked(ctx, id);
    slot_num(&slots[0], OP_CALL_ENCODED);
    slot_num(&slots[1], id);
    slot_ptr(&slots[2], TAG_BYTES, p, len);
    r = kernel_op(ctx, slots, 3);
    js_free(ctx, p);
    return r < 0 ? JS_EXCEPTION : answer_value(ctx, id, 0);
}

/* host_fn_call calls host function id of mode (FN_*) with argv[0:argc]:
   the work of a host function of a run, and of a session's tool. */
JSValue host_fn_call(JSContext *ctx, int id, int mode, int argc, JSValueConst *argv)
{
    JSValue r;
    if (mode == FN_JSON)
        return call_json(ctx, id, argc, argv);
    if (argc <= MAX_SLOTS - 2 && host_fn_primitives(ctx, id, argc, argv, &r))
        return r;
    return call_encoded(ctx, id, argc, argv);
}

/* js_host_fn is a host function of a run (host_fn_new): a C function
   whose data are its id and its mode (FN_*). A call runs no JavaScript
   between the program and the host; QuickJS calls a C function with data
   without a frame of its own, so that an error a call throws shows the
   caller's frames only. */
static JSValue js_host_fn(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    (void)this_val;
    (void)magic;
    return host_fn_call(ctx, JS_VALUE_GET_INT(data[0]), JS_VALUE_GET_INT(data[1]), argc, argv);
}

/* host_fn_new makes host function id, of mode (FN_*), named name (taken). */
JSValue host_fn_new(JSContext *ctx, uint32_t id, JSValue name, int mode)
{
    JSValue data[2], f;
    if (id > INT32_MAX || mode < FN_PLAIN || mode > FN_SHOWN) {
        JS_FreeValue(ctx, name);
        return JS_ThrowTypeError(ctx, "airlock: bad host function");
    }
    data[0] = JS_NewInt32(ctx, (int32_t)id);
    data[1] = JS_NewInt32(ctx, mode);
    f = JS_NewCFunctionData(ctx, js_host_fn, 0, 0, 2, data);
    if (JS_IsException(f) || JS_DefinePropertyValueStr(ctx, f, "name", name, JS_PROP_CONFIGURABLE) < 0) {
        JS_FreeValue(ctx, f);
        return JS_EXCEPTION;
    }
    return f;
}

/* hostcall_init readies the host functions of runs (ENTRY_INIT): it
   captures what their errors are made and marked with. */
int hostcall_init(JSContext *ctx, JSValueConst global)
{
    JSValue wm = JS_GetPropertyStr(ctx, global, "WeakMap"), proto, se;
    if (JS_IsException(wm))
        return -1;
    host_errors = JS_CallConstructor(ctx, wm, 0, NULL);
    proto = JS_GetPropertyStr(ctx, wm, "prototype");
    weakmap_get = JS_GetPropertyStr(ctx, proto, "get");
    weakmap_set = JS_GetPropertyStr(ctx, proto, "set");
    error_ctor = JS_GetPropertyStr(ctx, global, "Error");
    se = JS_GetPropertyStr(ctx, global, "SyntaxError");
    syntax_error_proto = JS_GetPropertyStr(ctx, se, "prototype");
    JS_FreeValue(ctx, se);
    JS_FreeValue(ctx, proto);
    JS_FreeValue(ctx, wm);
    return JS_IsException(host_errors) || !JS_IsFunction(ctx, weakmap_get) || !JS_IsFunction(ctx, weakmap_set) ||
                   !JS_IsFunction(ctx, error_ctor) || !JS_IsObject(syntax_error_proto) ? -1 : 0;
}
