#pragma once
// What one compile stage changed in the graph: nodes ids are stable across
// stages, so a diff is a join on ids. Qt-free, so the CLI can print it too.

#include "views/stagegraph.h"

#include <string>
#include <vector>

namespace fusescope {

struct NodeChange {
    int id = 0;
    std::string name; // in the later graph
    std::vector<std::string> reasons; // "target aten.gelu -> aten.mul", "now in kernel fused_x"

    std::string reason() const; // the reasons joined by "; "
};

struct GraphDiff {
    std::vector<int> added;   // in the later graph only, in its order
    std::vector<int> removed; // in the earlier graph only, in its order
    std::vector<NodeChange> changed; // in the later graph's order

    bool isEmpty() const { return added.empty() && removed.empty() && changed.empty(); }
    // "+3 −5 ~2" (U+2212 minus, UTF-8).
    std::string summary() const;
    const NodeChange *change(int id) const;
};

GraphDiff diffGraphs(const StageGraph &before, const StageGraph &after);

} // namespace fusescope
