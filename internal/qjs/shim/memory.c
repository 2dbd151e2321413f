/*
 * memory.c: QuickJS's heap, limited and accounted in the control block, the
 * collector's thresholds, the heap readied for a snapshot and for a run, and
 * the stops QuickJS's interrupt handler checks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include "shim.h"

struct ctl qjs_ctl;

EXPORT(qjs_malloc) void *qjs_malloc(uint32_t size) { return malloc(size); }
EXPORT(qjs_free) void qjs_free(void *p) { free(p); }

/* ---- the heap ---- */

#define MALLOC_OVERHEAD 8

static void refuse(void)
{
    qjs_ctl.oom = 1;
    qjs_ctl.stop = 1;
}

static void *heap_malloc(JSMallocState *s, size_t size)
{
    void *p;
    if (qjs_ctl.heap_limit && s->malloc_size + size > qjs_ctl.heap_limit) {
        refuse();
        return NULL;
    }
    p = malloc(size);
    if (!p) {
        refuse();
        return NULL;
    }
    s->malloc_count++;
    s->malloc_size += malloc_usable_size(p) + MALLOC_OVERHEAD;
    qjs_ctl.heap_used = (uint32_t)s->malloc_size;
    if (qjs_ctl.heap_used > qjs_ctl.heap_peak)
        qjs_ctl.heap_peak = qjs_ctl.heap_used;
    return p;
}

static void heap_free(JSMallocState *s, void *p)
{
    if (!p)
        return;
    s->malloc_count--;
    s->malloc_size -= malloc_usable_size(p) + MALLOC_OVERHEAD;
    qjs_ctl.heap_used = (uint32_t)s->malloc_size;
    free(p);
}

static void *heap_realloc(JSMallocState *s, void *p, size_t size)
{
    size_t old;
    if (!p)
        return size ? heap_malloc(s, size) : NULL;
    old = malloc_usable_size(p);
    if (size == 0) {
        heap_free(s, p);
        return NULL;
    }
    if (qjs_ctl.heap_limit && s->malloc_size + size > qjs_ctl.heap_limit + old) {
        refuse();
        return NULL;
    }
    p = realloc(p, size);
    if (!p) {
        refuse();
        return NULL;
    }
    s->malloc_size += malloc_usable_size(p) - old;
    qjs_ctl.heap_used = (uint32_t)s->malloc_size;
    if (qjs_ctl.heap_used > qjs_ctl.heap_peak)
        qjs_ctl.heap_peak = qjs_ctl.heap_used;
    return p;
}

EXPORT(qjs_set_heap_limit) void qjs_set_heap_limit(uint32_t limit) { qjs_ctl.heap_limit = limit; }

static size_t heap_usable_size(const void *p) { return malloc_usable_size((void *)p); }

const JSMallocFunctions heap_funcs = {
    heap_malloc, heap_free, heap_realloc, heap_usable_size,
};

/* GC_GROWTH: how much the heap may grow, as a multiple of what a
   collection left, before the next one (QuickJS's own rule is 1.5). */
#define GC_GROWTH 3

/* js_gc_next_threshold (patch 0013) sets the next collection at GC_GROWTH
   times the heap a collection left, but never more than halfway from there
   to the heap limit, and never less than QuickJS's 1.5 times. A collection
   only frees cycles (reference counts free the rest) and scans the whole
   heap: a program that allocates much paid ~3 scans of its final heap at
   1.5x and pays ~1.5 at 3x (RATIONALE.md, "Fewer collections while the
   heap grows"). Halfway to the limit keeps a collection ahead of it. */
size_t js_gc_next_threshold(size_t heap)
{
    uint64_t h = heap, next = h * GC_GROWTH, lim = qjs_ctl.heap_limit;
    uint64_t halfway = h + (lim > h ? (lim - h) / 2 : 0);
    if (lim && next > halfway)
        next = halfway;
    if (next < h + h / 2)
        next = h + h / 2;
    return next > SIZE_MAX ? SIZE_MAX : (size_t)next;
}

/* ---- stops ---- */

int interrupt_handler(JSRuntime *rt, void *opaque)
{
    (void)rt;
    (void)opaque;
    return qjs_ctl.stop != 0 || qjs_ctl.soft != 0 || host_tick() != 0;
}

/* ---- collections and snapshots ---- */

/* qjs_gc runs the cycle collector and sets the next collection at 1.5x the
   heap left, as QuickJS does after a collection it triggers itself. A
   snapshot taken after it starts every copy with that threshold: taken
   before, each copy's first allocation ran a full collection (~1 ms). */
EXPORT(qjs_gc) void qjs_gc(JSContext *ctx)
{
    JSRuntime *rt = JS_GetRuntime(ctx);
    JS_RunGC(rt);
    JS_SetGCThreshold(rt, (size_t)qjs_ctl.heap_used + qjs_ctl.heap_used / 2);
}

/* qjs_prepare_snapshot readies the heap to be captured, so that what a
   copy allocates lands together in the headroom instead of on the
   image's scattered holes, a written page each (RATIONALE.md, "What a
   run writes of the image"). Flag 1: the image's small-block arenas are
   taken off QuickJS's lists (JS_PrepareSnapshot, patch 0009). Flag 2:
   every free chunk of malloc's below top (the headroom, just freed: the
   top chunk) is taken for good, so that a copy's new arenas and large
   blocks come from the top, one after another, and carving them touches
   no free chunk of the image. It returns the bytes so taken. */
EXPORT(qjs_prepare_snapshot) uint32_t qjs_prepare_snapshot(JSContext *ctx, int32_t flags, uintptr_t top)
{
    uint32_t taken = 0, size;
    if (flags & 1)
        JS_PrepareSnapshot(JS_GetRuntime(ctx));
    if (!(flags & 2))
        return 0;
    for (size = 1u << 20; size >= 8; size /= 2) {
        for (;;) {
            void *p = malloc(size);
            if (!p)
                break;
            if ((uintptr_t)p >= top) {
                free(p);
                break;
            }
            taken += size;
        }
    }
    return taken;
}

/* qjs_prepare_run readies a sandbox for a run before the run arrives:
   it takes a block of each small size and keeps it until the sandbox is
   rewound, so that the allocator's arenas the run allocates from exist
   already (a run otherwise makes a dozen, its first allocation of each
   size). */
static void *prepared_blocks[64];

EXPORT(qjs_prepare_run) void qjs_prepare_run(JSContext *ctx)
{
    size_t i;
    for (i = 1; i < sizeof(prepared_blocks) / sizeof(prepared_blocks[0]); i++) {
        if (prepared_blocks[i])
            continue;
        if (!(prepared_blocks[i] = js_malloc(ctx, 8 * i))) {
            JS_FreeValue(ctx, JS_GetException(ctx)); /* out of memory: the run will say */
            return;
        }
    }
}
