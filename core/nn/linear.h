#pragma once

#include "core/nn/module.h"
#include "core/tensor/factory.h"

namespace fusescope::nn {

// y = x W^T + b. weight [out, in], bias [out].
class Linear : public Module
{
public:
    Linear(int64_t inFeatures, int64_t outFeatures, Generator &gen, bool bias = true);
    using Module::forward;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

    int64_t inFeatures() const { return m_in; }
    int64_t outFeatures() const { return m_out; }

private:
    int64_t m_in;
    int64_t m_out;
};

class Identity : public Module
{
public:
    Identity() : Module("Identity") {}
    using Module::forward;
    Tensor forward(const Tensor &x) override { return x; }
};

// torch.nn.Flatten: dims startDim..endDim into one (defaults keep the batch dim).
class Flatten : public Module
{
public:
    explicit Flatten(int64_t startDim = 1, int64_t endDim = -1);
    using Module::forward;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

private:
    int64_t m_startDim;
    int64_t m_endDim;
};

} // namespace fusescope::nn
