#pragma once
// The graph as the user sees it (open modules, collapsed boxes, kernels as
// clusters) written to a file: DOT for Graphviz, SVG and PNG of the drawing.

#include <QString>

namespace fusescope {

class GraphView;

// Each returns false and sets *error (naming the file) on failure.
bool exportGraphDot(const GraphView &view, const QString &path, QString *error);
bool exportGraphSvg(const GraphView &view, const QString &path, QString *error);
bool exportGraphPng(const GraphView &view, const QString &path, QString *error);
// By the file's suffix: .dot/.gv, .svg or .png.
bool exportGraph(const GraphView &view, const QString &path, QString *error);

} // namespace fusescope
