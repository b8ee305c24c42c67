#include "core/nn/linear.h"

#include "core/nn/init.h"
#include "core/ops/linalg.h"

namespace fusescope::nn {

Linear::Linear(int64_t inFeatures, int64_t outFeatures, Generator &gen, bool bias)
    : Module("Linear")
    , m_in(inFeatures)
    , m_out(outFeatures)
{
    if (inFeatures < 0 || outFeatures < 0)
        throw Error("nn.Linear: feature counts must be non-negative, got in " + std::to_string(inFeatures)
                    + ", out " + std::to_string(outFeatures));
    registerParameter("weight", init::defaultWeight({outFeatures, inFeatures}, gen));
    if (bias)
        registerParameter("bias", init::defaultBias(outFeatures, inFeatures, gen));
}

Tensor Linear::forward(const Tensor &x)
{
    return ops::linear(x, parameter("weight"), optionalParameter("bias"));
}

std::string Linear::extraRepr() const
{
    return "in_features=" + std::to_string(m_in) + ", out_features=" + std::to_string(m_out)
        + ", bias=" + (optionalParameter("bias") ? "True" : "False");
}

Flatten::Flatten(int64_t startDim, int64_t endDim)
    : Module("Flatten")
    , m_startDim(startDim)
    , m_endDim(endDim)
{
}

Tensor Flatten::forward(const Tensor &x)
{
    return x.flatten(m_startDim, m_endDim);
}

std::string Flatten::extraRepr() const
{
    return "start_dim=" + std::to_string(m_startDim) + ", end_dim=" + std::to_string(m_endDim);
}

} // namespace fusescope::nn
