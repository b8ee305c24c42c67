// Runs an ONNX graph on the op registry (see onnxprogram.h).
//
// Values "known" without the inputs' data are initializers, the outputs of
// nodes without inputs (Constant), of Shape and Size, and of nodes whose
// inputs are all known. Nodes that only depend on initializers are folded
// once, in makeProgram; the others that turn out known at run time (shape
// arithmetic on the inputs' sizes) run with the dispatch tracer switched off,
// so they compute real tensors and never reach a captured graph.
#include "core/onnx/onnxprogram.h"

#include "core/compiler/tracer.h"
#include "core/nn/module.h"
#include "core/onnx/onnxops.h"
#include "core/tensor/factory.h"

#include <optional>
#include <set>
#include <unordered_map>

namespace fusescope::onnx {

namespace {

// The newest opset whose semantics the op tables implement.
constexpr int64_t kNewestOpset = 21;

bool isDefaultDomain(const std::string &domain)
{
    return domain.empty() || domain == "ai.onnx";
}

// Their outputs depend on the input's shape only, never on its data.
bool readsShapeOnly(const OnnxNode &node)
{
    return node.opType == "Shape" || node.opType == "Size";
}

std::string join(const std::vector<std::string> &parts, const std::string &separator)
{
    std::string out;
    for (const std::string &p : parts)
        out += (out.empty() ? "" : separator) + p;
    return out;
}

// --- validation --------------------------------------------------------------------------

// Why a node cannot run, or "".
std::string nodeProblem(const OnnxNode &node, int64_t opset, const std::set<std::string> &defined)
{
    const std::string name = "'" + node.label() + "' (";
    if (!isDefaultDomain(node.domain))
        return name + node.domain + "." + node.opType + ": only the default domain is supported)";
    const OnnxOpDef *def = findOnnxOp(node.opType, opset);
    if (!def)
        return name + node.opType + ", opset " + std::to_string(opset) + ")";
    for (const std::string &in : node.inputs)
        if (!in.empty() && !defined.count(in))
            return name + node.opType + ": input '" + in + "' is not defined before the node)";
    const std::string why = def->check ? def->check(OnnxOpContext(node, opset)) : "";
    return why.empty() ? "" : name + node.opType + ": " + why + ")";
}

std::string valueProblem(const std::string &kind, const OnnxValueInfo &v)
{
    if (!v.tensor)
        return kind + " '" + v.name + "' is not a tensor (a sequence, map or optional)";
    if (!v.dtypeSupported)
        return kind + " '" + v.name + "' has the unsupported type " + v.dtypeName;
    return "";
}

// Fills `defined` with every value name the graph defines, in order.
std::vector<std::string> nodeProblems(const OnnxModel &model, std::set<std::string> &defined)
{
    for (const OnnxValueInfo &in : model.inputs)
        defined.insert(in.name);
    for (const auto &[name, t] : model.initializers)
        defined.insert(name);
    std::vector<std::string> problems;
    for (const OnnxNode &node : model.nodes) {
        if (std::string p = nodeProblem(node, model.opset, defined); !p.empty())
            problems.push_back(std::move(p));
        defined.insert(node.outputs.begin(), node.outputs.end());
    }
    return problems;
}

std::vector<std::string> valueProblems(const OnnxModel &model, const std::set<std::string> &defined)
{
    std::vector<std::string> problems;
    if (model.opset > kNewestOpset)
        problems.push_back("opset " + std::to_string(model.opset) + " is newer than " + std::to_string(kNewestOpset)
                           + ", the newest supported");
    for (const OnnxValueInfo &in : model.inputs)
        if (std::string p = valueProblem("input", in); !p.empty())
            problems.push_back(std::move(p));
    for (const OnnxValueInfo &out : model.outputs) {
        if (std::string p = valueProblem("output", out); !p.empty())
            problems.push_back(std::move(p));
        else if (!defined.count(out.name))
            problems.push_back("output '" + out.name + "' is not computed by any node");
    }
    return problems;
}

// Checks everything before anything runs, so one message lists every problem.
void validate(const OnnxModel &model)
{
    std::set<std::string> defined;
    const std::vector<std::string> nodes = nodeProblems(model, defined);
    std::vector<std::string> parts = valueProblems(model, defined);
    if (!nodes.empty())
        parts.insert(parts.begin(),
                     std::to_string(nodes.size()) + " unsupported node" + (nodes.size() == 1 ? "" : "s") + ": "
                         + join(nodes, ", "));
    if (!parts.empty())
        throw Error(model.path + ": " + join(parts, "; "));
}

// --- module paths ------------------------------------------------------------------------

// torch.onnx names a node by its module scope and op: "/layer1/layer1.0/conv1/Conv".
// The scope's components form the module path, the last component (the op,
// "Conv" or "Conv_1") is dropped, and a component that already spells its
// parent's path ("layer1.0" under "layer1") replaces it, which gives PyTorch's
// own path "layer1.0.conv1". Names without a leading '/' ("Conv_12") are used whole.
std::string modulePathOf(const std::string &nodeName)
{
    if (nodeName.empty() || nodeName[0] != '/')
        return nodeName;
    std::string path;
    for (size_t start = 1, end; (end = nodeName.find('/', start)) != std::string::npos; start = end + 1) {
        const std::string part = nodeName.substr(start, end - start);
        if (!part.empty())
            path = path.empty() || part.rfind(path + ".", 0) == 0 ? part : path + "." + part;
    }
    return path;
}

// --- evaluation --------------------------------------------------------------------------

struct Step {
    OnnxNode node;
    const OnnxOpDef *def = nullptr;
    std::string modulePath;
};

// Values by name, each marked whether it is known without the inputs' data.
class Env
{
public:
    void set(const std::string &name, Tensor t, bool known) { m_values[name] = {std::move(t), known}; }
    bool known(const std::string &name) const
    {
        auto it = m_values.find(name);
        return it != m_values.end() && it->second.known;
    }
    const Tensor &get(const std::string &name) const
    {
        auto it = m_values.find(name);
        if (it == m_values.end())
            throw Error("onnx: value '" + name + "' is used before it is defined");
        return it->second.tensor;
    }
    bool allKnown(const OnnxNode &node) const
    {
        for (const std::string &in : node.inputs)
            if (!in.empty() && !known(in))
                return false;
        return true;
    }
    OnnxInputs inputsOf(const OnnxNode &node) const
    {
        OnnxInputs inputs;
        for (const std::string &in : node.inputs)
            inputs.push_back(in.empty() ? std::nullopt : std::optional<Tensor>(get(in)));
        return inputs;
    }

private:
    struct Entry {
        Tensor tensor;
        bool known = false;
    };
    std::unordered_map<std::string, Entry> m_values;
};

// Known nodes run untraced, so they compute real tensors even while
// capturing; the others run in the node's module scope.
TensorList evaluate(const Step &s, const OnnxInputs &inputs, bool known, int64_t opset)
{
    const OnnxOpContext ctx(s.node, opset);
    if (known) {
        compiler::TracerScope untraced(nullptr);
        return s.def->run(ctx, inputs);
    }
    std::optional<nn::ModuleScope> scope;
    if (!s.modulePath.empty())
        scope.emplace(s.modulePath);
    return s.def->run(ctx, inputs);
}

void runStep(const Step &s, int64_t opset, Env &env)
{
    const bool known = env.allKnown(s.node) || readsShapeOnly(s.node);
    const TensorList results = evaluate(s, env.inputsOf(s.node), known, opset);
    for (size_t i = 0; i < s.node.outputs.size(); ++i) {
        if (s.node.outputs[i].empty())
            continue;
        if (i >= results.size() || !results[i].defined())
            OnnxOpContext(s.node, opset)
                .fail("output " + std::to_string(i) + " ('" + s.node.outputs[i] + "') is not produced");
        env.set(s.node.outputs[i], results[i], known);
    }
}

struct Plan {
    int64_t opset = 0;
    Env constants; // initializers and the outputs folded at import
    std::vector<Step> steps; // the nodes that depend on the inputs
    std::vector<std::string> inputs, outputs;
};

TensorList run(const Plan &plan, const TensorList &inputs)
{
    if (inputs.size() != plan.inputs.size())
        throw Error("onnx: the model takes " + std::to_string(plan.inputs.size()) + " inputs, got "
                    + std::to_string(inputs.size()));
    Env env = plan.constants;
    for (size_t i = 0; i < inputs.size(); ++i)
        env.set(plan.inputs[i], inputs[i], false);
    for (const Step &s : plan.steps)
        runStep(s, plan.opset, env);
    TensorList outputs;
    for (const std::string &name : plan.outputs)
        outputs.push_back(env.get(name));
    return outputs;
}

// Folds the nodes that depend on initializers only; keeps the others as steps.
void fold(const OnnxModel &model, Plan &plan)
{
    for (const auto &[name, t] : model.initializers)
        plan.constants.set(name, t, true);
    for (const OnnxNode &node : model.nodes) {
        Step s {node, findOnnxOp(node.opType, model.opset), modulePathOf(node.name)};
        if (!plan.constants.allKnown(node)) {
            plan.steps.push_back(std::move(s));
            continue;
        }
        try {
            runStep(s, model.opset, plan.constants);
        } catch (const Error &e) {
            throw Error(model.path + ": " + e.what());
        }
    }
}

// The initializers, then the folded values the remaining nodes read, so the
// captured graph's get_attr nodes carry the model's value names.
compiler::NamedTensors parametersOf(const OnnxModel &model, const Plan &plan)
{
    compiler::NamedTensors params = model.initializers;
    std::set<std::string> seen;
    for (const auto &[name, t] : params)
        seen.insert(name);
    for (const Step &s : plan.steps)
        for (const std::string &in : s.node.inputs)
            if (!in.empty() && plan.constants.known(in) && seen.insert(in).second)
                params.emplace_back(in, plan.constants.get(in));
    return params;
}

std::string declaredShape(const OnnxValueInfo &v)
{
    std::vector<std::string> dims;
    for (size_t i = 0; i < v.dims.size(); ++i) {
        const std::string symbol = i < v.dimNames.size() && !v.dimNames[i].empty() ? v.dimNames[i] : "?";
        dims.push_back(v.dims[i] >= 0 ? std::to_string(v.dims[i]) : symbol);
    }
    return "[" + join(dims, ",") + "]";
}

bool shapeMatches(const OnnxValueInfo &v, const Shape &sizes)
{
    if (!v.hasShape)
        return true;
    if (v.dims.size() != sizes.size())
        return false;
    for (size_t i = 0; i < sizes.size(); ++i)
        if (v.dims[i] >= 0 && v.dims[i] != sizes[i])
            return false;
    return true;
}

Tensor randomTensor(const OnnxValueInfo &v, Generator &gen)
{
    if (!v.hasShape)
        throw Error("input '" + v.name + "' declares no shape");
    Shape shape;
    for (int64_t d : v.dims)
        shape.push_back(d >= 0 ? d : 1);
    if (v.dtype == DType::Bool)
        return randint(0, 2, shape, gen, DType::I64).to(DType::Bool);
    // Small non-negative integers: valid as indices, counts and sizes.
    return isIntegral(v.dtype) ? randint(0, 4, shape, gen, v.dtype) : randn(shape, gen, v.dtype);
}

} // namespace

OnnxProgram makeProgram(const OnnxModel &model)
{
    validate(model);
    auto plan = std::make_shared<Plan>();
    plan->opset = model.opset;
    fold(model, *plan);
    for (const OnnxValueInfo &in : model.inputs)
        plan->inputs.push_back(in.name);
    for (const OnnxValueInfo &out : model.outputs)
        plan->outputs.push_back(out.name);
    OnnxProgram program;
    program.parameters = parametersOf(model, *plan);
    program.inputNames = plan->inputs;
    program.outputNames = plan->outputs;
    program.fn = [plan](const TensorList &inputs) { return run(*plan, inputs); };
    return program;
}

void checkInputs(const OnnxModel &model, const TensorList &inputs)
{
    if (inputs.size() != model.inputs.size())
        throw Error(model.path + ": the model takes " + std::to_string(model.inputs.size()) + " inputs, got "
                    + std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
        const OnnxValueInfo &v = model.inputs[i];
        const Tensor &t = inputs[i];
        if (t.dtype() != v.dtype)
            throw Error("input '" + v.name + "': dtype " + dtypeName(t.dtype()) + " does not match the model's "
                        + dtypeName(v.dtype));
        if (!shapeMatches(v, t.sizes()))
            throw Error("input '" + v.name + "': shape " + shapeStr(t.sizes()) + " does not match the model's "
                        + declaredShape(v));
    }
}

TensorList randomInputs(const OnnxModel &model, uint64_t seed)
{
    Generator gen(seed);
    TensorList inputs;
    for (const OnnxValueInfo &v : model.inputs)
        inputs.push_back(randomTensor(v, gen));
    return inputs;
}

} // namespace fusescope::onnx
