#include "core/buildinfo.h"

#include "fusescope_config.h"

namespace fusescope {

BuildFeatures buildFeatures()
{
    return {FUSESCOPE_HAVE_CUDA != 0, FUSESCOPE_HAVE_CUPTI != 0, FUSESCOPE_HAVE_NVRTC != 0, FUSESCOPE_HAVE_ONNX != 0};
}

std::string versionString()
{
    return FUSESCOPE_VERSION;
}

std::string featureLine()
{
    const BuildFeatures f = buildFeatures();
    auto onOff = [](bool b) { return b ? "on" : "off"; };
    return std::string("cuda=") + onOff(f.cuda) + " cupti=" + onOff(f.cupti) + " nvrtc=" + onOff(f.nvrtc)
        + " onnx=" + onOff(f.onnx);
}

} // namespace fusescope
