/*
 * codec.c: the value codec's sandbox side. Values going from the sandbox
 * to the host (results, host function arguments, console arguments,
 * reports) are encoded here, in C, by walking them with QuickJS's API, into
 * the binary format that internal/codec decodes; no JavaScript runs but the
 * program's own getters. The kernel (internal/engine/bootstrap.js) gets
 * the encoder as __airlock_encode(value, shown) -> ArrayBuffer, and passes
 * the buffer to the host, which reads its bytes from linear memory (a slot
 * of kind TAG_BYTES, shim.c).
 *
 * The format (little-endian; internal/codec/binary.go is the reader):
 *
 *   header   0xB1, u32 values, u32 objects (counts, for the host's budget)
 *   value    a tag byte, then:
 *     0 undefined, 1 null, 2 false, 3 true
 *     4 f64                    number
 *     5 i32                    number that is an int32
 *     6 str                    string (u32 length, WTF-8 bytes: a lone
 *                              surrogate as its three bytes)
 *     7 str                    bigint, decimal
 *     8 u32                    the object with that id, again
 *     9 u32 n, n (str, value)  plain object
 *    10 u32 n, n values        dense array
 *    11 u32 length, u8 named, u32 n, n (key, value), key: 0 u32 index |
 *                              1 str name: a sparse array, or one with named
 *                              properties (named 1: it has some)
 *    12 u32 n, n (key, value)  Map
 *    13 u32 n, n values        Set
 *    14 f64                    Date (NaN: invalid)
 *    15 u8 kind, u32 n, bytes  typed array (kind: JSTypedArrayEnum)
 *    16 u32 n, bytes           ArrayBuffer
 *    17 u32 n, bytes           DataView
 *    18 str name, str message  Error
 *    19 str source, str flags  RegExp
 *    20 value                  boxed primitive
 * Every object (tags 9-20) takes the next id, in the order written.
 *
 * The walk is iterative (an explicit stack, MAX_DEPTH levels), reads an
 * object's keys first and then each value once (a getter runs once, and
 * may throw: the encode throws), refuses a Proxy before any of its traps,
 * and tells kinds by their class (internal slots), never by a property.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include "quickjs.h"

int codec_hooks(JSContext *ctx, JSValueConst global);
int codec_is_bytes(JSContext *ctx, JSValueConst v, const uint8_t **p, size_t *len);

#define MAX_DEPTH 10000 /* maxWireDepth on the Go side */

enum {
    B_UNDEFINED = 0, B_NULL, B_FALSE, B_TRUE, B_F64, B_I32, B_STRING, B_BIGINT, B_REF,
    B_OBJECT, B_ARRAY, B_SPARSE, B_MAP, B_SET, B_DATE, B_TYPED, B_BUFFER, B_VIEW, B_ERROR,
    B_REGEXP, B_BOXED,
};

/* Samples and natives, captured when the hooks are defined: before any
   script runs, so that no program can have replaced them. */
enum {
    S_OBJECT, S_ARRAY, S_ERROR, S_NUMBER, S_STRING, S_BOOLEAN, S_BIGINT, S_SYMBOL, S_DATE, S_REGEXP,
    S_MAP, S_SET, S_BUFFER, S_VIEW, S_PROXY, S_PROMISE, S_WEAKMAP, S_WEAKSET, S_WEAKREF, S_FINREG,
    S_TYPED0, /* 12 typed arrays, in JSTypedArrayEnum's order */
    N_SAMPLES = S_TYPED0 + 12,
};
enum {
    F_GETTIME, F_NUMBER_VALUEOF, F_STRING_VALUEOF, F_BOOLEAN_VALUEOF, F_BIGINT_VALUEOF,
    F_SYMBOL_TOSTRING, F_RE_SOURCE, F_RE_FLAG0, /* 8 flag getters, "dgimsuvy" */
    F_VIEW_BUFFER = F_RE_FLAG0 + 8, F_VIEW_OFFSET, F_VIEW_LENGTH, F_MAP_FOREACH, F_SET_FOREACH,
    N_FUNCS,
};
static const char capture_src[] =
    "(() => { const g = (C, k) => Object.getOwnPropertyDescriptor(C.prototype, k).get; return [\n"
    "{}, [], new Error, new Number(0), new String(''), new Boolean(false), Object(0n), Object(Symbol()),\n"
    "new Date(0), /x/, new Map, new Set, new ArrayBuffer(0), new DataView(new ArrayBuffer(0)),\n"
    "new Proxy({}, {}), Promise.resolve(), new WeakMap, new WeakSet, new WeakRef({}), new FinalizationRegistry(() => {}),\n"
    "new Uint8ClampedArray(0), new Int8Array(0), new Uint8Array(0), new Int16Array(0), new Uint16Array(0),\n"
    "new Int32Array(0), new Uint32Array(0), new BigInt64Array(0), new BigUint64Array(0), new Float16Array(0),\n"
    "new Float32Array(0), new Float64Array(0),\n"
    "Date.prototype.getTime, Number.prototype.valueOf, String.prototype.valueOf, Boolean.prototype.valueOf,\n"
    "BigInt.prototype.valueOf, Symbol.prototype.toString, g(RegExp, 'source'),\n"
    "g(RegExp, 'hasIndices'), g(RegExp, 'global'), g(RegExp, 'ignoreCase'), g(RegExp, 'multiline'),\n"
    "g(RegExp, 'dotAll'), g(RegExp, 'unicode'), g(RegExp, 'unicodeSets'), g(RegExp, 'sticky'),\n"
    "g(DataView, 'buffer'), g(DataView, 'byteOffset'), g(DataView, 'byteLength'),\n"
    "Map.prototype.forEach, Set.prototype.forEach]; })()";
static const char flag_chars[] = "dgimsuvy";

static JSClassID class_of[N_SAMPLES];
static JSValue natives[N_FUNCS];

/* ---- output ---- */

struct out {
    JSContext *ctx;
    uint8_t *p;
    size_t len, cap;
    uint32_t values, objects;
};

static int grow(struct out *o, size_t n)
{
    size_t cap;
    uint8_t *p;
    if (o->len + n <= o->cap)
        return 0;
    cap = o->cap ? o->cap : 256;
    while (cap < o->len + n) {
        if (cap > ((size_t)1 << 31)) {
            JS_ThrowRangeError(o->ctx, "value too large to cross the sandbox boundary");
            return -1;
        }
        cap *= 2;
    }
    p = js_realloc(o->ctx, o->p, cap);
    if (!p)
        return -1;
    o->p = p;
    o->cap = cap;
    return 0;
}

static int put(struct out *o, const void *b, size_t n)
{
    if (grow(o, n) < 0)
        return -1;
    memcpy(o->p + o->len, b, n);
    o->len += n;
    return 0;
}

static int put_u8(struct out *o, uint8_t b) { return put(o, &b, 1); }
static int put_u32(struct out *o, uint32_t v) { return put(o, &v, 4); } /* wasm is little-endian */
static int put_f64(struct out *o, double d) { return put(o, &d, 8); }

static int put_str(struct out *o, const char *s, size_t n)
{
    if (put_u32(o, (uint32_t)n) < 0)
        return -1;
    return put(o, s, n);
}

/* put_jsstr writes a string value (or a value converted by ToString). */
static int put_jsstr(struct out *o, JSValueConst v)
{
    size_t n;
    const char *s = JS_ToCStringLen(o->ctx, &n, v);
    int r;
    if (!s)
        return -1;
    r = put_str(o, s, n);
    JS_FreeCString(o->ctx, s);
    return r;
}

static int put_atom(struct out *o, JSAtom a)
{
    size_t n;
    const char *s = JS_AtomToCStringLen(o->ctx, &n, a);
    int r;
    if (!s)
        return -1;
    r = put_str(o, s, n);
    JS_FreeCString(o->ctx, s);
    return r;
}

/* ---- objects seen: pointer -> id, each held until the end ---- */

struct seen {
    JSValue *objs; /* by id */
    uint32_t n, cap;
    int32_t *slots; /* hash: id + 1, 0 empty */
    uint32_t mask;
};

static uint32_t hash_ptr(void *p) { return (uint32_t)(((uintptr_t)p >> 3) * 2654435761u); }

static int32_t seen_find(struct seen *s, JSValueConst v)
{
    void *p = JS_VALUE_GET_PTR(v);
    uint32_t h;
    if (!s->slots)
        return -1;
    for (h = hash_ptr(p) & s->mask; s->slots[h]; h = (h + 1) & s->mask) {
        if (JS_VALUE_GET_PTR(s->objs[s->slots[h] - 1]) == p)
            return s->slots[h] - 1;
    }
    return -1;
}

static int seen_add(JSContext *ctx, struct seen *s, JSValueConst v)
{
    uint32_t h, i;
    if (s->n + 1 > s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        JSValue *objs = js_realloc(ctx, s->objs, sizeof(*objs) * cap);
        int32_t *slots;
        if (!objs)
            return -1;
        s->objs = objs;
        slots = js_mallocz(ctx, sizeof(*slots) * cap * 2);
        if (!slots)
            return -1;
        js_free(ctx, s->slots);
        s->slots = slots;
        s->cap = cap;
        s->mask = cap * 2 - 1;
        for (i = 0; i < s->n; i++) {
            for (h = hash_ptr(JS_VALUE_GET_PTR(s->objs[i])) & s->mask; s->slots[h]; h = (h + 1) & s->mask)
                ;
            s->slots[h] = (int32_t)i + 1;
        }
    }
    s->objs[s->n] = JS_DupValue(ctx, v);
    for (h = hash_ptr(JS_VALUE_GET_PTR(v)) & s->mask; s->slots[h]; h = (h + 1) & s->mask)
        ;
    s->slots[h] = (int32_t)++s->n;
    return 0;
}

static void seen_free(JSContext *ctx, struct seen *s)
{
    uint32_t i;
    for (i = 0; i < s->n; i++)
        JS_FreeValue(ctx, s->objs[i]);
    js_free(ctx, s->objs);
    js_free(ctx, s->slots);
}

/* ---- the walk ---- */

enum { K_OBJECT, K_ARRAY, K_SPARSE, K_MAP, K_SET };

struct frame {
    int kind;
    JSValue obj;   /* the container, or the list of a Map's or Set's items */
    JSPropertyEnum *tab;
    uint32_t tab_len;
    uint32_t i, n;     /* next item, items */
    uint32_t dense;    /* K_SPARSE: its first dense keys are the indices 0..dense-1 */
    size_t count_at;   /* where the count of entries written goes */
    uint32_t count;
    int due;           /* K_MAP: the value of the entry whose key was written is next */
};

struct enc {
    JSContext *ctx;
    struct out out;
    struct seen seen;
    struct frame *st;
    uint32_t sp, cap;
    int shown;
};

static JSValue clone_error(JSContext *ctx, const char *what, const char *name)
{
    JSValue e = JS_NewError(ctx);
    char msg[200];
    if (JS_IsException(e))
        return e;
    snprintf(msg, sizeof msg, "%s%s could not be cloned", what, name ? name : "");
    JS_DefinePropertyValueStr(ctx, e, "message", JS_NewString(ctx, msg), JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_DefinePropertyValueStr(ctx, e, "name", JS_NewString(ctx, "DataCloneError"), JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    return JS_Throw(ctx, e);
}

static int is_proxy(JSValueConst v) { return JS_GetClassID(v) == class_of[S_PROXY]; }

/* dropped: in a value to be shown, a function or symbol is left out */
static int dropped(struct enc *e, JSValueConst v)
{
    return e->shown && (JS_IsSymbol(v) || (JS_IsFunction(e->ctx, v) && !is_proxy(v)));
}

static JSValue call0(JSContext *ctx, int f, JSValueConst this_val)
{
    return JS_Call(ctx, natives[f], this_val, 0, NULL);
}

static int atom_index(JSContext *ctx, JSAtom a, uint32_t *idx);

static int push(struct enc *e, int kind, JSValue obj, uint32_t n)
{
    struct frame *f;
    if (e->sp >= MAX_DEPTH) {
        JS_FreeValue(e->ctx, obj);
        JS_ThrowRangeError(e->ctx, "value nested deeper than %d levels cannot cross the sandbox boundary", MAX_DEPTH);
        return -1;
    }
    if (e->sp == e->cap) {
        uint32_t cap = e->cap ? e->cap * 2 : 32;
        struct frame *st = js_realloc(e->ctx, e->st, sizeof(*st) * cap);
        if (!st) {
            JS_FreeValue(e->ctx, obj);
            return -1;
        }
        e->st = st;
        e->cap = cap;
    }
    f = &e->st[e->sp++];
    memset(f, 0, sizeof(*f));
    f->kind = kind;
    f->obj = obj;
    f->n = n;
    f->count_at = e->out.len;
    return put_u32(&e->out, 0);
}

static void pop(struct enc *e)
{
    struct frame *f = &e->st[--e->sp];
    memcpy(e->out.p + f->count_at, &f->count, 4);
    if (f->tab)
        JS_FreePropertyEnum(e->ctx, f->tab, f->tab_len);
    JS_FreeValue(e->ctx, f->obj);
}

/* collect is the callback of Map/Set.prototype.forEach: it appends the
   key and value (magic 1) or the value (0) to the list in data[0]. */
static JSValue collect(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic, JSValue *data)
{
    JSValue len = JS_GetPropertyStr(ctx, data[0], "length");
    uint32_t n;
    (void)this_val;
    if (JS_ToUint32(ctx, &n, len) < 0)
        return JS_EXCEPTION;
    if (magic && JS_DefinePropertyValueUint32(ctx, data[0], n++, JS_DupValue(ctx, argc > 1 ? argv[1] : JS_UNDEFINED), JS_PROP_C_W_E) < 0)
        return JS_EXCEPTION;
    if (JS_DefinePropertyValueUint32(ctx, data[0], n, JS_DupValue(ctx, argc > 0 ? argv[0] : JS_UNDEFINED), JS_PROP_C_W_E) < 0)
        return JS_EXCEPTION;
    return JS_UNDEFINED;
}

static int push_collection(struct enc *e, JSValueConst v, int map)
{
    JSValue list = JS_NewArray(e->ctx), cb, r, len;
    uint32_t n;
    if (JS_IsException(list))
        return -1;
    cb = JS_NewCFunctionData(e->ctx, collect, 2, map, 1, (JSValueConst *)&list);
    if (JS_IsException(cb)) {
        JS_FreeValue(e->ctx, list);
        return -1;
    }
    r = JS_Call(e->ctx, natives[map ? F_MAP_FOREACH : F_SET_FOREACH], v, 1, (JSValueConst *)&cb);
    JS_FreeValue(e->ctx, cb);
    if (JS_IsException(r)) {
        JS_FreeValue(e->ctx, list);
        return -1;
    }
    len = JS_GetPropertyStr(e->ctx, list, "length");
    if (JS_ToUint32(e->ctx, &n, len) < 0) {
        JS_FreeValue(e->ctx, list);
        return -1;
    }
    if (put_u8(&e->out, map ? B_MAP : B_SET) < 0) {
        JS_FreeValue(e->ctx, list);
        return -1;
    }
    return push(e, map ? K_MAP : K_SET, list, n);
}

static int push_array(struct enc *e, JSValueConst v)
{
    JSContext *ctx = e->ctx;
    JSPropertyEnum *tab;
    uint32_t tab_len, len, i;
    JSValue lv = JS_GetPropertyStr(ctx, v, "length");
    struct frame *f;
    if (JS_ToUint32(ctx, &len, lv) < 0)
        return -1;
    if (JS_GetOwnPropertyNames(ctx, &tab, &tab_len, v, JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY) < 0)
        return -1;
    /* dense: its first len keys are 0..len-1 (integer keys come first, in
       order); a key past them is a name */
    for (i = 0; i < len && i < tab_len; i++) {
        if (tab[i].atom != JS_NewAtomUInt32(ctx, i))
            break;
    }
    if (i == len && tab_len == len) {
        JS_FreePropertyEnum(ctx, tab, tab_len);
        if (put_u8(&e->out, B_ARRAY) < 0)
            return -1;
        return push(e, K_ARRAY, JS_DupValue(ctx, v), len);
    }
    {
        int named = i == len ? tab_len > len : 0;
        uint32_t j, idx;
        for (j = 0; i < len && !named && j < tab_len; j++) {
            int r = atom_index(ctx, tab[j].atom, &idx);
            if (r < 0) {
                JS_FreePropertyEnum(ctx, tab, tab_len);
                return -1;
            }
            named = r == 0;
        }
        if (put_u8(&e->out, B_SPARSE) < 0 || put_u32(&e->out, len) < 0 || put_u8(&e->out, (uint8_t)named) < 0) {
            JS_FreePropertyEnum(ctx, tab, tab_len);
            return -1;
        }
    }
    if (push(e, K_SPARSE, JS_DupValue(ctx, v), tab_len) < 0) {
        JS_FreePropertyEnum(ctx, tab, tab_len);
        return -1;
    }
    f = &e->st[e->sp - 1];
    f->tab = tab;
    f->tab_len = tab_len;
    f->dense = i == len ? len : 0;
    return 0;
}

/* put_leaf writes an object that holds no other value, of sample class s. */
static int put_leaf(struct enc *e, JSValueConst v, int s)
{
    JSContext *ctx = e->ctx;
    struct out *o = &e->out;
    JSValue r;
    double d;
    int i;
    switch (s) {
    case S_DATE:
        r = call0(ctx, F_GETTIME, v); /* a number: nothing to free */
        if (JS_ToFloat64(ctx, &d, r) < 0)
            return -1;
        return put_u8(o, B_DATE) < 0 ? -1 : put_f64(o, d);
    case S_BUFFER: {
        size_t n;
        uint8_t *p = JS_GetArrayBuffer(ctx, &n, v);
        if (!p && n)
            return -1;
        if (!p && JS_HasException(ctx))
            return -1;
        if (put_u8(o, B_BUFFER) < 0 || put_u32(o, (uint32_t)n) < 0)
            return -1;
        return put(o, p, n);
    }
    case S_VIEW: {
        int64_t off, len;
        size_t n;
        uint8_t *p;
        JSValue buf = call0(ctx, F_VIEW_BUFFER, v);
        if (JS_IsException(buf))
            return -1;
        r = call0(ctx, F_VIEW_OFFSET, v);
        if (JS_ToInt64(ctx, &off, r) < 0) {
            JS_FreeValue(ctx, buf);
            return -1;
        }
        r = call0(ctx, F_VIEW_LENGTH, v);
        if (JS_ToInt64(ctx, &len, r) < 0) {
            JS_FreeValue(ctx, buf);
            return -1;
        }
        p = JS_GetArrayBuffer(ctx, &n, buf);
        JS_FreeValue(ctx, buf);
        if (!p || off < 0 || len < 0 || (size_t)(off + len) > n) {
            if (!JS_HasException(ctx))
                JS_ThrowTypeError(ctx, "DataView: its buffer is detached or too short");
            return -1;
        }
        if (put_u8(o, B_VIEW) < 0 || put_u32(o, (uint32_t)len) < 0)
            return -1;
        return put(o, p + off, (size_t)len);
    }
    case S_ERROR: {
        JSValue name = JS_GetPropertyStr(ctx, v, "name"), msg;
        int rr;
        if (JS_IsException(name))
            return -1;
        msg = JS_GetPropertyStr(ctx, v, "message");
        if (JS_IsException(msg)) {
            JS_FreeValue(ctx, name);
            return -1;
        }
        rr = put_u8(o, B_ERROR);
        if (rr == 0)
            rr = JS_IsString(name) ? put_jsstr(o, name) : put_str(o, "Error", 5);
        if (rr == 0)
            rr = JS_IsString(msg) ? put_jsstr(o, msg) : put_str(o, "", 0);
        JS_FreeValue(ctx, name);
        JS_FreeValue(ctx, msg);
        return rr;
    }
    case S_REGEXP: {
        char flags[9];
        int nf = 0;
        r = call0(ctx, F_RE_SOURCE, v);
        if (JS_IsException(r))
            return -1;
        for (i = 0; i < 8; i++) {
            JSValue b = call0(ctx, F_RE_FLAG0 + i, v);
            if (JS_IsException(b)) {
                JS_FreeValue(ctx, r);
                return -1;
            }
            if (JS_ToBool(ctx, b))
                flags[nf++] = flag_chars[i];
            JS_FreeValue(ctx, b);
        }
        i = put_u8(o, B_REGEXP) < 0 || put_jsstr(o, r) < 0 || put_str(o, flags, (size_t)nf) < 0 ? -1 : 0;
        JS_FreeValue(ctx, r);
        return i;
    }
    }
    /* a typed array */
    {
        size_t off, len, bpe, n;
        uint8_t *p;
        JSValue buf = JS_GetTypedArrayBuffer(ctx, v, &off, &len, &bpe);
        if (JS_IsException(buf))
            return -1;
        p = JS_GetArrayBuffer(ctx, &n, buf);
        JS_FreeValue(ctx, buf);
        if (!p && JS_HasException(ctx))
            return -1;
        if (off + len > n)
            len = 0;
        if (put_u8(o, B_TYPED) < 0 || put_u8(o, (uint8_t)(s - S_TYPED0)) < 0 || put_u32(o, (uint32_t)len) < 0)
            return -1;
        return put(o, p + off, len);
    }
}

static int put_primitive(struct enc *e, JSValueConst v);

/* put_value writes v (consumed): a primitive, a reference, a leaf object,
   or a container's header, whose items the walk writes next. */
static int put_value(struct enc *e, JSValue v)
{
    JSContext *ctx = e->ctx;
    struct out *o = &e->out;
    JSClassID cid;
    int32_t id;
    int s, r = -1;

    o->values++;
    if (!JS_IsObject(v)) {
        if (JS_IsSymbol(v)) {
            if (e->shown) {
                JS_FreeValue(ctx, v);
                return put_u8(o, B_UNDEFINED);
            }
            {
                JSValue t = call0(ctx, F_SYMBOL_TOSTRING, v);
                const char *str = JS_IsException(t) ? NULL : JS_ToCString(ctx, t);
                JS_FreeValue(ctx, t);
                JS_FreeValue(ctx, v);
                if (!str)
                    return -1;
                clone_error(ctx, str, NULL);
                JS_FreeCString(ctx, str);
                return -1;
            }
        }
        r = put_primitive(e, v);
        JS_FreeValue(ctx, v);
        return r;
    }
    cid = JS_GetClassID(v);
    if (cid == class_of[S_PROXY]) {
        JS_FreeValue(ctx, v);
        clone_error(ctx, "a Proxy", NULL);
        return -1;
    }
    if (JS_IsFunction(ctx, v)) {
        JSValue name;
        const char *str;
        if (e->shown) {
            JS_FreeValue(ctx, v);
            return put_u8(o, B_UNDEFINED);
        }
        name = JS_GetPropertyStr(ctx, v, "name");
        JS_FreeValue(ctx, v);
        if (JS_IsException(name))
            return -1;
        str = JS_IsString(name) ? JS_ToCString(ctx, name) : NULL;
        clone_error(ctx, "function ", str && *str ? str : "(anonymous)");
        JS_FreeCString(ctx, str);
        JS_FreeValue(ctx, name);
        return -1;
    }
    if ((id = seen_find(&e->seen, v)) >= 0) {
        JS_FreeValue(ctx, v);
        return put_u8(o, B_REF) < 0 ? -1 : put_u32(o, (uint32_t)id);
    }
    for (s = 0; s < N_SAMPLES; s++)
        if (class_of[s] == cid)
            break;
    switch (s) {
    case S_PROMISE: case S_WEAKMAP: case S_WEAKSET: case S_WEAKREF: case S_FINREG: case S_SYMBOL: {
        static const char *const names[] = {
            [S_PROMISE] = "a Promise", [S_WEAKMAP] = "a WeakMap", [S_WEAKSET] = "a WeakSet",
            [S_WEAKREF] = "a WeakRef", [S_FINREG] = "a FinalizationRegistry", [S_SYMBOL] = "a Symbol",
        };
        JS_FreeValue(ctx, v);
        clone_error(ctx, names[s], NULL);
        return -1;
    }
    }
    if (seen_add(ctx, &e->seen, v) < 0) {
        JS_FreeValue(ctx, v);
        return -1;
    }
    o->objects++;
    switch (s) {
    case S_ARRAY:
        r = push_array(e, v);
        break;
    case S_MAP:
    case S_SET:
        r = push_collection(e, v, s == S_MAP);
        break;
    case S_NUMBER: case S_STRING: case S_BOOLEAN: case S_BIGINT: {
        int f = s == S_NUMBER ? F_NUMBER_VALUEOF : s == S_STRING ? F_STRING_VALUEOF :
            s == S_BOOLEAN ? F_BOOLEAN_VALUEOF : F_BIGINT_VALUEOF;
        JSValue x = call0(ctx, f, v);
        if (!JS_IsException(x) && put_u8(o, B_BOXED) == 0) {
            o->values++;
            r = put_primitive(e, x);
        }
        JS_FreeValue(ctx, x);
        break;
    }
    case S_DATE: case S_BUFFER: case S_VIEW: case S_ERROR: case S_REGEXP:
        r = put_leaf(e, v, s);
        break;
    default:
        if (s >= S_TYPED0 && s < N_SAMPLES) {
            r = put_leaf(e, v, s);
            break;
        }
        /* a plain object, a class instance, or any other object: its own
           enumerable string keys */
        {
            JSPropertyEnum *tab;
            uint32_t n;
            if (JS_GetOwnPropertyNames(ctx, &tab, &n, v, JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY) < 0)
                break;
            if (put_u8(o, B_OBJECT) < 0 || push(e, K_OBJECT, JS_DupValue(ctx, v), n) < 0) {
                JS_FreePropertyEnum(ctx, tab, n);
                break;
            }
            e->st[e->sp - 1].tab = tab;
            e->st[e->sp - 1].tab_len = n;
            r = 0;
        }
    }
    JS_FreeValue(ctx, v);
    return r;
}

static int put_primitive(struct enc *e, JSValueConst v)
{
    struct out *o = &e->out;
    switch (JS_VALUE_GET_NORM_TAG(v)) {
    case JS_TAG_UNDEFINED:
        return put_u8(o, B_UNDEFINED);
    case JS_TAG_NULL:
        return put_u8(o, B_NULL);
    case JS_TAG_BOOL:
        return put_u8(o, JS_VALUE_GET_BOOL(v) ? B_TRUE : B_FALSE);
    case JS_TAG_INT:
        return put_u8(o, B_I32) < 0 ? -1 : put_u32(o, (uint32_t)JS_VALUE_GET_INT(v));
    case JS_TAG_FLOAT64:
        return put_u8(o, B_F64) < 0 ? -1 : put_f64(o, JS_VALUE_GET_FLOAT64(v));
    case JS_TAG_STRING:
    case JS_TAG_STRING_ROPE: /* a concatenation not yet flattened */
        return put_u8(o, B_STRING) < 0 ? -1 : put_jsstr(o, v);
    case JS_TAG_BIG_INT:
    case JS_TAG_SHORT_BIG_INT:
        return put_u8(o, B_BIGINT) < 0 ? -1 : put_jsstr(o, v);
    }
    JS_ThrowTypeError(e->ctx, "airlock: a value of unknown kind");
    return -1;
}

/* atom_index reports whether a is an array index (an integer key below
   2^32 - 1 in canonical form), and which: 1, 0 for a name, -1 on error. */
static int atom_index(JSContext *ctx, JSAtom a, uint32_t *idx)
{
    size_t n, j;
    const char *s = JS_AtomToCStringLen(ctx, &n, a);
    uint64_t x = 0;
    int index;
    if (!s)
        return -1;
    index = n > 0 && n <= 10 && (s[0] != '0' || n == 1);
    for (j = 0; index && j < n; j++) {
        index = s[j] >= '0' && s[j] <= '9';
        x = x * 10 + (uint64_t)(s[j] - '0');
    }
    JS_FreeCString(ctx, s);
    index = index && x < 4294967295u;
    *idx = (uint32_t)x;
    return index;
}

/* step writes the next item of the container on top of the stack. */
static int step(struct enc *e)
{
    JSContext *ctx = e->ctx;
    struct frame *f = &e->st[e->sp - 1];
    JSValue v, k;
    JSAtom a;
    uint32_t i = f->i++;

    switch (f->kind) {
    case K_ARRAY:
        v = JS_GetPropertyUint32(ctx, f->obj, i);
        if (JS_IsException(v))
            return -1;
        f->count++;
        return put_value(e, v);
    case K_OBJECT:
    case K_SPARSE:
        a = f->tab[i].atom;
        v = JS_GetProperty(ctx, f->obj, a);
        if (JS_IsException(v))
            return -1;
        if (f->kind == K_SPARSE) {
            uint32_t idx = 0;
            int index = i < f->dense;
            if (!index && f->dense == 0) {
                index = atom_index(ctx, a, &idx);
                if (index < 0) {
                    JS_FreeValue(ctx, v);
                    return -1;
                }
            } else if (index)
                idx = i;
            if (index) {
                f->count++;
                if (put_u8(&e->out, 0) < 0 || put_u32(&e->out, idx) < 0) {
                    JS_FreeValue(ctx, v);
                    return -1;
                }
                return put_value(e, v);
            }
            if (dropped(e, v)) {
                JS_FreeValue(ctx, v);
                return 0;
            }
            if (put_u8(&e->out, 1) < 0) {
                JS_FreeValue(ctx, v);
                return -1;
            }
        } else if (dropped(e, v)) {
            JS_FreeValue(ctx, v);
            return 0;
        }
        f->count++;
        if (put_atom(&e->out, a) < 0) {
            JS_FreeValue(ctx, v);
            return -1;
        }
        return put_value(e, v);
    case K_MAP:
        f->i++;
        k = JS_GetPropertyUint32(ctx, f->obj, i);
        if (JS_IsException(k))
            return -1;
        if (dropped(e, k)) {
            JS_FreeValue(ctx, k);
            return 0;
        }
        f->count++;
        /* the key, then the value: a key that is a container pushes a
           frame, so the value waits on this one until that is done */
        f->due = 1;
        return put_value(e, k);
    case K_SET:
        v = JS_GetPropertyUint32(ctx, f->obj, i);
        if (JS_IsException(v))
            return -1;
        if (dropped(e, v)) {
            JS_FreeValue(ctx, v);
            return 0;
        }
        f->count++;
        return put_value(e, v);
    }
    return -1;
}

/* encode writes v as the format's header and value. */
static int encode(struct enc *e, JSValueConst v)
{
    if (put_u8(&e->out, 0xB1) < 0 || put_u32(&e->out, 0) < 0 || put_u32(&e->out, 0) < 0)
        return -1;
    if (put_value(e, JS_DupValue(e->ctx, v)) < 0)
        return -1;
    while (e->sp > 0) {
        struct frame *f = &e->st[e->sp - 1];
        if (f->due) {
            /* a Map entry's value, after its key */
            JSValue v = JS_GetPropertyUint32(e->ctx, f->obj, f->i - 1);
            f->due = 0;
            if (JS_IsException(v) || put_value(e, v) < 0)
                return -1;
            continue;
        }
        if (f->i >= f->n) {
            pop(e);
            continue;
        }
        if (step(e) < 0)
            return -1;
    }
    memcpy(e->out.p + 1, &e->out.values, 4);
    memcpy(e->out.p + 5, &e->out.objects, 4);
    return 0;
}

static void free_buffer(JSRuntime *rt, void *opaque, void *ptr)
{
    (void)opaque;
    js_free_rt(rt, ptr);
}

/* js_encode is __airlock_encode(value, shown): the value's encoding, in an
   ArrayBuffer. */
static JSValue js_encode(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct enc e;
    JSValue r;
    (void)this_val;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.out.ctx = ctx;
    e.shown = argc > 1 && JS_ToBool(ctx, argv[1]);
    if (encode(&e, argc > 0 ? argv[0] : JS_UNDEFINED) < 0) {
        while (e.sp > 0)
            pop(&e);
        r = JS_EXCEPTION;
        js_free(ctx, e.out.p);
    } else {
        r = JS_NewArrayBuffer(ctx, e.out.p, e.out.len, free_buffer, NULL, 0);
        if (JS_IsException(r))
            js_free(ctx, e.out.p);
    }
    js_free(ctx, e.st);
    seen_free(ctx, &e.seen);
    return r;
}

/* codec_is_bytes reports whether v is an ArrayBuffer, and its bytes. */
int codec_is_bytes(JSContext *ctx, JSValueConst v, const uint8_t **p, size_t *len)
{
    if (JS_GetClassID(v) != class_of[S_BUFFER] || class_of[S_BUFFER] == 0)
        return 0;
    *p = JS_GetArrayBuffer(ctx, len, v);
    if (!*p)
        *len = 0;
    return 1;
}

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

/* capture takes the samples' classes and the natives, once. */
static int capture(JSContext *ctx)
{
    JSValue list = JS_Eval(ctx, capture_src, sizeof capture_src - 1, "<codec>", JS_EVAL_TYPE_GLOBAL);
    int i;
    if (JS_IsException(list))
        return -1;
    for (i = 0; i < N_SAMPLES + N_FUNCS; i++) {
        JSValue v = JS_GetPropertyUint32(ctx, list, (uint32_t)i);
        if (i < N_SAMPLES) {
            class_of[i] = JS_GetClassID(v);
            JS_FreeValue(ctx, v);
        } else {
            natives[i - N_SAMPLES] = v; /* kept for the life of the VM */
        }
    }
    JS_FreeValue(ctx, list);
    return 0;
}

int codec_hooks(JSContext *ctx, JSValueConst global)
{
    int err = capture(ctx);
    err |= JS_DefinePropertyValueStr(ctx, global, "__airlock_array_names",
                                     JS_NewCFunction(ctx, js_array_names, "arrayNames", 2),
                                     JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0;
    err |= JS_DefinePropertyValueStr(ctx, global, "__airlock_encode",
                                     JS_NewCFunction(ctx, js_encode, "encode", 2),
                                     JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0;
    return err ? -1 : 0;
}
