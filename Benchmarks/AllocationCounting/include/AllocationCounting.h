// Counts the process's heap allocations, for the benchmarks' allocations per MB.
//
// The benchmarks executable defines the C allocation functions (`malloc`, `calloc`, `realloc`,
// `posix_memalign`, `aligned_alloc`, `memalign`, `valloc`, `pvalloc`) itself. An executable's
// definitions come first in the dynamic linker's lookup, so every allocation of the process
// (the Swift runtime's, Foundation's, libcurl's, MediaCore's) comes here. Each one is counted
// while counting is on and then handed to glibc's own allocator through its `__libc_` entry
// points, so memory is still freed by glibc's `free`, which is not replaced.
//
// Only on Linux with glibc, and not under a sanitizer (which replaces the allocator itself).
// Elsewhere `mediacore_allocation_counting_available` returns 0 and nothing is counted.

#ifndef MEDIACORE_ALLOCATION_COUNTING_H
#define MEDIACORE_ALLOCATION_COUNTING_H

#include <stdint.h>

/// 1 where this build counts allocations, 0 where it cannot.
int mediacore_allocation_counting_available(void);

/// Turns counting on (nonzero) or off (0). Off costs each allocation one relaxed load.
void mediacore_allocation_counting_enable(int on);

/// The allocations counted while counting was on, since the process started.
uint64_t mediacore_allocation_count(void);

#endif
