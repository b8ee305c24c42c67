#pragma once

#include "core/nn/module.h"

namespace fusescope::nn {

class ReLU : public Module
{
public:
    ReLU() : Module("ReLU") {}
    using Module::forward;
    Tensor forward(const Tensor &x) override;
};

// approximate: "none" (the erf form) or "tanh".
class GELU : public Module
{
public:
    explicit GELU(std::string approximate = "none");
    using Module::forward;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

private:
    std::string m_approximate;
};

class SiLU : public Module
{
public:
    SiLU() : Module("SiLU") {}
    using Module::forward;
    Tensor forward(const Tensor &x) override;
};

// Identity in both modes. In eval that is PyTorch's behaviour; in train it is
// a deliberate difference: nothing here trains, and random masks would make
// runs irreproducible and comparisons of eager and compiled outputs meaningless.
class Dropout : public Module
{
public:
    explicit Dropout(double p = 0.5);
    using Module::forward;
    Tensor forward(const Tensor &x) override { return x; }
    std::string extraRepr() const override;

private:
    double m_p;
};

} // namespace fusescope::nn
