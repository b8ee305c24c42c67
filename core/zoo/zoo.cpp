#include "core/zoo/zoo.h"

#include "core/tensor/factory.h"
#include "core/zoo/encoder.h"
#include "core/zoo/llama.h"
#include "core/zoo/resnet.h"
#include "core/zoo/workloads.h"

#include <functional>

namespace fusescope::zoo {

namespace {

using Builder = std::function<std::shared_ptr<nn::Module>(Generator &)>;

struct Entry {
    ModelInfo info;
    Builder build;
};

const std::vector<Entry> &entries()
{
    static const std::vector<Entry> all = {
        {{"pointwise", "gelu(x * w + b) * sigmoid(x) + x over [4096,1024], w and b [1024]", {{"x", {4096, 1024}}},
          {4096, 1024}},
         [](Generator &g) { return std::make_shared<PointwiseChain>(1024, g); }},
        {{"softmax_ln", "layer_norm(softmax(x, -1)) without affine over [8192,512]", {{"x", {8192, 512}}},
          {8192, 512}},
         [](Generator &) { return std::make_shared<SoftmaxLayerNorm>(); }},
        {{"mlp", "Linear(512,2048) GELU Linear(2048,2048) GELU Linear(2048,512), batch 256", {{"x", {256, 512}}},
          {256, 512}},
         [](Generator &g) { return makeMlp(512, 2048, 512, g); }},
        {{"encoder", "post-norm transformer encoder layer d=256, 4 heads, ffn 1024, GELU, batch 8, seq 128",
          {{"x", {8, 128, 256}}}, {8, 128, 256}},
         [](Generator &g) { return std::make_shared<TransformerEncoderLayer>(256, 4, 1024, g); }},
        {{"resnet18", "torchvision ResNet-18, batch 4, 3x224x224, 1000 classes", {{"x", {4, 3, 224, 224}}},
          {4, 1000}},
         [](Generator &g) { return resnet18(g); }},
        {{"llama_block",
          "Llama decoder layer d=512, 8 heads, SwiGLU ffn 1376, RMSNorm, rotary, causal, batch 2, seq 256",
          {{"x", {2, 256, 512}}}, {2, 256, 512}},
         [](Generator &g) { return std::make_shared<LlamaDecoderLayer>(LlamaConfig{}, g); }},
    };
    return all;
}

const Entry &entry(const std::string &name)
{
    for (const Entry &e : entries()) {
        if (e.info.name == name)
            return e;
    }
    std::string known;
    for (const Entry &e : entries())
        known += (known.empty() ? "" : ", ") + e.info.name;
    throw Error("zoo: unknown model '" + name + "'; known models: " + known);
}

// Inputs draw from their own stream, so they do not shift when a model's
// parameter count changes.
constexpr uint64_t kInputStream = 0x9e3779b97f4a7c15ull;

} // namespace

std::vector<std::string> modelNames()
{
    std::vector<std::string> names;
    for (const Entry &e : entries())
        names.push_back(e.info.name);
    return names;
}

ModelInfo info(const std::string &name)
{
    return entry(name).info;
}

Instance create(const std::string &name, uint64_t seed)
{
    const Entry &e = entry(name);
    Generator weights(seed);
    Instance instance{e.build(weights), {}};
    instance.model->eval();
    Generator inputs(seed ^ kInputStream);
    for (const InputSpec &spec : e.info.inputs)
        instance.inputs.push_back(randn(spec.shape, inputs, spec.dtype));
    return instance;
}

std::vector<Tensor> metaInputs(const std::string &name)
{
    std::vector<Tensor> inputs;
    for (const InputSpec &spec : entry(name).info.inputs)
        inputs.push_back(Tensor::empty(spec.shape, spec.dtype, kMeta));
    return inputs;
}

} // namespace fusescope::zoo
