#pragma once
// The result of the `fuse` stage: the graph's nodes grouped into kernels, in
// the order they run, with every fusion decision and the reason for it.

#include "core/compiler/graph.h"
#include "core/compiler/passes.h"

#include <nlohmann/json_fwd.hpp>

namespace fusescope::compiler {

enum class KernelKind {
    Pointwise, // one loop nest over the domain
    Reduction, // rows of the domain reduced over reduceDims, with prologue and epilogue
    Gemm,      // BLAS GEMM or convolution, then a pointwise epilogue over its output
    Extern,    // one op run by its eager kernel
};
const char *kernelKindName(KernelKind kind);

struct Kernel {
    std::string name;
    KernelKind kind = KernelKind::Extern;
    std::vector<Node *> nodes;   // in graph order; views are never members
    Node *anchor = nullptr;      // the GEMM/conv of a Gemm kernel, the op of an Extern one
    Shape domain;                // iteration space of the fused loops
    std::vector<int64_t> reduceDims; // Reduction kernels: the dims of `domain` reduced
    std::vector<NodeRef> inputs; // storage read from outside (view chains resolved)
    std::vector<NodeRef> outputs; // values written to memory
    double bytesRead = 0;
    double bytesWritten = 0;
    double flops = 0;            // the members' cost rules on meta tensors, summed
    std::string reason;          // why these nodes form one kernel
};

struct FusionDecision {
    std::string producer; // node names
    std::string consumer;
    bool fused = false;
    std::string reason;
    double bytesSaved = 0;
    std::string text() const; // "fused A into B: saves N bytes" / "cannot fuse A with B: reason"
};

struct Schedule {
    std::vector<Kernel> kernels;
    std::vector<FusionDecision> decisions;
    double bytesMoved() const;
};

// The scheduler: greedy, best memory saving first, refusing pairs that would
// create a cycle or that its kernels cannot express. Sets Node::kernel.
Schedule fuse(Graph &graph, PassLog &log);

// A view whose outputs alias its input: it becomes index arithmetic.
bool isAliasView(const Node &node);
// The node output whose storage `r` lives in (follows alias views).
NodeRef storageRoot(NodeRef r);
// Codegen and the fuser agree on these dtypes: f32, f64, i32, i64, bool.
bool codegenDType(DType t);

nlohmann::json scheduleToJson(const Schedule &schedule);

} // namespace fusescope::compiler
