#include "core/tensor/dtype.h"

#include <cmath>

namespace fusescope {

uint16_t Half::fromFloatSlow(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x > 0x7f800000u) { // NaN
        return static_cast<uint16_t>(sign | 0x7e00u);
    }
    if (x >= 0x477ff000u) { // overflows to infinity after rounding
        return static_cast<uint16_t>(sign | 0x7c00u);
    }
    if (x < 0x38800000u) { // subnormal or zero in half precision
        float v;
        std::memcpy(&v, &x, 4);
        // v * 2^24 rounded to nearest even gives the subnormal mantissa.
        const auto mant = static_cast<uint32_t>(std::nearbyint(v * 16777216.0f));
        return static_cast<uint16_t>(sign | mant);
    }
    const uint32_t rounded = x + 0xfffu + ((x >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float Half::toFloatSlow(uint16_t bits)
{
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exp = (bits >> 10) & 0x1fu;
    const uint32_t mant = bits & 0x3ffu;
    uint32_t out;
    if (exp == 0) {
        const float v = std::ldexp(static_cast<float>(mant), -24);
        std::memcpy(&out, &v, 4);
        out |= sign;
    } else if (exp == 31) {
        out = sign | 0x7f800000u | (mant << 13);
    } else {
        out = sign | ((exp + 112u) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &out, 4);
    return f;
}

size_t itemSize(DType t)
{
    switch (t) {
    case DType::Bool: return 1;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::F32: return 4;
    case DType::F64: return 8;
    }
    return 0;
}

const char *dtypeName(DType t)
{
    switch (t) {
    case DType::Bool: return "bool";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    }
    return "?";
}

bool parseDType(const std::string &name, DType &out)
{
    for (int i = 0; i < kNumDTypes; ++i) {
        if (name == dtypeName(static_cast<DType>(i))) {
            out = static_cast<DType>(i);
            return true;
        }
    }
    return false;
}

bool isFloating(DType t)
{
    return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}

bool isIntegral(DType t)
{
    return t == DType::I32 || t == DType::I64;
}

DType promoteTypes(DType a, DType b)
{
    if (a == b)
        return a;
    if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16))
        return DType::F32;
    auto rank = [](DType t) {
        switch (t) {
        case DType::Bool: return 0;
        case DType::I32: return 1;
        case DType::I64: return 2;
        case DType::F16: return 3;
        case DType::BF16: return 3;
        case DType::F32: return 4;
        case DType::F64: return 5;
        }
        return 0;
    };
    return rank(a) >= rank(b) ? a : b;
}

DType toFloating(DType t)
{
    return isFloating(t) ? t : DType::F32;
}

} // namespace fusescope
