#include "core/zoo/encoder.h"

#include "core/nn/activation.h"
#include "core/nn/attention.h"
#include "core/nn/linear.h"
#include "core/nn/normalization.h"
#include "core/ops/pointwise.h"

namespace fusescope::zoo {

TransformerEncoderLayer::TransformerEncoderLayer(int64_t dModel, int64_t nhead, int64_t dimFeedforward,
                                                 Generator &gen, double layerNormEps)
    : Module("TransformerEncoderLayer")
{
    // Registration order is PyTorch's, which fixes the state_dict order.
    m_selfAttn = registerModule("self_attn", std::make_shared<nn::MultiheadAttention>(dModel, nhead, gen));
    m_linear1 = registerModule("linear1", std::make_shared<nn::Linear>(dModel, dimFeedforward, gen));
    m_dropout = registerModule("dropout", std::make_shared<nn::Dropout>(0.1));
    m_linear2 = registerModule("linear2", std::make_shared<nn::Linear>(dimFeedforward, dModel, gen));
    m_norm1 = registerModule("norm1", std::make_shared<nn::LayerNorm>(Shape{dModel}, layerNormEps));
    m_norm2 = registerModule("norm2", std::make_shared<nn::LayerNorm>(Shape{dModel}, layerNormEps));
    m_dropout1 = registerModule("dropout1", std::make_shared<nn::Dropout>(0.1));
    m_dropout2 = registerModule("dropout2", std::make_shared<nn::Dropout>(0.1));
}

Tensor TransformerEncoderLayer::forward(const Tensor &x)
{
    const Tensor attn = (*m_dropout1)((*m_selfAttn)(std::vector<Tensor>{x, x, x}));
    const Tensor h = (*m_norm1)(ops::add(x, attn));
    // A string activation is a plain function in PyTorch, not a submodule:
    // the op belongs to this layer's path.
    const Tensor ff = (*m_linear2)((*m_dropout)(ops::gelu((*m_linear1)(h))));
    return (*m_norm2)(ops::add(h, (*m_dropout2)(ff)));
}

} // namespace fusescope::zoo
