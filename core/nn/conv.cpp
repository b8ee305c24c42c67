#include "core/nn/conv.h"

#include "core/nn/init.h"
#include "core/ops/conv.h"

namespace fusescope::nn {

namespace {

IntList pair(const IntList &v, const char *module, const char *what)
{
    if (v.size() == 1)
        return {v[0], v[0]};
    if (v.size() != 2)
        throw Error(std::string("nn.") + module + ": " + what + " needs 1 or 2 values, got "
                    + shapeStr(v));
    return v;
}

std::string pairStr(const IntList &v)
{
    return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")";
}

} // namespace

Conv2d::Conv2d(int64_t inChannels, int64_t outChannels, const IntList &kernelSize, Generator &gen,
               const Conv2dOptions &options)
    : Module("Conv2d")
    , m_in(inChannels)
    , m_out(outChannels)
    , m_kernel(pair(kernelSize, "Conv2d", "kernel_size"))
    , m_options(options)
{
    m_options.stride = pair(options.stride, "Conv2d", "stride");
    m_options.padding = pair(options.padding, "Conv2d", "padding");
    m_options.dilation = pair(options.dilation, "Conv2d", "dilation");
    const int64_t g = options.groups;
    if (inChannels <= 0 || outChannels <= 0 || g <= 0 || inChannels % g != 0 || outChannels % g != 0)
        throw Error("nn.Conv2d: channels " + std::to_string(inChannels) + " -> " + std::to_string(outChannels)
                    + " must be positive and divisible by groups " + std::to_string(g));
    const Shape weightShape{outChannels, inChannels / g, m_kernel[0], m_kernel[1]};
    registerParameter("weight", init::defaultWeight(weightShape, gen));
    if (options.bias)
        registerParameter("bias", init::defaultBias(outChannels, init::fanIn(weightShape), gen));
}

Tensor Conv2d::forward(const Tensor &x)
{
    return ops::conv2d(x, parameter("weight"), optionalParameter("bias"), m_options.stride, m_options.padding,
                       m_options.dilation, m_options.groups);
}

std::string Conv2d::extraRepr() const
{
    std::string s = std::to_string(m_in) + ", " + std::to_string(m_out) + ", kernel_size=" + pairStr(m_kernel)
        + ", stride=" + pairStr(m_options.stride);
    if (m_options.padding != IntList{0, 0})
        s += ", padding=" + pairStr(m_options.padding);
    if (m_options.dilation != IntList{1, 1})
        s += ", dilation=" + pairStr(m_options.dilation);
    if (m_options.groups != 1)
        s += ", groups=" + std::to_string(m_options.groups);
    if (!m_options.bias)
        s += ", bias=False";
    return s;
}

MaxPool2d::MaxPool2d(const IntList &kernelSize, const IntList &stride, const IntList &padding,
                     const IntList &dilation, bool ceilMode)
    : Module("MaxPool2d")
    , m_kernel(pair(kernelSize, "MaxPool2d", "kernel_size"))
    , m_stride(stride.empty() ? m_kernel : pair(stride, "MaxPool2d", "stride"))
    , m_padding(pair(padding, "MaxPool2d", "padding"))
    , m_dilation(pair(dilation, "MaxPool2d", "dilation"))
    , m_ceilMode(ceilMode)
{
}

Tensor MaxPool2d::forward(const Tensor &x)
{
    return ops::maxPool2d(x, m_kernel, m_stride, m_padding, m_dilation, m_ceilMode);
}

std::string MaxPool2d::extraRepr() const
{
    return "kernel_size=" + pairStr(m_kernel) + ", stride=" + pairStr(m_stride) + ", padding=" + pairStr(m_padding)
        + ", dilation=" + pairStr(m_dilation) + ", ceil_mode=" + (m_ceilMode ? "True" : "False");
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(const IntList &outputSize)
    : Module("AdaptiveAvgPool2d")
    , m_outputSize(pair(outputSize, "AdaptiveAvgPool2d", "output_size"))
{
}

Tensor AdaptiveAvgPool2d::forward(const Tensor &x)
{
    return ops::adaptiveAvgPool2d(x, m_outputSize);
}

std::string AdaptiveAvgPool2d::extraRepr() const
{
    return "output_size=" + pairStr(m_outputSize);
}

} // namespace fusescope::nn
