#include "core/compiler/graph_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace fusescope::compiler {

using nlohmann::json;

namespace {

// JSON has no infinities or NaN; they travel as strings.
json doubleToJson(double d)
{
    if (std::isnan(d))
        return "nan";
    if (std::isinf(d))
        return d > 0 ? "inf" : "-inf";
    return d;
}

double doubleFromJson(const json &j)
{
    if (j.is_number())
        return j.get<double>();
    const std::string s = j.get<std::string>();
    if (s == "nan")
        return NAN;
    if (s == "inf")
        return INFINITY;
    if (s == "-inf")
        return -INFINITY;
    throw Error("graph JSON: '" + s + "' is not a number");
}

DType dtypeFromJson(const json &j)
{
    DType t;
    if (!parseDType(j.get<std::string>(), t))
        throw Error("graph JSON: unknown dtype '" + j.get<std::string>() + "'");
    return t;
}

json metaToJson(const TensorMeta &m)
{
    json j{{"shape", m.sizes}, {"strides", m.strides}, {"offset", m.offset}, {"dtype", dtypeName(m.dtype)}};
    if (m.aliasOf >= 0)
        j["alias_of"] = m.aliasOf;
    return j;
}

TensorMeta metaFromJson(const json &j)
{
    TensorMeta m;
    m.sizes = j.at("shape").get<Shape>();
    m.strides = j.at("strides").get<Shape>();
    m.offset = j.at("offset").get<int64_t>();
    m.dtype = dtypeFromJson(j.at("dtype"));
    m.aliasOf = j.value("alias_of", -1);
    if (m.strides.size() != m.sizes.size())
        throw Error("graph JSON: strides " + shapeStr(m.strides) + " do not match shape " + shapeStr(m.sizes));
    return m;
}

json refToJson(const NodeRef &r)
{
    return json::array({r.node->id, r.index});
}

json argToJson(const Arg &a)
{
    switch (a.kind) {
    case Arg::Kind::Const: return valueToJson(a.constant);
    case Arg::Kind::Ref: return json{{"ref", refToJson(a.ref())}};
    case Arg::Kind::RefList: {
        json list = json::array();
        for (const NodeRef &r : a.refs)
            list.push_back(refToJson(r));
        return json{{"refs", list}};
    }
    }
    return nullptr;
}

json nodeToJson(const Node &n)
{
    json args = json::array();
    for (const Arg &a : n.args())
        args.push_back(argToJson(a));
    json outs = json::array();
    for (const TensorMeta &m : n.outputs)
        outs.push_back(metaToJson(m));
    json j{{"id", n.id}, {"name", n.name}, {"op", nodeKindName(n.kind)}, {"target", n.target},
           {"args", args}, {"outputs", outs}, {"module", n.modulePath}, {"origins", n.origins}};
    if (!n.kernel.empty())
        j["kernel"] = n.kernel;
    return j;
}

} // namespace

json valueToJson(const Value &v)
{
    if (v.isNone())
        return json{{"none", nullptr}};
    if (v.isBool())
        return json{{"bool", v.toBool()}};
    if (v.isInt())
        return json{{"int", v.toInt()}};
    if (v.isDouble())
        return json{{"float", doubleToJson(v.toDouble())}};
    if (v.isIntList())
        return json{{"ints", v.toIntList()}};
    if (v.isString())
        return json{{"str", v.toStringRef()}};
    if (v.isDType())
        return json{{"dtype", dtypeName(v.toDType())}};
    throw Error("graph JSON: a tensor value cannot be a constant argument (" + v.repr() + ")");
}

Value valueFromJson(const json &j)
{
    if (!j.is_object() || j.size() != 1)
        throw Error("graph JSON: a constant must be an object with one key, got " + j.dump());
    // Iterate the object itself: items() is a temporary whose references die with it.
    const auto it = j.begin();
    const std::string key = it.key();
    const json &v = it.value();
    if (key == "none")
        return Value();
    if (key == "bool")
        return Value(v.get<bool>());
    if (key == "int")
        return Value(v.get<int64_t>());
    if (key == "float")
        return Value(doubleFromJson(v));
    if (key == "ints")
        return Value(v.get<IntList>());
    if (key == "str")
        return Value(v.get<std::string>());
    if (key == "dtype")
        return Value(dtypeFromJson(v));
    throw Error("graph JSON: unknown constant kind '" + key + "'");
}

json graphToJson(const Graph &graph)
{
    json nodes = json::array();
    for (const Node *n : graph.nodes())
        nodes.push_back(nodeToJson(*n));
    json attrs = json::object();
    for (const auto &[name, t] : graph.attrs)
        attrs[name] = json{{"shape", t.sizes()}, {"dtype", dtypeName(t.dtype())}};
    return json{{"format", kGraphJsonFormat}, {"version", kGraphJsonVersion}, {"next_id", graph.nextId()},
                {"nodes", nodes}, {"attrs", attrs}};
}

namespace {

NodeRef refFromJson(const json &j, const std::map<int, Node *> &byId)
{
    const int id = j.at(0).get<int>();
    auto it = byId.find(id);
    if (it == byId.end())
        throw Error("graph JSON: reference to node " + std::to_string(id) + ", which is not defined before");
    return {it->second, j.at(1).get<int>()};
}

Arg argFromJson(const json &j, const std::map<int, Node *> &byId)
{
    if (j.contains("ref"))
        return Arg::of(refFromJson(j.at("ref"), byId));
    if (j.contains("refs")) {
        std::vector<NodeRef> refs;
        for (const json &r : j.at("refs"))
            refs.push_back(refFromJson(r, byId));
        return Arg::list(std::move(refs));
    }
    return Arg::of(valueFromJson(j));
}

void readNode(Graph &g, const json &jn, std::map<int, Node *> &byId)
{
    std::vector<Arg> args;
    for (const json &a : jn.at("args"))
        args.push_back(argFromJson(a, byId));
    std::vector<TensorMeta> outs;
    for (const json &m : jn.at("outputs"))
        outs.push_back(metaFromJson(m));
    const int id = jn.at("id").get<int>();
    if (byId.count(id))
        throw Error("graph JSON: node id " + std::to_string(id) + " appears twice");
    const std::string name = jn.at("name").get<std::string>();
    Node *n = g.add(nodeKindFromName(jn.at("op").get<std::string>()), jn.at("target").get<std::string>(),
                    std::move(args), std::move(outs), name);
    if (n->name != name)
        throw Error("graph JSON: node name '" + name + "' appears twice");
    n->id = id;
    n->modulePath = jn.at("module").get<std::string>();
    n->origins = jn.at("origins").get<std::vector<int>>();
    n->kernel = jn.value("kernel", std::string());
    byId[id] = n;
}

} // namespace

Graph graphFromJson(const json &j)
{
    try {
        if (j.at("format") != kGraphJsonFormat)
            throw Error("graph JSON: format is not '" + std::string(kGraphJsonFormat) + "'");
        if (j.at("version").get<int>() > kGraphJsonVersion)
            throw Error("graph JSON: version " + std::to_string(j.at("version").get<int>())
                        + " is newer than this build reads (" + std::to_string(kGraphJsonVersion) + ")");
        Graph g;
        for (const auto &[name, a] : j.at("attrs").items())
            g.attrs[name] = Tensor::empty(a.at("shape").get<Shape>(), dtypeFromJson(a.at("dtype")), kMeta);
        std::map<int, Node *> byId;
        for (const json &jn : j.at("nodes"))
            readNode(g, jn, byId);
        g.setNextId(j.at("next_id").get<int>());
        g.lint();
        return g;
    } catch (const json::exception &e) {
        throw Error(std::string("graph JSON: ") + e.what());
    }
}

namespace {

// graphToJson(graph).dump() written directly: compile stages snapshot the
// graph after every pass, and building the JSON tree first took a third of
// DenseNet-121's compile. Objects list their keys sorted, as the tree's
// std::map does; strings and doubles that need more than copying go through
// nlohmann's own writer, so the text (and its errors) stay the same.
class CompactWriter
{
public:
    std::string text;

    void string(const std::string &s)
    {
        const bool plain = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c != '"' && c != '\\'; });
        if (!plain) {
            text += json(s).dump();
            return;
        }
        text += '"';
        text += s;
        text += '"';
    }
    // `"k":`, after a comma unless it opens its object.
    void key(const char *k, bool first = false)
    {
        text += first ? "\"" : ",\"";
        text += k;
        text += "\":";
    }
    template <typename T> void number(T v) { text += std::to_string(v); }
    // [write(item), ...]
    template <typename Items, typename F> void list(const Items &items, F &&write)
    {
        text += '[';
        bool first = true;
        for (const auto &item : items) {
            if (!first)
                text += ',';
            first = false;
            write(item);
        }
        text += ']';
    }
    template <typename T> void numbers(const std::vector<T> &v)
    {
        list(v, [&](T n) { number(n); });
    }
    void ref(const NodeRef &r)
    {
        text += '[';
        number(r.node->id);
        text += ',';
        number(r.index);
        text += ']';
    }

    void value(const Value &v)
    {
        text += '{';
        if (v.isNone()) {
            key("none", true);
            text += "null";
        } else if (v.isBool()) {
            key("bool", true);
            text += v.toBool() ? "true" : "false";
        } else if (v.isInt()) {
            key("int", true);
            number(v.toInt());
        } else if (v.isDouble()) {
            key("float", true);
            text += doubleToJson(v.toDouble()).dump();
        } else if (v.isIntList()) {
            key("ints", true);
            numbers(v.toIntList());
        } else if (v.isString()) {
            key("str", true);
            string(v.toStringRef());
        } else if (v.isDType()) {
            key("dtype", true);
            string(dtypeName(v.toDType()));
        } else {
            valueToJson(v); // throws, naming the value
        }
        text += '}';
    }

    void arg(const Arg &a)
    {
        if (a.kind == Arg::Kind::Const) {
            value(a.constant);
            return;
        }
        text += '{';
        if (a.kind == Arg::Kind::Ref) {
            key("ref", true);
            ref(a.ref());
        } else {
            key("refs", true);
            list(a.refs, [&](const NodeRef &r) { ref(r); });
        }
        text += '}';
    }

    void meta(const TensorMeta &m)
    {
        text += '{';
        const bool alias = m.aliasOf >= 0;
        if (alias) {
            key("alias_of", true);
            number(m.aliasOf);
        }
        key("dtype", !alias);
        string(dtypeName(m.dtype));
        key("offset");
        number(m.offset);
        key("shape");
        numbers(m.sizes);
        key("strides");
        numbers(m.strides);
        text += '}';
    }

    void node(const Node &n)
    {
        text += '{';
        key("args", true);
        list(n.args(), [&](const Arg &a) { arg(a); });
        key("id");
        number(n.id);
        if (!n.kernel.empty()) {
            key("kernel");
            string(n.kernel);
        }
        key("module");
        string(n.modulePath);
        key("name");
        string(n.name);
        key("op");
        string(nodeKindName(n.kind));
        key("origins");
        numbers(n.origins);
        key("outputs");
        list(n.outputs, [&](const TensorMeta &m) { meta(m); });
        key("target");
        string(n.target);
        text += '}';
    }

    void graph(const Graph &g)
    {
        text += '{';
        key("attrs", true);
        text += '{';
        bool first = true;
        for (const auto &[name, t] : g.attrs) {
            if (!first)
                text += ',';
            first = false;
            string(name);
            text += ':';
            text += '{';
            key("dtype", true);
            string(dtypeName(t.dtype()));
            key("shape");
            numbers(t.sizes());
            text += '}';
        }
        text += '}';
        key("format");
        string(kGraphJsonFormat);
        key("next_id");
        number(g.nextId());
        key("nodes");
        list(g.nodes(), [&](const Node *n) { node(*n); });
        key("version");
        number(kGraphJsonVersion);
        text += '}';
    }
};

} // namespace

std::string graphToJsonText(const Graph &graph, int indent)
{
    if (indent >= 0)
        return graphToJson(graph).dump(indent);
    CompactWriter w;
    w.graph(graph);
    return std::move(w.text);
}

Graph graphFromJsonText(const std::string &text)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception &e) {
        throw Error(std::string("graph JSON: ") + e.what());
    }
    return graphFromJson(j);
}

} // namespace fusescope::compiler
