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
// Workers that poll for the next job stop polling and sleep: called before a
// multi-threaded BLAS call, whose threads would otherwise compete with them
// for the cores (on 2 cores a GEMM right after a kernel ran 10% slower).
void restPool();

// While one lives, BLAS runs on the calling thread only: for kernels whose
// parallel chunks each call BLAS (BLAS's own threads would oversubscribe the
// cores). Not nested, and not while another thread relies on BLAS threads.
class SerialBlasScope
{
public:
    SerialBlasScope();
    ~SerialBlasScope();
    SerialBlasScope(const SerialBlasScope &) = delete;
    SerialBlasScope &operator=(const SerialBlasScope &) = delete;
};

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
