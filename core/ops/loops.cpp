#include "core/ops/loops.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace fusescope::loops {

bool wideVectors()
{
    static const bool wide = [] {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
        const char *off = std::getenv("FUSESCOPE_NO_AVX512");
        if (off && std::strcmp(off, "0") != 0 && *off)
            return false;
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
        return false;
#endif
    }();
    return wide;
}

int64_t streamBytesForCache(int64_t llcBytes)
{
    return std::max(int64_t(12) << 20, llcBytes / 2);
}

namespace {

int64_t defaultStreamBytes()
{
    static const int64_t bytes = [] {
        const char *env = std::getenv("FUSESCOPE_STREAM_BYTES");
        if (env && *env)
            return static_cast<int64_t>(std::atoll(env));
        return streamBytesForCache(std::max<int64_t>(0, sysconf(_SC_LEVEL3_CACHE_SIZE)));
    }();
    return bytes;
}

std::atomic<int64_t> g_streamBytes{0}; // 0: the default

} // namespace

int64_t streamBytes()
{
    const int64_t set = g_streamBytes.load(std::memory_order_relaxed);
    return set > 0 ? set : defaultStreamBytes();
}

void setStreamBytes(int64_t bytes)
{
    g_streamBytes.store(std::max<int64_t>(0, bytes), std::memory_order_relaxed);
}

void streamCopy(void *dst, const void *src, size_t bytes)
{
#if defined(__AVX__)
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    // Streaming stores need 32-byte aligned targets: the head goes plainly.
    const size_t head = std::min(bytes, (32 - reinterpret_cast<uintptr_t>(d) % 32) % 32);
    std::memcpy(d, s, head);
    size_t i = head;
    for (; i + 32 <= bytes; i += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i *>(d + i), _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i)));
    std::memcpy(d + i, s + i, bytes - i);
#else
    std::memcpy(dst, src, bytes);
#endif
}

void streamFence()
{
#if defined(__AVX__)
    _mm_sfence();
#endif
}

namespace {

#if defined(__AVX__)
// Eight columns of eight 4-byte items (each column contiguous) become eight
// rows of the tile.
void transpose8x8(const char *src, int64_t colStride, char *dst, int64_t dstRow)
{
    __m256 v[8], t[8];
    for (int c = 0; c < 8; ++c)
        v[c] = _mm256_loadu_ps(reinterpret_cast<const float *>(src + c * colStride));
    for (int c = 0; c < 8; c += 2) {
        t[c] = _mm256_unpacklo_ps(v[c], v[c + 1]);
        t[c + 1] = _mm256_unpackhi_ps(v[c], v[c + 1]);
    }
    for (int c = 0; c < 8; c += 4) {
        v[c] = _mm256_shuffle_ps(t[c], t[c + 2], 0x44);
        v[c + 1] = _mm256_shuffle_ps(t[c], t[c + 2], 0xEE);
        v[c + 2] = _mm256_shuffle_ps(t[c + 1], t[c + 3], 0x44);
        v[c + 3] = _mm256_shuffle_ps(t[c + 1], t[c + 3], 0xEE);
    }
    for (int r = 0; r < 4; ++r) {
        _mm256_storeu_ps(reinterpret_cast<float *>(dst + r * dstRow), _mm256_permute2f128_ps(v[r], v[r + 4], 0x20));
        _mm256_storeu_ps(reinterpret_cast<float *>(dst + (r + 4) * dstRow),
                         _mm256_permute2f128_ps(v[r], v[r + 4], 0x31));
    }
}
#endif

} // namespace

void transposeTile(const char *src, int64_t colStride, int64_t item, int64_t rows, int64_t cols, char *dst)
{
    const int64_t dstRow = cols * item;
    int64_t r0 = 0;
#if defined(__AVX__)
    if (item == 4) {
        for (; r0 + 8 <= rows; r0 += 8) {
            int64_t c = 0;
            for (; c + 8 <= cols; c += 8)
                transpose8x8(src + r0 * 4 + c * colStride, colStride, dst + r0 * dstRow + c * 4, dstRow);
            for (; c < cols; ++c) {
                for (int64_t r = r0; r < r0 + 8; ++r)
                    std::memcpy(dst + r * dstRow + c * 4, src + r * 4 + c * colStride, 4);
            }
        }
    }
#endif
    for (int64_t c = 0; c < cols; ++c) {
        for (int64_t r = r0; r < rows; ++r)
            std::memcpy(dst + r * dstRow + c * item, src + r * item + c * colStride, static_cast<size_t>(item));
    }
}

Shape broadcastShapes(const std::string &op, const Shape &a, const Shape &b)
{
    const size_t n = std::max(a.size(), b.size());
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
        const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (da != db && da != 1 && db != 1)
            throw Error(op + ": shapes " + shapeStr(a) + " and " + shapeStr(b) + " cannot be broadcast together");
        out[i] = da == 1 ? db : da;
    }
    return out;
}

Shape broadcastAll(const std::string &op, const std::vector<Shape> &shapes)
{
    Shape out;
    for (const Shape &s : shapes)
        out = broadcastShapes(op, out, s);
    return out;
}

Shape broadcastStrides(const Tensor &t, const Shape &out)
{
    Shape strides(out.size(), 0);
    const size_t lead = out.size() - t.sizes().size();
    for (size_t i = 0; i < t.sizes().size(); ++i)
        strides[lead + i] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
    return strides;
}

namespace {

// f32 <-> f16 between contiguous tensors, eight values an instruction. The
// element-wise conversion (F16C's scalar form) does not vectorize: a cast of
// [4096,1024] to f16 took 2.1 times PyTorch's time.
bool convertHalves(const Tensor &dst, const Tensor &src)
{
#if defined(__F16C__)
    const bool toHalf = dst.dtype() == DType::F16 && src.dtype() == DType::F32;
    const bool fromHalf = dst.dtype() == DType::F32 && src.dtype() == DType::F16;
    if ((!toHalf && !fromHalf) || !dst.isContiguous() || !src.isContiguous() || dst.numel() != src.numel())
        return false;
    parallelFor(0, dst.numel(), kGrain, [&](int64_t begin, int64_t end) {
        int64_t i = begin;
        if (toHalf) {
            const float *s = src.data<float>();
            Half *d = dst.data<Half>();
            for (; i + 8 <= end; i += 8) {
                const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
                _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i), h);
            }
            for (; i < end; ++i)
                d[i] = Half(s[i]);
        } else {
            const Half *s = src.data<Half>();
            float *d = dst.data<float>();
            for (; i + 8 <= end; i += 8)
                _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i))));
            for (; i < end; ++i)
                d[i] = float(s[i]);
        }
    });
    return true;
#else
    (void)dst;
    (void)src;
    return false;
#endif
}

} // namespace

void copyInto(const Tensor &dst, const Tensor &src)
{
    if (convertHalves(dst, src))
        return;
    visitDType(dst.dtype(), [&](auto outTag) {
        using Out = decltype(outTag);
        visitDType(src.dtype(), [&](auto inTag) {
            using In = decltype(inTag);
            pointwise<Out, In, 1>(dst, {src}, [](auto x) { return x; });
        });
    });
}

Tensor asDType(const Tensor &t, DType dtype)
{
    if (t.dtype() == dtype)
        return t;
    Tensor out = Tensor::empty(t.sizes(), dtype, t.device());
    copyInto(out, t);
    return out;
}

Tensor contiguousAs(const Tensor &t, DType dtype)
{
    if (t.dtype() == dtype && t.isContiguous())
        return t;
    Tensor out = Tensor::empty(t.sizes(), dtype, t.device());
    copyInto(out, t);
    return out;
}

} // namespace fusescope::loops
