/*
 * hostcall.c: calls of the host's functions. A function qjs_def_host_func
 * defines, or one the kernel made (js_host_fn), encodes its arguments as
 * slots and calls env.host_call; the host answers in qjs_ctl.ret (see
 * shim.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"

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
            s->tag = TAG_BYTES;
            s->len = (uint32_t)len;
            s->u.ptr = (uint32_t)(uintptr_t)bytes;
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

/* take_answer turns the host's answer in qjs_ctl.ret into a value. A reply
   for the kernel (TAG_REPLY_*) becomes the list [kind, value] and *reply is
   set. */
/* ANSWER_SIZE is the buffer a host call offers the host for its answer's
   text: text shorter than it comes with the answer, in one crossing,
   longer text is fetched with host_result. */
#define ANSWER_SIZE 512
static char answer_buf[ANSWER_SIZE];

/* offer_answer offers answer_buf for the text of the next host call's
   answer: its address in qjs_ctl.ret.u.ptr, its size in qjs_ctl.ret.len.
   The host puts text that fits there, NUL-terminated, and answers with
   u.ptr still set; otherwise u.ptr is 0 (see take_answer). */
static void offer_answer(void)
{
    qjs_ctl.ret.u.ptr = (uint32_t)(uintptr_t)answer_buf;
    qjs_ctl.ret.len = ANSWER_SIZE;
}

static JSValue take_answer(JSContext *ctx, int json, int *reply)
{
    int tag = qjs_ctl.ret.tag;
    JSValue ret, v;
    uint32_t len;
    char *buf;
    int inline_text = 0;

    *reply = 0;
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
        return JS_NewFloat64(ctx, qjs_ctl.ret.u.num);
    case TAG_REPLY_ASYNC:
        v = JS_NewFloat64(ctx, qjs_ctl.ret.u.num);
        goto list;
    case TAG_STRING:
    case TAG_JSON:
    case TAG_ERROR:
    case TAG_REPLY_WIRE:
    case TAG_REPLY_ERROR:
        break;
    default:
        return JS_ThrowInternalError(ctx, "host call: bad answer");
    }
    /* Text in answer_buf is made into a value before any JavaScript can
       run, which could make another host call and overwrite it. */
    if (qjs_ctl.ret.u.ptr == (uint32_t)(uintptr_t)answer_buf && qjs_ctl.ret.len < ANSWER_SIZE) {
        buf = answer_buf;
        len = qjs_ctl.ret.len;
        inline_text = 1;
    } else if (!(buf = host_text(ctx, &len)))
        return JS_EXCEPTION;
    if (tag == TAG_STRING && json) {
        ret = JS_ParseJSON(ctx, buf, len, "<host reply>");
        if (JS_IsException(ret)) {
            JSValue e = JS_GetException(ctx), name = JS_UNDEFINED;
            const char *s = NULL;
            int syntax;
            if (JS_IsError(ctx, e))
                name = JS_GetPropertyStr(ctx, e, "name");
            s = JS_IsString(name) ? JS_ToCString(ctx, name) : NULL;
            syntax = s && strcmp(s, "SyntaxError") == 0;
            JS_FreeCString(ctx, s);
            JS_FreeValue(ctx, name);
            if (syntax) { /* the parser reports its stack's end as a SyntaxError */
                JSValue m = JS_GetPropertyStr(ctx, e, "message");
                s = JS_IsString(m) ? JS_ToCString(ctx, m) : NULL;
                syntax = !s || strcmp(s, "stack overflow") != 0;
                JS_FreeCString(ctx, s);
                JS_FreeValue(ctx, m);
            }
            JS_FreeValue(ctx, e);
            ret = JS_ThrowTypeError(ctx, syntax ? "airlock: the host function returned text that is not JSON" :
                "airlock: the sandbox could not hold the answer of the host function (out of memory, or nested too deep)");
        }
    } else if (tag == TAG_STRING || tag == TAG_REPLY_WIRE || tag == TAG_REPLY_ERROR)
        ret = JS_NewStringLen(ctx, buf, len);
    else if (tag == TAG_JSON)
        ret = JS_ParseJSON(ctx, buf, len, "<host>");
    else {
        JSValue msg = JS_NewStringLen(ctx, buf, len), err;
        if (JS_IsException(msg))
            ret = msg;
        else {
            err = JS_NewError(ctx);
            if (!JS_IsException(err))
                JS_DefinePropertyValueStr(ctx, err, "message", msg, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
            else
                JS_FreeValue(ctx, msg);
            ret = JS_Throw(ctx, err);
        }
    }
    if (!inline_text)
        js_free(ctx, buf);
    if (tag != TAG_REPLY_WIRE && tag != TAG_REPLY_ERROR)
        return ret;
    v = ret;
list:
    if (JS_IsException(v))
        return v;
    ret = JS_NewArray(ctx);
    if (JS_IsException(ret)) {
        JS_FreeValue(ctx, v);
        return ret;
    }
    if (JS_DefinePropertyValueUint32(ctx, ret, 0, JS_NewInt32(ctx, tag - TAG_REPLY_WIRE), JS_PROP_C_W_E) < 0 ||
        JS_DefinePropertyValueUint32(ctx, ret, 1, v, JS_PROP_C_W_E) < 0) {
        JS_FreeValue(ctx, ret);
        return JS_EXCEPTION;
    }
    *reply = 1;
    return ret;
}

static JSValue js_host_func(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    int r, reply;
    JSValue ret;
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
    ret = take_answer(ctx, 0, &reply);
    if (reply) {
        JS_FreeValue(ctx, ret);
        return JS_ThrowInternalError(ctx, "host call: bad answer");
    }
    return ret;
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

/* kernel_reply hands a reply list to the kernel's reply(list, id), which
   decodes an answer, throws an error or makes a promise. */
static JSValue kernel_reply(JSContext *ctx, JSValue list, JSValueConst id)
{
    JSValueConst a[2];
    JSValue r;
    a[0] = list;
    a[1] = id;
    r = call_kernel(ctx, "reply", 2, a);
    JS_FreeValue(ctx, list);
    return r;
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

/* js_kernel_host is __airlock_host(op, ...). The kernel calls it with its
   own operations (op 0-8: see internal/engine), and a host function
   (js_host_fn) with (9, id, ...args): the engine passes the arguments as they are. Arguments
   that are not primitives go back to the kernel's callHost(id, list),
   which encodes them. A JSON host function calls it with (10, id): its
   arguments cross as the JSON text of their list, and a synchronous
   answer, JSON text, is parsed here. */
JSValue js_kernel_host(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    JSValue ret, text = JS_UNDEFINED;
    JSValueConst three[3];
    int op = -1, i, r, reply, n = argc, json = 0;
    (void)this_val;

    if (argc > 0 && JS_VALUE_GET_TAG(argv[0]) == JS_TAG_INT)
        op = JS_VALUE_GET_INT(argv[0]);
    if ((op == 9 || op == 10) && argc < 2)
        return JS_ThrowTypeError(ctx, "airlock: malformed host call");
    if (op == 10) {
        JSValue list = new_list(ctx, argc - 2, argv + 2);
        if (JS_IsException(list))
            return list;
        text = JS_JSONStringify(ctx, list, JS_UNDEFINED, JS_UNDEFINED);
        JS_FreeValue(ctx, list);
        if (JS_IsException(text))
            return text;
        three[0] = JS_NewInt32(ctx, 0);
        three[1] = argv[1];
        three[2] = text;
        argv = three;
        n = 3;
        json = 1;
    } else if (op == 9) {
        int plain = argc <= MAX_SLOTS;
        for (i = 2; plain && i < argc; i++)
            plain = is_primitive(argv[i]);
        if (!plain) {
            JSValueConst a[2];
            JSValue list = new_list(ctx, argc - 2, argv + 2);
            if (JS_IsException(list))
                return list;
            a[0] = argv[1];
            a[1] = list;
            ret = call_kernel(ctx, "callHost", 2, a);
            JS_FreeValue(ctx, list);
            return ret;
        }
    }
    if (n > MAX_SLOTS) {
        JS_FreeValue(ctx, text);
        return JS_ThrowRangeError(ctx, "a host function takes at most %d arguments", MAX_SLOTS);
    }
    r = encode_args(ctx, n, argv, slots, strs);
    if (r == 0) {
        if (op == 9)
            slots[0].u.num = 0; /* a call of host function argv[1] */
        offer_answer();
        r = host_call(KERNEL_FN, slots, n);
        if (r != 0) {
            free_args(ctx, n, strs);
            JS_FreeValue(ctx, text);
            return JS_ThrowInternalError(ctx, "host call failed");
        }
    }
    free_args(ctx, n, strs);
    JS_FreeValue(ctx, text);
    if (r < 0)
        return JS_EXCEPTION;
    if (qjs_ctl.soft || qjs_ctl.stop) {
        /* the host stopped the program during the call (a step's budget
           spent, a final answer given): it ends here, not at the next
           interrupt check, thousands of operations later */
        return throw_stop(ctx);
    }
    ret = take_answer(ctx, json, &reply);
    if (reply && (op == 9 || op == 10))
        return kernel_reply(ctx, ret, argv[1]);
    return ret;
}

/* host_fn_primitives is js_kernel_host's (9, id, ...args) for arguments
   that are all primitives, written out for the call a program makes most:
   the slots are filled here, the text of string arguments is the only
   thing freed after the call, and a number answer, or a string answer in
   answer_buf, is made here. It returns 1 with the call's value in *res,
   or 0 when an argument is not a primitive: the kernel encodes those
   (js_kernel_host). */
static int host_fn_primitives(JSContext *ctx, JSValueConst id, int argc, JSValueConst *argv, JSValue *res)
{
    struct slot slots[MAX_SLOTS];
    const char *strs[MAX_SLOTS];
    int i, r, reply, nstr = 0;
    JSValue ret;

    slots[0].tag = TAG_NUMBER;
    slots[0].len = 0;
    slots[0].u.num = 0; /* a call of host function id */
    slots[1].tag = TAG_NUMBER;
    slots[1].len = 0;
    slots[1].u.num = JS_VALUE_GET_INT(id);
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
            s->tag = TAG_STRING;
            s->len = (uint32_t)len;
            s->u.ptr = (uint32_t)(uintptr_t)str;
            break;
        }
        default:
            for (i = 0; i < nstr; i++)
                JS_FreeCString(ctx, strs[i]);
            return 0;
        }
    }
    offer_answer();
    r = host_call(KERNEL_FN, slots, argc + 2);
    if (r != 0) {
        ret = JS_ThrowInternalError(ctx, "host call failed");
        goto done;
    }
    if (qjs_ctl.soft || qjs_ctl.stop) { /* as in js_kernel_host */
        ret = throw_stop(ctx);
        goto done;
    }
    /* the answers of take_answer's that need no list, made here */
    if (qjs_ctl.ret.tag == TAG_NUMBER)
        ret = JS_NewFloat64(ctx, qjs_ctl.ret.u.num);
    else if (qjs_ctl.ret.tag == TAG_STRING && qjs_ctl.ret.u.ptr == (uint32_t)(uintptr_t)answer_buf &&
             qjs_ctl.ret.len < ANSWER_SIZE)
        ret = JS_NewStringLen(ctx, answer_buf, qjs_ctl.ret.len);
    else {
        ret = take_answer(ctx, 0, &reply);
        if (reply)
            ret = kernel_reply(ctx, ret, id);
    }
done:
    for (i = 0; i < nstr; i++)
        JS_FreeCString(ctx, strs[i]);
    *res = ret;
    return 1;
}

/* js_host_fn is a host function the kernel made (hostFunction in
   bootstrap.js, with __airlock_hostfn): a C function whose data are its
   kind (9, or 10 for a JSON host function) and its id. A call is
   js_kernel_host's with (kind, id, ...args), with no bound function and no
   JavaScript in between; a call of kind 9 whose arguments are primitives
   is host_fn_primitives'. */
static JSValue js_host_fn(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    JSValueConst few[MAX_SLOTS], *args = few;
    JSValue r;
    int i;
    (void)magic;
    if (JS_VALUE_GET_INT(data[0]) == 9 && argc <= MAX_SLOTS - 2 &&
        host_fn_primitives(ctx, data[1], argc, argv, &r))
        return r;
    if (argc > MAX_SLOTS - 2) {
        args = js_malloc(ctx, sizeof(*args) * ((size_t)argc + 2));
        if (!args)
            return JS_EXCEPTION;
    }
    args[0] = data[0];
    args[1] = data[1];
    for (i = 0; i < argc; i++)
        args[i + 2] = argv[i];
    r = js_kernel_host(ctx, this_val, argc + 2, args);
    if (args != few)
        js_free(ctx, args);
    return r;
}

/* js_make_host_fn is __airlock_hostfn(kind, id): host function id of kind
   9 or 10 (see js_host_fn), named "" and of length 0. */
JSValue js_make_host_fn(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    (void)this_val;
    if (argc < 2 || JS_VALUE_GET_TAG(argv[0]) != JS_TAG_INT ||
        (JS_VALUE_GET_INT(argv[0]) != 9 && JS_VALUE_GET_INT(argv[0]) != 10) ||
        JS_VALUE_GET_TAG(argv[1]) != JS_TAG_INT)
        return JS_ThrowTypeError(ctx, "airlock: bad host function");
    return JS_NewCFunctionData(ctx, js_host_fn, 0, 0, 2, argv);
}
