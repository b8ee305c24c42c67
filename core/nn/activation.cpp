#include "core/nn/activation.h"

#include "core/ops/pointwise.h"

#include <sstream>

namespace fusescope::nn {

Tensor ReLU::forward(const Tensor &x)
{
    return ops::relu(x);
}

GELU::GELU(std::string approximate)
    : Module("GELU")
    , m_approximate(std::move(approximate))
{
    if (m_approximate != "none" && m_approximate != "tanh")
        throw Error("nn.GELU: approximate must be 'none' or 'tanh', got '" + m_approximate + "'");
}

Tensor GELU::forward(const Tensor &x)
{
    return ops::gelu(x, m_approximate);
}

std::string GELU::extraRepr() const
{
    return "approximate='" + m_approximate + "'";
}

Tensor SiLU::forward(const Tensor &x)
{
    return ops::silu(x);
}

Dropout::Dropout(double p)
    : Module("Dropout")
    , m_p(p)
{
    if (!(p >= 0 && p <= 1))
        throw Error("nn.Dropout: probability must be in [0, 1], got " + std::to_string(p));
}

std::string Dropout::extraRepr() const
{
    std::ostringstream s;
    s << "p=" << m_p << ", inplace=False";
    return s.str();
}

} // namespace fusescope::nn
