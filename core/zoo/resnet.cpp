#include "core/zoo/resnet.h"

#include "core/nn/activation.h"
#include "core/nn/conv.h"
#include "core/nn/init.h"
#include "core/nn/linear.h"
#include "core/nn/normalization.h"
#include "core/ops/pointwise.h"

namespace fusescope::zoo {

namespace {

// Conv2d draws PyTorch's default weights; torchvision then re-initializes
// every conv, and so does this.
std::shared_ptr<nn::Conv2d> conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, Generator &gen)
{
    auto c = std::make_shared<nn::Conv2d>(in, out, IntList{kernel}, gen,
                                          nn::Conv2dOptions{.stride = {stride}, .padding = {(kernel - 1) / 2},
                                                            .bias = false});
    c->setTensor("weight", nn::init::kaimingNormalFanOut(c->parameter("weight").sizes(), gen));
    return c;
}

} // namespace

BasicBlock::BasicBlock(int64_t inPlanes, int64_t planes, int64_t stride, Generator &gen)
    : Module("BasicBlock")
{
    m_conv1 = registerModule("conv1", conv(inPlanes, planes, 3, stride, gen));
    m_bn1 = registerModule("bn1", std::make_shared<nn::BatchNorm2d>(planes));
    m_relu = registerModule("relu", std::make_shared<nn::ReLU>());
    m_conv2 = registerModule("conv2", conv(planes, planes, 3, 1, gen));
    m_bn2 = registerModule("bn2", std::make_shared<nn::BatchNorm2d>(planes));
    if (stride != 1 || inPlanes != planes) {
        auto down = std::make_shared<nn::Sequential>();
        down->append(conv(inPlanes, planes, 1, stride, gen));
        down->append(std::make_shared<nn::BatchNorm2d>(planes));
        m_downsample = registerModule("downsample", down);
    }
}

Tensor BasicBlock::forward(const Tensor &x)
{
    Tensor out = (*m_relu)((*m_bn1)((*m_conv1)(x)));
    out = (*m_bn2)((*m_conv2)(out));
    const Tensor identity = m_downsample ? (*m_downsample)(x) : x;
    return (*m_relu)(ops::add(out, identity));
}

ResNet::ResNet(const std::array<int64_t, 4> &blocksPerLayer, int64_t numClasses, Generator &gen)
    : Module("ResNet")
{
    m_conv1 = registerModule("conv1", conv(3, 64, 7, 2, gen));
    m_bn1 = registerModule("bn1", std::make_shared<nn::BatchNorm2d>(64));
    m_relu = registerModule("relu", std::make_shared<nn::ReLU>());
    m_maxpool = registerModule("maxpool", std::make_shared<nn::MaxPool2d>(IntList{3}, IntList{2}, IntList{1}));
    const int64_t planes[4] = {64, 128, 256, 512};
    for (size_t i = 0; i < 4; ++i) {
        m_layers[i] = registerModule("layer" + std::to_string(i + 1),
                                     makeLayer(planes[i], blocksPerLayer[i], i == 0 ? 1 : 2, gen));
    }
    m_avgpool = registerModule("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(IntList{1, 1}));
    m_fc = registerModule("fc", std::make_shared<nn::Linear>(512, numClasses, gen));
}

std::shared_ptr<nn::Sequential> ResNet::makeLayer(int64_t planes, int64_t blocks, int64_t stride, Generator &gen)
{
    auto layer = std::make_shared<nn::Sequential>();
    for (int64_t b = 0; b < blocks; ++b) {
        layer->append(std::make_shared<BasicBlock>(m_inPlanes, planes, b == 0 ? stride : 1, gen));
        m_inPlanes = planes;
    }
    return layer;
}

Tensor ResNet::forward(const Tensor &x)
{
    Tensor h = (*m_maxpool)((*m_relu)((*m_bn1)((*m_conv1)(x))));
    for (const auto &layer : m_layers)
        h = (*layer)(h);
    // torchvision calls torch.flatten in forward: no Flatten module in the tree.
    return (*m_fc)((*m_avgpool)(h).flatten(1));
}

std::shared_ptr<ResNet> resnet18(Generator &gen, int64_t numClasses)
{
    return std::make_shared<ResNet>(std::array<int64_t, 4>{2, 2, 2, 2}, numClasses, gen);
}

} // namespace fusescope::zoo
