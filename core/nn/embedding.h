#pragma once

#include "core/nn/module.h"
#include "core/tensor/factory.h"

namespace fusescope::nn {

// A lookup table weight [num, dim] initialized normal(0, 1), as PyTorch.
class Embedding : public Module
{
public:
    Embedding(int64_t numEmbeddings, int64_t embeddingDim, Generator &gen);
    using Module::forward;
    // indices: any shape of i32/i64 -> [..., dim]
    Tensor forward(const Tensor &indices) override;
    std::string extraRepr() const override;

private:
    int64_t m_num;
    int64_t m_dim;
};

} // namespace fusescope::nn
