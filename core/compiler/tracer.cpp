#include "core/compiler/tracer.h"

#include "core/nn/module.h"

namespace fusescope::compiler {

TensorMeta metaOf(const Tensor &t)
{
    TensorMeta m;
    m.sizes = t.sizes();
    m.strides = t.strides();
    m.offset = t.offset();
    m.dtype = t.dtype();
    return m;
}

Tensor metaTensor(const TensorMeta &m)
{
    const Tensor base = Tensor::emptyStrided(m.sizes, m.strides, m.dtype, kMeta);
    return m.offset ? base.alias(m.sizes, m.strides, m.offset) : base;
}

Args argsWith(const Node &node, const std::function<Tensor(const NodeRef &)> &tensorFor)
{
    Args args(node.args().size());
    for (size_t i = 0; i < args.size(); ++i) {
        const Arg &a = node.args()[i];
        if (a.kind == Arg::Kind::Const) {
            args[i] = a.constant;
        } else if (a.kind == Arg::Kind::Ref) {
            args[i] = Value(tensorFor(a.ref()));
        } else {
            TensorList list;
            for (const NodeRef &r : a.refs)
                list.push_back(tensorFor(r));
            args[i] = Value(std::move(list));
        }
    }
    return args;
}

Args nodeArgs(const Graph &graph, const Node &node, bool realAttrs)
{
    auto tensorFor = [&](const NodeRef &r) {
        if (realAttrs && r.node->kind == NodeKind::GetAttr)
            return graph.attrs.at(r.node->target);
        return metaTensor(r.node->meta(r.index));
    };
    return argsWith(node, tensorFor);
}

TensorMeta outputMeta(const Args &args, const Tensor &out)
{
    TensorMeta m = metaOf(out);
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].isTensor() && out.sharesStorageWith(args[i].toTensor())) {
            m.aliasOf = static_cast<int>(i);
            break;
        }
    }
    return m;
}

namespace {

// A Python-number operand stays a number in the graph.
Value numberOf(const Tensor &wrapped)
{
    const double v = wrapped.itemDouble();
    switch (wrapped.dtype()) {
    case DType::Bool: return Value(v != 0);
    case DType::I32:
    case DType::I64: return Value(static_cast<int64_t>(v));
    default: return Value(v);
    }
}

} // namespace

GraphTracer::GraphTracer(Graph &graph, const std::vector<std::pair<std::string, Tensor>> &parameters)
    : m_graph(graph)
{
    for (const auto &[name, t] : parameters)
        m_paramNames.emplace(t.implPtr().get(), name);
}

void GraphTracer::bind(const Tensor &t, NodeRef ref)
{
    m_refs[t.implPtr().get()] = ref;
    m_keepAlive.push_back(t);
}

void GraphTracer::insertBefore(Node *before, const Node *inherit)
{
    m_before = before;
    m_inherit = inherit;
}

NodeRef GraphTracer::refOf(const Tensor &t)
{
    if (auto it = m_refs.find(t.implPtr().get()); it != m_refs.end())
        return it->second;
    if (t.isMeta() && m_foreign) {
        if (std::optional<NodeRef> r = m_foreign(t))
            return *r;
    }
    if (t.isMeta())
        throw Error("capture: a meta tensor of shape " + shapeStr(t.sizes())
                    + " did not come from an op or an input (was it made outside the op registry?)");
    return attrFor(t);
}

Arg GraphTracer::argOf(const Value &v)
{
    if (v.isTensor()) {
        const Tensor &t = v.toTensor();
        return t.isWrappedNumber() ? Arg::of(numberOf(t)) : Arg::of(refOf(t));
    }
    if (v.isTensorList()) {
        std::vector<NodeRef> refs;
        for (const Tensor &t : v.toTensorList())
            refs.push_back(refOf(t));
        return Arg::list(std::move(refs));
    }
    return Arg::of(v);
}

Node *GraphTracer::addNode(NodeKind kind, const std::string &target, std::vector<Arg> args,
                           std::vector<TensorMeta> outs)
{
    Node *n = m_graph.add(kind, target, std::move(args), std::move(outs), target, m_before);
    if (m_inherit) {
        n->modulePath = m_inherit->modulePath;
        n->origins = m_inherit->origins;
    } else {
        n->modulePath = nn::currentModulePath();
    }
    return n;
}

void GraphTracer::record(const OpDef &op, const Args &args, const TensorList &outputs)
{
    std::vector<Arg> nodeArgs;
    for (const Value &v : args)
        nodeArgs.push_back(argOf(v));
    std::vector<TensorMeta> metas;
    for (const Tensor &out : outputs)
        metas.push_back(outputMeta(args, out));
    Node *n = addNode(NodeKind::CallFunction, op.name(), std::move(nodeArgs), std::move(metas));
    for (size_t i = 0; i < outputs.size(); ++i)
        bind(outputs[i], n->out(static_cast<int>(i)));
}

NodeRef GraphTracer::attrFor(const Tensor &t)
{
    auto named = m_paramNames.find(t.implPtr().get());
    std::string target;
    if (named != m_paramNames.end())
        target = named->second;
    while (target.empty() || (named == m_paramNames.end() && m_graph.attrs.count(target)))
        target = "_tensor_constant" + std::to_string(m_constants++);
    m_graph.attrs[target] = t;
    Node *n = addNode(NodeKind::GetAttr, target, {}, {metaOf(t)});
    bind(t, n->out());
    return n->out();
}

} // namespace fusescope::compiler
