#include "core/nn/embedding.h"

#include "core/nn/init.h"
#include "core/ops/movement.h"

namespace fusescope::nn {

Embedding::Embedding(int64_t numEmbeddings, int64_t embeddingDim, Generator &gen)
    : Module("Embedding")
    , m_num(numEmbeddings)
    , m_dim(embeddingDim)
{
    if (numEmbeddings < 0 || embeddingDim < 0)
        throw Error("nn.Embedding: sizes must be non-negative, got " + std::to_string(numEmbeddings) + " x "
                    + std::to_string(embeddingDim));
    registerParameter("weight", init::normal({numEmbeddings, embeddingDim}, 1.0, gen));
}

Tensor Embedding::forward(const Tensor &indices)
{
    return ops::embedding(parameter("weight"), indices);
}

std::string Embedding::extraRepr() const
{
    return std::to_string(m_num) + ", " + std::to_string(m_dim);
}

} // namespace fusescope::nn
