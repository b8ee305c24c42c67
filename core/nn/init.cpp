#include "core/nn/init.h"

#include <cmath>
#include <vector>

namespace fusescope::nn::init {

namespace {

template <typename Fn>
Tensor generate(const Shape &shape, Fn draw)
{
    Tensor t = Tensor::empty(shape, DType::F32);
    float *p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
        p[i] = static_cast<float>(draw());
    return t;
}

int64_t receptiveField(const Shape &shape)
{
    int64_t n = 1;
    for (size_t d = 2; d < shape.size(); ++d)
        n *= shape[d];
    return n;
}

} // namespace

Tensor uniform(const Shape &shape, double bound, Generator &gen)
{
    return generate(shape, [&] { return (2 * gen.uniform() - 1) * bound; });
}

Tensor normal(const Shape &shape, double std, Generator &gen)
{
    Tensor t = Tensor::empty(shape, DType::F32);
    std::vector<double> values(static_cast<size_t>(t.numel()));
    gen.normals(values.data(), t.numel());
    float *p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
        p[i] = static_cast<float>(values[static_cast<size_t>(i)] * std);
    return t;
}

int64_t fanIn(const Shape &weightShape)
{
    if (weightShape.size() < 2)
        throw Error("nn.init: fan in needs a weight of at least 2 dims, got " + shapeStr(weightShape));
    return weightShape[1] * receptiveField(weightShape);
}

int64_t fanOut(const Shape &weightShape)
{
    if (weightShape.size() < 2)
        throw Error("nn.init: fan out needs a weight of at least 2 dims, got " + shapeStr(weightShape));
    return weightShape[0] * receptiveField(weightShape);
}

Tensor defaultWeight(const Shape &shape, Generator &gen)
{
    // gain sqrt(2 / (1 + a^2)) with a = sqrt(5) times sqrt(3 / fan_in) = 1 / sqrt(fan_in).
    const int64_t fan = fanIn(shape);
    return uniform(shape, fan > 0 ? 1 / std::sqrt(static_cast<double>(fan)) : 0, gen);
}

Tensor defaultBias(int64_t size, int64_t fanIn, Generator &gen)
{
    return uniform({size}, fanIn > 0 ? 1 / std::sqrt(static_cast<double>(fanIn)) : 0, gen);
}

Tensor kaimingNormalFanOut(const Shape &shape, Generator &gen)
{
    const int64_t fan = fanOut(shape);
    return normal(shape, fan > 0 ? std::sqrt(2.0 / static_cast<double>(fan)) : 0, gen);
}

Tensor xavierUniform(const Shape &shape, Generator &gen)
{
    const int64_t fans = fanIn(shape) + fanOut(shape);
    return uniform(shape, fans > 0 ? std::sqrt(6.0 / static_cast<double>(fans)) : 0, gen);
}

} // namespace fusescope::nn::init
