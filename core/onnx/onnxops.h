#pragma once
// The ONNX operator table: each ONNX op type maps to a function over the op
// registry's ops (core/ops), so the registry stays the single source of truth
// for what an op computes, its shapes, kernels, decompositions and costs.
// Tables are split by family (onnxops_math.cpp, onnxops_tensor.cpp).

#include "core/onnx/onnxmodel.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fusescope::onnx {

// A node's view for its kernel: attributes with ONNX's defaults, and the
// model's opset (semantics change across opsets, e.g. Softmax's axis at 13).
class OnnxOpContext
{
public:
    OnnxOpContext(const OnnxNode &node, int64_t opset) : m_node(node), m_opset(opset) {}
    const OnnxNode &node() const { return m_node; }
    int64_t opset() const { return m_opset; }

    bool has(const std::string &name) const;
    int64_t attrInt(const std::string &name, int64_t fallback) const;
    double attrFloat(const std::string &name, double fallback) const;
    std::string attrString(const std::string &name, const std::string &fallback) const;
    std::vector<int64_t> attrInts(const std::string &name, std::vector<int64_t> fallback = {}) const;
    std::vector<double> attrFloats(const std::string &name, std::vector<double> fallback = {}) const;
    Tensor attrTensor(const std::string &name) const; // throws Error when absent

    // Throws Error("'<node>' (<OpType>): <what>") — the form every message about a node takes.
    [[noreturn]] void fail(const std::string &what) const;

private:
    const OnnxNode &m_node;
    int64_t m_opset;
};

// nullopt marks an omitted optional input ("" in the node's input list).
using OnnxInputs = std::vector<std::optional<Tensor>>;
using OnnxKernel = TensorList (*)(const OnnxOpContext &, const OnnxInputs &);
// "" when the node can run; otherwise why not ("mode 'cubic' is not supported").
// Checked at load, before anything runs, so every unsupported node is listed at once.
using OnnxCheck = std::string (*)(const OnnxOpContext &);

struct OnnxOpDef {
    const char *opType;
    OnnxKernel run;
    OnnxCheck check = nullptr; // null: every attribute value is supported
    int64_t minOpset = 1;      // older opsets have other semantics that are not implemented
};

std::span<const OnnxOpDef> mathOps();   // elementwise, reductions, normalization, GEMM, convolution, pooling
std::span<const OnnxOpDef> tensorOps(); // shapes and data movement, constants, casts, indexing, Pad, Resize

// The op for a node of the default domain at `opset`, or null.
const OnnxOpDef *findOnnxOp(const std::string &opType, int64_t opset);

// The value of a constant integer input (Reshape's shape, Slice's starts …);
// throws through ctx.fail when the input is missing or computed from data
// (a meta tensor while capturing).
std::vector<int64_t> constantInts(const OnnxOpContext &ctx, const OnnxInputs &inputs, size_t index);
// The tensor of input `index`; throws through ctx.fail when it was omitted.
const Tensor &input(const OnnxOpContext &ctx, const OnnxInputs &inputs, size_t index);
// Whether input `index` was given.
bool hasInput(const OnnxInputs &inputs, size_t index);

} // namespace fusescope::onnx
