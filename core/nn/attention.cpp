#include "core/nn/attention.h"

#include "core/nn/init.h"
#include "core/nn/linear.h"
#include "core/ops/attention.h"
#include "core/ops/linalg.h"
#include "core/ops/movement.h"
#include "core/ops/pointwise.h"

namespace fusescope::nn {

MultiheadAttention::MultiheadAttention(int64_t embedDim, int64_t numHeads, Generator &gen,
                                       const MultiheadAttentionOptions &options)
    : Module("MultiheadAttention")
    , m_embedDim(embedDim)
    , m_numHeads(numHeads)
    , m_options(options)
{
    if (embedDim <= 0 || numHeads <= 0 || embedDim % numHeads != 0)
        throw Error("nn.MultiheadAttention: embed_dim " + std::to_string(embedDim)
                    + " must be positive and divisible by num_heads " + std::to_string(numHeads));
    // PyTorch's _reset_parameters: xavier for the packed projection, zero biases.
    registerParameter("in_proj_weight", init::xavierUniform({3 * embedDim, embedDim}, gen));
    if (options.bias)
        registerParameter("in_proj_bias", zeros({3 * embedDim}));
    m_outProj = registerModule("out_proj", std::make_shared<Linear>(embedDim, embedDim, gen, options.bias));
    if (options.bias)
        m_outProj->setTensor("bias", zeros({embedDim}));
}

std::string MultiheadAttention::extraRepr() const
{
    return "embed_dim=" + std::to_string(m_embedDim) + ", num_heads=" + std::to_string(m_numHeads)
        + ", batch_first=" + (m_options.batchFirst ? "True" : "False");
}

Tensor MultiheadAttention::forward(const Tensor &x)
{
    return forward(std::vector<Tensor>{x});
}

void MultiheadAttention::checkInputs(const Tensor &query, const Tensor &key, const Tensor &value) const
{
    const std::string shapes = shapeStr(query.sizes()) + ", " + shapeStr(key.sizes()) + ", " + shapeStr(value.sizes());
    const bool ranks = query.dim() == 3 && key.dim() == 3 && value.dim() == 3;
    if (!ranks || query.size(2) != m_embedDim || key.size(2) != m_embedDim || value.size(2) != m_embedDim)
        throw Error("nn.MultiheadAttention: query, key, value must be [B,T," + std::to_string(m_embedDim)
                    + "] (batch first) or [T," + std::to_string(m_embedDim) + "], got " + shapes);
    if (key.size(0) != query.size(0) || value.size(0) != query.size(0) || key.size(1) != value.size(1))
        throw Error("nn.MultiheadAttention: batch sizes or key/value lengths differ in " + shapes);
}

MultiheadAttention::Projected MultiheadAttention::project(const Tensor &query, const Tensor &key,
                                                          const Tensor &value) const
{
    const Tensor &w = parameter("in_proj_weight");
    const std::optional<Tensor> b = optionalParameter("in_proj_bias");
    // Self-attention: one GEMM with the packed weight, as PyTorch does.
    if (query.implPtr() == key.implPtr() && key.implPtr() == value.implPtr()) {
        const TensorList qkv = ops::chunk(ops::linear(query, w, b), 3, -1);
        return {qkv[0], qkv[1], qkv[2]};
    }
    const int64_t e = m_embedDim;
    auto part = [&](const Tensor &x, int64_t i) {
        const std::optional<Tensor> bi = b ? std::optional<Tensor>(b->narrow(0, i * e, e)) : std::nullopt;
        return ops::linear(x, w.narrow(0, i * e, e), bi);
    };
    return {part(query, 0), part(key, 1), part(value, 2)};
}

Tensor MultiheadAttention::splitHeads(const Tensor &x) const
{
    return x.reshape({x.size(0), x.size(1), m_numHeads, m_embedDim / m_numHeads}).transpose(1, 2);
}

// PyTorch's MHA mask convention (bool true = blocked, [B*H, L, S]) turned into
// SDPA's (bool true = attend, broadcastable to [B, H, L, S]).
Tensor MultiheadAttention::sdpaMask(const Tensor &mask, int64_t batch) const
{
    Tensor m = mask.dtype() == DType::Bool ? ops::logicalNot(mask) : mask;
    if (m.dim() == 2)
        return m;
    if (m.dim() == 3 && m.size(0) == batch * m_numHeads)
        return m.reshape({batch, m_numHeads, m.size(1), m.size(2)});
    throw Error("nn.MultiheadAttention: attn_mask must be [L,S] or [" + std::to_string(batch * m_numHeads)
                + ",L,S], got " + shapeStr(mask.sizes()));
}

Tensor MultiheadAttention::forward(const std::vector<Tensor> &inputs)
{
    const size_t n = inputs.size();
    if (n != 1 && n != 3 && n != 4)
        throw Error("nn.MultiheadAttention: forward takes {x}, {query, key, value} or {query, key, value, mask}, got "
                    + std::to_string(n) + " inputs");
    // Keeps identity (the self-attention fast path) through the layout changes below.
    const bool self = n == 1 || (inputs[0].implPtr() == inputs[1].implPtr() && inputs[1].implPtr() == inputs[2].implPtr());
    Tensor q = inputs[0], k = n == 1 ? q : inputs[1], v = n == 1 ? q : inputs[2];
    const bool unbatched = q.dim() == 2;
    auto toBatchFirst = [&](const Tensor &t) {
        if (unbatched)
            return t.dim() == 2 ? t.unsqueeze(0) : t;
        return m_options.batchFirst || t.dim() != 3 ? t : t.transpose(0, 1);
    };
    q = toBatchFirst(q);
    k = self ? q : toBatchFirst(k);
    v = self ? q : toBatchFirst(v);
    checkInputs(q, k, v);
    const Projected p = project(q, k, v);
    const int64_t batch = q.size(0), length = q.size(1);
    const std::optional<Tensor> mask = n == 4 ? std::optional<Tensor>(sdpaMask(inputs[3], batch)) : std::nullopt;
    const Tensor attn = ops::scaledDotProductAttention(splitHeads(p.q), splitHeads(p.k), splitHeads(p.v), mask);
    Tensor out = (*m_outProj)(attn.transpose(1, 2).reshape({batch, length, m_embedDim}));
    if (unbatched)
        return out.squeeze(0);
    return m_options.batchFirst ? out : out.transpose(0, 1);
}

} // namespace fusescope::nn
