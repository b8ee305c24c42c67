#include "views/graphlayout.h"

#include "core/tensor/tensor.h"
#include "views/graphvizlayout.h"
#include "views/layeredlayout.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace fusescope {
namespace {

std::string withSeparators(size_t n)
{
    const std::string digits = std::to_string(n);
    std::string text;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            text += ',';
        text += digits[i];
    }
    return text;
}

[[noreturn]] void invalid(const std::string &what)
{
    throw Error("graph layout: " + what);
}

void validateNodes(const LayoutRequest &request)
{
    const int clusters = static_cast<int>(request.clusters.size());
    for (size_t v = 0; v < request.nodes.size(); ++v) {
        const LayoutNode &node = request.nodes[v];
        if (!std::isfinite(node.width) || !std::isfinite(node.height) || node.width < 0 || node.height < 0)
            invalid("node " + std::to_string(v) + " has a negative or non-finite size");
        if (node.cluster < -1 || node.cluster >= clusters)
            invalid("node " + std::to_string(v) + " is in cluster " + std::to_string(node.cluster) + ", but there are "
                    + std::to_string(clusters) + " clusters");
    }
}

void validate(const LayoutRequest &request)
{
    if (request.nodes.size() > size_t(std::numeric_limits<int>::max() / 2))
        invalid(withSeparators(request.nodes.size()) + " nodes are too many");
    validateNodes(request);
    const int nodes = static_cast<int>(request.nodes.size());
    for (size_t e = 0; e < request.edges.size(); ++e) {
        const LayoutEdge edge = request.edges[e];
        if (edge.from < 0 || edge.from >= nodes || edge.to < 0 || edge.to >= nodes)
            invalid("edge " + std::to_string(e) + " joins nodes " + std::to_string(edge.from) + " and "
                    + std::to_string(edge.to) + ", but there are " + std::to_string(nodes) + " nodes");
    }
    for (size_t c = 0; c < request.clusters.size(); ++c)
        if (request.clusters[c].parent < -1 || request.clusters[c].parent >= static_cast<int>(c))
            invalid("cluster " + std::to_string(c) + " has parent " + std::to_string(request.clusters[c].parent)
                    + ", which does not come before it");
}

// Empty when Graphviz should run, else why not.
std::string reasonToSkipGraphviz(const LayoutRequest &request)
{
    if (request.engine != LayoutEngine::Auto || request.nodes.size() <= size_t(autoGraphvizNodeLimit))
        return {};
    return withSeparators(request.nodes.size()) + " nodes: above the Graphviz limit of "
        + withSeparators(autoGraphvizNodeLimit);
}

// Both engines hand back their own origin; the view gets bounds from (0, 0).
void moveToOrigin(LayoutResult &result, const LayoutRequest &request)
{
    LayoutExtent extent;
    for (size_t v = 0; v < result.centers.size(); ++v)
        extent.add(result.centers[v], request.nodes[v].width, request.nodes[v].height);
    for (const LayoutRect &rect : result.clusterRects)
        if (rect.width > 0 || rect.height > 0)
            extent.add(rect);
    for (const auto &path : result.edgePaths)
        for (const LayoutPoint &p : path)
            extent.add(p, 0, 0);
    const LayoutRect bounds = extent.rect();
    auto move = [&](LayoutPoint &p) { p = {p.x - bounds.x, p.y - bounds.y}; };
    std::for_each(result.centers.begin(), result.centers.end(), move);
    for (auto &path : result.edgePaths)
        std::for_each(path.begin(), path.end(), move);
    for (LayoutRect &rect : result.clusterRects)
        if (rect.width > 0 || rect.height > 0)
            rect.x -= bounds.x, rect.y -= bounds.y;
    result.bounds = {0, 0, bounds.width, bounds.height};
}

LayoutResult layoutWithFallback(const LayoutRequest &request, const std::atomic<bool> *cancel)
{
    std::string note = request.engine == LayoutEngine::Layered ? "" : reasonToSkipGraphviz(request);
    if (request.engine != LayoutEngine::Layered && note.empty()) {
        LayoutResult result = graphvizLayout(request, cancel);
        if (result.cancelled || !result.engine.empty())
            return result;
        note = result.note;
    }
    LayoutResult result = layeredLayout(request, cancel);
    result.note = note;
    return result;
}

} // namespace

LayoutResult computeLayout(const LayoutRequest &request, const std::atomic<bool> *cancel)
{
    const auto start = std::chrono::steady_clock::now();
    validate(request);
    LayoutResult result = layoutWithFallback(request, cancel);
    if (result.cancelled) {
        result = LayoutResult();
        result.cancelled = true;
    } else {
        moveToOrigin(result, request);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

} // namespace fusescope
