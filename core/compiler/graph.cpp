#include "core/compiler/graph.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <unordered_map>

namespace fusescope::compiler {

const char *nodeKindName(NodeKind kind)
{
    switch (kind) {
    case NodeKind::Placeholder: return "placeholder";
    case NodeKind::GetAttr: return "get_attr";
    case NodeKind::CallFunction: return "call_function";
    case NodeKind::Output: return "output";
    }
    return "?";
}

NodeKind nodeKindFromName(const std::string &name)
{
    for (NodeKind k : {NodeKind::Placeholder, NodeKind::GetAttr, NodeKind::CallFunction, NodeKind::Output}) {
        if (name == nodeKindName(k))
            return k;
    }
    throw Error("graph: unknown node kind '" + name + "'");
}

std::optional<double> scalarOf(const Graph &graph, const Arg &a)
{
    if (!a.isRef())
        return a.constant.isNumber() ? std::optional<double>(a.constant.toDouble()) : std::nullopt;
    const Node *n = a.ref().node;
    const auto it = graph.attrs.find(n->target);
    if (n->kind != NodeKind::GetAttr || it == graph.attrs.end())
        return std::nullopt;
    const Tensor &t = it->second;
    if (t.isMeta() || t.numel() != 1 || !isFloating(t.dtype()))
        return std::nullopt;
    return t.toDoubleVector().front();
}

std::string identifierFor(const std::string &text)
{
    std::string s = text.rfind("aten.", 0) == 0 ? text.substr(5) : text;
    for (char &c : s) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            c = '_';
    }
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front())))
        s.insert(s.begin(), '_');
    return s;
}

std::vector<NodeRef> Node::inputs() const
{
    std::vector<NodeRef> refs;
    for (const Arg &a : m_args)
        refs.insert(refs.end(), a.refs.begin(), a.refs.end());
    return refs;
}

// --- copying -------------------------------------------------------------------

Graph::Graph(const Graph &other)
{
    *this = other;
}

Graph &Graph::operator=(const Graph &other)
{
    if (this == &other)
        return *this;
    m_nodes.clear();
    m_where.clear();
    m_byName.clear();
    m_nameCounts = other.m_nameCounts;
    m_nextId = other.m_nextId;
    attrs = other.attrs;
    std::unordered_map<const Node *, Node *> map;
    for (const auto &n : other.m_nodes) {
        auto copy = std::make_unique<Node>(*n);
        copy->m_users.clear();
        map[n.get()] = copy.get();
        m_byName[copy->name] = copy.get();
        m_nodes.push_back(std::move(copy));
        m_where[m_nodes.back().get()] = std::prev(m_nodes.end());
    }
    for (const auto &n : m_nodes) {
        for (Arg &a : n->m_args) {
            for (NodeRef &r : a.refs)
                r.node = map.at(r.node);
        }
    }
    for (const auto &n : other.m_nodes) {
        for (const Node *u : n->m_users)
            map.at(n.get())->m_users.push_back(map.at(u));
    }
    return *this;
}

// --- mutation ------------------------------------------------------------------

std::string Graph::uniqueName(const std::string &base)
{
    const std::string id = identifierFor(base);
    std::string name = id;
    int &count = m_nameCounts[id];
    while (findByName(name))
        name = id + "_" + std::to_string(++count);
    return name;
}

Node *Graph::add(NodeKind kind, const std::string &target, std::vector<Arg> args, std::vector<TensorMeta> outputs,
                 const std::string &name, Node *before)
{
    auto node = std::make_unique<Node>();
    node->id = m_nextId++;
    node->name = uniqueName(name.empty() ? target : name);
    node->kind = kind;
    node->target = target;
    node->outputs = std::move(outputs);
    node->origins = {node->id};
    Node *raw = node.get();
    const auto pos = before ? where(before, "insertion point") : m_nodes.end();
    m_where[raw] = m_nodes.insert(pos, std::move(node));
    m_byName[raw->name] = raw;
    setArgs(raw, std::move(args));
    return raw;
}

Graph::NodeList::iterator Graph::where(const Node *node, const char *what) const
{
    const auto it = m_where.find(node);
    if (it == m_where.end())
        throw Error(std::string("graph: ") + what + " " + node->name + " is not in the graph");
    return it->second;
}

void Graph::addUser(Node *producer, Node *user)
{
    auto &users = producer->m_users;
    if (std::find(users.begin(), users.end(), user) == users.end())
        users.push_back(user);
}

void Graph::dropUser(Node *producer, Node *user)
{
    auto &users = producer->m_users;
    users.erase(std::remove(users.begin(), users.end(), user), users.end());
}

void Graph::setArgs(Node *node, std::vector<Arg> args)
{
    for (const NodeRef &r : node->inputs())
        dropUser(r.node, node);
    node->m_args = std::move(args);
    for (const NodeRef &r : node->inputs())
        addUser(r.node, node);
}

void Graph::replaceUses(NodeRef from, NodeRef to)
{
    const std::vector<Node *> users = from.node->m_users;
    for (Node *user : users) {
        std::vector<Arg> args = user->m_args;
        for (Arg &a : args) {
            for (NodeRef &r : a.refs) {
                if (r == from)
                    r = to;
            }
        }
        setArgs(user, std::move(args));
    }
}

void Graph::erase(Node *node)
{
    if (!node->m_users.empty())
        throw Error("graph: cannot erase " + node->name + ": " + node->m_users.front()->name + " reads it");
    const auto it = where(node, "erase:");
    setArgs(node, {});
    m_byName.erase(node->name);
    m_where.erase(node);
    m_nodes.erase(it);
}

void Graph::rename(Node *node, const std::string &name)
{
    where(node, "rename:");
    if (identifierFor(name) != name)
        throw Error("graph: cannot rename " + node->name + " to '" + name + "': not an identifier");
    const Node *holder = findByName(name);
    if (holder == node)
        return;
    if (holder)
        throw Error("graph: cannot rename " + node->name + " to " + name + ": another node has that name");
    m_byName.erase(node->name);
    node->name = name;
    m_byName[name] = node;
}

void Graph::moveBefore(Node *node, Node *before)
{
    // splice keeps every iterator, so m_where stays true.
    m_nodes.splice(where(before, "moveBefore:"), m_nodes, where(node, "moveBefore:"));
}

void Graph::setNextId(int next)
{
    for (const auto &n : m_nodes) {
        if (n->id >= next)
            throw Error("graph: next id " + std::to_string(next) + " does not exceed node id " + std::to_string(n->id));
    }
    m_nextId = next;
}

// --- queries -------------------------------------------------------------------

std::vector<Node *> Graph::nodes() const
{
    std::vector<Node *> out;
    out.reserve(m_nodes.size());
    for (const auto &n : m_nodes)
        out.push_back(n.get());
    return out;
}

std::vector<Node *> Graph::placeholders() const
{
    std::vector<Node *> out;
    for (const auto &n : m_nodes) {
        if (n->kind == NodeKind::Placeholder)
            out.push_back(n.get());
    }
    return out;
}

Node *Graph::outputNode() const
{
    for (auto it = m_nodes.rbegin(); it != m_nodes.rend(); ++it) {
        if ((*it)->kind == NodeKind::Output)
            return it->get();
    }
    return nullptr;
}

Node *Graph::findById(int id) const
{
    for (const auto &n : m_nodes) {
        if (n->id == id)
            return n.get();
    }
    return nullptr;
}

Node *Graph::findByName(const std::string &name) const
{
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : it->second;
}

// --- lint ----------------------------------------------------------------------

namespace {

[[noreturn]] void lintError(const Node &n, const std::string &what)
{
    throw Error("graph lint: node " + n.name + " (" + n.target + "): " + what);
}

void lintInputs(const Node &n, const std::set<const Node *> &seen)
{
    for (const NodeRef &r : n.inputs()) {
        if (!seen.count(r.node))
            lintError(n, "reads a node that is not defined before it");
        if (r.index < 0 || r.index >= static_cast<int>(r.node->outputs.size()))
            lintError(n, "reads output " + std::to_string(r.index) + " of " + r.node->name + ", which has "
                             + std::to_string(r.node->outputs.size()));
        const auto &users = r.node->users();
        if (std::find(users.begin(), users.end(), &n) == users.end())
            lintError(n, "is missing from the users of " + r.node->name);
    }
}

void lintUsers(const Node &n)
{
    std::set<const Node *> distinct(n.users().begin(), n.users().end());
    if (distinct.size() != n.users().size())
        lintError(n, "lists a user twice");
    for (const Node *u : n.users()) {
        const auto in = u->inputs();
        if (std::none_of(in.begin(), in.end(), [&](const NodeRef &r) { return r.node == &n; }))
            lintError(n, "lists " + u->name + " as a user, but it does not read this node");
    }
}

} // namespace

void Graph::lint() const
{
    std::set<const Node *> seen;
    std::set<std::string> names;
    std::set<int> ids;
    int outputs = 0;
    for (const auto &p : m_nodes) {
        const Node &n = *p;
        if (!names.insert(n.name).second)
            lintError(n, "its name is not unique");
        if (!ids.insert(n.id).second)
            lintError(n, "its id " + std::to_string(n.id) + " is not unique");
        if (n.id >= m_nextId)
            lintError(n, "its id is beyond the graph's id counter");
        if (outputs)
            lintError(n, "comes after the output node");
        if (n.kind == NodeKind::Output)
            ++outputs;
        if (n.kind == NodeKind::GetAttr && !attrs.count(n.target))
            lintError(n, "reads attribute '" + n.target + "', which the graph does not hold");
        if (n.kind != NodeKind::Output && n.outputs.empty())
            lintError(n, "has no outputs");
        lintInputs(n, seen);
        lintUsers(n);
        seen.insert(&n);
    }
    if (outputs != 1)
        throw Error("graph lint: the graph has " + std::to_string(outputs) + " output nodes, expected 1");
}

} // namespace fusescope::compiler
