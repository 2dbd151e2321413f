/*
 * codec.c: native helpers of the value codec (internal/engine/bootstrap.js
 * and the root package's codec.go), given to the kernel's script only.
 *
 * codec_hooks defines, beside __airlock_host, the global
 * __airlock_array_names, which the kernel takes and removes before any user
 * code runs.
 */
#include <stdint.h>
#include "quickjs.h"

int codec_hooks(JSContext *ctx, JSValueConst global);

/* js_array_names is __airlock_array_names(a, n): the own enumerable
   string-keyed properties of the array a that come after its first n, as a
   list of names, or undefined when there are none. For an array with every
   index below its length present (n its length), those are its named
   properties (arr.total = 3): an ordinary object lists its integer keys
   first, in ascending order. Listing the keys here costs no string per
   index, where Object.keys makes one for each. */
static JSValue js_array_names(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSPropertyEnum *tab;
    uint32_t len, i, n;
    JSValue list;
    (void)this_val;

    if (argc < 2 || !JS_IsObject(argv[0]) || JS_ToUint32(ctx, &n, argv[1]) < 0)
        return JS_ThrowTypeError(ctx, "airlock: bad array");
    if (JS_GetOwnPropertyNames(ctx, &tab, &len, argv[0], JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY) < 0)
        return JS_EXCEPTION;
    if (len <= n) {
        JS_FreePropertyEnum(ctx, tab, len);
        return JS_UNDEFINED;
    }
    list = JS_NewArray(ctx);
    for (i = n; !JS_IsException(list) && i < len; i++) {
        JSValue name = JS_AtomToString(ctx, tab[i].atom);
        if (JS_IsException(name) ||
            JS_DefinePropertyValueUint32(ctx, list, i - n, name, JS_PROP_C_W_E) < 0) {
            JS_FreeValue(ctx, list);
            list = JS_EXCEPTION;
        }
    }
    JS_FreePropertyEnum(ctx, tab, len);
    return list;
}

int codec_hooks(JSContext *ctx, JSValueConst global)
{
    return JS_DefinePropertyValueStr(ctx, global, "__airlock_array_names",
                                     JS_NewCFunction(ctx, js_array_names, "arrayNames", 2),
                                     JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0 ? -1 : 0;
}
