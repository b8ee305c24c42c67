#pragma once
// The layout that always answers: longest-path layers, dummy vertices for long
// edges, barycenter ordering and centering coordinates, each with bounded
// work, so 10,000 nodes take well under a second (docs/performance.md).
// Graphviz's drawing is nicer; this one stands in when dot is too slow.

#include "views/graphlayout.h"

#include <algorithm>

namespace fusescope {

// Spacing both engines share, in pixels (Graphviz: nodesep 0.25 in, ranksep 0.5 in).
inline constexpr double layoutNodeGap = 18;
inline constexpr double layoutLayerGap = 36;
inline constexpr double layoutClusterPadding = 8;
inline constexpr double layoutClusterLabelHeight = 20;

// A bounding box grown point by point.
struct LayoutExtent {
    double left = 1e300, top = 1e300, right = -1e300, bottom = -1e300;
    bool empty() const { return left > right; }
    void add(LayoutPoint center, double width, double height)
    {
        left = std::min(left, center.x - width / 2), right = std::max(right, center.x + width / 2);
        top = std::min(top, center.y - height / 2), bottom = std::max(bottom, center.y + height / 2);
    }
    void add(const LayoutRect &r) { add({r.x + r.width / 2, r.y + r.height / 2}, r.width, r.height); }
    LayoutRect rect() const { return empty() ? LayoutRect() : LayoutRect {left, top, right - left, bottom - top}; }
};

// Each cluster's box around its members' boxes and its child clusters,
// padded, with room for the label on top; empty for a cluster without nodes.
std::vector<LayoutRect> clusterRectsAround(const LayoutRequest &request, const std::vector<LayoutPoint> &centers);

// The layered layout of a request computeLayout() has validated. Edge paths
// are polylines. Sets only `cancelled` once *cancel is seen true.
LayoutResult layeredLayout(const LayoutRequest &request, const std::atomic<bool> *cancel);

} // namespace fusescope
