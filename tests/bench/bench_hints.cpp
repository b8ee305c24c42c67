// The hints' honesty check (issue 9): does compiling the eager `encoder`
// realize the saving rule 2 (unfused-pointwise) estimated for it?
// Per round: the eager model profiled for kSteps steps, rule 2 run on it with
// the compiled model's stages (as in a --compare file), then the compiled
// model profiled for kSteps steps. Per step:
// - estimated: rule 2's savings ÷ steps;
// - realized, same ops without their GEMM: the eager chain ops (linear with
//   its bias, gelu, add) minus their BLAS calls, against the compiled kernels
//   holding the same captured nodes minus theirs (fusion leaves the GEMM
//   itself alone, so this is the part it can change);
// - realized, same ops: the same with the GEMMs in (noisier);
// - whole step: eager step − compiled step (attention and layer norm too).
// Medians over every step of every round; target: estimated within 2× of the
// first realized figure.
#include "benchutil.h"

#include "profiler/hintrules.h"
#include "profiler/profiler.h"
#include "profiler/statistics.h"

#include "core/compiler/compile.h"
#include "core/runtime/blascore.h"
#include "core/zoo/zoo.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>

using namespace fusescope;
using namespace fusescope::profiler;

namespace {

constexpr int kRounds = 7;
constexpr int kSteps = 6;

struct StepFigures {
    std::vector<double> chainNoGemm; // µs per step
    std::vector<double> chain;
    std::vector<double> step;
};

Trace profile(const std::function<void()> &forward, const std::string &mode)
{
    Profiler prof({.recordShapes = true, .withFlops = true, .runName = mode, .model = "encoder", .mode = mode});
    prof.start();
    for (int i = 0; i < kSteps; ++i) {
        forward();
        prof.step();
    }
    prof.stop();
    return std::move(prof.trace());
}

std::set<int> originsOf(const std::string &detail)
{
    std::set<int> ids;
    std::istringstream in(detail);
    for (std::string id; std::getline(in, id, ',');)
        ids.insert(std::atoi(id.c_str()));
    return ids;
}

// Σ duration of `outer` events in `step`, and of the BLAS calls inside them.
struct Sums {
    double totalNs = 0;
    double blasNs = 0;
};

Sums sumInStep(const Trace &trace, const Run &run, const Event &step, const std::function<bool(const Event &)> &outer)
{
    Sums sums;
    std::vector<const Event *> picked;
    for (const Event &e : run.events) {
        if (e.start >= step.start && e.end() <= step.end() && outer(e)) {
            sums.totalNs += double(e.duration);
            picked.push_back(&e);
        }
    }
    for (const Event &e : run.events) {
        if (e.kind != EventKind::Kernel || trace.strings[e.name] != "cblas_sgemm")
            continue;
        for (const Event *p : picked) {
            if (e.track == p->track && e.start >= p->start && e.end() <= p->end())
                sums.blasNs += double(e.duration);
        }
    }
    return sums;
}

std::vector<const Event *> stepsOf(const Run &run)
{
    std::vector<const Event *> steps;
    for (const Event &e : run.events) {
        if (e.kind == EventKind::Step && e.duration > 0)
            steps.push_back(&e);
    }
    return steps;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

void measureRound(zoo::Instance &inst, compiler::CompiledFunction &fn, std::vector<double> &estimates, StepFigures &eager,
           StepFigures &compiled)
{
    Trace eagerTrace = profile([&] { (*inst.model)(inst.inputs); }, "eager");
    const CompileStages stages = fn.stages();
    const Run &er = eagerTrace.runs.front();
    const RunStatistics stats = computeStatistics(eagerTrace, er);
    const HintContext ctx{eagerTrace, er, stats, &stages, "fusescope", nullptr};
    const std::vector<Hint> hints = graphHintRules().front().check(ctx);
    double savingUs = 0;
    std::set<EventId> chainOps;
    std::set<int> chainNodes;
    for (const Hint &h : hints) {
        savingUs += h.savingUs;
        chainOps.insert(h.events.begin(), h.events.end());
        chainNodes.insert(h.nodes.begin(), h.nodes.end());
    }
    estimates.push_back(savingUs / kSteps);
    auto isChainOp = [&](const Event &e) { return chainOps.count(EventId(uint32_t(&e - er.events.data()))) > 0; };
    for (const Event *s : stepsOf(er)) {
        const Sums sums = sumInStep(eagerTrace, er, *s, isChainOp);
        eager.chain.push_back(sums.totalNs / 1000);
        eager.chainNoGemm.push_back((sums.totalNs - sums.blasNs) / 1000);
        eager.step.push_back(double(s->duration) / 1000);
    }
    Trace compiledTrace = profile([&] { fn(inst.inputs); }, "compiled");
    const Run &cr = compiledTrace.runs.front();
    auto holdsChain = [&](const Event &e) {
        if (e.kind != EventKind::Kernel)
            return false;
        for (int id : originsOf(compiledTrace.strings[e.detail])) {
            if (chainNodes.count(id))
                return true;
        }
        return false;
    };
    for (const Event *s : stepsOf(cr)) {
        const Sums sums = sumInStep(compiledTrace, cr, *s, holdsChain);
        compiled.chain.push_back(sums.totalNs / 1000);
        compiled.chainNoGemm.push_back((sums.totalNs - sums.blasNs) / 1000);
        compiled.step.push_back(double(s->duration) / 1000);
    }
}

} // namespace

int main(int, char **argv)
{
    configureBlas(argv);
    zoo::Instance inst = zoo::create("encoder", 0);
    compiler::CompiledFunction fn = compiler::compile(inst.model);
    fn(inst.inputs);
    (*inst.model)(inst.inputs);
    std::vector<double> estimates;
    StepFigures eager;
    StepFigures compiled;
    for (int r = 0; r < kRounds; ++r)
        measureRound(inst, fn, estimates, eager, compiled);
    const double estimated = median(estimates);
    const double realized = median(eager.chainNoGemm) - median(compiled.chainNoGemm);
    const double realizedWithGemm = median(eager.chain) - median(compiled.chain);
    const double wholeStep = median(eager.step) - median(compiled.step);
    std::printf("rule 2 on eager encoder: estimated saving %8.1f µs per step (median of %d rounds)\n", estimated,
                kRounds);
    std::printf("realized, chain ops without GEMM: eager %8.1f µs - compiled %8.1f µs = %8.1f µs; "
                "estimated/realized %.2f (target 0.5-2)\n",
                median(eager.chainNoGemm), median(compiled.chainNoGemm), realized, estimated / realized);
    std::printf("realized, chain ops with GEMM:    eager %8.1f µs - compiled %8.1f µs = %8.1f µs\n", median(eager.chain),
                median(compiled.chain), realizedWithGemm);
    std::printf("whole step:                       eager %8.1f µs - compiled %8.1f µs = %8.1f µs\n", median(eager.step),
                median(compiled.step), wholeStep);
    return 0;
}
