#pragma once
// What of a stage's graph is drawn: the nodes of open modules one by one, each
// collapsed module as one box, parameters folded away, and the fused kernels
// (or, before fusion, the open modules) as clusters. Qt-free, so the layout
// input it builds can be computed and tested without a widget.

#include "views/graphlayout.h"
#include "views/stagegraph.h"

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusescope {

struct PresentedItem {
    enum class Kind { Node, Module };
    Kind kind = Kind::Node;
    int nodeId = -1;      // Node: the graph node
    std::string module;   // Module: its path; Node: the node's module
    std::vector<int> members; // Module: every node inside, nested modules included
    int cluster = -1;     // index into PresentedGraph::clusters
};

struct PresentedCluster {
    enum class Kind { Kernel, Module };
    Kind kind = Kind::Kernel;
    std::string name; // kernel name or module path
    int parent = -1;
};

struct PresentedGraph {
    std::vector<PresentedItem> items;
    std::vector<LayoutEdge> edges; // item indices, deduplicated
    std::vector<PresentedCluster> clusters;
    std::unordered_map<int, int> itemOfNode; // node id -> the item showing it (itself or its module box)

    int itemFor(int nodeId) const
    {
        const auto it = itemOfNode.find(nodeId);
        return it == itemOfNode.end() ? -1 : it->second;
    }
};

// Every module path in the graph with its parents ("a.b" gives "a" and "a.b").
std::set<std::string> modulePaths(const StageGraph &graph);
// The modules to open by default: every one when that draws at most
// `openAllUpTo` items; else level by level while the drawn items stay at
// most `maxItems`, so only the open level is laid out.
std::set<std::string> defaultExpandedModules(const StageGraph &graph, int maxItems = 200, int openAllUpTo = 300);
// The module that holds `nodeId` directly, and its parents, outermost first.
std::vector<std::string> moduleChain(const std::string &module);

PresentedGraph presentGraph(const StageGraph &graph, const std::set<std::string> &expanded);

} // namespace fusescope
