#include "profiler/compare.h"

#include "core/compiler/graph_json.h"
#include "core/runtime/machine.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

namespace fusescope::profiler {

namespace {

// Rows keyed by a string, filled from both sides.
class RowTable
{
public:
    DeltaRow &at(const std::string &key, const std::string &name, const std::string &detail)
    {
        auto [it, added] = m_index.try_emplace(key, m_rows.size());
        if (added)
            m_rows.push_back(DeltaRow{name, detail});
        return m_rows[it->second];
    }
    bool empty() const { return m_rows.empty(); }
    std::vector<DeltaRow> take()
    {
        std::stable_sort(m_rows.begin(), m_rows.end(), [](const DeltaRow &a, const DeltaRow &b) {
            return std::abs(a.deltaNs()) > std::abs(b.deltaNs());
        });
        return std::move(m_rows);
    }

private:
    std::vector<DeltaRow> m_rows;
    std::unordered_map<std::string, size_t> m_index;
};

void addTo(DeltaRow &row, bool base, double calls, double ns)
{
    (base ? row.inBase : row.inOther) = true;
    (base ? row.baseCalls : row.otherCalls) += calls;
    (base ? row.baseNs : row.otherNs) += ns;
}

// The median step: a compiled run's first step also compiles, and the mean
// would charge that to every step.
double typicalStepNs(const CompareSide &side)
{
    std::vector<double> steps;
    for (const Event &e : side.run->events) {
        if (e.kind == EventKind::Step)
            steps.push_back(double(e.duration));
    }
    if (!steps.empty())
        return medianOf(std::move(steps));
    if (side.run->summary.durationNs > 0)
        return double(side.run->summary.durationNs);
    int64_t end = 0;
    for (const Event &e : side.run->events)
        end = std::max(end, e.end());
    return double(end);
}

std::string deviceName(int32_t device)
{
    return device < 0 ? "CPU" : "GPU " + std::to_string(device);
}

// --- eager ops ↔ captured nodes ------------------------------------------------------

// The outermost ops of each step, in start order; one group when the run has no steps.
std::vector<std::vector<uint32_t>> outermostOpsPerStep(const Run &run)
{
    std::vector<uint32_t> ops;
    std::vector<const Event *> steps;
    for (uint32_t i = 0; i < run.events.size(); ++i) {
        const Event &e = run.events[i];
        if (e.kind == EventKind::Op)
            ops.push_back(i);
        else if (e.kind == EventKind::Step)
            steps.push_back(&e);
    }
    const auto &ev = run.events;
    std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
        return std::tie(ev[a].track, ev[a].start, ev[a].depth) < std::tie(ev[b].track, ev[b].start, ev[b].depth);
    });
    // An op is outermost when no earlier op of its track is still running.
    std::vector<uint32_t> outer;
    int64_t openUntil = -1;
    TrackId openTrack;
    for (uint32_t i : ops) {
        if (ev[i].track != openTrack || ev[i].start >= openUntil) {
            outer.push_back(i);
            openTrack = ev[i].track;
            openUntil = ev[i].end();
        }
    }
    std::sort(outer.begin(), outer.end(), [&](uint32_t a, uint32_t b) { return ev[a].start < ev[b].start; });
    std::sort(steps.begin(), steps.end(), [](const Event *a, const Event *b) { return a->start < b->start; });
    if (steps.empty())
        return {outer};
    std::vector<std::vector<uint32_t>> groups(steps.size());
    for (uint32_t i : outer) {
        auto it = std::upper_bound(steps.begin(), steps.end(), ev[i].start,
                                   [](int64_t t, const Event *s) { return t < s->start; });
        if (it != steps.begin() && ev[i].start < (*std::prev(it))->end())
            groups[size_t(std::distance(steps.begin(), it) - 1)].push_back(i);
    }
    return groups;
}

bool replaysGraph(const Trace &trace, const Run &run, const std::vector<uint32_t> &ops,
                  const std::vector<CapturedCall> &calls)
{
    if (ops.size() != calls.size())
        return false;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (trace.strings[run.events[ops[i]].name] != calls[i].target)
            return false;
    }
    return true;
}

// Adds the eager side's time per captured node when every step's ops replay
// the graph's calls; otherwise adds nothing and says why, since nodes timed in
// only some steps would not compare with a compiled side timed in all.
bool addEagerNodes(RowTable &rows, const CompareSide &eager, bool isBase, const std::vector<CapturedCall> &calls,
                   double scale, std::vector<std::string> &notes)
{
    std::vector<std::vector<uint32_t>> steps = outermostOpsPerStep(*eager.run);
    std::erase_if(steps, [](const std::vector<uint32_t> &ops) { return ops.empty(); });
    const auto replayed = std::count_if(steps.begin(), steps.end(), [&](const std::vector<uint32_t> &ops) {
        return replaysGraph(*eager.trace, *eager.run, ops, calls);
    });
    const std::string counted = std::to_string(replayed) + " of " + std::to_string(steps.size()) +
                                (steps.size() == 1 ? " step" : " steps");
    if (steps.empty() || size_t(replayed) != steps.size()) {
        notes.push_back(eager.label + ": the ops of " + counted + " follow the captured graph's " +
                        std::to_string(calls.size()) + " calls, so graph nodes are not compared");
        return false;
    }
    for (const std::vector<uint32_t> &ops : steps) {
        for (size_t i = 0; i < ops.size(); ++i) {
            DeltaRow &row = rows.at(std::to_string(calls[i].id), calls[i].name, calls[i].target);
            row.nodeId = calls[i].id;
            addTo(row, isBase, scale, double(eager.run->events[ops[i]].duration) * scale);
        }
    }
    notes.push_back(eager.label + ": ops matched to captured nodes by their position, in each of its " + counted);
    return true;
}

void addCompiledNodes(RowTable &rows, const CompareSide &side, bool isBase, const std::vector<CapturedCall> &calls,
                      double scale)
{
    // Every captured call is present on a compiled side, even with no kernel
    // of its own: a view that became index arithmetic took no time there.
    std::unordered_map<int, const CapturedCall *> byId;
    for (const CapturedCall &c : calls) {
        byId.emplace(c.id, &c);
        DeltaRow &row = rows.at(std::to_string(c.id), c.name, c.target);
        row.nodeId = c.id;
        addTo(row, isBase, 0, 0);
    }
    for (const NodeStats &n : side.stats->nodes) {
        const auto it = byId.find(n.id);
        DeltaRow &row = rows.at(std::to_string(n.id), n.name, it != byId.end() ? it->second->target : "");
        row.nodeId = n.id;
        addTo(row, isBase, double(n.kernels) * scale, n.timeNs * scale);
    }
}

// Both sides compiled: one captured graph when every node id of one side
// names the same node in the other's capture.
bool sameCapture(const std::vector<CapturedCall> &a, const std::vector<CapturedCall> &b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].id != b[i].id || a[i].target != b[i].target)
            return false;
    }
    return true;
}

void compareNodeRows(RunComparison &out, RowTable &rows, const CompareSide &base, const CompareSide &other,
                     double baseScale, double otherScale)
{
    const std::vector<CapturedCall> baseCalls = capturedCalls(*base.run), otherCalls = capturedCalls(*other.run);
    const bool baseCompiled = !base.stats->nodes.empty(), otherCompiled = !other.stats->nodes.empty();
    if (baseCompiled && otherCompiled) {
        if (!sameCapture(baseCalls, otherCalls)) {
            out.notes.push_back("the two runs compiled different graphs, so graph nodes are not compared");
            return;
        }
        addCompiledNodes(rows, base, true, baseCalls, baseScale);
        addCompiledNodes(rows, other, false, otherCalls, otherScale);
    } else if (otherCompiled) {
        if (addEagerNodes(rows, base, true, otherCalls, baseScale, out.notes))
            addCompiledNodes(rows, other, false, otherCalls, otherScale);
    } else if (baseCompiled) {
        if (addEagerNodes(rows, other, false, baseCalls, otherScale, out.notes))
            addCompiledNodes(rows, base, true, baseCalls, baseScale);
    }
}

void compareNodes(RunComparison &out, RowTable &rows, const CompareSide &base, const CompareSide &other,
                  double baseScale, double otherScale)
{
    compareNodeRows(out, rows, base, other, baseScale, otherScale);
    if (!rows.empty())
        out.notes.push_back("a fused kernel's time is split evenly among the captured nodes it computes");
}

// --- ops and kernels -----------------------------------------------------------------

void addOps(RowTable &rows, const std::vector<RangeStats> &ops, bool isBase, double scale)
{
    for (const RangeStats &op : ops)
        addTo(rows.at(op.name, op.name, ""), isBase, double(op.time.calls) * scale, double(op.time.totalNs) * scale);
}

double addKernels(RowTable &rows, const std::vector<KernelStats> &kernels, bool isBase, double scale)
{
    double selfNs = 0;
    for (const KernelStats &k : kernels) {
        const std::string device = deviceName(k.device);
        addTo(rows.at(k.name + '\n' + device, k.name, device), isBase, double(k.time.calls) * scale,
              double(k.time.totalNs) * scale);
        selfNs += double(k.selfNs) * scale;
    }
    return selfNs;
}

} // namespace

std::vector<CapturedCall> capturedCalls(const Run &run)
{
    std::vector<CapturedCall> calls;
    for (const compiler::CompileStage &stage : run.stages) {
        if (stage.name != "capture")
            continue;
        try {
            const compiler::Graph graph = compiler::graphFromJsonText(stage.graphJson);
            for (const compiler::Node *node : graph.nodes()) {
                if (node->kind == compiler::NodeKind::CallFunction)
                    calls.push_back({node->id, node->name, node->target});
            }
        } catch (const Error &) {
            return {}; // the statistics already warn about an unreadable capture graph
        }
    }
    return calls;
}

RunComparison compareRuns(const CompareSide &base, const CompareSide &other)
{
    RunComparison out;
    out.baseLabel = base.label;
    out.otherLabel = other.label;
    out.baseSteps = base.stats->steps.calls;
    out.otherSteps = other.stats->steps.calls;
    out.perStep = out.baseSteps > 0 && out.otherSteps > 0 && out.baseSteps != out.otherSteps;
    const double baseScale = out.perStep ? 1.0 / double(out.baseSteps) : 1.0;
    const double otherScale = out.perStep ? 1.0 / double(out.otherSteps) : 1.0;
    if (out.perStep)
        out.notes.push_back("times and calls are per step: " + base.label + " has " + std::to_string(out.baseSteps) +
                            " steps, " + other.label + " has " + std::to_string(out.otherSteps));
    out.baseStepNs = typicalStepNs(base);
    out.otherStepNs = typicalStepNs(other);
    out.speedup = out.otherStepNs > 0 ? out.baseStepNs / out.otherStepNs : 0.0;

    RowTable ops, kernels, nodes;
    addOps(ops, base.stats->ops, true, baseScale);
    addOps(ops, other.stats->ops, false, otherScale);
    out.baseKernelNs = addKernels(kernels, base.stats->kernels, true, baseScale);
    out.otherKernelNs = addKernels(kernels, other.stats->kernels, false, otherScale);
    compareNodes(out, nodes, base, other, baseScale, otherScale);
    out.ops = ops.take();
    out.kernels = kernels.take();
    out.nodes = nodes.take();
    return out;
}

} // namespace fusescope::profiler
