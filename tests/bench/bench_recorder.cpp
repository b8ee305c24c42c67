// The recorder's cost, measured side by side in one run:
// - a RecordScope begin/end pair with the profiler off and on (targets: <= 2 ns
//   off, <= 20 ns on), next to a pair of steady_clock reads for scale;
// - compiled `encoder` profiled with every option on (shapes, memory, flops)
//   against the same model unprofiled, interleaved (target: <= 5% slower).
#include "benchutil.h"

#include "profiler/profiler.h"
#include "profiler/recorder.h"

#include "core/compiler/compile.h"
#include "core/runtime/blascore.h"
#include "core/zoo/zoo.h"

#include <chrono>
#include <cstdio>
#include <vector>

using namespace fusescope;
using namespace fusescope::profiler;

namespace {

// Takes the batches and drops them: the cost measured is the recording's.
class DiscardSink final : public TraceSink
{
public:
    void beginRun(const RunInfo &) override {}
    void write(EventBatch &&batch) override { events += batch.events.size(); }
    void endRun(const RunSummary &) override {}
    size_t events = 0;
};

constexpr int kPairs = 4'000'000;

double pairNs()
{
    static const StringId name = interner::intern("bench scope");
    const double s = bench::medianSeconds(5, [] {
        for (int i = 0; i < kPairs; ++i) {
            const RecordScope scope(name);
        }
    });
    return s * 1e9 / kPairs;
}

double clockPairNs()
{
    volatile int64_t sink = 0;
    const double s = bench::medianSeconds(5, [&] {
        for (int i = 0; i < kPairs; ++i) {
            sink = sink + std::chrono::steady_clock::now().time_since_epoch().count();
            sink = sink + std::chrono::steady_clock::now().time_since_epoch().count();
        }
    });
    return s * 1e9 / kPairs;
}

// The floor of a recorded pair: two timestamps and four stores into memory
// that is already mapped, nothing else.
double bareTimestampPairNs()
{
    std::vector<uint64_t> buffer(size_t(kPairs) * 4);
    const double s = bench::medianSeconds(5, [&] {
        uint64_t *p = buffer.data();
        for (int i = 0; i < kPairs; ++i, p += 4) {
            p[0] = clock::ticks();
            p[1] = 1;
            p[2] = clock::ticks();
            p[3] = 2;
            asm volatile("" ::: "memory");
        }
    });
    return s * 1e9 / kPairs;
}

void scopeCost()
{
    const double off = pairNs();
    DiscardSink sink;
    Profiler prof({.sink = &sink});
    prof.start();
    const double on = pairNs();
    prof.stop();
    std::printf("record scope pair, off     %6.2f ns  (target <= 2)\n", off);
    std::printf("record scope pair, on      %6.2f ns  (target <= 20; %zu events drained; tsc clock: %s)\n", on,
                sink.events, clock::usesTsc() ? "yes" : "no");
    std::printf("steady_clock pair          %6.2f ns  (for scale)\n", clockPairNs());
    std::printf("two timestamps + 4 stores  %6.2f ns  (the floor of a recorded pair)\n", bareTimestampPairNs());
}

// Rounds alternate plain and profiled medians; the figure is the median of
// the rounds' ratios, so a slow phase of the machine hits both sides of one.
void profiledEncoder()
{
    zoo::Instance inst = zoo::create("encoder", 0);
    compiler::CompiledFunction fn = compiler::compile(inst.model);
    fn(inst.inputs);
    DiscardSink sink;
    constexpr int kRounds = 21;
    std::vector<double> ratios;
    double plainMs = 0;
    for (int round = 0; round < kRounds; ++round) {
        const double plain = bench::medianSeconds(6, [&] { fn(inst.inputs); });
        Profiler prof({.recordShapes = true, .profileMemory = true, .withFlops = true, .sink = &sink});
        prof.start();
        const double profiled = bench::medianSeconds(6, [&] {
            fn(inst.inputs);
            prof.step();
        });
        prof.stop();
        ratios.push_back(profiled / plain);
        plainMs += plain * 1e3 / kRounds;
    }
    std::sort(ratios.begin(), ratios.end());
    std::printf("compiled encoder           %6.3f ms plain (mean); profiled with every option: ratio %.3f "
                "(median of %d rounds, quartiles %.3f-%.3f; target <= 1.05)\n",
                plainMs, ratios[kRounds / 2], kRounds, ratios[kRounds / 4], ratios[3 * kRounds / 4]);
}

} // namespace

int main(int, char **argv)
{
    configureBlas(argv);
    scopeCost();
    profiledEncoder();
    return 0;
}
