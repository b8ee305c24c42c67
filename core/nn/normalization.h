#pragma once

#include "core/nn/module.h"

#include <optional>

namespace fusescope::nn {

// Parameters weight (1) and bias (0); buffers running_mean (0), running_var (1)
// and num_batches_tracked, as PyTorch's state_dict.
class BatchNorm2d : public Module
{
public:
    explicit BatchNorm2d(int64_t numFeatures, double eps = 1e-5, double momentum = 0.1, bool affine = true);
    using Module::forward;
    // Eval: the running statistics. Train: the batch's own statistics, as
    // PyTorch computes the output; the running statistics are not updated
    // (nothing here trains).
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

    double eps() const { return m_eps; }

private:
    int64_t m_numFeatures;
    double m_eps;
    double m_momentum;
};

// Normalizes over the trailing normalizedShape dims; weight 1, bias 0.
class LayerNorm : public Module
{
public:
    explicit LayerNorm(Shape normalizedShape, double eps = 1e-5, bool elementwiseAffine = true, bool bias = true);
    using Module::forward;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

    double eps() const { return m_eps; }

private:
    Shape m_shape;
    double m_eps;
};

// torch.nn.RMSNorm: x / sqrt(mean(x^2) + eps) * weight; eps unset means the
// dtype's machine epsilon, as PyTorch.
class RMSNorm : public Module
{
public:
    explicit RMSNorm(Shape normalizedShape, std::optional<double> eps = std::nullopt, bool elementwiseAffine = true);
    using Module::forward;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

private:
    Shape m_shape;
    std::optional<double> m_eps;
};

} // namespace fusescope::nn
