/*
 * bulk.c: memcpy, memmove and memset of the module, in chunks with a stop
 * check between them.
 *
 * WebAssembly's memory.copy and memory.fill are single instructions: wazero
 * runs each to its end without a stop check, and a fill or copy over memory
 * nothing has touched yet costs a page fault per 4 KiB (15-45 us each), so
 * one zeroing of a 1 GiB ArrayBuffer, or one copy by slice, set,
 * copyWithin, realloc or a string's concatenation, would run for seconds
 * after Terminate. Every other file is compiled -mno-bulk-memory (build.sh),
 * so that its variable-size copies and fills call these functions (small
 * constant-size ones stay inline loads and stores); this file is compiled
 * with bulk memory, so each chunk is one memory.copy or memory.fill.
 *
 * Between two chunks the guest calls env.tick, which answers stop (the
 * guest then traps, as at a loop header, see stopcheck) or go, and which is
 * also where the Go runtime can preempt the goroutine running the guest.
 * A chunk of BULK_CHUNK bytes is 64 pages: its first touch costs at most a
 * few milliseconds, well inside the 10 ms a stop may take.
 */
#include <stddef.h>
#include <stdint.h>

#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
IMPORT("env", "tick") extern int32_t host_tick(void);

#define BULK_CHUNK ((size_t)256 << 10)
/* A call of at least BULK_CHECKED bytes checks once after its work even
   when it is one chunk: a loop of calls just under BULK_CHUNK (a 256 KiB
   fill, or a new 200 KB buffer kept every iteration, first touch each
   time) would otherwise run 5,000 or 10,000 of them between the
   interpreter's polls. The call into Go costs ~0.1 us, a few percent of a
   32 KiB copy. */
#define BULK_CHECKED ((size_t)32 << 10)

static void check(void)
{
    if (host_tick() != 0)
        __builtin_trap();
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    if (n <= BULK_CHUNK) {
        __builtin_memset(d, c, n);
        if (n >= BULK_CHECKED)
            check();
        return dst;
    }
    while (n > BULK_CHUNK) {
        __builtin_memset(d, c, BULK_CHUNK);
        d += BULK_CHUNK;
        n -= BULK_CHUNK;
        check();
    }
    __builtin_memset(d, c, n);
    return dst;
}

/* move: memmove of n > BULK_CHUNK bytes. A function of its own, called
   by memcpy and memmove: with bulk memory enabled, clang would compile
   memcpy's call of memmove, a known library function, to one unbounded
   memory.copy (build.sh also compiles this file -fno-builtin). */
static void move(unsigned char *d, const unsigned char *s, size_t n)
{
    if (d <= s || d >= s + n) {
        /* forwards (unless the destination overlaps the source's end): a
           chunk's writes end before the source not yet read */
        while (n > BULK_CHUNK) {
            __builtin_memmove(d, s, BULK_CHUNK);
            d += BULK_CHUNK;
            s += BULK_CHUNK;
            n -= BULK_CHUNK;
            check();
        }
        __builtin_memmove(d, s, n);
    } else {
        /* backwards, from the end: the destination overlaps the source from above */
        while (n > BULK_CHUNK) {
            n -= BULK_CHUNK;
            __builtin_memmove(d + n, s + n, BULK_CHUNK);
            check();
        }
        __builtin_memmove(d, s, n);
    }
}

void *memmove(void *dst, const void *src, size_t n)
{
    if (n <= BULK_CHUNK) {
        __builtin_memmove(dst, src, n);
        if (n >= BULK_CHECKED)
            check();
    } else
        move(dst, src, n);
    return dst;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    if (n <= BULK_CHUNK) {
        __builtin_memcpy(dst, src, n);
        if (n >= BULK_CHECKED)
            check();
    } else
        move(dst, src, n);
    return dst;
}
