#pragma once
// torch.compile for Fusescope: compile(fn) returns a callable that captures
// on its first call, runs the stages (capture, decompose, simplify, fuse,
// plan-memory, codegen, load) and then runs the compiled code. A variant is
// specialized on the inputs' shapes, strides and dtypes; another input
// recompiles, records why, and is cached beside the first.

#include "core/compiler/capture.h"
#include "core/compiler/executable.h"
#include "core/compiler/program.h"

#include <memory>

namespace fusescope::nn {
class Module;
}

namespace fusescope::compiler {

struct StageStats {
    int64_t nodes = 0;
    int64_t kernels = 0;      // eager kernels before fuse, fused kernels after
    double bytesMoved = 0;    // estimated memory traffic of one run
    int64_t plannedPeak = -1; // bytes, from plan-memory on
    int64_t unplannedPeak = -1;
};

struct CompileStage {
    std::string name;
    int segment = 0;         // which graph, when graph breaks split the function
    std::string graphJson;   // the graph after this stage (versioned JSON)
    std::string detailsJson; // kernels and fusion decisions, the memory plan ("" before fuse)
    std::string code;        // codegen: the generated source
    double durationMs = 0;
    std::vector<std::string> log;
    StageStats stats;
};

// The stage names, in pipeline order.
const std::vector<std::string> &stageNames();

struct CompileOptions {
    bool interpret = false; // never call the C++ compiler (FUSESCOPE_NO_CC=1 does the same)
};

struct CompileResult {
    std::shared_ptr<Executable> executable;
    std::vector<CompileStage> stages;
};

// Runs every stage after capture on a captured graph.
CompileResult compileGraph(Graph captured, double captureMs, const CompileOptions &options = {});

struct InputGuard {
    Shape sizes;
    Shape strides;
    DType dtype = DType::F32;
    Device device;
};

class CompiledFunction
{
public:
    CompiledFunction(TensorFn fn, NamedTensors parameters, CompileOptions options = {});

    TensorList operator()(const TensorList &inputs);

    // Stages of every segment of the variant compiled last (segment by
    // segment); empty before the first call.
    std::vector<CompileStage> stages() const;
    // Where graph breaks split the function (variant compiled last).
    const std::vector<GraphBreak> &graphBreaks() const;
    // "input 0: shape [8,128,256] -> [4,128,256]", one per recompile.
    const std::vector<std::string> &recompileReasons() const { return m_recompiles; }
    size_t variants() const { return m_variants.size(); }
    double lastCompileMs() const { return m_lastCompileMs; }
    // The executable of the first segment the last call ran.
    const Executable *lastExecutable() const { return m_last; }

private:
    struct Segment {
        std::vector<InputGuard> guards;
        CompileResult result;
    };
    struct Variant {
        std::vector<InputGuard> guards;
        std::vector<Segment> segments;
        std::vector<std::vector<Source>> inputsOf;
        std::vector<GraphBreak> breaks;
        std::vector<Source> outputs;
    };
    Variant &compileFor(const TensorList &inputs);
    // The results, or nothing when a segment's guards fail (`why` says which).
    std::optional<TensorList> run(const Variant &v, const TensorList &inputs, std::string &why);
    std::string closestMismatch(const TensorList &inputs) const;

    TensorFn m_fn;
    NamedTensors m_parameters;
    CompileOptions m_options;
    std::vector<Variant> m_variants;
    std::vector<std::string> m_recompiles;
    const Executable *m_last = nullptr;
    double m_lastCompileMs = 0;
};

CompiledFunction compile(TensorFn fn, NamedTensors parameters = {}, CompileOptions options = {});
// The module's forward on its inputs; parameters and buffers keep their names.
CompiledFunction compile(std::shared_ptr<nn::Module> module, CompileOptions options = {});

// The first difference between guards and an input ("input 0: dtype f32 -> f64"), or "".
std::string guardMismatch(const std::vector<InputGuard> &guards, const TensorList &inputs);

} // namespace fusescope::compiler
