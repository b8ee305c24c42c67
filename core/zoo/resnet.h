#pragma once
// torchvision's ResNet with BasicBlocks (ResNet-18/34), same module tree and
// state_dict names ("layer1.0.conv1.weight", "layer2.0.downsample.0.weight").

#include "core/nn/container.h"
#include "core/tensor/factory.h"

#include <array>

namespace fusescope::zoo {

class BasicBlock : public nn::Module
{
public:
    BasicBlock(int64_t inPlanes, int64_t planes, int64_t stride, Generator &gen);
    using Module::forward;
    Tensor forward(const Tensor &x) override;

private:
    std::shared_ptr<nn::Module> m_conv1, m_bn1, m_relu, m_conv2, m_bn2, m_downsample;
};

// Weights as torchvision initializes them: convs kaiming_normal(fan_out,
// relu), batch norms weight 1 / bias 0 with running stats 0 / 1, fc
// PyTorch's default uniform.
class ResNet : public nn::Module
{
public:
    ResNet(const std::array<int64_t, 4> &blocksPerLayer, int64_t numClasses, Generator &gen);
    using Module::forward;
    // x: [N, 3, H, W] -> [N, numClasses]
    Tensor forward(const Tensor &x) override;

private:
    std::shared_ptr<nn::Sequential> makeLayer(int64_t planes, int64_t blocks, int64_t stride, Generator &gen);

    int64_t m_inPlanes = 64;
    std::shared_ptr<nn::Module> m_conv1, m_bn1, m_relu, m_maxpool, m_avgpool, m_fc;
    std::array<std::shared_ptr<nn::Module>, 4> m_layers;
};

std::shared_ptr<ResNet> resnet18(Generator &gen, int64_t numClasses = 1000);

} // namespace fusescope::zoo
