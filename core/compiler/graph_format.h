#pragma once
// Text forms of a graph: the FX-style table, Python-like code, and DOT.

#include "core/compiler/graph.h"

namespace fusescope::compiler {

// One row per node: opcode, name, target, args, output shape and dtype, module.
std::string formatTable(const Graph &graph);
// def forward(self, x): ... return (y,) — one line per node, shape comments.
std::string formatCode(const Graph &graph);
// Graphviz DOT; nodes of one fused kernel form a labelled cluster.
std::string formatDot(const Graph &graph);

// "1.5", "[2,3]", "f32", "None", "'tanh'"; a node reference by name.
std::string formatArg(const Arg &arg);
std::string formatConstant(const Value &v);
// "[8,256] f32" (several outputs separated by ", ").
std::string formatOutputs(const Node &node);

} // namespace fusescope::compiler
