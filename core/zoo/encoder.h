#pragma once

#include "core/nn/module.h"
#include "core/tensor/factory.h"

namespace fusescope::zoo {

// torch.nn.TransformerEncoderLayer(dModel, nhead, dimFeedforward,
// activation='gelu', batch_first=True, norm_first=False) in eval:
//   x = norm1(x + self_attn(x, x, x))
//   x = norm2(x + linear2(dropout(gelu(linear1(x)))))
// with PyTorch's submodule names, so parameter names match its state_dict.
class TransformerEncoderLayer : public nn::Module
{
public:
    TransformerEncoderLayer(int64_t dModel, int64_t nhead, int64_t dimFeedforward, Generator &gen,
                            double layerNormEps = 1e-5);
    using Module::forward;
    // x: [B, T, dModel]
    Tensor forward(const Tensor &x) override;

private:
    std::shared_ptr<nn::Module> m_selfAttn, m_linear1, m_dropout, m_linear2, m_norm1, m_norm2, m_dropout1,
        m_dropout2;
};

} // namespace fusescope::zoo
