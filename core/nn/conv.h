#pragma once

#include "core/nn/module.h"
#include "core/ops/value.h"
#include "core/tensor/factory.h"

namespace fusescope::nn {

// Pairs may be given as one number ({2} means {2, 2}).
struct Conv2dOptions {
    IntList stride{1, 1};
    IntList padding{0, 0};
    IntList dilation{1, 1};
    int64_t groups = 1;
    bool bias = true;
};

// weight [out, in/groups, kH, kW], bias [out]; zero padding.
class Conv2d : public Module
{
public:
    Conv2d(int64_t inChannels, int64_t outChannels, const IntList &kernelSize, Generator &gen,
           const Conv2dOptions &options = {});
    using Module::forward;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

    const Conv2dOptions &options() const { return m_options; }

private:
    int64_t m_in;
    int64_t m_out;
    IntList m_kernel;
    Conv2dOptions m_options;
};

class MaxPool2d : public Module
{
public:
    // An empty stride means stride = kernel size, as PyTorch.
    explicit MaxPool2d(const IntList &kernelSize, const IntList &stride = {}, const IntList &padding = {0, 0},
                       const IntList &dilation = {1, 1}, bool ceilMode = false);
    using Module::forward;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

private:
    IntList m_kernel;
    IntList m_stride;
    IntList m_padding;
    IntList m_dilation;
    bool m_ceilMode;
};

class AdaptiveAvgPool2d : public Module
{
public:
    explicit AdaptiveAvgPool2d(const IntList &outputSize);
    using Module::forward;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

private:
    IntList m_outputSize;
};

} // namespace fusescope::nn
