/*
 * codec.c: the value codec's sandbox side, both ways.
 *
 * Values going from the sandbox to the host (results, host function
 * arguments, console arguments, reports) are encoded here, in C, by walking
 * them with QuickJS's API, into the binary format below (codec_encode); no
 * JavaScript runs but the program's own getters. The host reads the bytes
 * from linear memory (a slot of kind TAG_BYTES: hostcall.c, failure.c,
 * console.c) and decodes them (the Go half of the codec).
 *
 * Values from the host that are not plain JSON come in the same format
 * (with B_FUNC for host functions, made by hostcall.c's host_fn_new),
 * base64 in the wire text, and are built here (codec_decode).
 * structuredClone is the decoder applied to the encoder's output, defined
 * with the realm (codec_init). codec_kind names what an object is, by its
 * class, for the texts that describe a value which cannot cross.
 *
 * The format (little-endian):
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
#include "shim.h"

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
    /* for the decoder */
    F_OBJECT, F_BIGINT, F_DATE, F_REGEXP, F_DATAVIEW, F_MAP, F_MAP_SET, F_SET, F_SET_ADD,
    F_ERROR0, /* Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError */
    N_FUNCS = F_ERROR0 + 7,
};
static const char *const error_names[7] = {
    "Error", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError",
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
    "Map.prototype.forEach, Set.prototype.forEach,\n"
    "Object, BigInt, Date, RegExp, DataView, Map, Map.prototype.set, Set, Set.prototype.add,\n"
    "Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError]; })()";
static const char flag_chars[] = "dgimsuvy";

/* The prototypes codec_kind walks to, captured with the samples: those of
   objects, arrays and functions, and those of the built-ins whose
   instances hold state that does not cross, named as their constructors. */
static JSValue proto_object, proto_array, proto_function;
static JSValue builtin_protos[N_SAMPLES];
static const char *const builtin_names[N_SAMPLES] = {
    [S_PROMISE] = "Promise", [S_WEAKMAP] = "WeakMap", [S_WEAKSET] = "WeakSet", [S_WEAKREF] = "WeakRef",
    [S_FINREG] = "FinalizationRegistry", [S_REGEXP] = "RegExp", [S_VIEW] = "DataView", [S_BOOLEAN] = "Boolean",
    [S_NUMBER] = "Number", [S_STRING] = "String", [S_SYMBOL] = "Symbol", [S_BIGINT] = "BigInt",
};

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

/* put_cstr writes s (a C string of QuickJS's, NULL on an exception) and
   frees it. */
static int put_cstr(struct out *o, const char *s, size_t n)
{
    int r;
    if (!s)
        return -1;
    r = put_str(o, s, n);
    JS_FreeCString(o->ctx, s);
    return r;
}

/* put_jsstr writes a string value (or a value converted by ToString). */
static int put_jsstr(struct out *o, JSValueConst v)
{
    size_t n = 0;
    const char *s = JS_ToCStringLen(o->ctx, &n, v);
    return put_cstr(o, s, n);
}

static int put_atom(struct out *o, JSAtom a)
{
    size_t n = 0;
    const char *s = JS_AtomToCStringLen(o->ctx, &n, a);
    return put_cstr(o, s, n);
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
    int mode;  /* ENC_* (shim.h) */
    int shown;   /* mode == ENC_SHOWN or ENC_STEP */
    int lenient; /* mode == ENC_STEP */
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

/* ---- where a value that cannot cross was: its path ----
 *
 * A value that cannot cross fails the encode with a DataCloneError whose
 * message says what it is and where it was, in one form: the root
 * ("result", or "argument N" for a host function's argument), then for
 * each level ".name" (a key that is an ASCII identifier), ["odd key"] (any
 * other key, JSON-quoted), [index] (an array's element), <Map key N> and
 * <Map value N> (the Nth entry of a Map), <Set member N>. The path is read
 * from the walk's stack when the encode fails, so that a value that
 * crosses pays nothing for it; a key's text is cut to PATH_KEY_TEXT bytes
 * and the whole path to PATH_TEXT, its head and its tail kept around an
 * ellipsis, so that a value nested thousands of levels deep, or a key of
 * a megabyte, gives a message of bounded size. */

#define PATH_TEXT 512
#define PATH_KEY_TEXT 64
#define PATH_PART (PATH_KEY_TEXT + 32) /* one level's text, at most */

static const char ellipsis[] = "\xe2\x80\xa6"; /* U+2026 */

static int ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }

/* cut_utf8 is the length of s[0:n] cut to at most max bytes, at the start
   of a UTF-8 sequence. */
static size_t cut_utf8(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

/* key_part writes the text of key s[0:n] into b (PATH_PART bytes). */
static size_t key_part(const char *s, size_t n, char *b)
{
    size_t i, w = 0;
    int ident = n > 0 && ident_start(s[0]);
    for (i = 1; ident && i < n; i++)
        ident = ident_start(s[i]) || (s[i] >= '0' && s[i] <= '9');
    if (ident) {
        size_t k = cut_utf8(s, n, PATH_KEY_TEXT);
        b[w++] = '.';
        memcpy(b + w, s, k);
        w += k;
        if (k < n) {
            memcpy(b + w, ellipsis, 3);
            w += 3;
        }
        return w;
    }
    b[w++] = '[';
    b[w++] = '"';
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        size_t m;
        if (c == '"' || c == '\\')
            m = (size_t)snprintf(esc, sizeof esc, "\\%c", c);
        else if (c == '\n')
            m = (size_t)snprintf(esc, sizeof esc, "\\n");
        else if (c == '\r')
            m = (size_t)snprintf(esc, sizeof esc, "\\r");
        else if (c == '\t')
            m = (size_t)snprintf(esc, sizeof esc, "\\t");
        else if (c < 0x20)
            m = (size_t)snprintf(esc, sizeof esc, "\\u%04x", c);
        else if (c == 0xED && i + 2 < n && ((unsigned char)s[i + 1] & 0xE0) == 0xA0) {
            /* a lone surrogate (its three bytes of WTF-8): escaped, so
               that the text is UTF-8 */
            unsigned u = 0xD000 | (((unsigned)s[i + 1] & 0x3F) << 6) | ((unsigned)s[i + 2] & 0x3F);
            m = (size_t)snprintf(esc, sizeof esc, "\\u%04x", u);
            if (w - 2 + m > PATH_KEY_TEXT)
                break;
            memcpy(b + w, esc, m);
            w += m;
            i += 2;
            continue;
        } else {
            /* a UTF-8 sequence whole, or the cut before it */
            size_t k = 1;
            while (i + k < n && ((unsigned char)s[i + k] & 0xC0) == 0x80 && k < 4)
                k++;
            if (w - 2 + k > PATH_KEY_TEXT)
                break;
            memcpy(b + w, s + i, k);
            w += k;
            i += k - 1;
            continue;
        }
        if (w - 2 + m > PATH_KEY_TEXT)
            break;
        memcpy(b + w, esc, m);
        w += m;
    }
    if (i < n) {
        memcpy(b + w, ellipsis, 3);
        w += 3;
    }
    b[w++] = '"';
    b[w++] = ']';
    return w;
}

static int atom_index(JSContext *ctx, JSAtom a, uint32_t *idx);

/* path_part writes the text of level l of the walk (the item of frame l
   being written) into b (PATH_PART bytes). */
static size_t path_part(struct enc *e, uint32_t l, char *b)
{
    struct frame *f = &e->st[l];
    uint32_t i = f->i > 0 ? f->i - 1 : 0, idx;
    const char *s;
    size_t n, w;
    if (l == 0 && e->mode == ENC_ARGS)
        return (size_t)snprintf(b, PATH_PART, "argument %u", (unsigned)i + 1);
    switch (f->kind) {
    case K_ARRAY:
        return (size_t)snprintf(b, PATH_PART, "[%u]", (unsigned)i);
    case K_MAP:
        return (size_t)snprintf(b, PATH_PART, "<Map %s %u>", f->due ? "key" : "value",
                                (unsigned)(f->i >= 2 ? (f->i - 2) / 2 : 0));
    case K_SET:
        return (size_t)snprintf(b, PATH_PART, "<Set member %u>", (unsigned)i);
    case K_SPARSE:
        if (i < f->dense)
            return (size_t)snprintf(b, PATH_PART, "[%u]", (unsigned)i);
        if (i < f->tab_len && atom_index(e->ctx, f->tab[i].atom, &idx) == 1)
            return (size_t)snprintf(b, PATH_PART, "[%u]", (unsigned)idx);
        break;
    }
    if (i >= f->tab_len || !(s = JS_AtomToCStringLen(e->ctx, &n, f->tab[i].atom)))
        return (size_t)snprintf(b, PATH_PART, "[?]");
    w = key_part(s, n, b);
    JS_FreeCString(e->ctx, s);
    return w;
}

/* path_text writes the path of the value being written, cut to PATH_TEXT
   bytes, into b (PATH_TEXT + 8 bytes), NUL-terminated. */
static void path_text(struct enc *e, char *b)
{
    char part[PATH_PART];
    const char *root = e->mode == ENC_ARGS ? "" : "result";
    size_t w = strlen(root), total = w, n, half = PATH_TEXT / 2 - 4;
    uint32_t l, head, tail;
    memcpy(b, root, w);
    for (l = 0; l < e->sp && total <= PATH_TEXT; l++)
        total += path_part(e, l, part);
    if (total <= PATH_TEXT) {
        head = tail = e->sp;
    } else {
        /* the head, then the tail that fits in the other half */
        size_t t = 0;
        for (head = 0; head < e->sp; head++) {
            n = path_part(e, head, part);
            if (w + n > half)
                break;
            memcpy(b + w, part, n);
            w += n;
        }
        for (tail = e->sp; tail > head; tail--) {
            n = path_part(e, tail - 1, part);
            if (t + n > half)
                break;
            t += n;
        }
        memcpy(b + w, ellipsis, 3);
        w += 3;
    }
    for (l = head == e->sp ? 0 : tail; l < e->sp; l++) {
        n = path_part(e, l, part);
        memcpy(b + w, part, n);
        w += n;
    }
    b[w] = 0;
}

/* refuse throws the DataCloneError of a value that cannot cross, of kind
   what ("a function"); structuredClone's (ENC_CLONE) is the platform's
   text, clone_what and clone_name ("function f could not be cloned"). */
static int refuse(struct enc *e, const char *what, const char *clone_what, const char *clone_name)
{
    JSContext *ctx = e->ctx;
    char path[PATH_TEXT + 8], msg[PATH_TEXT + 80];
    JSValue err;
    if (e->mode == ENC_CLONE) {
        clone_error(ctx, clone_what, clone_name);
        return -1;
    }
    path_text(e, path);
    snprintf(msg, sizeof msg, "%s: %s cannot leave the sandbox", path, what);
    err = JS_NewError(ctx);
    if (JS_IsException(err))
        return -1;
    JS_DefinePropertyValueStr(ctx, err, "message", JS_NewString(ctx, msg), JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_DefinePropertyValueStr(ctx, err, "name", JS_NewString(ctx, "DataCloneError"), JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    JS_Throw(ctx, err);
    return -1;
}

/* uncrossable reports whether object v is of a kind that cannot cross
   whatever it holds: a Proxy (its traps are not run), a Promise, a
   WeakMap, WeakSet, WeakRef, FinalizationRegistry or Symbol object. */
static int uncrossable(JSValueConst v)
{
    JSClassID cid;
    if (!JS_IsObject(v))
        return 0;
    cid = JS_GetClassID(v);
    return cid == class_of[S_PROXY] || cid == class_of[S_PROMISE] || cid == class_of[S_WEAKMAP] ||
           cid == class_of[S_WEAKSET] || cid == class_of[S_WEAKREF] || cid == class_of[S_FINREG] ||
           cid == class_of[S_SYMBOL];
}

/* dropped: in a value to be shown, a function or symbol is left out; in a
   step's value, whatever cannot cross too */
static int dropped(struct enc *e, JSValueConst v)
{
    return e->shown && (JS_IsSymbol(v) || (JS_IsFunction(e->ctx, v) && !is_proxy(v)) || (e->lenient && uncrossable(v)));
}

static JSValue call0(JSContext *ctx, int f, JSValueConst this_val)
{
    return JS_Call(ctx, natives[f], this_val, 0, NULL);
}


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
            if (e->mode != ENC_CLONE) {
                JS_FreeValue(ctx, v);
                return refuse(e, "a symbol", NULL, NULL);
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
    if (e->lenient && uncrossable(v)) { /* a step's value leaves it out */
        JS_FreeValue(ctx, v);
        return put_u8(o, B_UNDEFINED);
    }
    cid = JS_GetClassID(v);
    if (cid == class_of[S_PROXY]) {
        JS_FreeValue(ctx, v);
        return refuse(e, "a Proxy", "a Proxy", NULL);
    }
    if (JS_IsFunction(ctx, v)) {
        JSValue name;
        const char *str;
        if (e->shown) {
            JS_FreeValue(ctx, v);
            return put_u8(o, B_UNDEFINED);
        }
        if (e->mode != ENC_CLONE) {
            /* no name: reading it may run a getter */
            JS_FreeValue(ctx, v);
            return refuse(e, "a function", NULL, NULL);
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
        return refuse(e, s == S_SYMBOL ? "a Symbol object" : names[s], names[s], NULL);
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

/* codec_encode writes v's encoding to a buffer of QuickJS's heap, *p and
   *len, which the caller frees (js_free); mode (ENC_*, shim.h) says what
   the value is for: to show (its functions and symbols dropped), a run's
   result, a host function's argument list, or structuredClone's. -1 with
   an exception pending. */
int codec_encode(JSContext *ctx, JSValueConst v, int mode, uint8_t **p, size_t *len)
{
    struct enc e;
    int r;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.out.ctx = ctx;
    e.mode = mode;
    e.shown = mode == ENC_SHOWN || mode == ENC_STEP;
    e.lenient = mode == ENC_STEP;
    r = encode(&e, v);
    if (r < 0) {
        while (e.sp > 0)
            pop(&e);
        js_free(ctx, e.out.p);
    } else {
        *p = e.out.p;
        *len = e.out.len;
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

/* ---- the decoder: the same format, from the host ---- */

#define B_FUNC 21 /* u32 id, str name, u8 mode: a host function (host -> sandbox only) */

struct in {
    JSContext *ctx;
    const uint8_t *p;
    size_t len, pos;
};

static int bad(struct in *r)
{
    JS_ThrowTypeError(r->ctx, "airlock: malformed value from the host");
    return -1;
}

static int get_u8(struct in *r, uint8_t *v)
{
    if (r->pos + 1 > r->len)
        return bad(r);
    *v = r->p[r->pos++];
    return 0;
}

static int get_u32(struct in *r, uint32_t *v)
{
    if (r->pos + 4 > r->len)
        return bad(r);
    memcpy(v, r->p + r->pos, 4);
    r->pos += 4;
    return 0;
}

static int get_f64(struct in *r, double *v)
{
    if (r->pos + 8 > r->len)
        return bad(r);
    memcpy(v, r->p + r->pos, 8);
    r->pos += 8;
    return 0;
}

static int get_str(struct in *r, const char **s, uint32_t *n)
{
    if (get_u32(r, n) < 0)
        return -1;
    if (r->len - r->pos < *n)
        return bad(r);
    *s = (const char *)r->p + r->pos;
    r->pos += *n;
    return 0;
}

static JSValue get_jsstr(struct in *r)
{
    const char *s;
    uint32_t n;
    if (get_str(r, &s, &n) < 0)
        return JS_EXCEPTION;
    return JS_NewStringLen(r->ctx, s, n);
}

enum { D_OBJECT, D_ARRAY, D_SPARSE, D_MAP, D_SET };

struct dframe {
    int kind;
    JSValue obj;
    JSValue key; /* D_MAP: the entry's key, read */
    uint32_t n, i;
    int has_key;
};

struct dec {
    JSContext *ctx;
    struct in in;
    JSValue *refs;
    uint32_t nrefs, caprefs;
    struct dframe *st;
    uint32_t sp, cap;
    codec_make_fn *make_fn; /* host_fn_new (hostcall.c), or NULL: none may come */
};

static int add_ref(struct dec *d, JSValueConst v)
{
    if (d->nrefs == d->caprefs) {
        uint32_t cap = d->caprefs ? d->caprefs * 2 : 16;
        JSValue *refs = js_realloc(d->ctx, d->refs, sizeof(*refs) * cap);
        if (!refs)
            return -1;
        d->refs = refs;
        d->caprefs = cap;
    }
    d->refs[d->nrefs++] = JS_DupValue(d->ctx, v);
    return 0;
}

static int dpush(struct dec *d, int kind, JSValueConst obj, uint32_t n)
{
    struct dframe *f;
    if (n > d->in.len - d->in.pos)
        return bad(&d->in); /* each item takes a byte at least */
    if (d->sp >= MAX_DEPTH) {
        JS_ThrowRangeError(d->ctx, "value nested deeper than %d levels", MAX_DEPTH);
        return -1;
    }
    if (d->sp == d->cap) {
        uint32_t cap = d->cap ? d->cap * 2 : 32;
        struct dframe *st = js_realloc(d->ctx, d->st, sizeof(*st) * cap);
        if (!st)
            return -1;
        d->st = st;
        d->cap = cap;
    }
    f = &d->st[d->sp++];
    memset(f, 0, sizeof(*f));
    f->kind = kind;
    f->obj = JS_DupValue(d->ctx, obj);
    f->key = JS_UNDEFINED;
    f->n = n;
    return 0;
}

static void dpop(struct dec *d)
{
    struct dframe *f = &d->st[--d->sp];
    JS_FreeValue(d->ctx, f->obj);
    JS_FreeValue(d->ctx, f->key);
}

static const uint8_t typed_size[12] = { 1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8 };

/* get_value reads one value; a container comes back empty, its frame
   pushed, and is filled by the decode loop. */
static JSValue get_value(struct dec *d)
{
    JSContext *ctx = d->ctx;
    struct in *r = &d->in;
    uint8_t tag;
    uint32_t n, id;
    double f;
    JSValue v = JS_UNDEFINED;

    if (get_u8(r, &tag) < 0)
        return JS_EXCEPTION;
    switch (tag) {
    case B_UNDEFINED: return JS_UNDEFINED;
    case B_NULL: return JS_NULL;
    case B_FALSE: return JS_FALSE;
    case B_TRUE: return JS_TRUE;
    case B_F64:
        if (get_f64(r, &f) < 0)
            return JS_EXCEPTION;
        return JS_NewFloat64(ctx, f);
    case B_I32:
        if (get_u32(r, &n) < 0)
            return JS_EXCEPTION;
        return JS_NewInt32(ctx, (int32_t)n);
    case B_STRING:
        return get_jsstr(r);
    case B_BIGINT: {
        JSValue s = get_jsstr(r);
        if (JS_IsException(s))
            return s;
        v = JS_Call(ctx, natives[F_BIGINT], JS_UNDEFINED, 1, (JSValueConst *)&s);
        JS_FreeValue(ctx, s);
        return v;
    }
    case B_REF:
        if (get_u32(r, &id) < 0)
            return JS_EXCEPTION;
        if (id >= d->nrefs) {
            bad(r);
            return JS_EXCEPTION;
        }
        return JS_DupValue(ctx, d->refs[id]);
    case B_FUNC: {
        uint8_t mode;
        JSValue a[3];
        if (get_u32(r, &id) < 0)
            return JS_EXCEPTION;
        a[1] = get_jsstr(r);
        if (JS_IsException(a[1]) || get_u8(r, &mode) < 0) {
            JS_FreeValue(ctx, a[1]);
            return JS_EXCEPTION;
        }
        if (!d->make_fn) {
            JS_FreeValue(ctx, a[1]);
            bad(r);
            return JS_EXCEPTION;
        }
        return d->make_fn(ctx, id, a[1], mode);
    }
    }
    /* objects: each takes the next id */
    switch (tag) {
    case B_OBJECT:
    case B_ARRAY:
    case B_SET:
    case B_MAP:
        if (get_u32(r, &n) < 0)
            return JS_EXCEPTION;
        v = tag == B_OBJECT ? JS_NewObject(ctx) : tag == B_ARRAY ? JS_NewArray(ctx) :
            JS_CallConstructor(ctx, natives[tag == B_MAP ? F_MAP : F_SET], 0, NULL);
        if (JS_IsException(v))
            return v;
        if (dpush(d, tag == B_OBJECT ? D_OBJECT : tag == B_ARRAY ? D_ARRAY : tag == B_MAP ? D_MAP : D_SET, v, n) < 0)
            goto fail;
        break;
    case B_SPARSE: {
        uint32_t length;
        uint8_t named;
        if (get_u32(r, &length) < 0 || get_u8(r, &named) < 0 || get_u32(r, &n) < 0)
            return JS_EXCEPTION;
        v = JS_NewArray(ctx);
        if (JS_IsException(v))
            return v;
        if (JS_SetPropertyStr(ctx, v, "length", JS_NewUint32(ctx, length)) < 0 || dpush(d, D_SPARSE, v, n) < 0)
            goto fail;
        break;
    }
    case B_DATE: {
        JSValue t;
        if (get_f64(r, &f) < 0)
            return JS_EXCEPTION;
        t = JS_NewFloat64(ctx, f);
        v = JS_CallConstructor(ctx, natives[F_DATE], 1, (JSValueConst *)&t);
        break;
    }
    case B_TYPED: {
        uint8_t kind;
        const char *s;
        JSValue a[3];
        if (get_u8(r, &kind) < 0 || get_str(r, &s, &n) < 0)
            return JS_EXCEPTION;
        if (kind >= 12 || n % typed_size[kind]) {
            bad(r);
            return JS_EXCEPTION;
        }
        a[0] = JS_NewArrayBufferCopy(ctx, (const uint8_t *)s, n);
        if (JS_IsException(a[0]))
            return a[0];
        a[1] = JS_NewInt32(ctx, 0);
        a[2] = JS_NewUint32(ctx, n / typed_size[kind]);
        v = JS_NewTypedArray(ctx, 3, (JSValueConst *)a, (JSTypedArrayEnum)kind);
        JS_FreeValue(ctx, a[0]);
        break;
    }
    case B_BUFFER:
    case B_VIEW: {
        const char *s;
        if (get_str(r, &s, &n) < 0)
            return JS_EXCEPTION;
        v = JS_NewArrayBufferCopy(ctx, (const uint8_t *)s, n);
        if (tag == B_VIEW && !JS_IsException(v)) {
            JSValue b = v;
            v = JS_CallConstructor(ctx, natives[F_DATAVIEW], 1, (JSValueConst *)&b);
            JS_FreeValue(ctx, b);
        }
        break;
    }
    case B_ERROR: {
        const char *name;
        uint32_t nlen;
        int i, c = 0;
        JSValue msg;
        if (get_str(r, &name, &nlen) < 0)
            return JS_EXCEPTION;
        for (i = 0; i < 7; i++)
            if (strlen(error_names[i]) == nlen && memcmp(error_names[i], name, nlen) == 0)
                c = i;
        msg = get_jsstr(r);
        if (JS_IsException(msg))
            return msg;
        v = JS_CallConstructor(ctx, natives[F_ERROR0 + c], 1, (JSValueConst *)&msg);
        JS_FreeValue(ctx, msg);
        /* a name of no built-in error is kept on an Error */
        if (!JS_IsException(v) && c == 0 && !(nlen == 5 && memcmp(name, "Error", 5) == 0) &&
            JS_DefinePropertyValueStr(ctx, v, "name", JS_NewStringLen(ctx, name, nlen),
                                      JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0)
            goto fail;
        break;
    }
    case B_REGEXP: {
        JSValue a[2];
        a[0] = get_jsstr(r);
        if (JS_IsException(a[0]))
            return a[0];
        a[1] = get_jsstr(r);
        if (JS_IsException(a[1])) {
            JS_FreeValue(ctx, a[0]);
            return a[1];
        }
        v = JS_CallConstructor(ctx, natives[F_REGEXP], 2, (JSValueConst *)a);
        JS_FreeValue(ctx, a[0]);
        JS_FreeValue(ctx, a[1]);
        break;
    }
    case B_BOXED: {
        /* its id comes before its primitive's, which takes none */
        uint32_t at = d->nrefs;
        JSValue x;
        if (add_ref(d, JS_UNDEFINED) < 0)
            return JS_EXCEPTION;
        x = get_value(d);
        if (JS_IsException(x))
            return x;
        if (JS_IsObject(x)) {
            JS_FreeValue(ctx, x);
            bad(r);
            return JS_EXCEPTION;
        }
        v = JS_Call(ctx, natives[F_OBJECT], JS_UNDEFINED, 1, (JSValueConst *)&x);
        JS_FreeValue(ctx, x);
        if (JS_IsException(v))
            return v;
        d->refs[at] = JS_DupValue(ctx, v);
        return v;
    }
    default:
        bad(r);
        return JS_EXCEPTION;
    }
    if (JS_IsException(v))
        return v;
    if (add_ref(d, v) < 0)
        goto fail;
    return v;
fail:
    JS_FreeValue(ctx, v);
    return JS_EXCEPTION;
}

/* dstep reads the next item of the container on top of the stack. */
static int dstep(struct dec *d)
{
    JSContext *ctx = d->ctx;
    struct dframe *f = &d->st[d->sp - 1];
    JSValue obj = JS_DupValue(ctx, f->obj), v, r;
    int kind = f->kind, rc = -1;
    uint32_t i = f->i;

    switch (kind) {
    case D_ARRAY:
    case D_SET:
        f->i++;
        v = get_value(d); /* may push: f is not used after */
        if (JS_IsException(v))
            break;
        if (kind == D_ARRAY) {
            rc = JS_DefinePropertyValueUint32(ctx, obj, i, v, JS_PROP_C_W_E) < 0 ? -1 : 0;
        } else {
            r = JS_Call(ctx, natives[F_SET_ADD], obj, 1, (JSValueConst *)&v);
            JS_FreeValue(ctx, v);
            rc = JS_IsException(r) ? -1 : 0;
            JS_FreeValue(ctx, r);
        }
        break;
    case D_OBJECT:
    case D_SPARSE: {
        JSAtom a = JS_ATOM_NULL;
        f->i++;
        if (kind == D_SPARSE) {
            uint8_t k;
            uint32_t idx;
            if (get_u8(&d->in, &k) < 0)
                break;
            if (k == 0) {
                if (get_u32(&d->in, &idx) < 0)
                    break;
                a = JS_NewAtomUInt32(ctx, idx);
            } else if (k != 1) {
                bad(&d->in);
                break;
            }
        }
        if (a == JS_ATOM_NULL) {
            const char *s;
            uint32_t n;
            if (get_str(&d->in, &s, &n) < 0)
                break;
            a = JS_NewAtomLen(ctx, s, n);
            if (a == JS_ATOM_NULL)
                break;
        }
        v = get_value(d);
        if (!JS_IsException(v))
            rc = JS_DefinePropertyValue(ctx, obj, a, v, JS_PROP_C_W_E) < 0 ? -1 : 0;
        JS_FreeAtom(ctx, a);
        break;
    }
    case D_MAP:
        if (!f->has_key) {
            uint32_t at = d->sp - 1; /* get_value may move the stack */
            f->has_key = 1;
            v = get_value(d);
            if (JS_IsException(v))
                break;
            d->st[at].key = v;
            rc = 0;
        } else {
            JSValue a[2];
            f->has_key = 0;
            f->i++;
            a[0] = f->key;
            f->key = JS_UNDEFINED;
            a[1] = get_value(d);
            if (JS_IsException(a[1])) {
                JS_FreeValue(ctx, a[0]);
                break;
            }
            r = JS_Call(ctx, natives[F_MAP_SET], obj, 2, (JSValueConst *)a);
            JS_FreeValue(ctx, a[0]);
            JS_FreeValue(ctx, a[1]);
            rc = JS_IsException(r) ? -1 : 0;
            JS_FreeValue(ctx, r);
        }
        break;
    }
    JS_FreeValue(ctx, obj);
    return rc;
}

/* codec_decode builds the value of the encoding p[0:len]; make_fn(id, name,
   mode) makes the host functions in it. */
JSValue codec_decode(JSContext *ctx, const uint8_t *p, size_t len, codec_make_fn *make_fn)
{
    struct dec d;
    JSValue v;
    uint32_t i;
    memset(&d, 0, sizeof d);
    d.ctx = ctx;
    d.make_fn = make_fn;
    d.in.ctx = ctx;
    d.in.p = p;
    d.in.len = len;
    d.in.pos = 9;
    if (len < 9 || p[0] != 0xB1) {
        bad(&d.in);
        return JS_EXCEPTION;
    }
    v = get_value(&d);
    while (!JS_IsException(v) && d.sp > 0) {
        struct dframe *f = &d.st[d.sp - 1];
        if (f->i >= f->n && !f->has_key) {
            dpop(&d);
            continue;
        }
        if (dstep(&d) < 0) {
            JS_FreeValue(ctx, v);
            v = JS_EXCEPTION;
        }
    }
    if (!JS_IsException(v) && d.in.pos != d.in.len) {
        JS_FreeValue(ctx, v);
        bad(&d.in);
        v = JS_EXCEPTION;
    }
    while (d.sp > 0)
        dpop(&d);
    js_free(ctx, d.st);
    for (i = 0; i < d.nrefs; i++)
        JS_FreeValue(ctx, d.refs[i]);
    js_free(ctx, d.refs);
    return v;
}

/* js_structured_clone is structuredClone(value): the value decoded from its
   encoding. It is a C function with data, which QuickJS calls without a
   frame of its own: a backtrace made under it (a getter it read) shows the
   caller's frames only, as the engine's own code shows none. */
static JSValue js_structured_clone(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv, int magic,
                                   JSValue *data)
{
    uint8_t *p;
    size_t len;
    JSValue v;
    (void)this_val;
    (void)magic;
    (void)data;
    if (codec_encode(ctx, argc > 0 ? argv[0] : JS_UNDEFINED, ENC_CLONE, &p, &len) < 0)
        return JS_EXCEPTION;
    v = codec_decode(ctx, p, len, NULL);
    js_free(ctx, p);
    return v;
}

static int same_object(JSValueConst a, JSValueConst b)
{
    return JS_IsObject(a) && JS_IsObject(b) && JS_VALUE_GET_PTR(a) == JS_VALUE_GET_PTR(b);
}

/* codec_kind names what the object v is, for a text that describes a value
   which cannot cross (a thrown value's, a console argument's): its class,
   then its prototypes, read without running any of a program's code (a
   Proxy is named before any trap). */
const char *codec_kind(JSContext *ctx, JSValueConst v)
{
    static const char *const names[N_SAMPLES] = {
        [S_BUFFER] = "buffer", [S_MAP] = "map", [S_SET] = "set", [S_DATE] = "date", [S_ERROR] = "error",
        [S_REGEXP] = "regexp", [S_VIEW] = "dataview", [S_NUMBER] = "boxed", [S_STRING] = "boxed",
        [S_BOOLEAN] = "boxed", [S_BIGINT] = "boxed", [S_SYMBOL] = "Symbol", [S_PROMISE] = "Promise",
        [S_WEAKMAP] = "WeakMap", [S_WEAKSET] = "WeakSet", [S_WEAKREF] = "WeakRef",
        [S_FINREG] = "FinalizationRegistry",
    };
    JSClassID cid = JS_GetClassID(v);
    const char *kind = "object";
    JSValue p;
    int s;
    if (cid == class_of[S_PROXY])
        return "Proxy";
    if (JS_IsFunction(ctx, v))
        return "function";
    if (cid == class_of[S_ARRAY])
        return "array";
    p = JS_GetPrototype(ctx, v);
    if (JS_IsNull(p) || same_object(p, proto_object)) {
        JS_FreeValue(ctx, p);
        return "object";
    }
    for (s = 0; s < N_SAMPLES; s++) {
        if (class_of[s] == cid && (s >= S_TYPED0 || names[s])) {
            JS_FreeValue(ctx, p);
            return s >= S_TYPED0 ? "typed" : names[s];
        }
    }
    /* an instance of a class: the nearest of the prototypes it inherits */
    while (JS_IsObject(p) && JS_GetClassID(p) != class_of[S_PROXY]) {
        JSValue q;
        if (same_object(p, proto_object) || same_object(p, proto_array) || same_object(p, proto_function)) {
            kind = same_object(p, proto_array) ? "array" : same_object(p, proto_function) ? "function" : "object";
            break;
        }
        for (s = 0; s < N_SAMPLES && !(builtin_names[s] && same_object(p, builtin_protos[s])); s++)
            ;
        if (s < N_SAMPLES) {
            kind = builtin_names[s];
            break;
        }
        q = JS_GetPrototype(ctx, p);
        JS_FreeValue(ctx, p);
        p = q;
    }
    JS_FreeValue(ctx, p);
    return kind;
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
            if (builtin_names[i])
                builtin_protos[i] = JS_GetPrototype(ctx, v);
            JS_FreeValue(ctx, v);
        } else {
            natives[i - N_SAMPLES] = v; /* kept for the life of the VM */
        }
    }
    JS_FreeValue(ctx, list);
    proto_object = JS_GetPrototype(ctx, natives[F_OBJECT] /* a function */);
    proto_function = proto_object;
    proto_object = JS_GetPrototype(ctx, proto_function);
    {
        JSValue a = JS_NewArray(ctx);
        proto_array = JS_GetPrototype(ctx, a);
        JS_FreeValue(ctx, a);
    }
    return 0;
}

/* codec_init captures the samples and natives and defines structuredClone:
   when the realm is made, before any script runs. */
int codec_init(JSContext *ctx, JSValueConst global)
{
    int err = capture(ctx);
    JSValue f = JS_NewCFunctionData(ctx, js_structured_clone, 1, 0, 0, NULL);
    if (JS_IsException(f) ||
        JS_DefinePropertyValueStr(ctx, f, "name", JS_NewString(ctx, "structuredClone"), JS_PROP_CONFIGURABLE) < 0 ||
        JS_DefinePropertyValueStr(ctx, global, "structuredClone", f, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0)
        err = -1;
    return err ? -1 : 0;
}
