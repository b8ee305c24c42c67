#pragma once
// The compiler's graph IR, shaped like torch.fx: a Graph of Nodes in
// topological order. Nodes are changed only through Graph's methods, which
// keep every node's users consistent; lint() checks the invariants after each
// pass. Every node carries origins: the ids of the captured nodes it came
// from, so any later artifact maps back to the first graph.

#include "core/ops/value.h"

#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusescope::compiler {

enum class NodeKind { Placeholder, GetAttr, CallFunction, Output };
const char *nodeKindName(NodeKind kind); // "placeholder", "get_attr", "call_function", "output"
NodeKind nodeKindFromName(const std::string &name); // throws Error

// The geometry of one output. View outputs alias an input's storage: their
// strides and offset are relative to that storage.
struct TensorMeta {
    Shape sizes;
    Shape strides;
    int64_t offset = 0;
    DType dtype = DType::F32;
    int aliasOf = -1; // index of the argument whose storage this output views, or -1

    int64_t numel() const { return numelOf(sizes); }
    int64_t nbytes() const { return numel() * static_cast<int64_t>(itemSize(dtype)); }
    bool operator==(const TensorMeta &) const = default;
};

class Node;

// One output of a node.
struct NodeRef {
    Node *node = nullptr;
    int index = 0;
    bool operator==(const NodeRef &) const = default;
};

// An argument: a constant, one node output, or a list of them (Tensor[]).
struct Arg {
    enum class Kind { Const, Ref, RefList };
    Kind kind = Kind::Const;
    Value constant;
    std::vector<NodeRef> refs;

    static Arg of(Value v) { return Arg{Kind::Const, std::move(v), {}}; }
    static Arg of(NodeRef r) { return Arg{Kind::Ref, {}, {r}}; }
    static Arg list(std::vector<NodeRef> rs) { return Arg{Kind::RefList, {}, std::move(rs)}; }
    bool isRef() const { return kind == Kind::Ref; }
    NodeRef ref() const { return refs.front(); }
};

class Node
{
public:
    int id = 0;           // unique in the graph; captured nodes' ids are the origins
    std::string name;     // unique, a valid identifier
    NodeKind kind = NodeKind::CallFunction;
    std::string target;   // op name, parameter path, or input name
    std::vector<TensorMeta> outputs;
    std::string modulePath; // "layer1.0.conv1"
    std::vector<int> origins;
    std::string kernel;   // the fused kernel holding this node, after `fuse`

    const std::vector<Arg> &args() const { return m_args; }
    // Distinct nodes that read any output of this one, in the order they were added.
    const std::vector<Node *> &users() const { return m_users; }
    const TensorMeta &meta(int index = 0) const { return outputs.at(static_cast<size_t>(index)); }
    NodeRef out(int index = 0) { return {this, index}; }
    // Every node output this one reads, in argument order (duplicates kept).
    std::vector<NodeRef> inputs() const;

private:
    friend class Graph;
    std::vector<Arg> m_args;
    std::vector<Node *> m_users;
};

class Graph
{
public:
    Graph() = default;
    Graph(const Graph &other); // deep copy
    Graph &operator=(const Graph &other);
    Graph(Graph &&) noexcept = default;
    Graph &operator=(Graph &&) noexcept = default;

    // Appends (or inserts before `before`) a node; its name is made unique
    // from `name`. Origins default to the new node's own id.
    Node *add(NodeKind kind, const std::string &target, std::vector<Arg> args, std::vector<TensorMeta> outputs,
              const std::string &name, Node *before = nullptr);
    void setArgs(Node *node, std::vector<Arg> args);
    // Points every reader of `from` at `to` instead.
    void replaceUses(NodeRef from, NodeRef to);
    // Removes a node nobody reads; throws Error otherwise.
    void erase(Node *node);
    // Gives `node` the name `name`, an identifier no other node has; throws Error otherwise.
    void rename(Node *node, const std::string &name);
    // Moves `node` to just before `before`.
    void moveBefore(Node *node, Node *before);

    std::vector<Node *> nodes() const;
    std::vector<Node *> placeholders() const;
    Node *outputNode() const; // null before the output is added
    Node *findById(int id) const;
    Node *findByName(const std::string &name) const;
    size_t size() const { return m_nodes.size(); }
    int nextId() const { return m_nextId; }
    // The id the next new node gets; must exceed every id in the graph.
    void setNextId(int next);

    // Parameter and constant values of get_attr nodes, by target.
    std::map<std::string, Tensor> attrs;

    // Throws Error naming the node and the broken invariant: order, users,
    // unique names and ids, one output node, references to live nodes.
    void lint() const;

private:
    void addUser(Node *producer, Node *user);
    void dropUser(Node *producer, Node *user);
    std::string uniqueName(const std::string &base);

    using NodeList = std::list<std::unique_ptr<Node>>;
    NodeList::iterator where(const Node *node, const char *what) const;

    NodeList m_nodes;
    // Where each node is and who holds each name: passes over large graphs
    // (DenseNet-121's 900 nodes) erased and named nodes by scanning the list.
    std::unordered_map<const Node *, NodeList::iterator> m_where;
    std::unordered_map<std::string, Node *> m_byName;
    std::map<std::string, int> m_nameCounts;
    int m_nextId = 0;
};

// A valid identifier from an op or parameter name: "aten.add" -> "add", "layer1.0.w" -> "layer1_0_w".
std::string identifierFor(const std::string &text);

// The number an argument holds: a constant, or a floating parameter of one
// element (ONNX's scalars are 0-d initializers); nothing otherwise.
std::optional<double> scalarOf(const Graph &graph, const Arg &a);

} // namespace fusescope::compiler
