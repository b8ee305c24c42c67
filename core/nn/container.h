#pragma once

#include "core/nn/module.h"

#include <initializer_list>

namespace fusescope::nn {

// Children named "0", "1", ...; forward feeds each one's output to the next.
class Sequential : public Module
{
public:
    Sequential() : Module("Sequential") {}
    Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
    void append(std::shared_ptr<Module> module);
    size_t size() const { return children().size(); }
    const std::shared_ptr<Module> &at(size_t index) const;

    using Module::forward;
    Tensor forward(const Tensor &x) override;
};

// Holds modules ("0", "1", ...) for a parent's forward to call; has no forward of its own.
class ModuleList : public Module
{
public:
    ModuleList() : Module("ModuleList") {}
    ModuleList(std::initializer_list<std::shared_ptr<Module>> modules);
    void append(std::shared_ptr<Module> module);
    size_t size() const { return children().size(); }
    const std::shared_ptr<Module> &at(size_t index) const;

    Tensor forward(const std::vector<Tensor> &inputs) override;
    Tensor forward(const Tensor &x) override;
};

} // namespace fusescope::nn
