#pragma once
// Seeded initializers with PyTorch's distributions, so a model built from
// one seed has the same weights on every machine (not PyTorch's values:
// its generator differs, only the distributions match).

#include "core/tensor/factory.h"

namespace fusescope::nn::init {

// uniform(-bound, bound), f32.
Tensor uniform(const Shape &shape, double bound, Generator &gen);
// normal(0, std), f32.
Tensor normal(const Shape &shape, double std, Generator &gen);

// fan_in / fan_out of a weight [out, in, *kernel] as torch.nn.init computes them.
int64_t fanIn(const Shape &weightShape);
int64_t fanOut(const Shape &weightShape);

// PyTorch's default of Linear and Conv: kaiming_uniform(a=sqrt(5)) for the
// weight and uniform(+-1/sqrt(fan_in)) for the bias work out to the same bound.
Tensor defaultWeight(const Shape &shape, Generator &gen);
Tensor defaultBias(int64_t size, int64_t fanIn, Generator &gen);
// kaiming_normal(mode='fan_out', nonlinearity='relu'): torchvision's ResNet convs.
Tensor kaimingNormalFanOut(const Shape &shape, Generator &gen);
// xavier_uniform: MultiheadAttention's packed in_proj_weight.
Tensor xavierUniform(const Shape &shape, Generator &gen);

} // namespace fusescope::nn::init
