#include "core/compiler/graph_format.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace fusescope::compiler {

namespace {

std::string refName(const NodeRef &r)
{
    if (r.node->outputs.size() > 1)
        return r.node->name + "[" + std::to_string(r.index) + "]";
    return r.node->name;
}

std::string joinArgs(const Node &n)
{
    std::string s;
    for (const Arg &a : n.args()) {
        if (!s.empty())
            s += ", ";
        s += formatArg(a);
    }
    return s;
}

std::string pad(std::string s, size_t width)
{
    if (s.size() < width)
        s.append(width - s.size(), ' ');
    return s;
}

} // namespace

std::string formatConstant(const Value &v)
{
    if (v.isDouble()) {
        std::ostringstream out;
        out.precision(17);
        out << v.toDouble();
        std::string s = out.str();
        if (s.find_first_of(".einn") == std::string::npos)
            s += ".0";
        return s;
    }
    if (v.isString())
        return "'" + v.toStringRef() + "'";
    return v.repr();
}

std::string formatArg(const Arg &arg)
{
    switch (arg.kind) {
    case Arg::Kind::Const: return formatConstant(arg.constant);
    case Arg::Kind::Ref: return refName(arg.ref());
    case Arg::Kind::RefList: {
        std::string s = "[";
        for (size_t i = 0; i < arg.refs.size(); ++i)
            s += (i ? ", " : "") + refName(arg.refs[i]);
        return s + "]";
    }
    }
    return "?";
}

std::string formatOutputs(const Node &node)
{
    std::string s;
    for (const TensorMeta &m : node.outputs) {
        if (!s.empty())
            s += ", ";
        s += shapeStr(m.sizes) + " " + dtypeName(m.dtype);
    }
    return s;
}

std::string formatTable(const Graph &graph)
{
    struct Row {
        std::string cells[6];
    };
    std::vector<Row> rows{{{"opcode", "name", "target", "args", "output", "module"}}};
    for (const Node *n : graph.nodes())
        rows.push_back({{nodeKindName(n->kind), n->name, n->target, joinArgs(*n), formatOutputs(*n), n->modulePath}});
    size_t widths[6] = {};
    for (const Row &r : rows) {
        for (int c = 0; c < 6; ++c)
            widths[c] = std::min<size_t>(std::max(widths[c], r.cells[c].size()), 60);
    }
    std::string out;
    for (const Row &r : rows) {
        std::string line;
        for (int c = 0; c < 6; ++c)
            line += (c == 5 ? r.cells[c] : pad(r.cells[c], widths[c]) + "  ");
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string formatCode(const Graph &graph)
{
    std::string params;
    for (const Node *n : graph.placeholders())
        params += ", " + n->name;
    std::string out = "def forward(self" + params + "):\n";
    for (const Node *n : graph.nodes()) {
        std::string comment = "  # " + formatOutputs(*n);
        if (!n->modulePath.empty())
            comment += "  " + n->modulePath;
        if (!n->kernel.empty())
            comment += "  {" + n->kernel + "}";
        switch (n->kind) {
        case NodeKind::Placeholder: break;
        case NodeKind::GetAttr: out += "    " + n->name + " = self." + n->target + comment + "\n"; break;
        case NodeKind::CallFunction:
            out += "    " + n->name + " = " + n->target + "(" + joinArgs(*n) + ")" + comment + "\n";
            break;
        case NodeKind::Output: out += "    return (" + joinArgs(*n) + ")\n"; break;
        }
    }
    return out;
}

namespace {

std::string dotEscape(const std::string &s)
{
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

std::string dotNode(const Node &n)
{
    std::string label = n.kind == NodeKind::CallFunction ? n.target : std::string(nodeKindName(n.kind)) + " " + n.target;
    if (n.kind != NodeKind::Output)
        label += "\\n" + formatOutputs(n);
    const char *shape = n.kind == NodeKind::CallFunction ? "box" : "ellipse";
    return "  n" + std::to_string(n.id) + " [label=\"" + dotEscape(label) + "\", shape=" + shape + "];\n";
}

} // namespace

std::string formatDot(const Graph &graph)
{
    std::string out = "digraph G {\n  rankdir=TB;\n  node [fontname=\"DejaVu Sans\", fontsize=10];\n";
    std::map<std::string, std::vector<const Node *>> clusters;
    for (const Node *n : graph.nodes()) {
        if (n->kernel.empty())
            out += dotNode(*n);
        else
            clusters[n->kernel].push_back(n);
    }
    int index = 0;
    for (const auto &[kernel, members] : clusters) {
        out += "  subgraph cluster_" + std::to_string(index++) + " {\n  label=\"" + dotEscape(kernel)
            + "\"; style=rounded;\n";
        for (const Node *n : members)
            out += "  " + dotNode(*n);
        out += "  }\n";
    }
    for (const Node *n : graph.nodes()) {
        for (const Node *u : n->users())
            out += "  n" + std::to_string(n->id) + " -> n" + std::to_string(u->id) + ";\n";
    }
    return out + "}\n";
}

} // namespace fusescope::compiler
