#pragma once

#include "core/nn/module.h"
#include "core/tensor/factory.h"

namespace fusescope::nn {

struct MultiheadAttentionOptions {
    bool bias = true;
    bool batchFirst = true; // inputs [B, L, E]; false: [L, B, E]
};

// torch.nn.MultiheadAttention without dropout, returning only the attention
// output (need_weights=False). Parameters in_proj_weight [3E, E] (q, k, v
// stacked), in_proj_bias [3E], out_proj (Linear E -> E).
class MultiheadAttention : public Module
{
public:
    MultiheadAttention(int64_t embedDim, int64_t numHeads, Generator &gen,
                       const MultiheadAttentionOptions &options = {});

    // {x} (self-attention), {query, key, value} or {query, key, value, attnMask}.
    // attnMask as PyTorch's: [L, S] or [B*heads, L, S]; bool true = may NOT
    // attend, float = added to the scores. Unbatched 2-D inputs [L, E] work too.
    using Module::forward;
    Tensor forward(const std::vector<Tensor> &inputs) override;
    Tensor forward(const Tensor &x) override;
    std::string extraRepr() const override;

    int64_t embedDim() const { return m_embedDim; }
    int64_t numHeads() const { return m_numHeads; }

private:
    struct Projected {
        Tensor q, k, v; // [B, L|S, E]
    };
    Projected project(const Tensor &query, const Tensor &key, const Tensor &value) const;
    Tensor splitHeads(const Tensor &x) const;      // [B, T, E] -> [B, H, T, D]
    Tensor sdpaMask(const Tensor &mask, int64_t batch) const;
    void checkInputs(const Tensor &query, const Tensor &key, const Tensor &value) const;

    int64_t m_embedDim;
    int64_t m_numHeads;
    MultiheadAttentionOptions m_options;
    std::shared_ptr<Module> m_outProj;
};

} // namespace fusescope::nn
