// See include/AllocationCounting.h.

#include "AllocationCounting.h"

#ifndef __has_feature
#define __has_feature(feature) 0
#endif

#if defined(__linux__) && defined(__GLIBC__) && !__has_feature(address_sanitizer) \
    && !__has_feature(thread_sanitizer) && !__has_feature(memory_sanitizer)

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

// glibc's allocator under its own names, exported by libc.so.6 for exactly this use.
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static atomic_int counting;
static atomic_uint_fast64_t allocations;

static inline void count_one(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    }
}

int mediacore_allocation_counting_available(void) { return 1; }

void mediacore_allocation_counting_enable(int on) {
    atomic_store_explicit(&counting, on ? 1 : 0, memory_order_relaxed);
}

uint64_t mediacore_allocation_count(void) {
    return (uint64_t)atomic_load_explicit(&allocations, memory_order_relaxed);
}

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_one();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // POSIX: the alignment is a power of two and a multiple of sizeof(void *), or EINVAL.
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
        return EINVAL;
    }
    count_one();
    void *memory = __libc_memalign(alignment, size);
    if (memory == NULL) { return ENOMEM; }
    *result = memory;
    return 0;
}

void *valloc(size_t size) {
    count_one();
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    count_one();
    return __libc_pvalloc(size);
}

#else

int mediacore_allocation_counting_available(void) { return 0; }

void mediacore_allocation_counting_enable(int on) { (void)on; }

uint64_t mediacore_allocation_count(void) { return 0; }

#endif
