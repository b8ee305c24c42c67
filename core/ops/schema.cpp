#include "core/ops/schema.h"

#include <cctype>
#include <sstream>

namespace fusescope {
namespace {

std::string trim(const std::string &s)
{
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Splits on commas that are not inside brackets.
std::vector<std::string> splitTopLevel(const std::string &s)
{
    std::vector<std::string> parts;
    int depth = 0;
    std::string cur;
    for (char c : s) {
        if (c == '[' || c == '(')
            ++depth;
        if (c == ']' || c == ')')
            --depth;
        if (c == ',' && depth == 0) {
            parts.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!trim(cur).empty())
        parts.push_back(trim(cur));
    return parts;
}

[[noreturn]] void malformed(const std::string &text, const std::string &why)
{
    throw Error("op schema '" + text + "': " + why);
}

ArgType parseType(std::string t, bool &optional, const std::string &text)
{
    optional = !t.empty() && t.back() == '?';
    if (optional)
        t.pop_back();
    if (t == "Tensor") return ArgType::Tensor;
    if (t == "Tensor[]") return ArgType::TensorList;
    if (t == "int") return ArgType::Int;
    if (t.rfind("int[", 0) == 0) return ArgType::IntList;
    if (t == "float") return ArgType::Float;
    if (t == "bool") return ArgType::Bool;
    if (t == "Scalar") return ArgType::Scalar;
    if (t == "str") return ArgType::String;
    if (t == "ScalarType") return ArgType::DType;
    malformed(text, "unknown type '" + t + "'");
}

Value parseDefault(const std::string &lit, ArgType type, const std::string &text)
{
    if (lit == "None")
        return {};
    if (lit == "True" || lit == "False")
        return Value(lit == "True");
    if (type == ArgType::String) {
        if (lit.size() < 2)
            malformed(text, "bad string default " + lit);
        return Value(lit.substr(1, lit.size() - 2));
    }
    if (type == ArgType::DType) {
        DType d;
        if (!parseDType(lit, d))
            malformed(text, "bad dtype default " + lit);
        return Value(d);
    }
    if (type == ArgType::IntList) {
        if (lit.size() < 2 || lit.front() != '[' || lit.back() != ']')
            malformed(text, "an int[] default must be a list like [0, 0], got " + lit);
        IntList list;
        std::string inner = lit.substr(1, lit.size() - 2);
        for (const std::string &p : splitTopLevel(inner))
            list.push_back(std::stoll(p));
        return Value(list);
    }
    const bool isFloat = lit.find_first_of(".eE") != std::string::npos || lit == "inf" || lit == "-inf";
    if (isFloat || type == ArgType::Float)
        return Value(std::stod(lit));
    return Value(static_cast<int64_t>(std::stoll(lit)));
}

SchemaArg parseArg(const std::string &part, bool kwargOnly, const std::string &text)
{
    SchemaArg arg;
    arg.kwargOnly = kwargOnly;
    std::string decl = part;
    const auto eq = part.find('=');
    if (eq != std::string::npos) {
        decl = trim(part.substr(0, eq));
        arg.hasDefault = true;
    }
    const auto space = decl.rfind(' ');
    if (space == std::string::npos)
        malformed(text, "argument '" + part + "' needs a type and a name");
    arg.type = parseType(trim(decl.substr(0, space)), arg.optional, text);
    arg.name = trim(decl.substr(space + 1));
    if (arg.hasDefault) {
        try {
            arg.defaultValue = parseDefault(trim(part.substr(eq + 1)), arg.type, text);
        } catch (const std::logic_error &) {
            malformed(text, "bad default in '" + part + "'");
        }
    }
    return arg;
}

} // namespace

Schema Schema::parse(const std::string &text)
{
    Schema s;
    s.text = text;
    const auto open = text.find('(');
    const auto arrow = text.rfind("->");
    const auto close = arrow == std::string::npos ? std::string::npos : text.rfind(')', arrow);
    if (open == std::string::npos || close == std::string::npos || close < open)
        malformed(text, "expected 'name(args) -> returns'");
    s.name = trim(text.substr(0, open));
    if (s.name.empty())
        malformed(text, "missing op name");
    bool kwargOnly = false;
    for (const std::string &part : splitTopLevel(text.substr(open + 1, close - open - 1))) {
        if (part == "*") {
            kwargOnly = true;
            continue;
        }
        s.args.push_back(parseArg(part, kwargOnly, text));
    }
    std::string ret = trim(text.substr(arrow + 2));
    if (!ret.empty() && ret.front() == '(')
        ret = ret.substr(1, ret.size() - 2);
    for (const std::string &r : splitTopLevel(ret)) {
        bool optional = false;
        const ArgType t = parseType(r, optional, text);
        if (t != ArgType::Tensor && t != ArgType::TensorList)
            malformed(text, "ops return Tensor or Tensor[], not " + r);
        s.returns.push_back(t);
    }
    if (s.returns.empty())
        malformed(text, "no return type");
    return s;
}

int Schema::indexOf(const std::string &argName) const
{
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].name == argName)
            return static_cast<int>(i);
    }
    return -1;
}

const char *argTypeName(ArgType t)
{
    switch (t) {
    case ArgType::Tensor: return "Tensor";
    case ArgType::TensorList: return "Tensor[]";
    case ArgType::Int: return "int";
    case ArgType::IntList: return "int[]";
    case ArgType::Float: return "float";
    case ArgType::Bool: return "bool";
    case ArgType::Scalar: return "Scalar";
    case ArgType::String: return "str";
    case ArgType::DType: return "ScalarType";
    }
    return "?";
}

} // namespace fusescope
