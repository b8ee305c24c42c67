#pragma once
// Runs an ONNX model on the op registry: a TensorFn that evaluates the nodes
// in order with the registry's ops, so eager runs, the compiler's capture,
// the profiler and the views treat an imported model like any other function.
// Shape-computing subgraphs (Shape → Gather → Concat → Reshape …) are folded
// to constants while it runs, and each node runs inside a ModuleScope named
// after the ONNX node, so the captured graph reads like the source model.

#include "core/onnx/onnxmodel.h"

namespace fusescope::onnx {

struct OnnxProgram {
    compiler::TensorFn fn;               // inputs in the model's input order
    compiler::NamedTensors parameters;   // the initializers, by name
    std::vector<std::string> inputNames;
    std::vector<std::string> outputNames;
};

// Throws Error listing every unsupported node at once:
// "model.onnx: 2 unsupported nodes: 'Conv_12' (ConvInteger, opset 13), …".
OnnxProgram makeProgram(const OnnxModel &model);

// Checks count, dtypes and the fixed dims of inputs against the model's
// declared inputs; throws Error naming the input and the mismatch.
void checkInputs(const OnnxModel &model, const TensorList &inputs);

// Seeded random inputs for the declared inputs; symbolic dims become 1.
TensorList randomInputs(const OnnxModel &model, uint64_t seed);

} // namespace fusescope::onnx
