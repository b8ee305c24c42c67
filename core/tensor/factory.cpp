#include "core/tensor/factory.h"

#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/runtime/threadpool.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fusescope {
namespace {

uint64_t splitmix64(uint64_t &x)
{
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

template <typename Fn>
Tensor generate(const Shape &sizes, DType dtype, Fn next)
{
    Tensor t = Tensor::empty(sizes, dtype);
    visitDType(dtype, [&](auto tag) {
        using T = decltype(tag);
        T *p = t.data<T>();
        for (int64_t i = 0; i < t.numel(); ++i)
            p[i] = static_cast<T>(static_cast<compute_t<T>>(next(i)));
    });
    return t;
}

} // namespace

Generator::Generator(uint64_t seed)
{
    for (auto &s : m_s)
        s = splitmix64(seed);
}

uint64_t Generator::next()
{
    const uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
}

double Generator::uniform()
{
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

namespace {

// Box-Muller: two standard normals from u1 in (0, 1] (log is finite) and u2.
void boxMuller(double u1, double u2, double &first, double &second)
{
    const double radius = std::sqrt(-2.0 * std::log(u1));
    second = radius * std::sin(2.0 * M_PI * u2);
    first = radius * std::cos(2.0 * M_PI * u2);
}

} // namespace

double Generator::normal()
{
    if (m_hasSpare) {
        m_hasSpare = false;
        return m_spare;
    }
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    double first = 0;
    boxMuller(u1, u2, first, m_spare);
    m_hasSpare = true;
    return first;
}

void Generator::normals(double *out, int64_t n)
{
    int64_t i = 0;
    if (n > 0 && m_hasSpare) {
        out[i++] = m_spare;
        m_hasSpare = false;
    }
    // The uniforms in the stream's order, one block at a time; their logs and
    // sines, most of the time a model's initialization took (a quarter of
    // `fusescope stages resnet18`), on the pool. The values are normal()'s.
    const int64_t blockPairs = std::min<int64_t>(int64_t(1) << 14, (n - i + 1) / 2);
    std::vector<double> u(static_cast<size_t>(2 * blockPairs));
    while (i < n) {
        const int64_t pairs = std::min(blockPairs, (n - i + 1) / 2);
        for (int64_t p = 0; p < pairs; ++p) {
            u[static_cast<size_t>(2 * p)] = 1.0 - uniform();
            u[static_cast<size_t>(2 * p + 1)] = uniform();
        }
        const bool odd = i + 2 * pairs > n; // the last pair's second value waits as the spare
        double *block = out + i;
        parallelFor(0, pairs, 512, [&](int64_t b, int64_t e) {
            for (int64_t p = b; p < e; ++p) {
                double first = 0, second = 0;
                boxMuller(u[static_cast<size_t>(2 * p)], u[static_cast<size_t>(2 * p + 1)], first, second);
                block[2 * p] = first;
                if (odd && p == pairs - 1)
                    m_spare = second;
                else
                    block[2 * p + 1] = second;
            }
        });
        m_hasSpare = odd;
        i = std::min(n, i + 2 * pairs);
    }
}

void fill_(const Tensor &t, double value)
{
    // A stride-0 alias, not ops::expand: filling is not an op of its own.
    const Tensor scalar = Tensor::wrapScalar(value, t.dtype());
    loops::copyInto(t, scalar.alias(t.sizes(), Shape(t.sizes().size(), 0), 0));
}

Tensor full(const Shape &sizes, double value, DType dtype)
{
    return callOp1("aten.full", {sizes, value, dtype});
}

Tensor zeros(const Shape &sizes, DType dtype)
{
    return full(sizes, 0, dtype);
}

Tensor ones(const Shape &sizes, DType dtype)
{
    return full(sizes, 1, dtype);
}

Tensor arange(double start, double end, double step, std::optional<DType> dtype)
{
    return callOp1("aten.arange", {start, end, step, Value(dtype)});
}

Tensor arange(int64_t end)
{
    return callOp1("aten.arange", {int64_t(0), end, int64_t(1), Value()});
}

Tensor eye(int64_t n, int64_t m, DType dtype)
{
    return callOp1("aten.eye", {n, m < 0 ? n : m, dtype});
}

Tensor randn(const Shape &sizes, Generator &gen, DType dtype)
{
    std::vector<double> values(static_cast<size_t>(std::max<int64_t>(numelOf(sizes), 0)));
    gen.normals(values.data(), static_cast<int64_t>(values.size()));
    return generate(sizes, dtype, [&](int64_t i) { return values[static_cast<size_t>(i)]; });
}

Tensor rand(const Shape &sizes, Generator &gen, DType dtype)
{
    return generate(sizes, dtype, [&](int64_t) { return gen.uniform(); });
}

Tensor randint(int64_t low, int64_t high, const Shape &sizes, Generator &gen, DType dtype)
{
    if (high <= low)
        throw Error("randint: empty range [" + std::to_string(low) + ", " + std::to_string(high) + ")");
    const auto span = static_cast<uint64_t>(high - low);
    return generate(sizes, dtype, [&](int64_t) { return static_cast<double>(low + static_cast<int64_t>(gen.next() % span)); });
}

Tensor fromVector(const std::vector<double> &values, const Shape &sizes, DType dtype)
{
    if (static_cast<int64_t>(values.size()) != numelOf(sizes))
        throw Error("fromVector: " + std::to_string(values.size()) + " values do not fill shape " + shapeStr(sizes));
    return generate(sizes, dtype, [&](int64_t i) { return values[static_cast<size_t>(i)]; });
}

} // namespace fusescope
