#include "core/zoo/workloads.h"

#include "core/nn/activation.h"
#include "core/nn/init.h"
#include "core/nn/linear.h"
#include "core/ops/norm.h"
#include "core/ops/pointwise.h"

namespace fusescope::zoo {

PointwiseChain::PointwiseChain(int64_t features, Generator &gen)
    : Module("PointwiseChain")
{
    registerParameter("weight", nn::init::uniform({features}, 1.0, gen));
    registerParameter("bias", nn::init::uniform({features}, 1.0, gen));
}

Tensor PointwiseChain::forward(const Tensor &x)
{
    const Tensor h = ops::gelu(ops::add(ops::mul(x, parameter("weight")), parameter("bias")));
    return ops::add(ops::mul(h, ops::sigmoid(x)), x);
}

SoftmaxLayerNorm::SoftmaxLayerNorm(double eps)
    : Module("SoftmaxLayerNorm")
    , m_eps(eps)
{
}

Tensor SoftmaxLayerNorm::forward(const Tensor &x)
{
    if (x.dim() == 0)
        throw Error("zoo.SoftmaxLayerNorm: needs at least 1 dim, got a 0-d tensor");
    return ops::layerNorm(ops::softmax(x, -1), {x.size(-1)}, std::nullopt, std::nullopt, m_eps);
}

std::shared_ptr<nn::Sequential> makeMlp(int64_t in, int64_t hidden, int64_t out, Generator &gen)
{
    auto mlp = std::make_shared<nn::Sequential>();
    mlp->append(std::make_shared<nn::Linear>(in, hidden, gen));
    mlp->append(std::make_shared<nn::GELU>());
    mlp->append(std::make_shared<nn::Linear>(hidden, hidden, gen));
    mlp->append(std::make_shared<nn::GELU>());
    mlp->append(std::make_shared<nn::Linear>(hidden, out, gen));
    return mlp;
}

} // namespace fusescope::zoo
