/*
 * module.c: the modules a program imports. QuickJS asks the host for a
 * module's name (env.normalize_module) and its source (env.load_module);
 * the native globals module of a run hands the program its globals and
 * bridged modules, which the run holds (run.c). A JSON module (an import
 * with { type: "json" }, or of a name that ends in .json) is the value of
 * its text, parsed here.
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

/* module_check_attributes accepts the import attributes a static import
   or import() gives when each key is one the sandbox knows: type. Only the
   keys are checked (the specification's AllImportAttributesSupported), an
   unknown one a SyntaxError. */
int module_check_attributes(JSContext *ctx, void *opaque, JSValueConst attributes)
{
    JSPropertyEnum *tab;
    uint32_t i, n;
    int r = 0;
    (void)opaque;
    if (JS_GetOwnPropertyNames(ctx, &tab, &n, attributes, JS_GPN_ENUM_ONLY | JS_GPN_STRING_MASK))
        return -1;
    for (i = 0; i < n && r == 0; i++) {
        const char *key = JS_AtomToCString(ctx, tab[i].atom);
        if (!key) {
            r = -1;
        } else if (strcmp(key, "type") != 0) {
            JS_ThrowSyntaxError(ctx, "Import attribute \"%s\" is not supported", key);
            r = -1;
        }
        JS_FreeCString(ctx, key);
    }
    JS_FreePropertyEnum(ctx, tab, n);
    return r;
}

/* JSON_PREFIX before a module's name asks the host for its text as it is
   (internal/source, Graph.Load): a JSON module has no prologue and no
   transform. No module's name starts so (the graph's start with / or
   airlock:). */
#define JSON_PREFIX "json:"

/* module_type is the type the import attributes ask for: 1 for JSON, 0
   for JavaScript, or -1 with an exception pending for a type the sandbox
   has no modules of. A name that ends in .json is JSON without the
   attribute too, as QuickJS's own loader has it (where a browser or Node
   refuses the import). */
static int module_type(JSContext *ctx, const char *name, JSValueConst attributes)
{
    size_t n = strlen(name);
    const char *t;
    JSValue v;
    int r;
    if (JS_IsUndefined(attributes))
        v = JS_UNDEFINED;
    else if (JS_IsException(v = JS_GetPropertyStr(ctx, attributes, "type")))
        return -1;
    if (JS_IsUndefined(v))
        return n >= 5 && memcmp(name + n - 5, ".json", 5) == 0;
    t = JS_ToCString(ctx, v);
    JS_FreeValue(ctx, v);
    if (!t)
        return -1;
    r = strcmp(t, "json") == 0;
    if (!r) {
        JS_ThrowTypeError(ctx, "Import attribute \"type\" with value \"%s\" is not supported", t);
        r = -1;
    }
    JS_FreeCString(ctx, t);
    return r;
}

static int json_module_init(JSContext *ctx, JSModuleDef *m)
{
    return JS_SetModuleExport(ctx, m, "default", JS_GetModulePrivateValue(ctx, m));
}

/* json_module loads name as a JSON module: its one export, default, is
   the value JSON.parse gives for the text (a SyntaxError if it is not
   JSON), the same value for every import of it. */
static JSModuleDef *json_module(JSContext *ctx, const char *name)
{
    uint32_t nlen = (uint32_t)strlen(name), plen = sizeof JSON_PREFIX - 1, len;
    char *q = js_malloc(ctx, (size_t)plen + nlen + 1), *buf;
    int32_t r;
    JSValue v;
    JSModuleDef *m;
    if (!q)
        return NULL;
    memcpy(q, JSON_PREFIX, plen);
    memcpy(q + plen, name, (size_t)nlen + 1);
    r = host_load_module(q, plen + nlen, 0);
    js_free(ctx, q);
    if (!(buf = host_text(ctx, &len)))
        return NULL;
    if (r != 0) {
        JS_ThrowTypeError(ctx, "module load failed: %s", buf);
        js_free(ctx, buf);
        return NULL;
    }
    v = JS_ParseJSON(ctx, buf, len, name);
    js_free(ctx, buf);
    if (JS_IsException(v))
        return NULL;
    if (!(m = JS_NewCModule(ctx, name, json_module_init))) {
        JS_FreeValue(ctx, v);
        return NULL;
    }
    JS_SetModulePrivateValue(ctx, m, v); /* takes v */
    return JS_AddModuleExport(ctx, m, "default") < 0 ? NULL : m;
}

JSModuleDef *module_loader(JSContext *ctx, const char *name, void *opaque, JSValueConst attributes)
{
    (void)opaque;
    switch (module_type(ctx, name, attributes)) {
    case -1:
        return NULL;
    case 1:
        return json_module(ctx, name);
    }
    return module_program(ctx, name);
}

/* module_program loads name as JavaScript (the run's entry always is):
   its source from the host, or the native globals module. */
JSModuleDef *module_program(JSContext *ctx, const char *name)
{
    uint32_t nlen = (uint32_t)strlen(name), len;
    int32_t r = host_load_module(name, nlen, 0);
    char *buf = host_text(ctx, &len);
    JSModuleDef *m;
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
