#pragma once
// Capture with graph breaks. An op whose output shape depends on the data
// (nonzero) cannot be traced on meta tensors: capture runs what it has
// captured so far on the real inputs, runs that op eagerly, and goes on in a
// new graph whose placeholders take the op's results (and any earlier value
// it reads). The function becomes segments of graphs with eager breaks
// between them.

#include "core/compiler/capture.h"

namespace fusescope::compiler {

// Where a segment's input, a break op's argument or a result comes from.
struct Source {
    enum class Kind { Input, Segment, Break };
    Kind kind = Kind::Input;
    int index = 0;  // function input, segment or break
    int output = 0; // output of that segment or break op
    auto operator<=>(const Source &) const = default;
};

// An argument of a break op: a constant, or tensors from sources.
struct BreakArg {
    Value constant;
    std::vector<Source> sources;
    bool list = false;
};

struct GraphBreak {
    std::string op;     // "aten.nonzero"
    std::string reason; // why it cannot be captured
    std::string modulePath;
    std::vector<BreakArg> args;
    int outputs = 1;
};

struct CapturedProgram {
    std::vector<Graph> segments;                // run in order, breaks[i] after segments[i]
    std::vector<std::vector<Source>> inputsOf;  // per segment: the source of each placeholder
    std::vector<GraphBreak> breaks;
    std::vector<Source> outputs;                // the function's results
};

// `realInputs` are the values of `inputs` (used only when a break needs real data).
CapturedProgram captureProgram(const TensorFn &fn, const std::vector<CaptureInput> &inputs,
                               const TensorList &realInputs, const NamedTensors &parameters = {});

// Calls a break op on real values.
TensorList runBreak(const GraphBreak &b, const std::function<Tensor(const Source &)> &valueOf);

} // namespace fusescope::compiler
