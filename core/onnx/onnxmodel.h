#pragma once
// An ONNX model as Fusescope reads it: the graph's inputs, outputs,
// initializers (parameters) and nodes with their attributes, independent of
// protobuf (onnxmodel.cpp is the only file that sees the generated types).
// Built only when the ONNX feature is on (FUSESCOPE_HAVE_ONNX).

#include "core/compiler/capture.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fusescope::onnx {

struct OnnxAttribute {
    enum class Kind { Float, Int, String, Tensor, Floats, Ints, Strings, Graph, Other };
    Kind kind = Kind::Other;
    double f = 0;
    int64_t i = 0;
    std::string s;
    Tensor t;
    std::vector<double> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
};

struct OnnxNode {
    std::string name;   // may be empty in hand-written models
    std::string opType; // "Conv"
    std::string domain; // "" or "ai.onnx" for the default domain
    std::vector<std::string> inputs;  // "" marks an omitted optional input
    std::vector<std::string> outputs;
    std::map<std::string, OnnxAttribute> attributes;
    size_t index = 0;   // position in the graph's node list

    // A name for messages: the node's name, or "node #index" when it has none.
    std::string label() const;
};

struct OnnxValueInfo {
    std::string name;
    bool tensor = true;       // false: a sequence, map or optional (not supported)
    DType dtype = DType::F32;
    bool dtypeSupported = true;
    std::string dtypeName;    // ONNX's name ("FLOAT", "STRING") for messages
    bool hasShape = false;
    std::vector<int64_t> dims;         // -1 where symbolic or unknown
    std::vector<std::string> dimNames; // the symbolic names ("batch"), "" otherwise
};

struct OnnxModel {
    std::string path;
    int64_t irVersion = 0;
    int64_t opset = 0;        // of the default domain
    std::string producer;     // "pytorch 2.1"
    std::vector<OnnxValueInfo> inputs;  // graph inputs that are not initializers
    std::vector<OnnxValueInfo> outputs;
    compiler::NamedTensors initializers;
    std::vector<OnnxNode> nodes;        // in the file's (topological) order
};

// Reads and checks a model file. Throws Error naming the file and what is
// wrong: not protobuf, truncated, an unsupported IR version, a tensor whose
// size does not match its data, external data outside the model's folder.
OnnxModel loadOnnxModel(const std::string &path);

// One TensorProto file (input_0.pb …), as in ONNX's test folders.
struct NamedTensor {
    std::string name;
    Tensor tensor;
};
NamedTensor readTensorFile(const std::string &path);
void writeTensorFile(const std::string &path, const std::string &name, const Tensor &tensor);

} // namespace fusescope::onnx
