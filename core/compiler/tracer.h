#pragma once
// Records op calls made on meta tensors as graph nodes. capture uses it on a
// whole function; decompose uses it to replace one node by the ops of its
// decomposition, inserted in place.

#include "core/compiler/graph.h"
#include "core/ops/registry.h"

#include <functional>
#include <optional>
#include <unordered_map>

namespace fusescope::compiler {

class GraphTracer final : public DispatchTracer
{
public:
    explicit GraphTracer(Graph &graph, const std::vector<std::pair<std::string, Tensor>> &parameters = {});

    void bind(const Tensor &t, NodeRef ref);
    // The node output a tensor came from; an unknown real tensor becomes a
    // get_attr constant; an unknown meta tensor is an error.
    NodeRef refOf(const Tensor &t);
    Arg argOf(const Value &v);

    // New nodes go before `before` (null: at the end) and, when `inherit` is
    // set, take its module path and origins instead of their own.
    void insertBefore(Node *before, const Node *inherit);

    void record(const OpDef &op, const Args &args, const TensorList &outputs) override;

    // Resolves a meta tensor this graph has not seen (a value of an earlier
    // graph when capture breaks the graph); without it such a tensor is an error.
    using ForeignFn = std::function<std::optional<NodeRef>(const Tensor &)>;
    void setForeignResolver(ForeignFn fn) { m_foreign = std::move(fn); }

private:
    NodeRef attrFor(const Tensor &t);
    Node *addNode(NodeKind kind, const std::string &target, std::vector<Arg> args, std::vector<TensorMeta> outs);

    Graph &m_graph;
    std::unordered_map<const TensorImpl *, std::string> m_paramNames;
    std::unordered_map<const TensorImpl *, NodeRef> m_refs;
    std::vector<Tensor> m_keepAlive; // so no impl address is reused while tracing
    Node *m_before = nullptr;
    const Node *m_inherit = nullptr;
    int m_constants = 0;
    ForeignFn m_foreign;
};

// Installs a tracer on this thread for the scope.
class TracerScope
{
public:
    explicit TracerScope(DispatchTracer *t) : m_previous(setDispatchTracer(t)) {}
    ~TracerScope() { setDispatchTracer(m_previous); }
    TracerScope(const TracerScope &) = delete;
    TracerScope &operator=(const TracerScope &) = delete;

private:
    DispatchTracer *m_previous;
};

// A meta tensor with the geometry of `m`.
Tensor metaTensor(const TensorMeta &m);
// The TensorMeta of a tensor (aliasOf left at -1).
TensorMeta metaOf(const Tensor &t);
// The TensorMeta of an op's output, with aliasOf set when it views an argument.
TensorMeta outputMeta(const Args &args, const Tensor &out);
// A node's arguments as op arguments, each reference replaced by tensorFor(reference).
Args argsWith(const Node &node, const std::function<Tensor(const NodeRef &)> &tensorFor);
// A node's arguments as op arguments: each reference becomes a meta tensor
// (or the attribute's value for get_attr nodes when `realAttrs`).
Args nodeArgs(const Graph &graph, const Node &node, bool realAttrs = false);

} // namespace fusescope::compiler
