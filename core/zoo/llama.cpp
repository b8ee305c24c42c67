#include "core/zoo/llama.h"

#include "core/nn/activation.h"
#include "core/nn/linear.h"
#include "core/nn/normalization.h"
#include "core/ops/attention.h"
#include "core/ops/movement.h"
#include "core/ops/norm.h"
#include "core/ops/pointwise.h"

#include <cmath>

namespace fusescope::zoo {

namespace {

// angle(p, i) = p * theta^(-2i / D) for i < D/2, repeated for the second half.
Tensor rotaryTable(int64_t positions, int64_t headDim, double theta, double (*fn)(double))
{
    Tensor t = Tensor::empty({positions, headDim}, DType::F32);
    float *p = t.data<float>();
    const int64_t half = headDim / 2;
    for (int64_t pos = 0; pos < positions; ++pos) {
        for (int64_t i = 0; i < half; ++i) {
            const double invFreq = std::pow(theta, -static_cast<double>(2 * i) / static_cast<double>(headDim));
            const auto v = static_cast<float>(fn(static_cast<double>(pos) * invFreq));
            p[pos * headDim + i] = v;
            p[pos * headDim + half + i] = v;
        }
    }
    return t;
}

std::shared_ptr<nn::Linear> projection(int64_t in, int64_t out, Generator &gen)
{
    return std::make_shared<nn::Linear>(in, out, gen, false);
}

} // namespace

LlamaRotaryEmbedding::LlamaRotaryEmbedding(int64_t headDim, int64_t maxPositions, double theta)
    : Module("LlamaRotaryEmbedding")
    , m_headDim(headDim)
{
    if (headDim <= 0 || headDim % 2 != 0 || maxPositions <= 0)
        throw Error("zoo.LlamaRotaryEmbedding: head dim " + std::to_string(headDim)
                    + " must be positive and even, max positions " + std::to_string(maxPositions) + " positive");
    registerBuffer("cos_cached", rotaryTable(maxPositions, headDim, theta, [](double a) { return std::cos(a); }),
                   false);
    registerBuffer("sin_cached", rotaryTable(maxPositions, headDim, theta, [](double a) { return std::sin(a); }),
                   false);
}

Tensor LlamaRotaryEmbedding::forward(const Tensor &x)
{
    const Tensor &cosTable = buffer("cos_cached");
    if (x.dim() < 2 || x.size(-1) != m_headDim || x.size(-2) > cosTable.size(0))
        throw Error("zoo.LlamaRotaryEmbedding: expected [..., S, " + std::to_string(m_headDim) + "] with S <= "
                    + std::to_string(cosTable.size(0)) + ", got " + shapeStr(x.sizes()));
    const int64_t seq = x.size(-2), half = m_headDim / 2;
    const Tensor cos = cosTable.narrow(0, 0, seq);
    const Tensor sin = buffer("sin_cached").narrow(0, 0, seq);
    const Tensor rotated = ops::cat({ops::neg(x.narrow(-1, half, half)), x.narrow(-1, 0, half)}, -1);
    return ops::add(ops::mul(x, cos), ops::mul(rotated, sin));
}

LlamaAttention::LlamaAttention(const LlamaConfig &config, Generator &gen)
    : Module("LlamaAttention")
    , m_numHeads(config.numHeads)
    , m_headDim(config.numHeads > 0 ? config.hiddenSize / config.numHeads : 0)
{
    const int64_t e = config.hiddenSize;
    if (e <= 0 || config.numHeads <= 0 || e % config.numHeads != 0)
        throw Error("zoo.LlamaAttention: hidden size " + std::to_string(e)
                    + " must be positive and divisible by the head count " + std::to_string(config.numHeads));
    m_q = registerModule("q_proj", projection(e, e, gen));
    m_k = registerModule("k_proj", projection(e, e, gen));
    m_v = registerModule("v_proj", projection(e, e, gen));
    m_o = registerModule("o_proj", projection(e, e, gen));
    m_rotary = registerModule("rotary_emb",
                              std::make_shared<LlamaRotaryEmbedding>(m_headDim, config.maxPositions, config.ropeTheta));
}

Tensor LlamaAttention::heads(const Tensor &x) const
{
    return x.view({x.size(0), x.size(1), m_numHeads, m_headDim}).transpose(1, 2);
}

Tensor LlamaAttention::forward(const Tensor &x)
{
    if (x.dim() != 3 || x.size(2) != m_numHeads * m_headDim)
        throw Error("zoo.LlamaAttention: expected [B,S," + std::to_string(m_numHeads * m_headDim) + "], got "
                    + shapeStr(x.sizes()));
    const Tensor q = (*m_rotary)(heads((*m_q)(x)));
    const Tensor k = (*m_rotary)(heads((*m_k)(x)));
    const Tensor v = heads((*m_v)(x));
    const Tensor attn = ops::scaledDotProductAttention(q, k, v, std::nullopt, true);
    return (*m_o)(attn.transpose(1, 2).reshape({x.size(0), x.size(1), m_numHeads * m_headDim}));
}

LlamaMLP::LlamaMLP(const LlamaConfig &config, Generator &gen)
    : Module("LlamaMLP")
{
    m_gate = registerModule("gate_proj", projection(config.hiddenSize, config.intermediateSize, gen));
    m_up = registerModule("up_proj", projection(config.hiddenSize, config.intermediateSize, gen));
    m_down = registerModule("down_proj", projection(config.intermediateSize, config.hiddenSize, gen));
    m_act = registerModule("act_fn", std::make_shared<nn::SiLU>());
}

Tensor LlamaMLP::forward(const Tensor &x)
{
    return (*m_down)(ops::mul((*m_act)((*m_gate)(x)), (*m_up)(x)));
}

LlamaDecoderLayer::LlamaDecoderLayer(const LlamaConfig &config, Generator &gen)
    : Module("LlamaDecoderLayer")
{
    m_attn = registerModule("self_attn", std::make_shared<LlamaAttention>(config, gen));
    m_mlp = registerModule("mlp", std::make_shared<LlamaMLP>(config, gen));
    const Shape hidden{config.hiddenSize};
    m_inputNorm = registerModule("input_layernorm", std::make_shared<nn::RMSNorm>(hidden, config.rmsNormEps));
    m_postNorm = registerModule("post_attention_layernorm", std::make_shared<nn::RMSNorm>(hidden, config.rmsNormEps));
}

Tensor LlamaDecoderLayer::forward(const Tensor &x)
{
    const Tensor h = ops::add(x, (*m_attn)((*m_inputNorm)(x)));
    return ops::add(h, (*m_mlp)((*m_postNorm)(h)));
}

} // namespace fusescope::zoo
