#pragma once
// What a fused kernel may hold (internal to the fuse stage and codegen).
// A Reduction kernel iterates a domain S and reduces the dims R of it; each
// of its values is either full (shape S) or reduced (S with R dropped or
// kept as 1), and a full op may read a reduced value only when broadcasting
// lines it up with the reduction.

#include "core/compiler/schedule.h"

#include <optional>
#include <unordered_map>

namespace fusescope::compiler {

struct Group {
    KernelKind kind = KernelKind::Extern;
    std::vector<Node *> nodes;  // in graph order
    Node *anchor = nullptr;     // GEMM/conv or extern op
    bool hasDomain = true;      // false for a GEMM without epilogue yet
    Shape domain;
    std::vector<int64_t> reduceDims;
    bool alive = true;
    std::string reasonOfMerge;
};

enum class Level { Full, Reduced, Other };

// The nodes that read `n`, looking through alias views (the output node included).
std::vector<Node *> readersOf(Node *n);
// Sorted, non-negative dims a reduction node reduces.
std::vector<int64_t> reductionDims(const Node &n);
Level levelOf(const Shape &sizes, const Shape &domain, const std::vector<int64_t> &reduceDims);
// A value of shape v read in domain S lines up with the reduction over R:
// it varies only along the dims that are not reduced.
bool broadcastFollows(const Shape &v, const Shape &domain, const std::vector<int64_t> &reduceDims);

// A cat along the last dim that a pointwise kernel can read as a select
// between its inputs' loads: at most four inputs, none computed in the kernel.
bool isFusableCat(const Node &n);
// A pointwise op whose only reader is such a cat, once: it can run inside the
// cat's kernel at the index of its own stretch.
bool feedsCatOnly(const Node &n);
std::optional<Group> initialGroup(const Node &n);
// A cat that fused with nothing runs as its eager copy, a memcpy per run.
void settleLoneCats(std::vector<Group> &groups);
// The group `p` and `q` become when `from` (in p) feeding `to` (in q) fuses,
// or nothing with the reason in `why`.
std::optional<Group> mergeGroups(const Group &p, const Group &q, const Node *from, const Node *to,
                                 const std::unordered_map<const Node *, int> &position, std::string &why);
// Kernels in an order that respects every dependency, named and with their buffers.
std::vector<Kernel> orderKernels(const Graph &graph, const std::vector<Group> &groups);

} // namespace fusescope::compiler
