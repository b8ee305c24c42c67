#pragma once
// Where the GraphView puts each node, edge and cluster. Qt-free and blocking:
// the view calls computeLayout() from a worker thread and drops stale results.
// Graphviz's dot gives the best drawings but is slow on long-range edges and
// can crash on huge graphs, so it runs in a child process under a time limit
// and the layered layout (layeredlayout.h) stands in when it fails or is slow.

#include <atomic>
#include <string>
#include <vector>

namespace fusescope {

struct LayoutPoint {
    double x = 0, y = 0;
};

struct LayoutRect {
    double x = 0, y = 0, width = 0, height = 0;
};

// Sizes are in pixels (Graphviz points); cluster is an index into
// LayoutRequest::clusters or -1.
struct LayoutNode {
    double width = 0, height = 0;
    int cluster = -1;
};

// Node indices; edges point down (inputs above their users).
struct LayoutEdge {
    int from = 0, to = 0;
};

// Clusters nest through parent; a parent comes before its children.
struct LayoutCluster {
    int parent = -1;
    std::string label;
};

enum class LayoutEngine { Auto, Graphviz, Layered };

struct LayoutRequest {
    std::vector<LayoutNode> nodes;
    std::vector<LayoutEdge> edges;
    std::vector<LayoutCluster> clusters;
    LayoutEngine engine = LayoutEngine::Auto;
    double timeLimitSeconds = 2.0; // Graphviz gets at most this long, then the layered layout is used
};

struct LayoutResult {
    std::vector<LayoutPoint> centers; // per node; y grows downward (Qt scene coordinates)
    // Per edge, from the source's border to the target's border: cubic Bezier
    // control points (1 + 3k points) when edgesAreBezier, else a polyline.
    // Empty for self-loops, which are not drawn.
    std::vector<std::vector<LayoutPoint>> edgePaths;
    bool edgesAreBezier = false;
    // Per cluster: encloses its nodes and child clusters, with padding and
    // room for the label at the top; all zero for a cluster without nodes.
    std::vector<LayoutRect> clusterRects;
    LayoutRect bounds; // everything above, starting at (0, 0)
    std::string engine; // "graphviz dot" or "layered"
    // Why the layered layout was used when Graphviz was asked for or Auto
    // chose: "graphviz took longer than 2 s", "graphviz crashed (signal 11)",
    // "1,200 nodes: above the Graphviz limit of 500". Empty otherwise.
    std::string note;
    double seconds = 0; // wall time of the whole call
    bool cancelled = false; // then the rest is empty
};

// The largest graph Auto gives to Graphviz (measured: docs/performance.md).
inline constexpr int autoGraphvizNodeLimit = 500;

// Blocking; call it from a worker thread. Polls *cancel (may be null) and
// returns with cancelled set soon after it becomes true. Throws Error for
// out-of-range node or cluster indices, a cluster whose parent does not come
// before it, or a negative or non-finite size.
LayoutResult computeLayout(const LayoutRequest &request, const std::atomic<bool> *cancel = nullptr);

} // namespace fusescope
