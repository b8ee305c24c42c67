#pragma once

#include <string>

namespace fusescope {

// Meta tensors carry sizes, strides and dtype but no data: the compiler's
// capture runs the model on them.
enum class DeviceType : uint8_t { CPU, CUDA, Meta };

struct Device {
    DeviceType type = DeviceType::CPU;
    int index = 0;

    bool operator==(const Device &) const = default;
    std::string str() const;
};

inline constexpr Device kCPU{DeviceType::CPU, 0};
inline constexpr Device kMeta{DeviceType::Meta, 0};

} // namespace fusescope
