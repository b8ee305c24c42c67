#include "core/runtime/threadpool.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <sched.h>

namespace fusescope {
namespace {

thread_local bool t_inParallel = false;

constexpr int64_t kChunksPerThread = 4;

// How long an idle worker polls for the next job; FUSESCOPE_POOL_SPIN_US
// overrides it (0: sleep at once). Long enough to bridge the dispatch of
// the next eager op (a few microseconds), short enough not to take a core
// from BLAS's threads for long when a GEMM follows.
int spinMicros()
{
    static const int micros = [] {
        const char *env = std::getenv("FUSESCOPE_POOL_SPIN_US");
        return env && *env ? std::max(0, std::atoi(env)) : 50;
    }();
    return micros;
}

int defaultThreads()
{
    if (const char *env = std::getenv("FUSESCOPE_NUM_THREADS")) {
        const int n = std::atoi(env);
        if (n > 0)
            return n;
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

// Fork-join pool. The caller publishes a job that lives on its stack;
// workers and the caller take task indices from the job's counter. A worker
// counts itself busy before it looks at the job pointer, and the caller waits
// for busy == 0 after unpublishing, so no worker touches a finished job.
class Pool
{
public:
    explicit Pool(int threads) { start(threads); }
    ~Pool() { stop(); }

    int size() const { return m_size; }

    void resize(int threads)
    {
        stop();
        start(threads);
    }

    void run(int tasks, const std::function<void(int)> &fn)
    {
        std::lock_guard serial(m_runMutex); // one job at a time from any thread
        m_rest.store(false, std::memory_order_relaxed);
        Job job;
        job.fn = &fn;
        job.tasks = tasks;
        m_job.store(&job);
        m_generation.fetch_add(1);
        m_generation.notify_all();
        work(job);
        for (int done = job.done.load(); done < tasks; done = job.done.load())
            job.done.wait(done);
        m_job.store(nullptr);
        for (int busy = m_busy.load(); busy != 0; busy = m_busy.load())
            m_busy.wait(busy);
        if (job.error)
            std::rethrow_exception(job.error);
    }

private:
    struct Job {
        const std::function<void(int)> *fn = nullptr;
        int tasks = 0;
        std::atomic<int> next{0};
        std::atomic<int> done{0};
        std::mutex errorMutex;
        std::exception_ptr error;
    };

    void start(int threads)
    {
        m_size = std::max(1, threads);
        m_quit.store(false);
        // The generation is read here, not in the worker: a worker that read
        // it only after a later stop() had bumped it would wait forever.
        const uint64_t generation = m_generation.load();
        for (int i = 1; i < m_size; ++i)
            m_workers.emplace_back([this, generation] { loop(generation); });
    }

    void stop()
    {
        m_quit.store(true);
        m_generation.fetch_add(1);
        m_generation.notify_all();
        for (auto &w : m_workers)
            w.join();
        m_workers.clear();
    }

    void loop(uint64_t seen)
    {
        t_inParallel = true;
        for (;;) {
            awaitJob(seen);
            seen = m_generation.load();
            if (m_quit.load())
                return;
            m_busy.fetch_add(1);
            if (Job *job = m_job.load())
                work(*job);
            if (m_busy.fetch_sub(1) == 1)
                m_busy.notify_all();
        }
    }

    // Eager ops come back to back: a worker that went to sleep after one op
    // takes tens of microseconds (a futex wake-up, more in a VM) to join the
    // next, while the caller waits for its share. So it polls for a new job
    // a little while first, yielding so it never starves BLAS's threads or
    // other processes on a small machine.
    void awaitJob(uint64_t seen)
    {
        using Clock = std::chrono::steady_clock;
        const auto until = Clock::now() + std::chrono::microseconds(spinMicros());
        while (m_generation.load() == seen && Clock::now() < until && !m_rest.load(std::memory_order_relaxed))
            sched_yield();
        m_generation.wait(seen);
    }

    static void work(Job &job)
    {
        const bool outer = t_inParallel;
        t_inParallel = true;
        for (int task = job.next.fetch_add(1); task < job.tasks; task = job.next.fetch_add(1)) {
            try {
                (*job.fn)(task);
            } catch (...) {
                std::lock_guard lock(job.errorMutex);
                if (!job.error)
                    job.error = std::current_exception();
            }
            if (job.done.fetch_add(1) + 1 == job.tasks)
                job.done.notify_all();
        }
        t_inParallel = outer;
    }

    int m_size = 1;
    std::vector<std::thread> m_workers;
    std::mutex m_runMutex;
    std::atomic<Job *> m_job{nullptr};
    std::atomic<int> m_busy{0};
    std::atomic<uint64_t> m_generation{0};
    std::atomic<bool> m_quit{false};

public:
    // Polling workers go to sleep now: BLAS's own threads are about to need the cores.
    void rest() { m_rest.store(true, std::memory_order_relaxed); }

private:
    std::atomic<bool> m_rest{false};
};

Pool &pool()
{
    static Pool *p = [] {
        const int n = defaultThreads();
        openblas_set_num_threads(n);
        return new Pool(n); // leaked: kernels may run during static destruction
    }();
    return *p;
}

} // namespace

int numThreads()
{
    return pool().size();
}

void setNumThreads(int n)
{
    n = std::max(1, n);
    openblas_set_num_threads(n);
    pool().resize(n);
}

SerialBlasScope::SerialBlasScope()
{
    numThreads(); // the pool tells BLAS its count first, so the destructor restores the right one
    openblas_set_num_threads(1);
}

SerialBlasScope::~SerialBlasScope()
{
    openblas_set_num_threads(numThreads());
}

void restPool()
{
    pool().rest();
}

bool inParallelRegion()
{
    return t_inParallel;
}

void parallelFor(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)> &fn)
{
    const int64_t n = end - begin;
    if (n <= 0)
        return;
    grain = std::max<int64_t>(1, grain);
    const int threads = t_inParallel ? 1 : numThreads();
    // A few chunks per thread, taken in turn: a thread that starts late or
    // is preempted on a shared machine leaves its remaining chunks to the
    // others instead of holding everyone up.
    const int64_t chunks = threads == 1 ? 1 : std::min<int64_t>(int64_t(threads) * kChunksPerThread, (n + grain - 1) / grain);
    if (chunks <= 1) {
        fn(begin, end);
        return;
    }
    const int64_t step = (n + chunks - 1) / chunks;
    pool().run(static_cast<int>(chunks), [&](int task) {
        const int64_t b = begin + task * step;
        const int64_t e = std::min(end, b + step);
        if (b < e)
            fn(b, e);
    });
}

extern "C" void fusescope_parallel_for(int64_t begin, int64_t end, int64_t grain,
                                       void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx)
{
    parallelFor(begin, end, grain, [&](int64_t b, int64_t e) { fn(ctx, b, e); });
}

} // namespace fusescope
