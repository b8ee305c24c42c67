// The graph and compiler rules: unfused pointwise chains in eager runs,
// fusions the compiler refused, recompiles and graph breaks. The tensor rules
// (layout, precision, memory) live in hintrules_tensor.cpp.

#include "profiler/hintrules.h"
#include "profiler/hinttimeline.h"

#include "core/compiler/graph_json.h"
#include "core/ops/registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

namespace fusescope::profiler {

namespace hinting {
// Defined in hintrules_tensor.cpp; declared here rather than in a header
// because graphHintRules() is their only caller.
HintRule layoutRule();
HintRule precisionRule();
HintRule memoryRule();

// What shares are measured against, as the device rules do: the steps, else
// the GPU span, else (CPU runs without steps) the whole run.
int64_t graphRulesBaseNs(const HintContext &c)
{
    if (c.stats.steps.totalNs > 0)
        return c.stats.steps.totalNs;
    const DeviceTimeline &timeline = timelineOf(c);
    return timeline.hasGpu() ? timeline.baseNs() : c.run.summary.durationNs;
}
} // namespace hinting

namespace {

using compiler::Graph;
using compiler::Node;
using compiler::NodeRef;
using namespace hinting;

// Rule 2 reports chains together worth this share of the base time, and then
// each chain worth at least kChainShare of it (the five largest).
constexpr double kChainsShare = 0.01;
constexpr double kChainShare = 0.001;
constexpr size_t kMaxChains = 5;
// Rule 3: refusals whose round trip is worth this share, the three largest.
constexpr double kRefusalShare = 0.005;
constexpr size_t kMaxRefusals = 3;
// Dynamo's default cache_size_limit: beyond it a function falls back to eager.
constexpr size_t kRecompileLimit = 8;

const std::string &nameOf(const HintContext &c, const Event &e)
{
    return c.trace.strings[e.name];
}

int64_t baseTime(const HintContext &c)
{
    return graphRulesBaseNs(c);
}

std::string formatBytes(double bytes)
{
    char text[32];
    if (bytes >= 1024.0 * 1024.0)
        std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024.0));
    else
        std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
    return text;
}

std::string formatRate(double bytesPerNs)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GB/s", bytesPerNs);
    return text;
}

bool hasKind(const Node *node, OpKind kind)
{
    if (node->kind != compiler::NodeKind::CallFunction)
        return false;
    const OpDef *def = OpRegistry::instance().find(node->target);
    return def && def->kind == kind;
}

std::string nodeLabel(const Node *node)
{
    return node->name + " (" + node->target + ")";
}

// Each segment's graph of one stage; none when a graph does not parse
// (the statistics already warn about it).
std::vector<Graph> stageGraphs(const CompileStages *stages, const std::string &stage)
{
    std::vector<Graph> graphs;
    if (!stages)
        return graphs;
    for (const compiler::CompileStage &s : *stages) {
        if (s.name != stage)
            continue;
        try {
            graphs.push_back(compiler::graphFromJsonText(s.graphJson));
        } catch (const std::exception &) {
            return {};
        }
    }
    return graphs;
}

// ---------------------------------------------------------------- rule 2

// The memory `ref` reads, seen through views: a reshape, transpose or
// broadcast (expand) moves no data, so its source is what was written.
NodeRef storageOf(NodeRef ref)
{
    while (hasKind(ref.node, OpKind::View)) {
        const std::vector<NodeRef> inputs = ref.node->inputs();
        if (inputs.empty())
            break;
        ref = inputs.front();
    }
    return ref;
}

// A fused kernel drops the write of `node` only when every reader (through
// views) is pointwise: one other reader and the tensor must exist anyway.
bool onlyPointwiseReaders(const Node *node)
{
    for (const Node *user : node->users()) {
        const bool fine = hasKind(user, OpKind::View) ? onlyPointwiseReaders(user) : hasKind(user, OpKind::Pointwise);
        if (!fine)
            return false;
    }
    return !node->users().empty();
}

// Pointwise ops fuse with each other and into GEMM / convolution epilogues;
// a composite (aten.linear) counts as a GEMM when the decompose stage spells
// it with one (`gemms`: such captured node ids).
bool fusableProducer(const Node *node, const std::set<int> &gemms)
{
    return hasKind(node, OpKind::Pointwise) || hasKind(node, OpKind::Matmul) || hasKind(node, OpKind::Convolution)
        || gemms.count(node->id) > 0;
}

// The captured node ids whose decomposition holds a GEMM or convolution.
std::set<int> decomposedGemms(const Graph *decomposed)
{
    std::set<int> ids;
    if (!decomposed)
        return ids;
    for (const Node *node : decomposed->nodes()) {
        if (hasKind(node, OpKind::Matmul) || hasKind(node, OpKind::Convolution))
            ids.insert(node->origins.begin(), node->origins.end());
    }
    return ids;
}

struct Chain {
    std::vector<const Node *> nodes; // graph order
    int intermediates = 0;
    double bytesPerCall = 0; // each intermediate written once and read once
    std::vector<EventId> events;
    int64_t calls = 0;
    double bandwidth = 0; // bytes/ns of the chain's eager pointwise ops
    double savingNs = 0;
};

class UnionFind
{
public:
    int find(int id)
    {
        auto it = m_parent.try_emplace(id, id).first;
        return it->second == id ? id : (it->second = find(it->second));
    }
    void join(int a, int b) { m_parent[find(a)] = find(b); }
    bool contains(int id) const { return m_parent.count(id) != 0; }

private:
    std::map<int, int> m_parent;
};

// Producer → consumer edges whose intermediate only pointwise ops read,
// grouped into connected chains.
std::vector<Chain> pointwiseChains(const Graph &graph, const std::set<int> &gemms)
{
    UnionFind sets;
    std::vector<std::pair<const Node *, int>> intermediates;
    std::set<std::pair<int, int>> seen;
    for (const Node *node : graph.nodes()) {
        if (!hasKind(node, OpKind::Pointwise))
            continue;
        for (NodeRef input : node->inputs()) {
            const NodeRef source = storageOf(input);
            if (!fusableProducer(source.node, gemms) || !onlyPointwiseReaders(source.node))
                continue;
            sets.join(node->id, source.node->id);
            if (seen.insert({source.node->id, source.index}).second)
                intermediates.emplace_back(source.node, source.index);
        }
    }
    std::map<int, Chain> byRoot;
    for (const Node *node : graph.nodes()) {
        if (sets.contains(node->id))
            byRoot[sets.find(node->id)].nodes.push_back(node);
    }
    for (const auto &[producer, index] : intermediates) {
        Chain &chain = byRoot[sets.find(producer->id)];
        chain.bytesPerCall += 2.0 * double(producer->meta(index).nbytes());
        ++chain.intermediates;
    }
    std::vector<Chain> chains;
    for (auto &entry : byRoot)
        chains.push_back(std::move(entry.second));
    return chains;
}

// The run's outermost ops (no op around them), by start, on every CPU thread.
std::vector<EventId> outermostOps(const Run &run)
{
    std::vector<EventId> ops;
    for (uint32_t i = 0; i < run.events.size(); ++i) {
        if (run.events[i].kind == EventKind::Op)
            ops.emplace_back(i);
    }
    std::sort(ops.begin(), ops.end(), [&run](EventId a, EventId b) {
        const Event &x = run.event(a);
        const Event &y = run.event(b);
        return std::tuple(x.track, x.start, -x.duration) < std::tuple(y.track, y.start, -y.duration);
    });
    std::vector<EventId> outer;
    TrackId track;
    int64_t openEnd = 0;
    for (EventId id : ops) {
        const Event &e = run.event(id);
        if (e.track != track || e.start >= openEnd) {
            outer.push_back(id);
            track = e.track;
            openEnd = e.end();
        }
    }
    std::sort(outer.begin(), outer.end(),
              [&run](EventId a, EventId b) { return run.event(a).start < run.event(b).start; });
    return outer;
}

// The eager forward runs the ops capture recorded, in the same order, once
// per step: match them call by call. Ops the graph lacks (a graph break's op,
// a loss outside the model) are skipped. Empty when not one whole pass matched.
std::map<int, std::vector<EventId>> alignWithGraph(const HintContext &c, const std::vector<const Node *> &calls)
{
    std::map<int, std::vector<EventId>> bound;
    if (calls.empty())
        return bound;
    size_t next = 0;
    int passes = 0;
    for (EventId id : outermostOps(c.run)) {
        if (nameOf(c, c.run.event(id)) != calls[next]->target)
            continue;
        bound[calls[next]->id].push_back(id);
        if (++next == calls.size()) {
            next = 0;
            ++passes;
        }
    }
    return passes > 0 ? bound : std::map<int, std::vector<EventId>>{};
}

// Bytes per ns of `events`; 0 when they carry no byte estimates.
double bandwidthOf(const Run &run, const std::vector<EventId> &events)
{
    double bytes = 0;
    double ns = 0;
    for (EventId id : events) {
        bytes += run.event(id).bytes;
        ns += double(run.event(id).duration);
    }
    return bytes > 0 && ns > 0 ? bytes / ns : 0.0;
}

// Measures one chain against the eager events of its nodes, at `bandwidth`.
void measureChain(const std::map<int, std::vector<EventId>> &bound, Chain &chain, double bandwidth)
{
    for (const Node *node : chain.nodes) {
        auto it = bound.find(node->id);
        if (it == bound.end())
            continue;
        chain.events.insert(chain.events.end(), it->second.begin(), it->second.end());
        if (hasKind(node, OpKind::Pointwise))
            chain.calls = std::max<int64_t>(chain.calls, int64_t(it->second.size()));
    }
    chain.bandwidth = bandwidth;
    if (bandwidth > 0)
        chain.savingNs = double(chain.calls) * chain.bytesPerCall / bandwidth;
}

// The memory bandwidth a round trip costs: the best bytes/ns of the run's
// eager pointwise ops, node by node. Not their average: a pointwise op with
// real arithmetic (gelu's erf) is slower than its bytes, and its rate would
// price the round trip too high (the honesty check in docs/performance.md).
double pointwiseBandwidth(const HintContext &c, const std::vector<const Node *> &calls,
                          const std::map<int, std::vector<EventId>> &bound)
{
    double best = 0;
    for (const Node *node : calls) {
        auto it = bound.find(node->id);
        if (it != bound.end() && hasKind(node, OpKind::Pointwise))
            best = std::max(best, bandwidthOf(c.run, it->second));
    }
    return best;
}

std::string chainText(const Chain &chain)
{
    std::string text;
    for (const Node *node : chain.nodes)
        text += (text.empty() ? "" : " → ") + nodeLabel(node);
    return text;
}

const char *kCompileFixPytorch = "torch.compile the model: Inductor fuses the chain into one kernel and keeps the "
                                 "intermediates in registers";
const char *kCompileFixNsys = "fuse the chain into one kernel (torch.compile, or one hand-written kernel) so the "
                              "intermediates stay in registers";
const char *kCompileFixOurs = "compile the model (`fusescope profile --compile`, compiler::compile): the fuse stage "
                              "puts the chain in one kernel";

Hint chainHint(const HintContext &c, const Chain &chain)
{
    Hint hint;
    hint.rule = "unfused-pointwise";
    hint.savingUs = chain.savingNs / 1000.0;
    hint.severity = severityFor(chain.savingNs, baseTime(c));
    hint.message = chainText(chain) + ": eager writes " + std::to_string(chain.intermediates) + " intermediate"
        + (chain.intermediates == 1 ? "" : "s") + " (" + formatBytes(chain.bytesPerCall / 2) + ") to memory and reads "
        + "it back, " + std::to_string(chain.calls) + " calls; " + formatBytes(chain.bytesPerCall * double(chain.calls))
        + " at the " + formatRate(chain.bandwidth) + " the run's pointwise ops reached ≈ " + formatNs(chain.savingNs)
        + " (threshold: chains ≥ 1 % of the step time)";
    hint.fix = inFramework(c.framework, kCompileFixPytorch, kCompileFixNsys, kCompileFixOurs);
    std::vector<std::pair<double, EventId>> weighted;
    for (EventId id : chain.events)
        weighted.emplace_back(double(c.run.event(id).duration), id);
    hint.events = strongest(std::move(weighted));
    for (const Node *node : chain.nodes)
        hint.nodes.push_back(node->id);
    return hint;
}

// Keeps the chains worth reporting, largest first.
std::vector<Hint> chainHints(const HintContext &c, std::vector<Chain> chains)
{
    const double base = double(baseTime(c));
    double total = 0;
    for (const Chain &chain : chains)
        total += chain.savingNs;
    if (base <= 0 || total < kChainsShare * base)
        return {};
    std::sort(chains.begin(), chains.end(), [](const Chain &a, const Chain &b) { return a.savingNs > b.savingNs; });
    std::vector<Hint> hints;
    for (const Chain &chain : chains) {
        if (hints.size() < kMaxChains && chain.savingNs >= kChainShare * base)
            hints.push_back(chainHint(c, chain));
    }
    return hints;
}

// The chains of the captured graph that this eager run executed; nullopt when
// the run does not follow the graph (another model, or no graph at all).
std::optional<std::vector<Hint>> chainsFromGraph(const HintContext &c)
{
    const std::vector<Graph> graphs = stageGraphs(c.stages, "capture");
    std::vector<const Node *> calls;
    for (const Graph &graph : graphs) {
        for (const Node *node : graph.nodes()) {
            if (node->kind == compiler::NodeKind::CallFunction)
                calls.push_back(node);
        }
    }
    const std::map<int, std::vector<EventId>> bound = alignWithGraph(c, calls);
    if (bound.empty())
        return std::nullopt;
    const double bandwidth = pointwiseBandwidth(c, calls, bound);
    const std::vector<Graph> decomposed = stageGraphs(c.stages, "decompose");
    std::vector<Chain> chains;
    for (size_t i = 0; i < graphs.size(); ++i) {
        const std::set<int> gemms = decomposedGemms(i < decomposed.size() ? &decomposed[i] : nullptr);
        for (Chain &chain : pointwiseChains(graphs[i], gemms)) {
            measureChain(bound, chain, bandwidth);
            chains.push_back(std::move(chain));
        }
    }
    return chainHints(c, std::move(chains));
}

// Elementwise by name: PyTorch's ATen loops, Triton's pointwise kernels, or
// our own kernels of pointwise ops.
bool looksElementwise(const std::string &name)
{
    if (containsNoCase(name, "elementwise_kernel") || name.rfind("triton_poi_", 0) == 0)
        return true;
    const OpDef *def = OpRegistry::instance().find(name);
    return def && def->kind == OpKind::Pointwise;
}

// "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, …>(…)" → "AddFunctor<float>".
std::string shortKernelName(const std::string &name)
{
    const size_t open = name.find('<');
    size_t at = open == std::string::npos ? open : name.find("at::native::", open);
    std::string s = name;
    if (containsNoCase(name, "elementwise_kernel") && at != std::string::npos) {
        at += 12;
        int depth = 0;
        size_t end = at;
        for (; end < name.size(); ++end) {
            const char ch = name[end];
            if (ch == '<' || ch == '(')
                ++depth;
            else if ((ch == '>' || ch == ')' || ch == ',') && depth == 0)
                break;
            else if (ch == '>' || ch == ')')
                --depth;
        }
        s = name.substr(at, end - at);
        const std::string anonymous = "(anonymous namespace)::";
        if (s.rfind(anonymous, 0) == 0)
            s = s.substr(anonymous.size());
    }
    return s.size() > 48 ? s.substr(0, 48) + "…" : s;
}

struct Sequence {
    std::vector<std::string> names;
    std::vector<std::vector<EventId>> occurrences;
    double savingNs = 0;
};

// Maximal runs of consecutive elementwise kernels on each track.
std::vector<std::vector<EventId>> elementwiseRuns(const HintContext &c)
{
    std::map<uint16_t, std::vector<EventId>> byTrack;
    for (uint32_t i = 0; i < c.run.events.size(); ++i) {
        if (c.run.events[i].kind == EventKind::Kernel)
            byTrack[c.run.events[i].track.value].emplace_back(i);
    }
    std::vector<std::vector<EventId>> runs;
    for (auto &entry : byTrack) {
        std::vector<EventId> &kernels = entry.second;
        std::stable_sort(kernels.begin(), kernels.end(),
                         [&c](EventId a, EventId b) { return c.run.event(a).start < c.run.event(b).start; });
        std::vector<EventId> current;
        for (EventId id : kernels) {
            if (looksElementwise(nameOf(c, c.run.event(id)))) {
                current.push_back(id);
                continue;
            }
            if (current.size() >= 3)
                runs.push_back(current);
            current.clear();
        }
        if (current.size() >= 3)
            runs.push_back(current);
    }
    return runs;
}

// Without bytes, each memory-bound kernel is taken to move three tensors of
// one size (two reads, one write), so an intermediate's round trip (one write,
// one read) costs 2/3 of the producing kernel's time.
double sequenceSavingNs(const Run &run, const std::vector<EventId> &occurrence)
{
    double ns = 0;
    for (size_t i = 0; i + 1 < occurrence.size(); ++i)
        ns += 2.0 / 3.0 * double(run.event(occurrence[i]).duration);
    return ns;
}

Hint sequenceHint(const HintContext &c, const Sequence &seq)
{
    std::string names;
    for (size_t i = 0; i < std::min<size_t>(seq.names.size(), 4); ++i)
        names += (names.empty() ? "" : " → ") + shortKernelName(seq.names[i]);
    if (seq.names.size() > 4)
        names += " → …";
    Hint hint;
    hint.rule = "unfused-pointwise";
    hint.savingUs = seq.savingNs / 1000.0;
    hint.severity = severityFor(seq.savingNs, baseTime(c));
    hint.message = std::to_string(seq.names.size()) + " elementwise kernels in a row, " + names + ", ran "
        + std::to_string(seq.occurrences.size()) + " times: each writes a tensor the next reads back; fusing "
        + "them saves ≈ " + formatNs(seq.savingNs) + " at their measured rate (threshold: sequences of ≥ 3 seen "
        + "≥ 2 times, together ≥ 1 % of the step time)";
    hint.fix = inFramework(c.framework, kCompileFixPytorch, kCompileFixNsys, kCompileFixOurs);
    std::vector<std::pair<double, EventId>> weighted;
    for (const std::vector<EventId> &occurrence : seq.occurrences) {
        for (EventId id : occurrence)
            weighted.emplace_back(double(c.run.event(id).duration), id);
    }
    hint.events = strongest(std::move(weighted));
    return hint;
}

// No graph: frequent runs of ≥ 3 elementwise kernels stand for the chains.
std::vector<Hint> chainsFromKernels(const HintContext &c)
{
    std::map<std::vector<std::string>, Sequence> byNames;
    for (std::vector<EventId> &run : elementwiseRuns(c)) {
        std::vector<std::string> names;
        for (EventId id : run)
            names.push_back(nameOf(c, c.run.event(id)));
        Sequence &seq = byNames[names];
        seq.names = names;
        seq.savingNs += sequenceSavingNs(c.run, run);
        seq.occurrences.push_back(std::move(run));
    }
    std::vector<Sequence> frequent;
    double total = 0;
    for (auto &entry : byNames) {
        if (entry.second.occurrences.size() >= 2) {
            total += entry.second.savingNs;
            frequent.push_back(std::move(entry.second));
        }
    }
    const double base = double(baseTime(c));
    if (base <= 0 || total < kChainsShare * base)
        return {};
    std::sort(frequent.begin(), frequent.end(), [](const Sequence &a, const Sequence &b) { return a.savingNs > b.savingNs; });
    std::vector<Hint> hints;
    for (const Sequence &seq : frequent) {
        if (hints.size() < kMaxChains && seq.savingNs >= kChainShare * base)
            hints.push_back(sequenceHint(c, seq));
    }
    return hints;
}

// A compiled run's chains are the fuse stage's: fused ones cost nothing,
// refused ones are missed-fusion's findings.
std::vector<Hint> checkUnfusedPointwise(const HintContext &c)
{
    if (c.run.info.mode == "compiled")
        return {};
    if (std::optional<std::vector<Hint>> fromGraph = chainsFromGraph(c))
        return *fromGraph;
    return chainsFromKernels(c);
}

// ---------------------------------------------------------------- rule 3

const KernelStats *measuredKernel(const RunStatistics &stats, const std::string &name)
{
    for (const KernelStats &k : stats.kernels) {
        if (k.name == name && k.time.calls > 0 && k.time.totalNs > 0)
            return &k;
    }
    return nullptr;
}

// One segment's fuse stage: its graph, which kernel holds each node, and
// the decisions.
struct FuseStage {
    Graph graph;
    std::map<int, std::string> kernelOf;
    std::map<std::string, std::string> kindOf; // kernel name -> "pointwise", "gemm" …
    nlohmann::json decisions;
};

std::vector<FuseStage> fuseStages(const CompileStages *stages)
{
    std::vector<FuseStage> out;
    if (!stages)
        return out;
    for (const compiler::CompileStage &s : *stages) {
        if (s.name != "fuse" || s.detailsJson.empty())
            continue;
        try {
            FuseStage stage{compiler::graphFromJsonText(s.graphJson), {}, {}, {}};
            const nlohmann::json details = nlohmann::json::parse(s.detailsJson);
            for (const nlohmann::json &k : details.at("kernels")) {
                stage.kindOf[k.at("name")] = k.value("kind", "");
                for (const nlohmann::json &id : k.at("nodes"))
                    stage.kernelOf[id.get<int>()] = k.at("name").get<std::string>();
            }
            stage.decisions = details.at("decisions");
            out.push_back(std::move(stage));
        } catch (const std::exception &) {
            return {};
        }
    }
    return out;
}

// Bytes per ns of the generated memory-bound kernels (pointwise, reductions)
// as this run measured them; 0 when it ran none. A round trip is then not
// priced at all: priced at the rate of the GEMMs on either side (their bytes
// over compute-bound time, 1.7 GB/s in a compiled MLP, against 15-17 GB/s
// for the memory-bound kernels of a compiled encoder the same hour), it came
// out about ten times what the memory traffic costs. Kernels that move less
// than kRateFromBytes per launch are left out: their time is the launch (the
// pool's wake-up), not the traffic. Compiled resnet18's batch-norm constants
// (4 KiB in 3-4 µs a launch) priced its relu -> max_pool2d round trip at
// 0.9 GB/s, 287 ms saved over ten steps of 100 ms.
constexpr double kRateFromBytes = 1 << 20;
double memoryBoundBandwidth(const HintContext &c, const std::vector<FuseStage> &stages)
{
    double bytes = 0;
    double ns = 0;
    std::set<std::string> counted;
    for (const FuseStage &stage : stages) {
        for (const auto &[name, kind] : stage.kindOf) {
            const KernelStats *k = measuredKernel(c.stats, name);
            if (!k || k->time.bytes < kRateFromBytes * double(k->time.calls))
                continue;
            if ((kind == "pointwise" || kind == "reduction") && counted.insert(name).second) {
                bytes += k->time.bytes;
                ns += double(k->time.totalNs);
            }
        }
    }
    return bytes > 0 && ns > 0 ? bytes / ns : 0.0;
}

struct Refusal {
    std::string text; // "cannot fuse A with B: reason"
    std::string reason;
    const Node *producer = nullptr;
    const Node *consumer = nullptr;
    const KernelStats *producerKernel = nullptr;
    const KernelStats *consumerKernel = nullptr;
    double bytes = 0; // the producer's output, written and read back per launch
    double bandwidth = 0;
    double savingNs = 0;
};

std::optional<Refusal> measureRefusal(const HintContext &c, const FuseStage &stage, const nlohmann::json &decision,
                                      double bandwidth)
{
    if (bandwidth <= 0)
        return std::nullopt;
    Refusal r;
    r.reason = decision.value("reason", "");
    r.producer = stage.graph.findByName(decision.value("producer", ""));
    r.consumer = stage.graph.findByName(decision.value("consumer", ""));
    if (!r.producer || !r.consumer || r.producer->outputs.empty())
        return std::nullopt;
    auto kp = stage.kernelOf.find(r.producer->id);
    auto kc = stage.kernelOf.find(r.consumer->id);
    if (kp == stage.kernelOf.end() || kc == stage.kernelOf.end() || kp->second == kc->second)
        return std::nullopt;
    r.producerKernel = measuredKernel(c.stats, kp->second);
    r.consumerKernel = measuredKernel(c.stats, kc->second);
    if (!r.producerKernel || !r.consumerKernel)
        return std::nullopt;
    r.bandwidth = bandwidth;
    r.bytes = double(r.producer->meta().nbytes());
    r.savingNs = 2.0 * r.bytes * double(r.consumerKernel->time.calls) / r.bandwidth;
    r.text = "cannot fuse " + r.producer->name + " with " + r.consumer->name + ": " + r.reason;
    return r;
}

std::string refusalFix(const std::string &framework, const std::string &reason)
{
    if (reason.find("through a view") != std::string::npos)
        return inFramework(framework,
                           "drop the view between them: produce the tensor in the layout the consumer reads (e.g. "
                           "transpose the weight once instead of the activation)",
                           "drop the layout change between the two kernels so one kernel can do both",
                           "drop the view between them: produce the tensor in the layout the consumer reads (e.g. "
                           "transpose the weight once instead of the activation)");
    if (reason.find("own kernel") != std::string::npos)
        return inFramework(framework,
                           "that op has no generated code: avoid it between the two (a reshape of a non-contiguous "
                           "tensor copies; keep the tensor contiguous or use a view that needs no copy)",
                           "avoid the copy kernel between the two (reshape of a non-contiguous tensor)",
                           "that op has no generated code: avoid it between the two (a reshape of a non-contiguous "
                           "tensor copies; keep the tensor contiguous or use a view that needs no copy)");
    return inFramework(framework,
                       "a limit of the compiler's fusion, not of the model: try mode=\"max-autotune\" (GEMM "
                       "templates with epilogues), or reorder so the pointwise work follows a single GEMM",
                       "fuse the pair by hand into one kernel, or reorder so the pointwise work follows a single GEMM",
                       "a limit of the fuse stage, not of the model: reorder so the pointwise work follows a single "
                       "GEMM, or accept the round trip");
}

Hint refusalHint(const HintContext &c, const Refusal &r)
{
    Hint hint;
    hint.rule = "missed-fusion";
    hint.savingUs = r.savingNs / 1000.0;
    hint.severity = severityFor(r.savingNs, baseTime(c));
    hint.message = r.text + "; " + r.producerKernel->name + " (" + formatNs(double(r.producerKernel->time.totalNs))
        + ") writes " + r.producer->name + "'s " + formatBytes(r.bytes) + " and " + r.consumerKernel->name + " ("
        + formatNs(double(r.consumerKernel->time.totalNs)) + ") reads it back, "
        + std::to_string(r.consumerKernel->time.calls) + " launches: ≈ " + formatNs(r.savingNs) + " at the measured "
        + formatRate(r.bandwidth) + " (threshold: ≥ 0.5 % of the step time)";
    hint.fix = refusalFix(c.framework, r.reason);
    std::vector<std::pair<double, EventId>> weighted;
    for (uint32_t i = 0; i < c.run.events.size(); ++i) {
        const Event &e = c.run.events[i];
        const std::string &name = nameOf(c, e);
        if (e.kind == EventKind::Kernel && (name == r.producerKernel->name || name == r.consumerKernel->name))
            weighted.emplace_back(double(e.duration), EventId(i));
    }
    hint.events = strongest(std::move(weighted));
    std::set<int> nodes(r.producer->origins.begin(), r.producer->origins.end());
    nodes.insert(r.consumer->origins.begin(), r.consumer->origins.end());
    hint.nodes.assign(nodes.begin(), nodes.end());
    return hint;
}

// The refusals, one per producer (its write is paid once, however many
// consumers were refused), largest round trip first.
std::vector<Hint> checkMissedFusion(const HintContext &c)
{
    const std::vector<FuseStage> stages = fuseStages(c.stages);
    const double bandwidth = memoryBoundBandwidth(c, stages);
    std::vector<Refusal> refusals;
    for (const FuseStage &stage : stages) {
        for (const nlohmann::json &decision : stage.decisions) {
            try {
                if (decision.value("fused", true))
                    continue;
                if (std::optional<Refusal> r = measureRefusal(c, stage, decision, bandwidth))
                    refusals.push_back(std::move(*r));
            } catch (const nlohmann::json::exception &) {
                // a decision of another shape (a damaged file): not one to weigh
            }
        }
    }
    std::stable_sort(refusals.begin(), refusals.end(),
                     [](const Refusal &a, const Refusal &b) { return a.savingNs > b.savingNs; });
    const double base = double(baseTime(c));
    std::set<const Node *> producers;
    std::vector<Hint> hints;
    for (const Refusal &r : refusals) {
        if (hints.size() < kMaxRefusals && r.savingNs >= kRefusalShare * base && producers.insert(r.producer).second)
            hints.push_back(refusalHint(c, r));
    }
    return hints;
}

// ---------------------------------------------------------------- rule 11

std::vector<EventId> instantsNamed(const Run &run, const Trace &trace, const char *word)
{
    std::vector<EventId> out;
    for (uint32_t i = 0; i < run.events.size(); ++i) {
        const Event &e = run.events[i];
        if (e.kind == EventKind::Instant && containsNoCase(trace.strings[e.name], word))
            out.emplace_back(i);
    }
    return out;
}

// "a (×2); b" from the details of `events`, in first-seen order.
std::string reasonsOf(const HintContext &c, const std::vector<EventId> &events)
{
    std::vector<std::pair<std::string, int>> counts;
    for (EventId id : events) {
        const std::string &detail = c.trace.strings[c.run.event(id).detail];
        auto it = std::find_if(counts.begin(), counts.end(), [&detail](const auto &p) { return p.first == detail; });
        if (it == counts.end())
            counts.emplace_back(detail, 1);
        else
            ++it->second;
    }
    std::string text;
    for (const auto &[reason, count] : counts) {
        text += (text.empty() ? "" : "; ") + (reason.empty() ? std::string("no reason recorded") : reason);
        if (count > 1)
            text += " (×" + std::to_string(count) + ")";
    }
    return text;
}

// The capture graph's placeholders that recompile reasons name ("input 0: …").
std::vector<int> guardedInputs(const HintContext &c, const std::vector<EventId> &recompiles)
{
    const std::vector<Graph> graphs = stageGraphs(c.stages, "capture");
    if (graphs.empty())
        return {};
    const std::vector<Node *> inputs = graphs.front().placeholders();
    std::set<int> ids;
    for (EventId id : recompiles) {
        const std::string &detail = c.trace.strings[c.run.event(id).detail];
        size_t index = 0;
        if (std::sscanf(detail.c_str(), "input %zu", &index) == 1 && index < inputs.size())
            ids.insert(inputs[index]->id);
    }
    return {ids.begin(), ids.end()};
}

// The compile time spent from the first recompile on.
double recompileTimeNs(const Run &run, const std::vector<EventId> &recompiles)
{
    int64_t first = run.event(recompiles.front()).start;
    for (EventId id : recompiles)
        first = std::min(first, run.event(id).start);
    double ns = 0;
    for (const Event &e : run.events) {
        if (e.kind == EventKind::CompileStage && e.start >= first)
            ns += double(e.duration);
    }
    return ns;
}

Hint recompileHint(const HintContext &c, const std::vector<EventId> &recompiles)
{
    Hint hint;
    hint.rule = "recompiles";
    hint.savingUs = recompileTimeNs(c.run, recompiles) / 1000.0;
    hint.severity = recompiles.size() >= kRecompileLimit ? HintSeverity::Critical : HintSeverity::Warning;
    hint.message = std::to_string(recompiles.size()) + " recompile" + (recompiles.size() == 1 ? "" : "s") + ": "
        + reasonsOf(c, recompiles) + "; compiling again took " + formatNs(hint.savingUs * 1000.0)
        + " (threshold: any recompile; critical from 8, Dynamo's cache limit)";
    hint.fix = inFramework(c.framework,
                           "mark the changing dimension dynamic (torch._dynamo.mark_dynamic(x, dim), or "
                           "torch.compile(dynamic=True)), or pad inputs to a few fixed shapes",
                           "keep input shapes fixed between steps (pad the batch), or compile with dynamic shapes",
                           "feed one shape (pad the batch to a fixed size): every new shape, stride or dtype compiles "
                           "another variant");
    hint.events = recompiles;
    hint.nodes = guardedInputs(c, recompiles);
    return hint;
}

int segmentCount(const CompileStages *stages)
{
    int segments = 0;
    if (stages) {
        for (const compiler::CompileStage &s : *stages)
            segments = std::max(segments, s.segment + 1);
    }
    return segments;
}

// Graph breaks cost the fusion across the break and a return to eager; that
// cost has no measurement of its own, so no saving is claimed.
Hint graphBreakHint(const HintContext &c, const std::vector<EventId> &breaks, int count)
{
    Hint hint;
    hint.rule = "recompiles";
    hint.severity = HintSeverity::Warning;
    const std::string reasons = breaks.empty() ? std::string("the compile stages hold ") + std::to_string(count + 1)
            + " graphs" : reasonsOf(c, breaks);
    hint.message = std::to_string(count) + " graph break" + (count == 1 ? "" : "s") + ": " + reasons
        + "; nothing fuses across a break (threshold: any graph break)";
    hint.fix = inFramework(c.framework,
                           "avoid the break: keep .item(), .nonzero() and data-dependent Python control flow out of "
                           "forward (torch._dynamo.explain lists each break)",
                           "keep data-dependent host synchronisation (.item(), nonzero) out of the compiled region",
                           "keep data-dependent ops (aten.nonzero …) out of the compiled function, or move them to "
                           "its end");
    hint.events = breaks;
    return hint;
}

std::vector<Hint> checkRecompiles(const HintContext &c)
{
    std::vector<Hint> hints;
    const std::vector<EventId> recompiles = instantsNamed(c.run, c.trace, "recompile");
    if (!recompiles.empty())
        hints.push_back(recompileHint(c, recompiles));
    const std::vector<EventId> breaks = instantsNamed(c.run, c.trace, "graph break");
    const int count = std::max(int(breaks.size()), segmentCount(c.stages) - 1);
    if (count > 0 && c.run.info.mode != "eager")
        hints.push_back(graphBreakHint(c, breaks, count));
    return hints;
}

} // namespace

std::vector<HintRule> graphHintRules()
{
    return {
        {"unfused-pointwise", "Unfused pointwise chain",
         "eager runs: producer → consumer chains of pointwise ops (also GEMM/conv → pointwise epilogues, through "
         "views) whose intermediates only pointwise ops read, from the captured graph when the file has one, else "
         "runs of ≥ 3 elementwise kernels seen ≥ 2 times; fires when the chains together save ≥ 1 % of the step "
         "time, lists each chain ≥ 0.1 % (five at most). Saving: 2 × intermediate bytes × calls ÷ the best "
         "bytes/ns the run's eager pointwise ops reached (kernel runs without bytes: 2/3 of each producing kernel's time)",
         checkUnfusedPointwise},
        {"missed-fusion", "Missed fusion",
         "compiled runs: the fuse stage's refusals between two measured kernels, one per producer, the three "
         "largest ≥ 0.5 % of the step time. Saving: 2 × the producer's output bytes × the consumer kernel's "
         "launches ÷ the measured bytes/ns of the run's generated pointwise and reduction kernels",
         checkMissedFusion},
        hinting::layoutRule(),
        hinting::precisionRule(),
        hinting::memoryRule(),
        {"recompiles", "Recompiles and graph breaks",
         "any recompile (critical from 8, Dynamo's cache_size_limit) or graph break (more than one compiled "
         "segment). Saving: the compile time recorded from the first recompile on; graph breaks claim none",
         checkRecompiles},
    };
}

} // namespace fusescope::profiler
