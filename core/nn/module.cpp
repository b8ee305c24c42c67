#include "core/nn/module.h"

#include <algorithm>

namespace fusescope::nn {

namespace {

thread_local std::vector<ModuleFrame> t_stack;

std::string joinPath(const std::string &prefix, const std::string &name)
{
    return prefix.empty() ? name : prefix + "." + name;
}

NamedTensor *findIn(std::vector<NamedTensor> &list, const std::string &name)
{
    auto it = std::find_if(list.begin(), list.end(), [&](const NamedTensor &e) { return e.first == name; });
    return it == list.end() ? nullptr : &*it;
}

const NamedTensor *findIn(const std::vector<NamedTensor> &list, const std::string &name)
{
    auto it = std::find_if(list.begin(), list.end(), [&](const NamedTensor &e) { return e.first == name; });
    return it == list.end() ? nullptr : &*it;
}

} // namespace

Module::Module(std::string typeName)
    : m_typeName(std::move(typeName))
{
}

Module::~Module()
{
    // A child kept alive elsewhere must not point at a dead parent.
    for (auto &[name, child] : m_children) {
        if (child->m_parent == this)
            child->m_parent = nullptr;
    }
}

std::string Module::modulePath() const
{
    if (!m_parent)
        return {};
    return joinPath(m_parent->modulePath(), m_name);
}

Tensor Module::operator()(const Tensor &x)
{
    ModuleScope scope(*this);
    return forward(x);
}

Tensor Module::operator()(const std::vector<Tensor> &inputs)
{
    ModuleScope scope(*this);
    return forward(inputs);
}

Tensor Module::forward(const std::vector<Tensor> &inputs)
{
    if (inputs.size() != 1)
        throw Error("nn." + m_typeName + ": forward takes 1 input, got " + std::to_string(inputs.size()));
    return forward(inputs.front());
}

Tensor Module::forward(const Tensor &)
{
    throw Error("nn." + m_typeName + ": has no single-input forward; call it with a list of inputs");
}

// --- registration ------------------------------------------------------------

void Module::checkNewName(const std::string &name) const
{
    if (name.empty() || name.find('.') != std::string::npos)
        throw Error("nn." + m_typeName + ": invalid attribute name '" + name + "' (empty or contains '.')");
    const bool taken = findIn(m_parameters, name) || findIn(m_buffers, name)
        || std::any_of(m_children.begin(), m_children.end(), [&](const auto &c) { return c.first == name; });
    if (taken)
        throw Error("nn." + m_typeName + ": attribute '" + name + "' already exists");
}

void Module::registerParameter(const std::string &name, Tensor value)
{
    checkNewName(name);
    m_parameters.emplace_back(name, std::move(value));
}

void Module::registerBuffer(const std::string &name, Tensor value, bool persistent)
{
    checkNewName(name);
    m_buffers.emplace_back(name, std::move(value));
    if (!persistent)
        m_nonPersistent.push_back(name);
}

void Module::attachChild(const std::string &name, std::shared_ptr<Module> module)
{
    checkNewName(name);
    if (!module)
        throw Error("nn." + m_typeName + ": child '" + name + "' is null");
    // One parent per module keeps modulePath() unambiguous; tie weights by
    // sharing tensors instead.
    if (module->m_parent)
        throw Error("nn." + m_typeName + ": module '" + name + "' already belongs to '"
                    + module->m_parent->modulePath() + "' (" + module->m_parent->m_typeName + ")");
    module->m_parent = this;
    module->m_name = name;
    module->m_training = m_training;
    m_children.emplace_back(name, std::move(module));
}

// --- queries -----------------------------------------------------------------

void Module::collect(const std::string &prefix, bool params, bool buffers, bool persistentOnly,
                     std::vector<NamedTensor> &out) const
{
    if (params) {
        for (const auto &[name, t] : m_parameters)
            out.emplace_back(joinPath(prefix, name), t);
    }
    if (buffers) {
        for (const auto &[name, t] : m_buffers) {
            const bool skip = persistentOnly
                && std::find(m_nonPersistent.begin(), m_nonPersistent.end(), name) != m_nonPersistent.end();
            if (!skip)
                out.emplace_back(joinPath(prefix, name), t);
        }
    }
    for (const auto &[name, child] : m_children)
        child->collect(joinPath(prefix, name), params, buffers, persistentOnly, out);
}

std::vector<NamedTensor> Module::namedParameters() const
{
    std::vector<NamedTensor> out;
    collect({}, true, false, false, out);
    return out;
}

std::vector<NamedTensor> Module::namedBuffers() const
{
    std::vector<NamedTensor> out;
    collect({}, false, true, false, out);
    return out;
}

std::vector<NamedTensor> Module::stateDict() const
{
    std::vector<NamedTensor> out;
    collect({}, true, true, true, out);
    return out;
}

std::vector<std::pair<std::string, const Module *>> Module::namedModules() const
{
    std::vector<std::pair<std::string, const Module *>> out{{std::string(), this}};
    for (const auto &[name, child] : m_children) {
        for (auto &[path, m] : child->namedModules())
            out.emplace_back(path.empty() ? name : name + "." + path, m);
    }
    return out;
}

int64_t Module::numParameters() const
{
    int64_t n = 0;
    for (const auto &[name, t] : namedParameters())
        n += t.numel();
    return n;
}

const Tensor &Module::parameter(const std::string &name) const
{
    if (const NamedTensor *e = findIn(m_parameters, name))
        return e->second;
    throw Error("nn." + m_typeName + ": no parameter '" + name + "'");
}

std::optional<Tensor> Module::optionalParameter(const std::string &name) const
{
    if (const NamedTensor *e = findIn(m_parameters, name))
        return e->second;
    return std::nullopt;
}

const Tensor &Module::buffer(const std::string &name) const
{
    if (const NamedTensor *e = findIn(m_buffers, name))
        return e->second;
    throw Error("nn." + m_typeName + ": no buffer '" + name + "'");
}

Module &Module::child(const std::string &name) const
{
    for (const auto &[n, c] : m_children) {
        if (n == name)
            return *c;
    }
    throw Error("nn." + m_typeName + ": no submodule '" + name + "'");
}

Tensor *Module::findOwn(const std::string &name)
{
    if (NamedTensor *e = findIn(m_parameters, name))
        return &e->second;
    if (NamedTensor *e = findIn(m_buffers, name))
        return &e->second;
    return nullptr;
}

void Module::setTensor(const std::string &dottedName, const Tensor &value)
{
    const size_t dot = dottedName.find('.');
    if (dot != std::string::npos) {
        child(dottedName.substr(0, dot)).setTensor(dottedName.substr(dot + 1), value);
        return;
    }
    Tensor *slot = findOwn(dottedName);
    if (!slot)
        throw Error("nn." + m_typeName + ": no parameter or buffer '" + dottedName + "'");
    if (!value.defined() || value.sizes() != slot->sizes())
        throw Error("nn." + m_typeName + ": '" + dottedName + "' has shape " + shapeStr(slot->sizes())
                    + ", cannot set a tensor of shape " + (value.defined() ? shapeStr(value.sizes()) : "(undefined)"));
    *slot = value;
}

void Module::to(DType dtype)
{
    for (auto *list : {&m_parameters, &m_buffers}) {
        for (auto &[name, t] : *list) {
            if (isFloating(t.dtype()) && t.dtype() != dtype)
                t = t.to(dtype);
        }
    }
    for (auto &[name, c] : m_children)
        c->to(dtype);
}

void Module::train(bool on)
{
    m_training = on;
    for (auto &[name, c] : m_children)
        c->train(on);
}

// --- printing ----------------------------------------------------------------

void Module::reprInto(std::string &out, int indent) const
{
    out += m_typeName + "(" + extraRepr();
    if (m_children.empty()) {
        out += ")";
        return;
    }
    const std::string pad(static_cast<size_t>(indent + 2), ' ');
    out += "\n";
    for (const auto &[name, c] : m_children) {
        out += pad + "(" + name + "): ";
        c->reprInto(out, indent + 2);
        out += "\n";
    }
    out += std::string(static_cast<size_t>(indent), ' ') + ")";
}

std::string Module::repr() const
{
    std::string out;
    reprInto(out, 0);
    return out;
}

// --- module stack ------------------------------------------------------------

ModuleScope::ModuleScope(const Module &module)
{
    t_stack.push_back({module.modulePath(), module.typeName(), &module});
}

ModuleScope::ModuleScope(std::string path, std::string typeName)
{
    t_stack.push_back({std::move(path), std::move(typeName), nullptr});
}

ModuleScope::~ModuleScope()
{
    t_stack.pop_back();
}

const std::string &currentModulePath()
{
    static const std::string empty;
    return t_stack.empty() ? empty : t_stack.back().path;
}

const std::vector<ModuleFrame> &moduleStack()
{
    return t_stack;
}

} // namespace fusescope::nn
