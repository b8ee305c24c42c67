#pragma once
// The graph-to-graph passes of the pipeline. Each is small and named, logs
// what it did in lines the user reads in the stage view, and leaves a graph
// that passes lint().

#include "core/compiler/graph.h"

#include <string>
#include <vector>

namespace fusescope::compiler {

using PassLog = std::vector<std::string>;

// Replaces every node whose op has a decomposition by the ops of that
// decomposition, until none is left. New nodes keep the module path and
// origins of the node they replace.
void decompose(Graph &graph, PassLog &log);

// Dead code, common subexpressions, constant folding, algebraic identities
// and view canonicalization, repeated until nothing changes.
void simplify(Graph &graph, PassLog &log);

// Recomputes every node's output geometry from its inputs (a pass may
// change the strides a view sees); throws Error when a shape or dtype changes.
void propagateMeta(Graph &graph);

// Sub-steps of simplify, exposed for tests. Each returns how many nodes it changed.
int removeDeadCode(Graph &graph, PassLog &log);
int eliminateCommonSubexpressions(Graph &graph, PassLog &log);
int foldConstants(Graph &graph, PassLog &log);
int applyIdentities(Graph &graph, PassLog &log);
// 3x3 convolutions of constant weights that suit Winograd read weights
// transformed once (a fusescope.winograd_weights node that constant folding computes).
int splitWinogradConvolutions(Graph &graph, PassLog &log);
// Products by a constant weight, where the CPU has AMX tiles, run as
// fusescope.mm_bf16x6 on the weight packed once (a fusescope.pack_bf16x6
// node that constant folding computes).
int packWeightsForTiles(Graph &graph, PassLog &log);
// A per-channel constant multiplied, divided, added or subtracted after a
// convolution of constant weights (batch norm, decomposed) folds into its
// weights and bias.
int foldAffineIntoConvolutions(Graph &graph, PassLog &log);
// A new node computing `target` on `args`, just before `like`, with its
// module path and origins, its output geometry inferred from the op.
Node *computedNode(Graph &graph, const Node &like, const char *target, std::vector<Arg> args, const char *name);
// Adds `from`'s origins to `to`'s, each once: a node that replaces two keeps both.
void addOrigins(Node &to, const Node &from);
// relu(conv2d) or clamp(conv2d) where the activation is the convolution's
// only reader: one op that applies it as it stores (fusescope.conv2d_relu,
// fusescope.conv2d_clamp, conv2d_winograd's relu, min and max).
int fuseConvolutionActivations(Graph &graph, PassLog &log);
// matmul, optional scale and mask, softmax over the last dim, matmul, each
// read only by the next: one fusescope.attention, whose scores never leave
// the cache.
int fuseAttention(Graph &graph, PassLog &log);

} // namespace fusescope::compiler
