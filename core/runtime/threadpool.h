#pragma once

#include <cstdint>
#include <functional>

namespace fusescope {

// The core's one thread pool. Kernels, generated code and BLAS share it:
// BLAS is told to use the same number of threads and is only called outside
// parallel regions, so the two never oversubscribe the cores.
int numThreads();
// Changes the pool size (and BLAS's thread count). Not while work is running.
void setNumThreads(int n);
bool inParallelRegion();

// Runs fn(chunkBegin, chunkEnd) over [begin, end) split into chunks of at
// least `grain` elements, on the pool; blocks until all chunks are done.
// Nested calls run serially on the calling thread. The first exception thrown
// by a chunk is rethrown here.
void parallelFor(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)> &fn);

// Plain function-pointer form for generated code (no C++ ABI across the
// dlopen boundary): fn(ctx, chunkBegin, chunkEnd).
extern "C" void fusescope_parallel_for(int64_t begin, int64_t end, int64_t grain,
                                       void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx);

} // namespace fusescope
