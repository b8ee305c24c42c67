#pragma once
// One compile stage's graph as the views read it: parsed once (in a worker)
// from the stage's versioned graph JSON and its fuse details, immutable after,
// so every view shares it through a shared_ptr<const StageGraph>. Qt-free.

#include "core/compiler/compile.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusescope {

struct GraphNode {
    int id = 0;
    std::string name;   // unique in the graph
    std::string kind;   // "placeholder", "get_attr", "call_function", "output"
    std::string target; // "aten.add", a parameter path or an input name
    std::string module; // "layer1.0.conv1"; "" at the top level
    std::vector<int> origins; // ids of the captured nodes this one came from
    std::vector<int> inputs;  // distinct producer node ids, in argument order
    std::vector<int> users;   // distinct consumer node ids
    std::vector<compiler::TensorMeta> outputs;
    std::string constArgs; // the constant arguments as text: "alpha=1, dim=[2]"
    std::string kernel;    // the fused kernel holding this node ("" if none)
    bool view = false;     // aliases its input (index arithmetic after fuse)

    bool isParameter() const { return kind == "get_attr"; }
    bool isOp() const { return kind == "call_function"; }
    // "f32[8,128,256]", several outputs joined by ", ".
    std::string shapeText() const;
    // "aten.add" -> "add"; parameters and inputs keep their target.
    std::string opLabel() const;
};

struct GraphKernel {
    std::string name;
    std::string kind; // pointwise, reduction, gemm, extern
    std::string reason;
    std::vector<int> nodes; // member node ids, in graph order
    double bytesRead = 0;
    double bytesWritten = 0;
};

struct GraphDecision {
    std::string producer; // node names
    std::string consumer;
    bool fused = false;
    std::string reason;
    double bytesSaved = 0;
    std::string text() const; // "fused A into B: saves N bytes" / "cannot fuse A with B: reason"
};

class StageGraph
{
public:
    // Throws Error naming the stage and what is wrong with its JSON.
    static std::shared_ptr<const StageGraph> fromStage(const compiler::CompileStage &stage);

    std::string stageName;
    std::vector<GraphNode> nodes; // topological order
    std::vector<GraphKernel> kernels; // in run order; empty before fuse
    std::vector<GraphDecision> decisions;

    const GraphNode *find(int id) const;
    const GraphNode *findByName(const std::string &name) const;
    int indexOf(int id) const; // -1 when absent
    const GraphKernel *kernel(const std::string &name) const;
    // The nodes whose origins intersect `originIds` (ids of captured nodes).
    std::vector<int> nodesWithOrigins(const std::vector<int> &originIds) const;
    // The origins of the given nodes, in order, repeats kept.
    std::vector<int> originsOf(const std::vector<int> &nodeIds) const;
    // How many nodes of this graph came from captured node `origin` (0 if none):
    // a measured time is shared among them, not counted once per node.
    int originShare(int origin) const;

private:
    void buildIndex();
    std::unordered_map<int, int> m_indexById;
    std::unordered_map<std::string, int> m_indexByName;
    std::unordered_map<std::string, int> m_kernelByName;
    std::unordered_map<int, int> m_originShare;
};

} // namespace fusescope
