#include "views/stagegraph.h"

#include "core/compiler/graph_format.h"
#include "core/compiler/graph_json.h"
#include "core/compiler/schedule.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_set>

namespace fusescope {
namespace {

using nlohmann::json;

std::string metaText(const compiler::TensorMeta &m)
{
    std::string s = dtypeName(m.dtype);
    s += '[';
    for (size_t i = 0; i < m.sizes.size(); ++i)
        s += (i ? "," : "") + std::to_string(m.sizes[i]);
    return s + ']';
}

std::string constantArgs(const compiler::Node &node)
{
    std::string text;
    for (const compiler::Arg &arg : node.args()) {
        if (arg.kind != compiler::Arg::Kind::Const)
            continue;
        text += (text.empty() ? "" : ", ") + compiler::formatConstant(arg.constant);
    }
    return text;
}

GraphNode convertNode(const compiler::Node &n)
{
    GraphNode g;
    g.id = n.id;
    g.name = n.name;
    g.kind = compiler::nodeKindName(n.kind);
    g.target = n.target;
    g.module = n.modulePath;
    g.origins = n.origins;
    g.outputs = n.outputs;
    g.kernel = n.kernel;
    g.view = n.kind == compiler::NodeKind::CallFunction && compiler::isAliasView(n);
    g.constArgs = constantArgs(n);
    std::unordered_set<int> seen;
    for (const compiler::NodeRef &r : n.inputs()) {
        if (seen.insert(r.node->id).second)
            g.inputs.push_back(r.node->id);
    }
    for (const compiler::Node *u : n.users())
        g.users.push_back(u->id);
    return g;
}

std::vector<GraphKernel> kernelsFromDetails(const json &details)
{
    std::vector<GraphKernel> kernels;
    for (const json &k : details.value("kernels", json::array())) {
        GraphKernel g;
        g.name = k.at("name").get<std::string>();
        g.kind = k.value("kind", "");
        g.reason = k.value("reason", "");
        g.nodes = k.value("nodes", std::vector<int>{});
        g.bytesRead = k.value("bytes_read", 0.0);
        g.bytesWritten = k.value("bytes_written", 0.0);
        kernels.push_back(std::move(g));
    }
    return kernels;
}

std::vector<GraphDecision> decisionsFromDetails(const json &details)
{
    std::vector<GraphDecision> decisions;
    for (const json &d : details.value("decisions", json::array())) {
        GraphDecision g;
        g.producer = d.value("producer", "");
        g.consumer = d.value("consumer", "");
        g.fused = d.value("fused", false);
        g.reason = d.value("reason", "");
        g.bytesSaved = d.value("bytes_saved", 0.0);
        decisions.push_back(std::move(g));
    }
    return decisions;
}

} // namespace

std::string GraphNode::shapeText() const
{
    std::string text;
    for (const compiler::TensorMeta &m : outputs)
        text += (text.empty() ? "" : ", ") + metaText(m);
    return text;
}

std::string GraphNode::opLabel() const
{
    if (!isOp())
        return target;
    const size_t dot = target.rfind('.');
    return dot == std::string::npos ? target : target.substr(dot + 1);
}

std::string GraphDecision::text() const
{
    if (fused)
        return "fused " + producer + " into " + consumer + ": saves " + std::to_string(int64_t(bytesSaved)) + " bytes";
    return "cannot fuse " + producer + " with " + consumer + ": " + reason;
}

std::shared_ptr<const StageGraph> StageGraph::fromStage(const compiler::CompileStage &stage)
{
    auto graph = std::make_shared<StageGraph>();
    graph->stageName = stage.name;
    try {
        const compiler::Graph g = compiler::graphFromJsonText(stage.graphJson);
        for (const compiler::Node *n : g.nodes())
            graph->nodes.push_back(convertNode(*n));
        if (!stage.detailsJson.empty()) {
            const json details = json::parse(stage.detailsJson);
            graph->kernels = kernelsFromDetails(details);
            graph->decisions = decisionsFromDetails(details);
        }
    } catch (const json::exception &e) {
        throw Error("stage '" + stage.name + "': " + e.what());
    } catch (const Error &e) {
        throw Error("stage '" + stage.name + "': " + e.what());
    }
    graph->buildIndex();
    return graph;
}

void StageGraph::buildIndex()
{
    for (size_t i = 0; i < nodes.size(); ++i) {
        m_indexById[nodes[i].id] = int(i);
        m_indexByName[nodes[i].name] = int(i);
        for (int o : nodes[i].origins)
            ++m_originShare[o];
    }
    for (size_t k = 0; k < kernels.size(); ++k) {
        m_kernelByName[kernels[k].name] = int(k);
        for (int id : kernels[k].nodes) {
            const int i = indexOf(id);
            if (i >= 0 && nodes[size_t(i)].kernel.empty())
                nodes[size_t(i)].kernel = kernels[k].name;
        }
    }
}

const GraphNode *StageGraph::find(int id) const
{
    const int i = indexOf(id);
    return i < 0 ? nullptr : &nodes[size_t(i)];
}

const GraphNode *StageGraph::findByName(const std::string &name) const
{
    const auto it = m_indexByName.find(name);
    return it == m_indexByName.end() ? nullptr : &nodes[size_t(it->second)];
}

int StageGraph::indexOf(int id) const
{
    const auto it = m_indexById.find(id);
    return it == m_indexById.end() ? -1 : it->second;
}

const GraphKernel *StageGraph::kernel(const std::string &name) const
{
    const auto it = m_kernelByName.find(name);
    return it == m_kernelByName.end() ? nullptr : &kernels[size_t(it->second)];
}

int StageGraph::originShare(int origin) const
{
    const auto it = m_originShare.find(origin);
    return it == m_originShare.end() ? 0 : it->second;
}

std::vector<int> StageGraph::nodesWithOrigins(const std::vector<int> &originIds) const
{
    const std::unordered_set<int> wanted(originIds.begin(), originIds.end());
    std::vector<int> found;
    for (const GraphNode &n : nodes) {
        if (std::any_of(n.origins.begin(), n.origins.end(), [&](int o) { return wanted.count(o) > 0; }))
            found.push_back(n.id);
    }
    return found;
}

std::vector<int> StageGraph::originsOf(const std::vector<int> &nodeIds) const
{
    std::vector<int> out;
    for (int id : nodeIds) {
        if (const GraphNode *n = find(id))
            out.insert(out.end(), n->origins.begin(), n->origins.end());
    }
    return out;
}

} // namespace fusescope
