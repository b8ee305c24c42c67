#pragma once
// Scalar maths of the pointwise ops: the single definition that the eager
// kernels and the compiler's generated code both call (codegen embeds this
// file), so eager and compiled results agree. The f32 transcendentals are
// branch-free polynomials (Cephes-style range reduction) written so the
// compiler can vectorize the loops that call them, or glibc's vector forms
// (sin, cos, pow: below); f64 uses libm.
// Self-contained: no project headers.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

// glibc's vector maths (libmvec) for the f32 functions that have no
// polynomial here. Declared as SIMD functions (glibc's <math.h> does so only
// under -ffast-math), a loop GCC vectorizes calls their 8- or 16-lane forms
// (_ZGVeN16v_sinf ...) instead of libm once an element. Own names bound to
// glibc's symbols, because GCC merges sin and cos of one value into a
// sincosf call that has no vector form; const, as -fno-math-errno makes
// libm's own, or loops without `omp simd` stay scalar. Measured (2026-12-05):
// sin, cos within 1.9 ulp, pow 0.6; 0.23 ns an element against 6.3 for sin,
// 1.3 against 4.4 for pow. The AVX2 and AVX-512 forms give the same bits;
// a loop's remainder may take the SSE form or the scalar libm, whose sin and
// cos differ from them by an ulp on a tenth and a quarter of inputs. f64
// stays on the scalar libm, within 1 ulp where the vector forms have 3.
#if defined(FUSESCOPE_LIBMVEC) && defined(__x86_64__) && defined(__GLIBC__)
#define FUSESCOPE_VECTOR_LIBM 1
extern "C" {
__attribute__((simd("notinbranch"), const)) float fusescope_sinf(float) noexcept __asm__("sinf");
__attribute__((simd("notinbranch"), const)) float fusescope_cosf(float) noexcept __asm__("cosf");
__attribute__((simd("notinbranch"), const)) float fusescope_powf(float, float) noexcept __asm__("powf");
}
#endif

namespace fusescope::sm {

inline float bitsToFloat(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline uint32_t floatToBits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// Cody-Waite split of ln 2: n * kLn2Hi is exact for every n used here.
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;

// 1.5 * 2^23 + 127: a float in [2^23, 2^24) added to y rounds y to an integer
// n and holds n + 127 in the low mantissa bits, the exponent field of 2^n, so
// shifting its bits left by 23 gives 2^n without a float-to-int conversion.
// The 127 folded into the constant spares an integer add a vector (2-3 % of
// the fused softmax_ln and pointwise loops); its own bits above the low 9
// shift out.
constexpr float kScaleShifter = 12583039.0f;

inline float scaleOfShifted(float t)
{
    return bitsToFloat(floatToBits(t) << 23);
}

// exp of an x already clamped to [-88, 88.73], the core every f32
// exponential here shares. n is rounded with kScaleShifter: a NaN x needs no
// guard (it stays NaN through p), where guarding it made GCC evaluate the
// polynomial twice. n = 128 (x > 88.38) makes the scale, and so the result,
// infinity; n = -127 makes them +0.
inline float expReduced(float x)
{
    const float shifter = kScaleShifter;
    const float t = x * 1.44269504088896341f + shifter;
    const float n = t - shifter;
    float r = x - n * kLn2Hi;
    r = r - n * kLn2Lo;
    // exp(r) = 1 + r + r^2 q(r): minimax on |r| <= ln(2)/2, relative error 3e-9,
    // taken as 1 + r (1 + r q): two FMAs where r^2 q + r + 1 took three (the
    // fused softmax_ln and pointwise loops ran 3-5 % faster; exp's worst
    // error 0.87 ulp, 0.99 before).
    float q = 1.38146023e-3f;
    q = q * r + 8.36871564e-3f;
    q = q * r + 4.16683890e-2f;
    q = q * r + 1.66665211e-1f;
    q = q * r + 4.99999940e-1f;
    const float p = r * (r * q + 1.0f) + 1.0f;
    return p * scaleOfShifted(t);
}

constexpr float kExpHi = 88.72283f, kExpLo = -87.33654f;

// The argument expReduced takes for x: x itself in [kExpLo, kExpHi], kExpHi
// above (result infinity), and below kExpLo -88, where n = -127 makes the
// scale's bits, and so the result, +0. Mapping the underflow to an argument
// spares a select on the result: softmax_ln's fused loop ran 5-9 % and
// pointwise's 8 % faster than with a clamp to kExpLo and a zero chosen
// after. NaN passes (the comparisons are false).
inline float clampExpArg(float x)
{
    const float c = x > kExpHi ? kExpHi : x;
    return x < kExpLo ? -88.0f : c;
}

// exp: max error about 1 ulp up to 88.38 and infinity above (as before the
// rewrite; the true result stays finite up to 88.72); 0 below -87.34 rather
// than a subnormal.
inline float expf(float x)
{
    return expReduced(clampExpArg(x));
}

// expReduced(-c), bit for bit, for c in [-88.73, 88] (clampExpArg's range
// mirrored): the negation folds into the constants, t = c * -log2(e) +
// shifter and the polynomial taken in s = -r with its odd coefficients'
// signs flipped, so every rounding sees the same magnitudes and sigmoid
// spares its negation (the fused pointwise loop ran 2 % faster). Below -88.73
// the scale's bits wrap and the result means nothing: sigmoidf discards it.
inline float expNegReduced(float c)
{
    const float shifter = kScaleShifter;
    const float t = c * -1.44269504088896341f + shifter;
    const float n = t - shifter;
    float s = c + n * kLn2Hi;
    s = s + n * kLn2Lo;
    float q = 1.38146023e-3f;
    q = q * s - 8.36871564e-3f;
    q = q * s + 4.16683890e-2f;
    q = q * s - 1.66665211e-1f;
    q = q * s + 4.99999940e-1f;
    const float p = 1.0f - s * (1.0f - s * q);
    return p * scaleOfShifted(t);
}

// 1 / (1 + exp(-x)): exp(-x) is 0 for x > 87.34 (result 1), and below
// -88.72 the result is 0, chosen after rather than reached through a clamp
// to -88.72 (exp(-x) infinity): the same values, and GCC masks the vector
// loop's lanes instead of blending in the clamp (the fused pointwise loop
// ran 4-5 % faster).
inline float sigmoidf(float x)
{
    const float y = 1.0f / (1.0f + expNegReduced(x > -kExpLo ? 88.0f : x));
    return x < -kExpHi ? 0.0f : y;
}

// log: about 1 ulp for normal inputs; subnormals are scaled first. xs =
// f * 2^e with f in [sqrt(1/2), sqrt(2)) comes from one integer subtraction:
// xs's bits less f's lowest bits (sqrt(1/2)'s) hold e above the 23 mantissa
// bits and f's offset from sqrt(1/2) below them. m = f - 1 is exact. The same
// values as taking the mantissa in [1/2, 1) and doubling it below sqrt(1/2),
// bit for bit over all 2^32 inputs; the vector loop has 45 instructions where
// it had 49 and ran 9 % faster.
inline float logf(float x)
{
    const bool sub = x < 1.17549435e-38f;
    const float xs = sub ? x * 8388608.0f : x; // 2^23
    const uint32_t ix = floatToBits(xs) - 0x3f3504f3u;
    const float e = static_cast<float>(static_cast<int32_t>(ix) >> 23) - (sub ? 23.0f : 0.0f);
    const float m = bitsToFloat((ix & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    const float z = m * m;
    float p = 7.0376836292e-2f;
    p = p * m - 1.1514610310e-1f;
    p = p * m + 1.1676998740e-1f;
    p = p * m - 1.2420140846e-1f;
    p = p * m + 1.4249322787e-1f;
    p = p * m - 1.6668057665e-1f;
    p = p * m + 2.0000714765e-1f;
    p = p * m - 2.4999993993e-1f;
    p = p * m + 3.3333331174e-1f;
    float y = p * m * z;
    y += e * -2.12194440e-4f;
    y += -0.5f * z;
    y = m + y + e * 0.693359375f;
    y = x == INFINITY ? INFINITY : y;
    y = x == 0.0f ? -INFINITY : y;
    // Below 0 NaN, and a NaN x itself (quieted, as any arithmetic on it): one
    // select where two took 4-6 % longer.
    return x >= 0.0f ? y : x * NAN;
}

// log(1 + x) as log(u) + (x - (u - 1)) / u, u = 1 + x rounded: the second
// term is what u's rounding lost (u - 1 and x - (u - 1) are exact). Within
// 1.44 ulp measured (just below 0, where log(u) cancels most), and vector
// code: libm's scalar log1pf held a fused loop to one element at a time
// (8.7 ns an element, 0.46 with this).
inline float log1pf(float x)
{
    const float u = 1.0f + x;
    const float l = logf(u);
    const float r = (x == INFINITY || u == 0.0f) ? l : l + (x - (u - 1.0f)) / u; // inf - inf, 0 / 0 else
    return x == 0.0f ? x : r;                                                   // -0 stays -0
}

inline float tanhf(float x)
{
    const float a = std::fabs(x);
    // Small |x|: odd polynomial; large: 1 - 2/(exp(2|x|)+1).
    const float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float small = x + x * z * p;
    const float a2 = 2.0f * a;
    const float big = 1.0f - 2.0f / (expReduced(a2 > kExpHi ? kExpHi : a2) + 1.0f);
    // x's sign on either form: the polynomial's x + x z p is +0 for x = -0.
    // A NaN x needs no select of its own: both forms are NaN (the same bits
    // over all 2^32 inputs as with one, NaN for NaN; the loop ran 5 % faster).
    return std::copysign(a < 0.625f ? small : big, x);
}

// erf below 0.921875: x + x R(x^2), R a minimax fit (relative error 2e-8).
inline float erfSmall(float x)
{
    const float s = x * x;
    float r = -5.99085644e-4f;
    r = r * s + 4.99318074e-3f;
    r = r * s - 2.67666168e-2f;
    r = r * s + 1.12818159e-1f;
    r = r * s - 3.76124948e-1f;
    r = r * s + 1.28379151e-1f;
    return x * r + x;
}

// erfc(t) for t in [0.921875, 4] as 2^Q(t), Q a minimax fit of log2(erfc):
// fitting log2 rather than ln spares the Cody-Waite reduction, and as erfc is
// under 0.19 here, erf = 1 - erfc tolerates a shorter 2^f polynomial than
// expReduced's.
inline float erfcTail(float t)
{
    float q = 2.82365305e-4f;
    q = q * t - 4.38737031e-3f;
    q = q * t + 3.20544504e-2f;
    q = q * t - 1.49916247e-1f;
    q = q * t - 9.19288576e-1f;
    q = q * t - 1.62687492e+0f;
    q = q * t - 2.86453869e-4f;
    // q = n + f, n integer (in u's low mantissa bits, as in expReduced), |f| <= 1/2.
    const float shifter = kScaleShifter;
    const float u = q + shifter;
    const float f = q - (u - shifter);
    float p = 1.32764725e-3f; // 2^f, relative error 7.5e-8
    p = p * f + 9.67554096e-3f;
    p = p * f + 5.55071309e-2f;
    p = p * f + 2.40221202e-1f;
    p = p * f + 6.93146944e-1f;
    p = p * f + 1.00000012e+0f;
    return p * scaleOfShifted(u);
}

// erf without a division (the A&S 7.1.26 form it replaces needed one):
// within 1.6 ulp measured. |x| is clamped at 4, where erf is 1 in f32, which
// also keeps Q finite for infinite x; NaN falls through to the tail form and
// stays NaN.
inline float erff(float x)
{
    const float a = std::fabs(x);
    const float big = 1.0f - erfcTail(a > 4.0f ? 4.0f : a);
    return a < 0.921875f ? erfSmall(x) : std::copysign(big, x);
}

// 2^f for |f| <= 1/2, relative error 2e-9 (a minimax fit).
inline float exp2Fraction(float f)
{
    float p = 1.534582116e-04f;
    p = p * f + 1.339993440e-03f;
    p = p * f + 9.618489072e-03f;
    p = p * f + 5.550328642e-02f;
    p = p * f + 2.402264625e-01f;
    p = p * f + 6.931471825e-01f;
    return p * f + 1.0f;
}

// 2^x for x clamped to [-127, 128]: n = round(x) in u's low mantissa bits (as
// in expReduced) and f = x - n exactly; n = -127 makes the scale, and so the
// result, 0, and n = 128 infinity. NaN stays NaN.
inline float exp2Reduced(float x)
{
    const float shifter = kScaleShifter;
    const float u = x + shifter;
    return exp2Fraction(x - (u - shifter)) * scaleOfShifted(u);
}

// Phi(x), the standard normal CDF that exact GELU weighs x by, in one
// division-free form: Phi(-|x|) = 2^Q(|x|), Q a fit of log2 Phi(-a) on
// [0, 6] weighted by Phi(-a) itself, so its error is absolute (under 6.9e-8
// measured) and Phi(x) = 1 - Phi(-x) above 0 loses nothing to cancellation.
// GELU's old 0.5 x (1 + erf(x / sqrt 2)) evaluated both of erf's forms and
// its 1 + erf cancelled below 0: the fused pointwise loop has 51 vector
// instructions with this where it had 61, and gelu's relative error below
// -1 is smaller (the cancellation cost thousands of ulp by x = -3).
// Past its fit Q falls faster than log2 Phi (the results, under 1e-9, stay
// below the true ones) and monotonically, below -127 from 9.97 on, where the
// mask makes Phi(x) 0 (Phi(-9.97) is 1e-23); NaN stays NaN.
inline float normalCdff(float x)
{
    const float a = std::fabs(x);
    float q = -2.772108701e-06f;
    q = q * a + 3.862146696e-05f;
    q = q * a - 1.825510844e-04f;
    q = q * a - 1.458614861e-04f;
    q = q * a + 7.075460162e-03f;
    q = q * a - 5.250502005e-02f;
    q = q * a - 4.592049122e-01f;
    q = q * a - 1.151105762e+00f;
    // Q = q a - 1 split as n + f for 2^Q, as exp2Reduced does, but with Q's
    // constant term in the shifter: u = Q + shifter rounded in one FMA and
    // f = Q - n in another, exact but for its one rounding (shifter - 1 - u
    // is -1 - n exactly). One instruction fewer than rounding Q first, and
    // f no longer carries Q's rounding; the fused pointwise loop ran 3-4 %
    // faster.
    const float shifted = kScaleShifter - 1.0f;
    const float u = q * a + shifted;
    const float f = q * a + (shifted - u);
    // 2^f as erfcTail's, with a degree more: Phi near 0.5 needs it to 2e-9.
    const float scaled = exp2Fraction(f) * scaleOfShifted(u);
    const float lower = u < kScaleShifter - 127.0f ? 0.0f : scaled; // n < -127 would wrap the scale's bits
    return x < 0.0f ? lower : 1.0f - lower;
}

// 2^x: n = round(x) and f = x - n exactly, so nothing is lost to rounding
// x ln 2 (exp(x ln 2) was 68 ulp off near 99). As exp: infinity above 127.5
// (the true result is finite below 128), 0 from -126.5 down rather than a
// subnormal; NaN stays NaN.
inline float exp2f(float x)
{
    const float c = x > 128.0f ? 128.0f : x;
    return exp2Reduced(x < -127.0f ? -127.0f : c);
}

// --- generic forms: f32 uses the polynomials above, f64 uses libm ---------------
template <typename T> inline T exp(T x) { return std::exp(x); }
template <> inline float exp(float x) { return expf(x); }
template <typename T> inline T log(T x) { return std::log(x); }
template <> inline float log(float x) { return logf(x); }
template <typename T> inline T tanh(T x) { return std::tanh(x); }
template <> inline float tanh(float x) { return tanhf(x); }
template <typename T> inline T erf(T x) { return std::erf(x); }
template <> inline float erf(float x) { return erff(x); }

// exp of an x known not to be positive (x minus its row's max, or NaN): only
// the underflow needs its clamp. softmax_ln's fused loop ran 8-11 % faster
// on rows in L1.
template <typename T> inline T exp_nonpositive(T x) { return exp<T>(x); }
template <> inline float exp_nonpositive(float x) { return expReduced(x < kExpLo ? -88.0f : x); }

template <typename T> inline T sigmoid(T x) { return T(1) / (T(1) + exp<T>(-x)); }
template <> inline float sigmoid(float x) { return sigmoidf(x); }
// -0 and NaN pass, as in PyTorch (x < 0 is false for both).
template <typename T> inline T relu(T x) { return x < T(0) ? T(0) : x; }
template <typename T> inline T relu6(T x) { const T r = relu(x); return r > T(6) ? T(6) : r; }
template <typename T> inline T leaky_relu(T x, T slope) { return x > T(0) ? x : x * slope; }
template <typename T> inline T hardsigmoid(T x)
{
    T y = x / T(6) + T(0.5);
    y = y < T(0) ? T(0) : y;
    return y > T(1) ? T(1) : y;
}
template <typename T> inline T hardswish(T x) { return x * hardsigmoid(x); }
template <typename T> inline T normal_cdf(T x) { return T(0.5) * std::erfc(x * T(-0.70710678118654752440)); }
template <> inline float normal_cdf(float x) { return normalCdff(x); }
template <typename T> inline T gelu(T x) { return x * normal_cdf<T>(x); }
// GELU's tanh approximation 0.5 x (1 + tanh(z)), z = sqrt(2 / pi) (x +
// 0.044715 x^3), taken as x sigmoid(2 z), equal in exact arithmetic: 1 +
// tanh(z) cancelled below 0 (202 ulp on [-3, -1), 13 now), and sigmoid's one
// form is cheaper than tanh's two (a loop of it ran 1.6x faster).
template <typename T> inline T gelu_tanh(T x)
{
    const T twoZ = (x + T(0.044715) * x * x * x) * T(1.59576912160573071176);
    return x * sigmoid<T>(twoZ);
}
template <typename T> inline T silu(T x) { return x * sigmoid(x); }
// x tanh(log(1 + n)), n = e^x, in closed form: x m / (m + 2), m = n (n + 2).
// One exp and a division where softplus and tanh took three transcendentals
// (a loop of it ran 6x faster), and no 1 + n rounding e^x away: 4.3 ulp at
// most where that had 80 above -5 and returned -0 below -17. Above 20,
// tanh(softplus(x)) is 1 in f32 and f64, and from 44 on m overflows f32.
template <typename T> inline T mish(T x)
{
    const T n = exp<T>(x);
    const T m = n * (n + T(2));
    const T y = x * (m / (m + T(2)));
    return x > T(20) ? x : y;
}
template <typename T> inline T rsqrt(T x) { return T(1) / std::sqrt(x); }
template <typename T> inline T reciprocal(T x) { return T(1) / x; }
template <typename T> inline T sign(T x) { return T((x > T(0)) - (x < T(0))); }
template <typename T> inline T exp2(T x) { return std::exp2(x); }
template <> inline float exp2(float x) { return exp2f(x); }
template <typename T> inline T log1p(T x) { return std::log1p(x); }
template <> inline float log1p(float x) { return log1pf(x); }
template <typename T> inline T maximum(T a, T b) { return (a != a || a > b) ? a : b; }
template <typename T> inline T minimum(T a, T b) { return (a != a || a < b) ? a : b; }

// a / b and a % b of integers, b not 0 (the eager kernels check; compiled
// code leaves integer division to them). The lowest value over -1 wraps to
// itself, as two's complement negation does, where the division instruction
// would trap (SIGFPE).
template <typename T> inline T int_quotient(T a, T b)
{
    if constexpr (std::is_signed_v<T>) {
        using U = std::make_unsigned_t<T>;
        if (b == T(-1))
            return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
    }
    return static_cast<T>(a / b);
}
template <typename T> inline T int_rest(T a, T b)
{
    if constexpr (std::is_signed_v<T>) {
        if (b == T(-1))
            return T(0);
    }
    return static_cast<T>(a % b);
}

// Remainder with the sign of the divisor (Python's and PyTorch's), from fmod.
template <typename T> inline T remainderOfFmod(T r, T b)
{
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
}

// a - q b for q = trunc(a / b) (fmod) or floor(a / b) (remainder) of
// floats, exactly, in double. With |q| < 2^28 the rounded quotient cannot
// cross an integer: a / b of floats lies at least 2^-24 from any integer it
// is not, a relative 2^-52 there, and the division errs by at most 2^-53.
// Then q b is exact in 53 bits and so is a - q b. A zero keeps a's sign, as
// fmod's does. Larger quotients, b = 0 or infinite and NaNs take libm's loop
// over the exponents, which took 4.5 ns an element where PyTorch's vector
// form takes 0.8.
template <bool Floor> inline float restf(float a, float b)
{
    const double t = static_cast<double>(a) / static_cast<double>(b);
    const double q = Floor ? std::floor(t) : std::trunc(t);
    const double r = std::fma(-q, static_cast<double>(b), static_cast<double>(a));
    if (std::fabs(q) < 0x1p28 && r == r)
        return r == 0 ? std::copysign(0.0f, a) : static_cast<float>(r);
    return Floor ? remainderOfFmod(std::fmod(a, b), b) : std::fmod(a, b);
}

template <typename T> inline T fmod(T a, T b)
{
    if constexpr (std::is_integral_v<T>)
        return int_rest(a, b);
    else if constexpr (std::is_same_v<T, float>)
        return restf<false>(a, b);
    else
        return std::fmod(a, b);
}
template <typename T> inline T remainder(T a, T b)
{
    if constexpr (std::is_integral_v<T>)
        return remainderOfFmod(int_rest(a, b), b);
    else if constexpr (std::is_same_v<T, float>)
        return restf<true>(a, b);
    else
        return remainderOfFmod(std::fmod(a, b), b);
}

// Floor division of floats as PyTorch (and Python) define it: the floor of
// the exact quotient, so 1 // 0.1f is 9 (0.1f lies a little above 0.1),
// where floor(1 / 0.1f) took the quotient rounded up to 10 first. Here from
// fmod, which is exact: a - fmod(a, b) is a multiple of b, whose quotient by
// b rounds to near that integer. An infinite a gives NaN (fmod's), a finite
// a over an infinite b of the other sign -1, and b = 0 gives a / b.
template <typename T> inline T floorDivideFromFmod(T a, T b)
{
    if (b == T(0))
        return a / b;
    const T mod = std::fmod(a, b);
    T q = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0))))
        q -= T(1);
    if (q == T(0))
        return std::copysign(T(0), a / b);
    const T f = std::floor(q);
    return q - f > T(0.5) ? f + T(1) : f;
}

// The same for floats, in vector code: the double quotient of two floats has
// the exact quotient's floor (restf's argument, below 2^28; above, the float
// result rounds both alike but for an ulp at most). A zero quotient keeps
// its sign, and -0 from a finite a over an infinite b stands for the exact
// quotient's infinitesimal below 0.
inline float floorDividef(float a, float b)
{
    const double t = static_cast<double>(a) / static_cast<double>(b);
    const double q = (t == 0 && a != 0 && std::copysign(1.0, t) < 0) ? -1.0 : std::floor(t);
    return std::fabs(a) == INFINITY && b != 0 ? NAN : static_cast<float>(q);
}

// Python's and PyTorch's floor division: toward -infinity, for integers too.
template <typename T> inline T floor_divide(T a, T b)
{
    if constexpr (std::is_integral_v<T>) {
        const T q = int_quotient(a, b);
        return (int_rest(a, b) != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    } else if constexpr (std::is_same_v<T, float>) {
        return floorDividef(a, b);
    } else {
        return floorDivideFromFmod(a, b);
    }
}

// --- the rest of the pointwise ops, under their registry scalarFn names ------------
// Generated code converts every operand to the op's compute type first; bool
// results come from predicates. Integer rounding is the identity.
template <typename T> inline T identity(T x) { return x; }
template <typename T> inline T cast(T x) { return x; } // the conversion happens on the operand
template <typename T> inline T neg(T x) { return -x; }
// fabs for floats: -0 becomes +0, as in IEEE and PyTorch (x < 0 ? -x : x kept -0).
template <typename T> inline T abs(T x)
{
    if constexpr (std::is_floating_point_v<T>)
        return std::fabs(x);
    else
        return x < T(0) ? -x : x;
}
template <typename T> inline T sqrt(T x) { return std::sqrt(x); }
template <typename T> inline T sin(T x) { return std::sin(x); }
template <typename T> inline T cos(T x) { return std::cos(x); }
#ifdef FUSESCOPE_VECTOR_LIBM
template <> inline float sin(float x) { return fusescope_sinf(x); }
template <> inline float cos(float x) { return fusescope_cosf(x); }
#endif
template <typename T> inline T floor(T x) { if constexpr (std::is_integral_v<T>) return x; else return std::floor(x); }
template <typename T> inline T ceil(T x) { if constexpr (std::is_integral_v<T>) return x; else return std::ceil(x); }
// Half to even, as PyTorch.
template <typename T> inline T round(T x) { if constexpr (std::is_integral_v<T>) return x; else return std::nearbyint(x); }
template <typename T> inline T trunc(T x) { if constexpr (std::is_integral_v<T>) return x; else return std::trunc(x); }
template <typename T> inline bool isnan(T x) { return x != x; }
template <typename T> inline bool logical_not(T x) { return x == T(0); }
template <typename T> inline T bitwise_not(T x) { if constexpr (std::is_same_v<T, bool>) return !x; else return ~x; }

template <typename T> inline T add(T a, T b, T alpha = T(1))
{
    if constexpr (std::is_same_v<T, bool>)
        return a || b;
    else
        return alpha == T(1) ? a + b : a + alpha * b;
}
template <typename T> inline T sub(T a, T b, T alpha = T(1))
{
    if constexpr (std::is_same_v<T, bool>)
        return a != b;
    else
        return alpha == T(1) ? a - b : a - alpha * b;
}
template <typename T> inline T mul(T a, T b) { if constexpr (std::is_same_v<T, bool>) return a && b; else return a * b; }
template <typename T> inline T div(T a, T b)
{
    if constexpr (std::is_integral_v<T>)
        return int_quotient(a, b);
    else
        return a / b;
}
template <typename T> inline T div_trunc(T a, T b)
{
    if constexpr (std::is_integral_v<T>)
        return int_quotient(a, b);
    else
        return std::trunc(a / b);
}
template <typename T> inline T pow(T a, T b)
{
    if constexpr (std::is_integral_v<T>)
        return static_cast<T>(std::llround(std::pow(static_cast<double>(a), static_cast<double>(b))));
    else
        return std::pow(a, b);
}
#ifdef FUSESCOPE_VECTOR_LIBM
template <> inline float pow(float a, float b) { return fusescope_powf(a, b); }
#endif
template <typename T> inline bool eq(T a, T b) { return a == b; }
template <typename T> inline bool ne(T a, T b) { return a != b; }
template <typename T> inline bool lt(T a, T b) { return a < b; }
template <typename T> inline bool le(T a, T b) { return a <= b; }
template <typename T> inline bool gt(T a, T b) { return a > b; }
template <typename T> inline bool ge(T a, T b) { return a >= b; }
// & and | rather than && and ||: no short circuit, so a loop over bools
// stays vector code (logical_and over 4 M bools took 8 ms with &&, as long
// as 36 eq's).
template <typename T> inline bool logical_and(T a, T b) { return (a != T(0)) & (b != T(0)); }
template <typename T> inline bool logical_or(T a, T b) { return (a != T(0)) | (b != T(0)); }
template <typename T> inline T where(T c, T x, T y) { return c != T(0) ? x : y; }
template <typename T> inline T masked_fill(T x, T mask, T value) { return mask != T(0) ? value : x; }
// NaN passes through, as in PyTorch.
template <typename T> inline T clamp_min(T x, T lo) { return x != x ? x : (x < lo ? lo : x); }
template <typename T> inline T clamp_max(T x, T hi) { return x != x ? x : (x > hi ? hi : x); }
template <typename T> inline T clamp(T x, T lo, T hi) { return clamp_max(clamp_min(x, lo), hi); }

} // namespace fusescope::sm
