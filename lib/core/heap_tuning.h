// glibc heap settings for a training process.
#pragma once

namespace nss {

/// Keeps freed tensor memory in the heap for the next step instead of
/// returning it to the kernel. A training step allocates and frees the same
/// multi-megabyte buffers (gathered units, activations, gradients) every
/// micro-step; glibc's defaults serve each from a fresh mmap, so every step
/// page-faults its whole working set again (about 10% of a CPU step, measured
/// in docs/performance.md). After this call blocks up to 32 MiB (glibc's
/// largest mmap threshold) come from the heap and the heap is not trimmed, so
/// resident memory stays at the step's peak, the way a caching allocator's
/// does. Leaves glibc alone when the user set any MALLOC_*_ tunable in the
/// environment. Returns whether it changed the settings.
bool keep_freed_memory_for_reuse();

}  // namespace nss
