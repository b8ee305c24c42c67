// Where the time of an eager workload goes: runs a zoo model with an observer
// that times every outermost op and every kernel, and prints the totals per
// op name and per kernel name (ms per forward). It answers "which op should I
// make faster" before anyone guesses.
//
// usage: bench_eager_ops [MODEL] [REPEAT]   (default: resnet18 10)

#include "benchutil.h"

#include "core/ops/registry.h"
#include "core/runtime/blascore.h"
#include "core/runtime/observer.h"
#include "core/zoo/zoo.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace fusescope;

namespace {

using Clock = std::chrono::steady_clock;

struct Total {
    double seconds = 0;
    int64_t calls = 0;
};

// Times outermost ops only (ops called from inside other ops count toward
// their caller) and every kernel scope on the calling thread.
class OpTimer final : public Observer
{
public:
    void opBegin(const OpEvent &) override
    {
        if (m_depth++ == 0)
            m_opStart = Clock::now();
    }
    void opEnd(const OpEvent &e) override
    {
        if (--m_depth == 0)
            add(m_ops[e.op->name()], m_opStart);
    }
    void kernelBegin(const KernelEvent &) override { m_kernelStart.push_back(Clock::now()); }
    void kernelEnd(const KernelEvent &e) override
    {
        add(m_kernels[std::string(e.name)], m_kernelStart.back());
        m_kernelStart.pop_back();
    }

    void print(int forwards) const
    {
        std::printf("%-40s %10s %8s\n", "op", "ms/forward", "calls");
        printMap(m_ops, forwards);
        std::printf("\n%-40s %10s %8s\n", "kernel", "ms/forward", "calls");
        printMap(m_kernels, forwards);
    }

private:
    static void add(Total &t, Clock::time_point start)
    {
        t.seconds += std::chrono::duration<double>(Clock::now() - start).count();
        ++t.calls;
    }
    static void printMap(const std::map<std::string, Total> &m, int forwards)
    {
        for (const auto &[name, t] : m)
            std::printf("%-40s %10.3f %8lld\n", name.c_str(), t.seconds * 1e3 / forwards,
                        static_cast<long long>(t.calls / forwards));
    }

    int m_depth = 0;
    Clock::time_point m_opStart;
    std::vector<Clock::time_point> m_kernelStart;
    std::map<std::string, Total> m_ops, m_kernels;
};

} // namespace

int main(int argc, char **argv)
{
    configureBlas(argv);
    const std::string model = argc > 1 ? argv[1] : "resnet18";
    const int repeat = argc > 2 ? std::atoi(argv[2]) : 10;
    zoo::Instance inst = zoo::create(model);
    const auto forward = [&] { (void)(*inst.model)(inst.inputs); };
    const double plain = bench::medianSeconds(repeat, forward);
    OpTimer timer;
    observers::add(&timer);
    for (int i = 0; i < repeat; ++i)
        forward();
    observers::remove(&timer);
    std::printf("%s: %.2f ms per forward (median of %d, unobserved)\n\n", model.c_str(), plain * 1e3, repeat);
    timer.print(repeat);
    return 0;
}
