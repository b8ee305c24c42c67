#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace fusescope {

enum class DType : uint8_t { Bool, I32, I64, F16, BF16, F32, F64 };
constexpr int kNumDTypes = 7;

// IEEE binary16, stored as bits; arithmetic happens in float. The
// conversions are inline (F16C instructions where the build has them) so f16
// loops vectorize.
struct Half {
    uint16_t bits = 0;
    Half() = default;
    Half(float f)
    {
#if defined(__F16C__)
        // The vector form: clang's _cvtss_sh macro expands to a C99 compound literal.
        bits = static_cast<uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
#else
        bits = fromFloatSlow(f);
#endif
    }
    operator float() const
    {
#if defined(__F16C__)
        return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
#else
        return toFloatSlow(bits);
#endif
    }
    static uint16_t fromFloatSlow(float f);
    static float toFloatSlow(uint16_t bits);
};

// bfloat16: the upper half of a float, rounded to nearest even.
struct BFloat16 {
    uint16_t bits = 0;
    BFloat16() = default;
    BFloat16(float f)
    {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        if ((u & 0x7fffffffu) > 0x7f800000u) { // NaN stays a quiet NaN
            bits = static_cast<uint16_t>((u >> 16) | 0x40u);
            return;
        }
        u += 0x7fffu + ((u >> 16) & 1u);
        bits = static_cast<uint16_t>(u >> 16);
    }
    operator float() const
    {
        const uint32_t u = static_cast<uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
};

size_t itemSize(DType t);
const char *dtypeName(DType t); // "f32", "bf16", ...
bool parseDType(const std::string &name, DType &out);
bool isFloating(DType t);
bool isIntegral(DType t); // bool excluded

// NumPy/PyTorch promotion for two tensor operands: bool < integers < floats,
// wider wins; f16 with bf16 gives f32.
DType promoteTypes(DType a, DType b);
// The dtype that floating-point results take for an input of type t
// (integers and bool become f32, floats stay).
DType toFloating(DType t);

template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::F16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BF16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };

// Calls fn with a value of the C++ type that stores dtype t, e.g.
// visitDType(t, [&](auto tag) { using T = decltype(tag); ... }).
template <typename Fn>
decltype(auto) visitDType(DType t, Fn &&fn)
{
    switch (t) {
    case DType::Bool: return fn(bool{});
    case DType::I32: return fn(int32_t{});
    case DType::I64: return fn(int64_t{});
    case DType::F16: return fn(Half{});
    case DType::BF16: return fn(BFloat16{});
    case DType::F32: return fn(float{});
    case DType::F64: break;
    }
    return fn(double{});
}

// The type arithmetic on T happens in: float for the 16-bit floats.
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <> struct ComputeType<BFloat16> { using type = float; };
template <typename T> using compute_t = typename ComputeType<T>::type;

} // namespace fusescope

namespace fusescope {

// Like visitDType, but instantiates fn only for the floating types, so
// functors that make no sense on integers need not compile for them.
template <typename Fn>
decltype(auto) visitFloating(DType t, Fn &&fn)
{
    switch (t) {
    case DType::F16: return fn(Half{});
    case DType::BF16: return fn(BFloat16{});
    case DType::F32: return fn(float{});
    default: break;
    }
    return fn(double{});
}

// Integers and floats, not bool.
template <typename Fn>
decltype(auto) visitNumeric(DType t, Fn &&fn)
{
    switch (t) {
    case DType::I32: return fn(int32_t{});
    case DType::I64: return fn(int64_t{});
    default: break;
    }
    return visitFloating(t, std::forward<Fn>(fn));
}

} // namespace fusescope
