#include "core/compiler/executable.h"

#include "core/compiler/fusion_rules.h"
#include "core/compiler/tracer.h"
#include "core/ops/pointwise.h"
#include "core/ops/registry.h"
#include "core/runtime/threadpool.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace fusescope::compiler {

namespace {

// A typed, contiguous tensor over `bytes` of the arena starting at `byteOffset`.
Tensor arenaView(const Tensor &arena, int64_t byteOffset, const TensorMeta &m)
{
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = arena.storage();
    impl->sizes = m.sizes;
    impl->strides = contiguousStrides(m.sizes);
    impl->offset = byteOffset / static_cast<int64_t>(itemSize(m.dtype));
    impl->dtype = m.dtype;
    impl->device = kCPU;
    impl->numel = numelOf(m.sizes);
    impl->contiguous = true;
    return Tensor(std::move(impl));
}

} // namespace

struct Executable::State {
    std::unordered_map<const Node *, TensorList> values;

    Tensor valueOf(const NodeRef &r) const
    {
        if (!isAliasView(*r.node))
            return values.at(r.node).at(static_cast<size_t>(r.index));
        const NodeRef root = storageRoot(r);
        const Tensor base = values.at(root.node).at(static_cast<size_t>(root.index));
        const TensorMeta &m = r.node->meta(r.index);
        return base.alias(m.sizes, m.strides, base.offset() + m.offset - root.node->meta(root.index).offset);
    }

    // A node's op arguments; values computed inside the kernel come from `local`.
    Args argsOf(const Node &n, const std::unordered_map<const Node *, TensorList> &local) const
    {
        auto tensorOf = [&](const NodeRef &r) {
            auto it = local.find(r.node);
            return it != local.end() ? it->second.at(static_cast<size_t>(r.index)) : valueOf(r);
        };
        return argsWith(n, tensorOf);
    }
};

Executable::Executable(Graph graph, Schedule schedule, MemoryPlan plan)
    : m_graph(std::move(graph))
    , m_schedule(std::move(schedule))
    , m_plan(std::move(plan))
    , m_code(m_schedule.kernels.size(), nullptr)
{
    m_placeholders = m_graph.placeholders();
    for (const Node *n : m_graph.nodes()) {
        if (n->kind == NodeKind::GetAttr)
            m_attrNodes.push_back(n);
    }
    for (const Kernel &k : m_schedule.kernels) {
        std::set<int> origins;
        for (const Node *n : k.nodes)
            origins.insert(n->origins.begin(), n->origins.end());
        m_origins.emplace_back(origins.begin(), origins.end());
    }
    for (size_t i = 0; i < m_schedule.kernels.size(); ++i) {
        const Kernel &k = m_schedule.kernels[i];
        m_events.push_back({k.name, m_origins[i], OpCost{k.flops, k.bytesRead, k.bytesWritten}});
    }
}

struct Executable::CallContext {
    const Executable *exe;
    State *state;
};

void Executable::runtimePart(void *ctx, int64_t index)
{
    auto *c = static_cast<CallContext *>(ctx);
    const Kernel &k = c->exe->m_schedule.kernels[static_cast<size_t>(index)];
    if (c->exe->m_plan.skips(static_cast<size_t>(index)))
        return; // a concatenation its inputs' kernels already wrote
    if (c->exe->m_code[static_cast<size_t>(index)])
        c->exe->runAnchor(k, *c->state);
    else
        c->exe->interpret(k, *c->state);
}

void Executable::kernelBegin(void *ctx, int64_t index)
{
    if (observers::active())
        observers::kernelBegin(static_cast<CallContext *>(ctx)->exe->m_events[static_cast<size_t>(index)]);
}

void Executable::kernelEnd(void *ctx, int64_t index)
{
    if (observers::active())
        observers::kernelEnd(static_cast<CallContext *>(ctx)->exe->m_events[static_cast<size_t>(index)]);
}

void Executable::setKernel(size_t index, FusescopeKernelFn fn)
{
    m_code.at(index) = fn;
}

bool Executable::hasCode(size_t index) const
{
    return m_code.at(index) != nullptr;
}

TensorList Executable::run(const TensorList &inputs) const
{
    State state;
    if (inputs.size() != m_placeholders.size())
        throw Error("compiled function: takes " + std::to_string(m_placeholders.size()) + " inputs, got "
                    + std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i)
        state.values[m_placeholders[i]] = {inputs[i]};
    for (const Node *n : m_attrNodes)
        state.values[n] = {m_graph.attrs.at(n->target)};
    const Tensor arena = m_plan.arenaBytes ? Tensor::empty({m_plan.arenaBytes}, DType::Bool) : Tensor();
    for (const BufferPlan &b : m_plan.buffers) {
        const TensorMeta &m = b.value.node->meta(b.value.index);
        TensorList &slot = state.values[b.value.node];
        slot.resize(b.value.node->outputs.size());
        slot[static_cast<size_t>(b.value.index)] = b.graphOutput ? Tensor::empty(m.sizes, m.dtype)
                                                                 : arenaView(arena, b.offset, m);
    }
    if (m_wrapper) {
        std::vector<std::vector<void *>> operands;
        std::vector<void *const *> tables;
        for (const Kernel &k : m_schedule.kernels)
            operands.push_back(operandsOf(k, state));
        for (const auto &o : operands)
            tables.push_back(o.data());
        CallContext ctx{this, &state};
        const FusescopeKernelAbi abi{&fusescope_parallel_for, &runtimePart, &kernelBegin, &kernelEnd, &ctx};
        m_wrapper(tables.data(), &abi);
    } else {
        for (size_t k = 0; k < m_schedule.kernels.size(); ++k)
            runKernel(k, state);
    }
    TensorList outs;
    for (const NodeRef &r : m_graph.outputNode()->inputs())
        outs.push_back(state.valueOf(r));
    return outs;
}

void Executable::runKernel(size_t index, State &state) const
{
    const Kernel &k = m_schedule.kernels[index];
    KernelScope scope(m_events[index]);
    if (m_plan.skips(index))
        return; // a concatenation its inputs' kernels already wrote
    if (!m_code[index]) {
        interpret(k, state);
        return;
    }
    if (k.anchor)
        runAnchor(k, state); // BLAS or the eager convolution, then the generated epilogue
    runCode(index, state);
}

void Executable::runAnchor(const Kernel &k, State &state) const
{
    const OpDef &op = OpRegistry::instance().get(k.anchor->target);
    TensorList outs = state.values.at(k.anchor);
    Args args = state.argsOf(*k.anchor, {});
    bindArgs(op, args); // the graph keeps numbers the kernel wants as tensors
    const ObservedOpScope scope(op, args, outs); // an op event, as eager mode reports it
    op.cpu(args, outs);
}

std::vector<void *> Executable::operandsOf(const Kernel &k, const State &state) const
{
    std::vector<void *> operands;
    operands.reserve(k.inputs.size() + k.outputs.size());
    auto add = [&](const NodeRef &r) {
        const Tensor t = state.valueOf(r);
        operands.push_back(t.numel() ? t.rawData() : nullptr);
    };
    std::for_each(k.inputs.begin(), k.inputs.end(), add);
    std::for_each(k.outputs.begin(), k.outputs.end(), add);
    return operands;
}

void Executable::runCode(size_t index, State &state) const
{
    const std::vector<void *> operands = operandsOf(m_schedule.kernels[index], state);
    CallContext ctx{this, &state};
    const FusescopeKernelAbi abi{&fusescope_parallel_for, &runtimePart, &kernelBegin, &kernelEnd, &ctx};
    m_code[index](operands.data(), &abi);
}

// Node by node with the eager kernels: values inside the kernel are
// temporaries, kernel outputs land in their planned buffers.
void Executable::interpret(const Kernel &k, State &state) const
{
    std::unordered_map<const Node *, TensorList> local;
    auto argsOf = [&](const Node *n) { return state.argsOf(*n, local); };
    std::vector<std::pair<Tensor, Tensor>> stores;
    for (const Node *n : k.nodes) {
        const OpDef &op = OpRegistry::instance().get(n->target);
        auto planned = state.values.find(n);
        const bool writesBuffer = planned != state.values.end();
        const bool allPlanned = writesBuffer
            && std::all_of(planned->second.begin(), planned->second.end(), [](const Tensor &t) { return t.defined(); });
        if ((n == k.anchor || k.kind == KernelKind::Extern) && allPlanned && op.cpu) {
            TensorList outs = planned->second;
            Args args = argsOf(n);
            bindArgs(op, args); // mul(x, 2.0): the graph keeps the number, the kernel wants a tensor
            const ObservedOpScope scope(op, args, outs); // an op event, as eager mode reports it
            op.cpu(args, outs); // straight into the planned buffer
            continue;
        }
        TensorList result = callOp(op, argsOf(n));
        if (writesBuffer) {
            for (size_t i = 0; i < result.size(); ++i) {
                if (planned->second.size() > i && planned->second[i].defined())
                    stores.emplace_back(planned->second[i], result[i]);
            }
        }
        local[n] = std::move(result);
    }
    // Last, as generated code does: an output may take over the memory of an input.
    for (const auto &[dst, src] : stores)
        ops::copy_(dst, src);
}

} // namespace fusescope::compiler

namespace fusescope::compiler {

TensorList runGraph(const Graph &graph, const TensorList &inputs)
{
    std::unordered_map<const Node *, TensorList> values;
    auto tensorOf = [&](const NodeRef &r) { return values.at(r.node).at(static_cast<size_t>(r.index)); };
    size_t next = 0;
    TensorList outs;
    for (const Node *n : graph.nodes()) {
        if (n->kind == NodeKind::Placeholder) {
            values[n] = {inputs.at(next++)};
        } else if (n->kind == NodeKind::GetAttr) {
            values[n] = {graph.attrs.at(n->target)};
        } else if (n->kind == NodeKind::Output) {
            for (const NodeRef &r : n->inputs())
                outs.push_back(tensorOf(r));
        } else {
            Args args = argsWith(*n, tensorOf);
            values[n] = callOp(OpRegistry::instance().get(n->target), std::move(args));
        }
    }
    return outs;
}

} // namespace fusescope::compiler
