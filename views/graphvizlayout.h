#pragma once
// Graphviz's dot, run in a fork()ed child so that a slow layout can be
// killed at the time limit or on cancel, and a crash in libgvc takes down
// only the child. The child writes the numbers back through a pipe.

#include "views/graphlayout.h"

namespace fusescope {

struct GraphvizOptions {
    // Caps on dot's network simplex and crossing minimisation (nslimit,
    // nslimit1, mclimit, searchsize): measured in docs/performance.md.
    bool bounded = true;
    std::string splines = "spline";
    int raiseInChild = 0; // a signal the child raises before dot runs: tests the crash path
};

// The dot layout of a validated request, with Bezier edge paths. On failure
// `engine` is empty and `note` says why ("graphviz took longer than 2 s",
// "graphviz crashed (signal 11)"); on cancel only `cancelled` is set.
LayoutResult graphvizLayout(const LayoutRequest &request, const std::atomic<bool> *cancel,
                            const GraphvizOptions &options = {});

} // namespace fusescope
