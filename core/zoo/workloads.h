#pragma once
// The small benchmark workloads: a pointwise chain, softmax + layer norm and an MLP.

#include "core/nn/container.h"
#include "core/tensor/factory.h"

namespace fusescope::zoo {

// y = gelu(x * weight + bias) * sigmoid(x) + x; weight and bias [features]
// drawn uniform(-1, 1).
class PointwiseChain : public nn::Module
{
public:
    PointwiseChain(int64_t features, Generator &gen);
    using Module::forward;
    Tensor forward(const Tensor &x) override;
};

// y = layer_norm(softmax(x, -1)) over the last dim, without affine parameters.
class SoftmaxLayerNorm : public nn::Module
{
public:
    explicit SoftmaxLayerNorm(double eps = 1e-5);
    using Module::forward;
    Tensor forward(const Tensor &x) override;

private:
    double m_eps;
};

// Linear(in, hidden) GELU Linear(hidden, hidden) GELU Linear(hidden, out) as a Sequential.
std::shared_ptr<nn::Sequential> makeMlp(int64_t in, int64_t hidden, int64_t out, Generator &gen);

} // namespace fusescope::zoo
