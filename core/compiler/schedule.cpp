#include "core/compiler/fusion_rules.h"
#include "core/compiler/tracer.h"
#include "core/ops/registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <queue>
#include <set>
#include <unordered_map>

namespace fusescope::compiler {

const char *kernelKindName(KernelKind kind)
{
    switch (kind) {
    case KernelKind::Pointwise: return "pointwise";
    case KernelKind::Reduction: return "reduction";
    case KernelKind::Gemm: return "gemm";
    case KernelKind::Extern: return "extern";
    }
    return "?";
}

double Schedule::bytesMoved() const
{
    double total = 0;
    for (const Kernel &k : kernels)
        total += k.bytesRead + k.bytesWritten;
    return total;
}

namespace {

std::string kernelName(const Group &g, size_t index)
{
    const char *prefix = g.kind == KernelKind::Extern ? "extern_" : g.kind == KernelKind::Gemm ? "gemm_" : "fused_";
    std::string name = prefix;
    std::set<std::string> used;
    int listed = 0;
    for (const Node *n : g.nodes) {
        const std::string op = identifierFor(n->target);
        if (listed < 4 && used.insert(op).second) {
            name += op + "_";
            ++listed;
        }
    }
    return name + std::to_string(index);
}

void addUnique(std::vector<NodeRef> &list, NodeRef r)
{
    if (std::find(list.begin(), list.end(), r) == list.end())
        list.push_back(r);
}

void fillBuffers(Kernel &k)
{
    const std::set<const Node *> members(k.nodes.begin(), k.nodes.end());
    for (const Node *n : k.nodes) {
        for (const NodeRef &ref : n->inputs()) {
            const NodeRef root = storageRoot(ref);
            if (!members.count(root.node))
                addUnique(k.inputs, root);
        }
        for (size_t i = 0; i < n->outputs.size(); ++i) {
            const bool anchorOut = n == k.anchor;
            bool external = anchorOut;
            for (Node *r : readersOf(const_cast<Node *>(n)))
                external = external || !members.count(r);
            if (external)
                k.outputs.push_back({const_cast<Node *>(n), static_cast<int>(i)});
        }
    }
    for (const NodeRef &r : k.inputs)
        k.bytesRead += static_cast<double>(r.node->meta(r.index).nbytes());
    for (const NodeRef &r : k.outputs)
        k.bytesWritten += static_cast<double>(r.node->meta(r.index).nbytes());
}

Kernel toKernel(const Group &g, size_t index)
{
    Kernel k;
    k.name = kernelName(g, index);
    k.kind = g.kind;
    k.nodes = g.nodes;
    k.anchor = g.anchor;
    k.domain = g.hasDomain ? g.domain : g.anchor->meta().sizes;
    k.reduceDims = g.reduceDims;
    k.reason = g.nodes.size() > 1 ? g.reasonOfMerge : "single op";
    fillBuffers(k);
    return k;
}

// The flops the op registry's cost rules give the kernel's nodes, so the
// profiler can say how fast a fused kernel ran.
double kernelFlops(const Graph &graph, const Kernel &k)
{
    double flops = 0;
    for (const Node *n : k.nodes) {
        const OpDef *op = n->kind == NodeKind::CallFunction ? OpRegistry::instance().find(n->target) : nullptr;
        if (!op)
            continue;
        TensorList outs;
        for (const TensorMeta &m : n->outputs)
            outs.push_back(metaTensor(m));
        flops += op->estimateCost(nodeArgs(graph, *n), outs).flops;
    }
    return flops;
}

} // namespace

std::vector<Kernel> orderKernels(const Graph &graph, const std::vector<Group> &groups)
{
    std::unordered_map<const Node *, size_t> groupOf;
    std::unordered_map<const Node *, int> position;
    int pos = 0;
    for (const Node *n : graph.nodes())
        position[n] = pos++;
    for (size_t g = 0; g < groups.size(); ++g) {
        for (const Node *n : groups[g].nodes)
            groupOf[n] = g;
    }
    std::vector<std::set<size_t>> succ(groups.size());
    std::vector<int> indegree(groups.size(), 0);
    for (size_t g = 0; g < groups.size(); ++g) {
        for (Node *n : groups[g].nodes) {
            for (Node *r : readersOf(n)) {
                auto it = groupOf.find(r);
                if (it != groupOf.end() && it->second != g && succ[g].insert(it->second).second)
                    ++indegree[it->second];
            }
        }
    }
    // Ready groups run in graph order, so kernels follow the program's order where they can.
    using Item = std::pair<int, size_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
    for (size_t g = 0; g < groups.size(); ++g) {
        if (indegree[g] == 0)
            ready.push({position.at(groups[g].nodes.front()), g});
    }
    std::vector<Kernel> kernels;
    while (!ready.empty()) {
        const size_t g = ready.top().second;
        ready.pop();
        kernels.push_back(toKernel(groups[g], kernels.size()));
        kernels.back().flops = kernelFlops(graph, kernels.back());
        for (size_t s : succ[g]) {
            if (--indegree[s] == 0)
                ready.push({position.at(groups[s].nodes.front()), s});
        }
    }
    if (kernels.size() != groups.size())
        throw Error("fuse: the kernel graph has a cycle (a fusion bug)");
    for (const Kernel &k : kernels) {
        for (Node *n : k.nodes)
            n->kernel = k.name;
    }
    return kernels;
}

nlohmann::json scheduleToJson(const Schedule &schedule)
{
    using nlohmann::json;
    auto refs = [](const std::vector<NodeRef> &list) {
        json a = json::array();
        for (const NodeRef &r : list)
            a.push_back(json::array({r.node->id, r.index}));
        return a;
    };
    json kernels = json::array();
    for (const Kernel &k : schedule.kernels) {
        json nodes = json::array();
        for (const Node *n : k.nodes)
            nodes.push_back(n->id);
        kernels.push_back({{"name", k.name}, {"kind", kernelKindName(k.kind)}, {"nodes", nodes},
                           {"domain", k.domain}, {"reduce_dims", k.reduceDims}, {"inputs", refs(k.inputs)},
                           {"outputs", refs(k.outputs)}, {"bytes_read", k.bytesRead},
                           {"bytes_written", k.bytesWritten}, {"reason", k.reason}});
    }
    json decisions = json::array();
    for (const FusionDecision &d : schedule.decisions)
        decisions.push_back({{"producer", d.producer}, {"consumer", d.consumer}, {"fused", d.fused},
                             {"reason", d.reason}, {"bytes_saved", d.bytesSaved}});
    return json{{"kernels", kernels}, {"decisions", decisions}};
}

} // namespace fusescope::compiler
