/*
 * console.c: the capturing console. Each call of console.log, info, warn,
 * error or debug goes to the host (OP_LOG) with its arguments encoded as
 * values to show (functions and symbols inside them dropped, codec.c). A
 * function or symbol argument is logged as Node prints it ([Function: f],
 * [class A], Symbol(s)), and an argument that cannot cross as its kind
 * ([WeakMap], [Proxy]) instead of failing the program. The console is the
 * same for every run, made once (ENTRY_INIT), in the image; a run's
 * globals (run.c) or a session's global object (session.c) hold it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "shim.h"
#include "kernel.h"

static const char *const levels[] = {"log", "info", "warn", "error", "debug"};

/* The four function prototypes, for a function's kind as Node names it, and
   the natives nodeText reads with. */
enum {
    P_FUNCTION, P_ASYNC, P_GENERATOR, P_ASYNC_GENERATOR,
    N_FUNCTION_TO_STRING, N_SYMBOL_TO_STRING, N_CONCAT, N_CAPTURED,
};
static JSValue captured[N_CAPTURED];
static const char *const kinds[] = {"Function", "AsyncFunction", "GeneratorFunction", "AsyncGeneratorFunction"};
static const char captured_src[] = "[Function.prototype, Object.getPrototypeOf(async function () {}), "
                                   "Object.getPrototypeOf(function* () {}), Object.getPrototypeOf(async function* () {}), "
                                   "Function.prototype.toString, Symbol.prototype.toString, String.prototype.concat]";

static JSValue console_obj = JS_UNDEFINED;

/* caught reports whether the pending exception is one a catch clause
   catches, and if so drops it. */
static int caught(JSContext *ctx)
{
    if (JS_IsUncatchableException(ctx))
        return 0;
    JS_FreeValue(ctx, JS_GetException(ctx));
    return 1;
}

/* cat is a + b, both taken. */
static JSValue cat(JSContext *ctx, JSValue a, JSValue b)
{
    JSValue r = JS_IsException(a) || JS_IsException(b) ? JS_EXCEPTION
                                                        : JS_Call(ctx, captured[N_CONCAT], a, 1, (JSValueConst *)&b);
    JS_FreeValue(ctx, a);
    JS_FreeValue(ctx, b);
    return r;
}

/* node_text is what Node's console prints for the function or symbol v.
   The name is read from its own data property: no getter runs. */
static JSValue node_text(JSContext *ctx, JSValueConst v)
{
    JSPropertyDescriptor d;
    JSAtom a;
    JSValue name = JS_UNDEFINED, src, proto;
    const char *kind = "Function", *s = NULL;
    char head[64];
    int has, i, is_class = 0;
    if (JS_IsSymbol(v))
        return JS_Call(ctx, captured[N_SYMBOL_TO_STRING], v, 0, NULL);
    a = JS_NewAtom(ctx, "name");
    has = JS_GetOwnProperty(ctx, &d, v, a);
    JS_FreeAtom(ctx, a);
    if (has < 0 && !caught(ctx))
        return JS_EXCEPTION;
    if (has > 0) {
        if (JS_IsString(d.value)) {
            JSValue n = JS_GetPropertyStr(ctx, d.value, "length");
            if (JS_VALUE_GET_TAG(n) == JS_TAG_INT && JS_VALUE_GET_INT(n) > 0)
                name = JS_DupValue(ctx, d.value);
            JS_FreeValue(ctx, n);
        }
        JS_FreeValue(ctx, d.value);
        JS_FreeValue(ctx, d.getter);
        JS_FreeValue(ctx, d.setter);
    }
    proto = JS_GetPrototype(ctx, v);
    for (i = P_FUNCTION; i <= P_ASYNC_GENERATOR; i++) {
        if (JS_IsObject(proto) && JS_VALUE_GET_PTR(proto) == JS_VALUE_GET_PTR(captured[i]))
            kind = kinds[i];
    }
    JS_FreeValue(ctx, proto);
    src = JS_Call(ctx, captured[N_FUNCTION_TO_STRING], v, 0, NULL);
    if (JS_IsException(src) && !caught(ctx)) {
        JS_FreeValue(ctx, name);
        return JS_EXCEPTION;
    }
    if (JS_IsString(src) && (s = JS_ToCString(ctx, src)))
        is_class = strncmp(s, "class", 5) == 0 && (s[5] == ' ' || s[5] == '{');
    JS_FreeCString(ctx, s);
    JS_FreeValue(ctx, src);
    if (is_class)
        return cat(ctx, cat(ctx, JS_NewString(ctx, "[class "),
                            JS_IsUndefined(name) ? JS_NewString(ctx, "(anonymous)") : name), JS_NewString(ctx, "]"));
    if (JS_IsUndefined(name)) {
        snprintf(head, sizeof head, "[%s (anonymous)]", kind);
        return JS_NewString(ctx, head);
    }
    snprintf(head, sizeof head, "[%s: ", kind);
    return cat(ctx, cat(ctx, JS_NewString(ctx, head), name), JS_NewString(ctx, "]"));
}

/* js_log is console[levels[magic]](...args). */
static JSValue js_log(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    JSValue list = JS_NewArray(ctx), r;
    struct slot slots[3];
    uint8_t *p;
    size_t len;
    int i, k;
    (void)this_val;
    (void)data;
    if (JS_IsException(list))
        return list;
    for (i = 0; i < argc; i++) {
        JSValue a = argv[i];
        a = JS_IsSymbol(a) || (JS_IsFunction(ctx, a) && strcmp(codec_kind(ctx, a), "Proxy") != 0)
                ? node_text(ctx, a)
                : JS_DupValue(ctx, a);
        if (JS_IsException(a) || JS_DefinePropertyValueUint32(ctx, list, (uint32_t)i, a, JS_PROP_C_W_E) < 0) {
            JS_FreeValue(ctx, list);
            return JS_EXCEPTION;
        }
    }
    if (codec_encode(ctx, list, ENC_SHOWN, &p, &len) < 0) {
        /* an argument that cannot cross is shown as its kind */
        if (!caught(ctx)) {
            JS_FreeValue(ctx, list);
            return JS_EXCEPTION;
        }
        for (i = 0; i < argc; i++) {
            JSValue a = JS_GetPropertyUint32(ctx, list, (uint32_t)i);
            uint8_t *q;
            size_t n;
            if (JS_IsException(a))
                break;
            k = codec_encode(ctx, a, ENC_SHOWN, &q, &n);
            if (k == 0)
                js_free(ctx, q);
            else if (caught(ctx)) {
                char b[64];
                snprintf(b, sizeof b, "[%s]", JS_IsObject(a) ? codec_kind(ctx, a) : "object");
                JS_DefinePropertyValueUint32(ctx, list, (uint32_t)i, JS_NewString(ctx, b), JS_PROP_C_W_E);
            } else {
                JS_FreeValue(ctx, a);
                break;
            }
            JS_FreeValue(ctx, a);
        }
        if (i < argc || codec_encode(ctx, list, ENC_SHOWN, &p, &len) < 0) {
            JS_FreeValue(ctx, list);
            return JS_EXCEPTION;
        }
    }
    JS_FreeValue(ctx, list);
    slot_num(&slots[0], OP_LOG);
    slot_num(&slots[1], magic);
    slot_ptr(&slots[2], TAG_BYTES, p, len);
    k = kernel_op(ctx, slots, 3);
    js_free(ctx, p);
    r = k < 0 ? JS_EXCEPTION : JS_UNDEFINED;
    return r;
}

/* console_init makes the console (ENTRY_INIT). */
int console_init(JSContext *ctx)
{
    JSValue list = JS_Eval(ctx, captured_src, sizeof captured_src - 1, "<console>", JS_EVAL_TYPE_GLOBAL);
    int i, err = 0;
    if (JS_IsException(list))
        return -1;
    for (i = 0; i < N_CAPTURED; i++)
        captured[i] = JS_GetPropertyUint32(ctx, list, (uint32_t)i);
    JS_FreeValue(ctx, list);
    console_obj = JS_NewObject(ctx);
    if (JS_IsException(console_obj))
        return -1;
    for (i = 0; i < (int)(sizeof levels / sizeof levels[0]); i++) {
        JSValue f = JS_NewCFunctionData(ctx, js_log, 0, i, 0, NULL);
        if (JS_IsException(f) ||
            JS_DefinePropertyValueStr(ctx, f, "name", JS_NewString(ctx, levels[i]), JS_PROP_CONFIGURABLE) < 0 ||
            JS_DefinePropertyValueStr(ctx, console_obj, levels[i], f, JS_PROP_C_W_E) < 0)
            err = -1;
    }
    return err ? -1 : 0;
}

/* console_value is the capturing console, the same object for every run
   and session of the VM. */
JSValueConst console_value(void) { return console_obj; }
