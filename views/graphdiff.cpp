#include "views/graphdiff.h"

namespace fusescope {
namespace {

std::string listText(const Shape &values)
{
    std::string s = "[";
    for (size_t i = 0; i < values.size(); ++i)
        s += (i ? "," : "") + std::to_string(values[i]);
    return s + ']';
}

std::string idsText(const std::vector<int> &ids, const StageGraph &graph)
{
    std::string s = "(";
    for (size_t i = 0; i < ids.size(); ++i) {
        const GraphNode *n = graph.find(ids[i]);
        s += (i ? ", " : "") + (n ? n->name : "#" + std::to_string(ids[i]));
    }
    return s + ')';
}

// Strides only matter when the shapes agree; a new shape already says enough.
void outputReasons(const GraphNode &b, const GraphNode &a, std::vector<std::string> &reasons)
{
    const std::string before = b.shapeText(), after = a.shapeText();
    if (before != after) {
        reasons.push_back("shape " + before + " -> " + after);
        return;
    }
    for (size_t i = 0; i < a.outputs.size(); ++i) {
        if (a.outputs[i].strides != b.outputs[i].strides)
            reasons.push_back("strides " + listText(b.outputs[i].strides) + " -> " + listText(a.outputs[i].strides));
    }
}

std::string kernelReason(const std::string &before, const std::string &after)
{
    if (before.empty())
        return "now in kernel " + after;
    if (after.empty())
        return "left kernel " + before;
    return "kernel " + before + " -> " + after;
}

// Why one node kept by a pass differs; empty when it does not.
std::vector<std::string> nodeChangeReasons(const GraphNode &b, const GraphNode &a, const StageGraph &before,
                                           const StageGraph &after)
{
    std::vector<std::string> reasons;
    if (a.kind != b.kind)
        reasons.push_back("kind " + b.kind + " -> " + a.kind);
    if (a.target != b.target)
        reasons.push_back("target " + b.target + " -> " + a.target);
    outputReasons(b, a, reasons);
    if (a.inputs != b.inputs)
        reasons.push_back("inputs " + idsText(b.inputs, before) + " -> " + idsText(a.inputs, after));
    if (a.constArgs != b.constArgs)
        reasons.push_back("arguments '" + b.constArgs + "' -> '" + a.constArgs + "'");
    if (a.kernel != b.kernel)
        reasons.push_back(kernelReason(b.kernel, a.kernel));
    return reasons;
}

} // namespace

std::string NodeChange::reason() const
{
    std::string text;
    for (const std::string &r : reasons)
        text += (text.empty() ? "" : "; ") + r;
    return text;
}

std::string GraphDiff::summary() const
{
    return "+" + std::to_string(added.size()) + " \xe2\x88\x92" + std::to_string(removed.size()) + " ~"
        + std::to_string(changed.size());
}

const NodeChange *GraphDiff::change(int id) const
{
    for (const NodeChange &c : changed) {
        if (c.id == id)
            return &c;
    }
    return nullptr;
}

GraphDiff diffGraphs(const StageGraph &before, const StageGraph &after)
{
    GraphDiff diff;
    for (const GraphNode &a : after.nodes) {
        const GraphNode *b = before.find(a.id);
        if (!b) {
            diff.added.push_back(a.id);
            continue;
        }
        std::vector<std::string> reasons = nodeChangeReasons(*b, a, before, after);
        if (!reasons.empty())
            diff.changed.push_back({a.id, a.name, std::move(reasons)});
    }
    for (const GraphNode &b : before.nodes) {
        if (!after.find(b.id))
            diff.removed.push_back(b.id);
    }
    return diff;
}

} // namespace fusescope
