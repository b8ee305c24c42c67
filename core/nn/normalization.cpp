#include "core/nn/normalization.h"

#include "core/ops/norm.h"
#include "core/ops/reduction.h"
#include "core/tensor/factory.h"

#include <sstream>

namespace fusescope::nn {

namespace {

std::string numberStr(double v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

void checkShape(const Shape &shape, const char *module)
{
    for (int64_t s : shape) {
        if (s <= 0)
            throw Error(std::string("nn.") + module + ": normalized shape " + shapeStr(shape)
                        + " must have positive sizes");
    }
}

} // namespace

BatchNorm2d::BatchNorm2d(int64_t numFeatures, double eps, double momentum, bool affine)
    : Module("BatchNorm2d")
    , m_numFeatures(numFeatures)
    , m_eps(eps)
    , m_momentum(momentum)
{
    if (numFeatures <= 0)
        throw Error("nn.BatchNorm2d: num_features must be positive, got " + std::to_string(numFeatures));
    if (affine) {
        registerParameter("weight", ones({numFeatures}));
        registerParameter("bias", zeros({numFeatures}));
    }
    registerBuffer("running_mean", zeros({numFeatures}));
    registerBuffer("running_var", ones({numFeatures}));
    registerBuffer("num_batches_tracked", zeros({}, DType::I64));
}

Tensor BatchNorm2d::forward(const Tensor &x)
{
    if (x.dim() != 4)
        throw Error("nn.BatchNorm2d: expected a 4-D input [N,C,H,W], got " + shapeStr(x.sizes()));
    if (!isTraining()) {
        return ops::batchNorm(x, buffer("running_mean"), buffer("running_var"), optionalParameter("weight"),
                              optionalParameter("bias"), m_eps);
    }
    const Tensor mean = ops::mean(x, {0, 2, 3});
    const Tensor var = ops::var(x, {0, 2, 3}, 0);
    return ops::batchNorm(x, mean, var, optionalParameter("weight"), optionalParameter("bias"), m_eps);
}

std::string BatchNorm2d::extraRepr() const
{
    return std::to_string(m_numFeatures) + ", eps=" + numberStr(m_eps) + ", momentum=" + numberStr(m_momentum)
        + ", affine=" + (optionalParameter("weight") ? "True" : "False") + ", track_running_stats=True";
}

LayerNorm::LayerNorm(Shape normalizedShape, double eps, bool elementwiseAffine, bool bias)
    : Module("LayerNorm")
    , m_shape(std::move(normalizedShape))
    , m_eps(eps)
{
    checkShape(m_shape, "LayerNorm");
    if (elementwiseAffine) {
        registerParameter("weight", ones(m_shape));
        if (bias)
            registerParameter("bias", zeros(m_shape));
    }
}

Tensor LayerNorm::forward(const Tensor &x)
{
    return ops::layerNorm(x, m_shape, optionalParameter("weight"), optionalParameter("bias"), m_eps);
}

std::string LayerNorm::extraRepr() const
{
    return shapeStr(m_shape) + ", eps=" + numberStr(m_eps)
        + ", elementwise_affine=" + (optionalParameter("weight") ? "True" : "False");
}

RMSNorm::RMSNorm(Shape normalizedShape, std::optional<double> eps, bool elementwiseAffine)
    : Module("RMSNorm")
    , m_shape(std::move(normalizedShape))
    , m_eps(eps)
{
    checkShape(m_shape, "RMSNorm");
    if (elementwiseAffine)
        registerParameter("weight", ones(m_shape));
}

Tensor RMSNorm::forward(const Tensor &x)
{
    return ops::rmsNorm(x, m_shape, optionalParameter("weight"), m_eps);
}

std::string RMSNorm::extraRepr() const
{
    return shapeStr(m_shape) + ", eps=" + (m_eps ? numberStr(*m_eps) : std::string("None"))
        + ", elementwise_affine=" + (optionalParameter("weight") ? "True" : "False");
}

} // namespace fusescope::nn
