#include "core/ops/registry.h"

#include "core/ops/builtin.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace fusescope {

const char *opKindName(OpKind kind)
{
    switch (kind) {
    case OpKind::Pointwise: return "pointwise";
    case OpKind::Reduction: return "reduction";
    case OpKind::View: return "view";
    case OpKind::Matmul: return "matmul";
    case OpKind::Convolution: return "convolution";
    case OpKind::Composite: return "composite";
    case OpKind::Opaque: return "opaque";
    }
    return "?";
}

OpCost ioBytes(const Args &args, std::span<const Tensor> outs)
{
    OpCost c;
    for (const Value &v : args) {
        if (v.isTensor() && !v.toTensor().isWrappedNumber())
            c.bytesRead += static_cast<double>(v.toTensor().nbytes());
    }
    for (const Tensor &t : outs)
        c.bytesWritten += static_cast<double>(t.nbytes());
    return c;
}

OpCost OpDef::estimateCost(const Args &args, std::span<const Tensor> outs) const
{
    if (cost)
        return cost(args, outs);
    OpCost c = ioBytes(args, outs);
    int64_t largest = 0;
    for (const Value &v : args) {
        if (v.isTensor() && !v.toTensor().isWrappedNumber())
            largest = std::max(largest, v.toTensor().numel());
    }
    for (const Tensor &t : outs)
        largest = std::max(largest, t.numel());
    if (kind == OpKind::View) {
        c.bytesRead = c.bytesWritten = 0;
    } else if (kind == OpKind::Pointwise || kind == OpKind::Reduction) {
        c.flops = flopsPerElement * static_cast<double>(largest);
    }
    return c;
}

// --- registry ----------------------------------------------------------------

struct OpRegistry::Impl {
    mutable std::mutex mutex;
    // std::map keeps OpDef addresses stable while ops are added at run time.
    std::map<std::string, OpDef> ops;
};

OpRegistry::OpRegistry()
    : d(std::make_unique<Impl>())
{
}

OpRegistry &OpRegistry::instance()
{
    // Leaked on purpose: it outlives static tensors. Built-in ops register
    // here explicitly, since a static library drops unreferenced objects and
    // their static initializers with them.
    static OpRegistry *registry = [] {
        auto *r = new OpRegistry;
        registerBuiltinOps(*r);
        return r;
    }();
    return *registry;
}

const OpDef &OpRegistry::add(const std::string &schemaText, OpDef def)
{
    def.schema = Schema::parse(schemaText);
    const std::string &name = def.schema.name;
    if (!def.view && !def.shape)
        throw Error(name + ": an op needs a shape rule (or a view function)");
    if (!def.view && !def.cpu && !def.decompose)
        throw Error(name + ": an op needs a CPU kernel, a view function or a decomposition");
    std::lock_guard lock(d->mutex);
    auto [it, inserted] = d->ops.emplace(name, std::move(def));
    if (!inserted)
        throw Error(name + ": an op of this name is already registered");
    return it->second;
}

const OpDef *OpRegistry::find(const std::string &name) const
{
    std::lock_guard lock(d->mutex);
    auto it = d->ops.find(name);
    return it == d->ops.end() ? nullptr : &it->second;
}

const OpDef &OpRegistry::get(const std::string &name) const
{
    if (const OpDef *op = find(name))
        return *op;
    throw Error(name + ": no such op in the registry");
}

std::vector<const OpDef *> OpRegistry::all() const
{
    std::lock_guard lock(d->mutex);
    std::vector<const OpDef *> out;
    for (const auto &[name, def] : d->ops)
        out.push_back(&def);
    return out;
}

// --- dispatch ----------------------------------------------------------------

namespace {

thread_local DispatchTracer *t_tracer = nullptr;
thread_local int t_depth = 0;

[[noreturn]] void badArg(const OpDef &op, const SchemaArg &arg, const Value &v)
{
    throw Error(op.name() + ": argument '" + arg.name + "' expects " + argTypeName(arg.type)
                + (arg.optional ? "?" : "") + ", got " + v.repr());
}

Device firstTensorDevice(const Args &args)
{
    for (const Value &v : args) {
        if (v.isTensor() && !v.toTensor().isWrappedNumber())
            return v.toTensor().device();
    }
    return kCPU;
}

// Checks one argument against its schema entry, converting where the schema
// allows it (a number for a Tensor becomes a wrapped 0-d tensor; an int for
// an int[] becomes a one-element list; an int for a float becomes a float).
void checkArg(const OpDef &op, const SchemaArg &arg, Value &v)
{
    if (v.isNone()) {
        if (!arg.optional)
            badArg(op, arg, v);
        return;
    }
    switch (arg.type) {
    case ArgType::Tensor:
        if (v.isNumber()) {
            const DType t = v.isBool() ? DType::Bool : v.isInt() ? DType::I64 : DType::F64;
            v = Value(Tensor::wrapScalar(v.toDouble(), t));
        } else if (!v.isTensor() || !v.toTensor().defined()) {
            badArg(op, arg, v);
        }
        return;
    case ArgType::TensorList:
        if (!v.isTensorList())
            badArg(op, arg, v);
        return;
    case ArgType::Int:
        if (!v.isInt() && !v.isBool())
            badArg(op, arg, v);
        return;
    case ArgType::IntList:
        if (v.isInt())
            v = Value(IntList{v.toInt()});
        else if (!v.isIntList())
            badArg(op, arg, v);
        return;
    case ArgType::Float:
        if (!v.isNumber())
            badArg(op, arg, v);
        v = Value(v.toDouble());
        return;
    case ArgType::Bool:
        if (!v.isBool())
            badArg(op, arg, v);
        return;
    case ArgType::Scalar:
        if (!v.isNumber())
            badArg(op, arg, v);
        return;
    case ArgType::String:
        if (!v.isString())
            badArg(op, arg, v);
        return;
    case ArgType::DType:
        if (!v.isDType())
            badArg(op, arg, v);
        return;
    }
}

bool anyMeta(const Args &args)
{
    for (const Value &v : args) {
        if (v.isTensor() && v.toTensor().isMeta())
            return true;
        if (v.isTensorList()) {
            for (const Tensor &t : v.toTensorList()) {
                if (t.isMeta())
                    return true;
            }
        }
    }
    return false;
}

std::vector<Tensor> tensorInputs(const Args &args)
{
    std::vector<Tensor> inputs;
    for (const Value &v : args) {
        if (v.isTensor())
            inputs.push_back(v.toTensor());
    }
    return inputs;
}

TensorList allocate(const std::vector<TensorSpec> &specs, Device device)
{
    TensorList outs;
    outs.reserve(specs.size());
    for (const TensorSpec &s : specs)
        outs.push_back(Tensor::empty(s.sizes, s.dtype, device));
    return outs;
}

TensorList runEager(const OpDef &op, const Args &args)
{
    if (op.view)
        return op.view(args);
    if (!op.cpu)
        return op.decompose(args);
    TensorList outs = allocate(op.shape(args), firstTensorDevice(args));
    op.cpu(args, outs);
    return outs;
}

// The op's own kernel, reported as one; views and decomposed ops have none.
TensorList runObservedKernel(const OpDef &op, const Args &args)
{
    TensorList outs = allocate(op.shape(args), firstTensorDevice(args));
    KernelEvent kernel;
    kernel.name = op.name();
    kernel.opKernel = true;
    observers::kernelBegin(kernel);
    op.cpu(args, outs);
    kernel.cost = op.estimateCost(args, outs);
    observers::kernelEnd(kernel);
    return outs;
}

TensorList runObserved(const OpDef &op, const Args &args)
{
    TensorList outs;
    const ObservedOpScope scope(op, args, outs);
    outs = op.view || !op.cpu ? runEager(op, args) : runObservedKernel(op, args);
    return outs;
}

struct DepthGuard {
    DepthGuard() { ++t_depth; }
    ~DepthGuard() { --t_depth; }
};

} // namespace

void bindArgs(const OpDef &op, Args &args)
{
    const auto &schema = op.schema.args;
    if (args.size() > schema.size())
        throw Error(op.name() + ": takes at most " + std::to_string(schema.size()) + " arguments, got "
                    + std::to_string(args.size()));
    for (size_t i = args.size(); i < schema.size(); ++i) {
        if (!schema[i].hasDefault)
            throw Error(op.name() + ": missing argument '" + schema[i].name + "'");
        args.push_back(schema[i].defaultValue);
    }
    for (size_t i = 0; i < schema.size(); ++i)
        checkArg(op, schema[i], args[i]);
}

[[noreturn]] static void refuseMeta(const OpDef &op)
{
    throw Error(op.name() + ": its output shape depends on the input values, so it cannot run on meta tensors here");
}

TensorList DispatchTracer::breakGraph(const OpDef &op, const Args &)
{
    refuseMeta(op);
}

DispatchTracer *setDispatchTracer(DispatchTracer *tracer)
{
    DispatchTracer *previous = t_tracer;
    t_tracer = tracer;
    return previous;
}

ObservedOpScope::ObservedOpScope(const OpDef &op, const Args &args, const TensorList &outs)
    : m_active(observers::active()), m_args(args), m_outs(outs)
{
    if (!m_active)
        return;
    m_inputs = tensorInputs(args);
    m_event = {&op, m_inputs, {}};
    observers::opBegin(m_event);
}

ObservedOpScope::~ObservedOpScope()
{
    if (!m_active)
        return;
    m_event.cost = m_event.op->estimateCost(m_args, m_outs);
    observers::opEnd(m_event);
}

TensorList callOp(const OpDef &op, Args args)
{
    bindArgs(op, args);
    if (op.dataDependent && anyMeta(args)) {
        if (!t_tracer || t_depth > 0)
            refuseMeta(op);
        DispatchTracer *tracer = t_tracer;
        DepthGuard depth;
        return tracer->breakGraph(op, args); // not a node of the graph: the tracer records the break
    }
    TensorList outs;
    {
        DepthGuard depth;
        if (anyMeta(args))
            outs = op.view ? op.view(args) : allocate(op.shape(args), kMeta);
        else if (observers::active())
            outs = runObserved(op, args);
        else
            outs = runEager(op, args);
    }
    if (t_tracer && t_depth == 0)
        t_tracer->record(op, args, outs);
    return outs;
}

TensorList callOp(const std::string &name, Args args)
{
    return callOp(OpRegistry::instance().get(name), std::move(args));
}

Tensor callOp1(const std::string &name, Args args)
{
    TensorList outs = callOp(name, std::move(args));
    return outs.front();
}

} // namespace fusescope
