#pragma once
// The `capture` stage: runs a function on meta (data-less) tensors with a
// dispatch tracer installed and records every op it calls as a graph node.

#include "core/compiler/graph.h"

#include <functional>

namespace fusescope::nn {
class Module;
}

namespace fusescope::compiler {

// What the compiler compiles: tensors in, tensors out.
using TensorFn = std::function<TensorList(const TensorList &)>;

struct CaptureInput {
    std::string name; // placeholder name ("x", "input_0")
    Shape sizes;
    Shape strides;    // empty: contiguous
    DType dtype = DType::F32;
};

// Parameters and buffers the function reads, by dotted name; get_attr nodes
// take these names (other real tensors become "_tensor_constant<N>").
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Throws Error naming the op when the function fails on meta tensors.
Graph capture(const TensorFn &fn, const std::vector<CaptureInput> &inputs, const NamedTensors &parameters = {});
// A module's parameters and buffers with their dotted names: what get_attr nodes read.
NamedTensors moduleTensors(const nn::Module &module);
// Captures a module's forward; its parameters and buffers keep their dotted names.
Graph captureModule(nn::Module &module, const std::vector<CaptureInput> &inputs);
// The inputs of a zoo model, shaped as its ModelInfo says.
std::vector<CaptureInput> zooInputs(const std::string &model);

} // namespace fusescope::compiler
