/*
 * module.c: the modules a program imports. QuickJS asks the host for a
 * module's name (env.normalize_module) and its source (env.load_module);
 * the native globals module of a run hands the program its globals and
 * bridged modules, which the run holds (run.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"

static JSModuleDef *globals_module(JSContext *ctx, const char *name, char *names, uint32_t len);

char *module_normalize(JSContext *ctx, const char *base, const char *name, void *opaque)
{
    int32_t r = host_normalize_module(base, (uint32_t)strlen(base), name, (uint32_t)strlen(name));
    char *buf = host_text(ctx, NULL);
    (void)opaque;
    if (!buf)
        return NULL;
    if (r != 0) {
        JS_ThrowTypeError(ctx, "module normalization failed: %s", buf);
        js_free(ctx, buf);
        return NULL;
    }
    return buf; /* QuickJS frees it */
}

/* compile_module compiles src as module name; NULL with an exception
   pending if it does not compile. */
static JSModuleDef *compile_module(JSContext *ctx, const char *name, const char *src, uint32_t len)
{
    JSValue func = JS_Eval(ctx, src, len, name, JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    JSModuleDef *m;
    if (JS_IsException(func))
        return NULL;
    m = JS_VALUE_GET_PTR(func);
    JS_FreeValue(ctx, func); /* QuickJS keeps the module in its list */
    return m;
}

JSModuleDef *module_loader(JSContext *ctx, const char *name, void *opaque)
{
    uint32_t nlen = (uint32_t)strlen(name), len;
    int32_t r = host_load_module(name, nlen, 0);
    char *buf = host_text(ctx, &len);
    JSModuleDef *m;
    (void)opaque;
    if (!buf)
        return NULL;
    if (r == 2)
        return globals_module(ctx, name, buf, len); /* takes buf */
    if (r != 0) {
        JS_ThrowTypeError(ctx, "module load failed: %s", buf);
        js_free(ctx, buf);
        return NULL;
    }
    m = compile_module(ctx, name, buf, len);
    js_free(ctx, buf);
    if (!m) {
        /* the host may have another source to try (TypeScript compiled as
           JavaScript first) */
        r = host_load_module(name, nlen, 1);
        if (!(buf = host_text(ctx, &len)))
            return NULL;
        if (r == 0 || r == 1)
            JS_FreeValue(ctx, JS_GetException(ctx));
        if (r == 1)
            JS_ThrowTypeError(ctx, "module load failed: %s", buf);
        else if (r == 0)
            m = compile_module(ctx, name, buf, len);
        js_free(ctx, buf);
        if (!m)
            return NULL;
    }
    r = host_load_module(name, nlen, 2);
    if (!(buf = host_text(ctx, &len)))
        return NULL;
    if (r == 0 && len > 0) {
        JSValue meta = JS_GetImportMeta(ctx, m);
        if (JS_IsException(meta) ||
            JS_DefinePropertyValueStr(ctx, meta, "url", JS_NewStringLen(ctx, buf, len), JS_PROP_C_W_E) < 0)
            m = NULL;
        JS_FreeValue(ctx, meta);
    }
    js_free(ctx, buf);
    return m;
}

/* The native globals module of a run: one export for each of the run's
   globals, and last the bridged modules; evaluating it takes them from the
   run (hand_over, which marks the run as started). The names are those
   the host gave for the module loaded last, each ended by NUL. */
static char *globals_names;
static uint32_t globals_len;

static int globals_init(JSContext *ctx, JSModuleDef *m)
{
    JSValue *globals, imports;
    uint32_t i = 0, off = 0, n = 0, ng;
    int r = 0;
    if (hand_over(ctx, &globals, &ng, &imports) < 0)
        return -1;
    for (off = 0; off < globals_len; off += (uint32_t)strlen(globals_names + off) + 1)
        n++;
    for (off = 0, i = 0; r == 0 && off < globals_len; off += (uint32_t)strlen(globals_names + off) + 1, i++) {
        JSValue v = i + 1 < n ? (i < ng ? JS_DupValue(ctx, globals[i]) : JS_UNDEFINED) : JS_DupValue(ctx, imports);
        if (JS_SetModuleExport(ctx, m, globals_names + off, v) < 0)
            r = -1;
    }
    for (i = 0; i < ng; i++)
        JS_FreeValue(ctx, globals[i]);
    js_free(ctx, globals);
    JS_FreeValue(ctx, imports);
    return r;
}

static JSModuleDef *globals_module(JSContext *ctx, const char *name, char *names, uint32_t len)
{
    JSModuleDef *m = JS_NewCModule(ctx, name, globals_init);
    uint32_t off;
    if (globals_names)
        js_free(ctx, globals_names);
    globals_names = names;
    globals_len = len;
    if (!m)
        return NULL;
    for (off = 0; off < len; off += (uint32_t)strlen(names + off) + 1) {
        if (JS_AddModuleExport(ctx, m, names + off) < 0)
            return NULL;
    }
    return m;
}
