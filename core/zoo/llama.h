#pragma once
// One Llama decoder layer as Hugging Face's LlamaDecoderLayer (no biases,
// pre-norm RMSNorm, rotary embeddings in the rotate-half form, causal
// attention, SwiGLU MLP), with its module names ("self_attn.q_proj",
// "mlp.gate_proj", "input_layernorm", ...).

#include "core/nn/module.h"
#include "core/tensor/factory.h"

namespace fusescope::zoo {

struct LlamaConfig {
    int64_t hiddenSize = 512;
    int64_t numHeads = 8;
    int64_t intermediateSize = 1376;
    double rmsNormEps = 1e-6;
    double ropeTheta = 10000;
    int64_t maxPositions = 2048;
};

// Rotates [..., S, headDim] by position (positions 0..S-1):
//   x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2])
// The cos/sin tables [maxPositions, headDim] are non-persistent buffers
// computed once, as Hugging Face's cos_cached / sin_cached.
class LlamaRotaryEmbedding : public nn::Module
{
public:
    LlamaRotaryEmbedding(int64_t headDim, int64_t maxPositions, double theta);
    using Module::forward;
    Tensor forward(const Tensor &x) override;

private:
    int64_t m_headDim;
};

class LlamaAttention : public nn::Module
{
public:
    LlamaAttention(const LlamaConfig &config, Generator &gen);
    using Module::forward;
    // x: [B, S, hidden]
    Tensor forward(const Tensor &x) override;

private:
    Tensor heads(const Tensor &x) const; // [B, S, hidden] -> [B, H, S, D]

    int64_t m_numHeads;
    int64_t m_headDim;
    std::shared_ptr<nn::Module> m_q, m_k, m_v, m_o, m_rotary;
};

// down_proj(silu(gate_proj(x)) * up_proj(x))
class LlamaMLP : public nn::Module
{
public:
    LlamaMLP(const LlamaConfig &config, Generator &gen);
    using Module::forward;
    Tensor forward(const Tensor &x) override;

private:
    std::shared_ptr<nn::Module> m_gate, m_up, m_down, m_act;
};

// h = x + self_attn(input_layernorm(x)); out = h + mlp(post_attention_layernorm(h))
class LlamaDecoderLayer : public nn::Module
{
public:
    LlamaDecoderLayer(const LlamaConfig &config, Generator &gen);
    using Module::forward;
    Tensor forward(const Tensor &x) override;

private:
    std::shared_ptr<nn::Module> m_attn, m_mlp, m_inputNorm, m_postNorm;
};

} // namespace fusescope::zoo
