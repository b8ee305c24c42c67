#include "core/nn/container.h"

namespace fusescope::nn {

namespace {

const std::shared_ptr<Module> &indexed(const Module &m, size_t index)
{
    if (index >= m.children().size())
        throw Error("nn." + m.typeName() + ": index " + std::to_string(index) + " is out of range for "
                    + std::to_string(m.children().size()) + " modules");
    return m.children()[index].second;
}

} // namespace

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules)
    : Module("Sequential")
{
    for (const auto &m : modules)
        append(m);
}

void Sequential::append(std::shared_ptr<Module> module)
{
    registerModule(std::to_string(size()), std::move(module));
}

const std::shared_ptr<Module> &Sequential::at(size_t index) const
{
    return indexed(*this, index);
}

Tensor Sequential::forward(const Tensor &x)
{
    Tensor y = x;
    for (const auto &[name, m] : children())
        y = (*m)(y);
    return y;
}

ModuleList::ModuleList(std::initializer_list<std::shared_ptr<Module>> modules)
    : Module("ModuleList")
{
    for (const auto &m : modules)
        append(m);
}

void ModuleList::append(std::shared_ptr<Module> module)
{
    registerModule(std::to_string(size()), std::move(module));
}

const std::shared_ptr<Module> &ModuleList::at(size_t index) const
{
    return indexed(*this, index);
}

Tensor ModuleList::forward(const std::vector<Tensor> &)
{
    throw Error("nn.ModuleList: is a container without forward; call its modules from the parent's forward");
}

Tensor ModuleList::forward(const Tensor &x)
{
    return forward(std::vector<Tensor>{x});
}

} // namespace fusescope::nn
