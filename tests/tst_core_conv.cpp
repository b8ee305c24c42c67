// Convolution, pooling and upsampling against direct f64 loops written here:
// strides, padding, dilation, groups, ceil_mode, count_include_pad, align_corners,
// layouts, dtypes, empty tensors, meta tensors and error messages.
#include "optest.h"

#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/tensor/allocator.h"

#include <cmath>
#include <limits>
#include <random>

using namespace fusescope;
using namespace fusescope::test;

namespace {

Tensor input(const Shape &shape, DType dtype, uint64_t seed)
{
    return randomInput(shape, dtype, seed, -50, 50);
}

// NCHW sizes of an input; a 3-D [C,H,W] is a batch of one.
struct Nchw {
    int64_t n, c, h, w;
};

Nchw nchw(const Shape &s)
{
    return s.size() == 4 ? Nchw{s[0], s[1], s[2], s[3]} : Nchw{1, s[0], s[1], s[2]};
}

Shape outShape(const Shape &in, int64_t c, int64_t h, int64_t w)
{
    return in.size() == 4 ? Shape{in[0], c, h, w} : Shape{c, h, w};
}

struct ConvCase {
    Shape x, w;
    bool bias;
    IntList stride, padding, dilation;
    int64_t groups;
};

// An (h, w) parameter given as one value means it for both dims.
IntList both(const IntList &v)
{
    return v.size() == 1 ? IntList{v[0], v[0]} : v;
}

// Equal element by element, NaN where the other has NaN; the expected
// tensor must hold at least one NaN (the cases put one in the input).
void sameValues(const Tensor &got, const Tensor &expected)
{
    QCOMPARE(got.sizes(), expected.sizes());
    const std::vector<double> a = got.toDoubleVector(), b = expected.toDoubleVector();
    int nans = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        nans += std::isnan(b[i]) ? 1 : 0;
        QVERIFY2(std::isnan(a[i]) ? std::isnan(b[i]) : a[i] == b[i],
                 qPrintable(QStringLiteral("element %1: %2 against %3").arg(i).arg(a[i]).arg(b[i])));
    }
    QVERIFY(nans > 0);
}

// Convolution by its definition: every output is a sum over the window.
std::vector<double> refConv(const Tensor &x, const Tensor &w, const std::vector<double> &bias, ConvCase c,
                            Shape &shape)
{
    c.stride = both(c.stride);
    c.padding = both(c.padding);
    c.dilation = both(c.dilation);
    const std::vector<double> xv = x.toDoubleVector(), wv = w.toDoubleVector();
    const Nchw in = nchw(x.sizes());
    const int64_t outC = c.w[0], cg = c.w[1], kh = c.w[2], kw = c.w[3], og = outC / c.groups;
    const int64_t oh = (in.h + 2 * c.padding[0] - c.dilation[0] * (kh - 1) - 1) / c.stride[0] + 1;
    const int64_t ow = (in.w + 2 * c.padding[1] - c.dilation[1] * (kw - 1) - 1) / c.stride[1] + 1;
    shape = outShape(x.sizes(), outC, oh, ow);
    std::vector<double> out;
    for (int64_t n = 0; n < in.n; ++n)
        for (int64_t o = 0; o < outC; ++o)
            for (int64_t y = 0; y < oh; ++y)
                for (int64_t z = 0; z < ow; ++z) {
                    double sum = bias.empty() ? 0 : bias[size_t(o)];
                    for (int64_t ci = 0; ci < cg; ++ci)
                        for (int64_t i = 0; i < kh; ++i)
                            for (int64_t j = 0; j < kw; ++j) {
                                const int64_t ih = y * c.stride[0] - c.padding[0] + i * c.dilation[0];
                                const int64_t iw = z * c.stride[1] - c.padding[1] + j * c.dilation[1];
                                if (ih < 0 || ih >= in.h || iw < 0 || iw >= in.w)
                                    continue;
                                const int64_t channel = (o / og) * cg + ci;
                                sum += xv[size_t(((n * in.c + channel) * in.h + ih) * in.w + iw)]
                                    * wv[size_t(((o * cg + ci) * kh + i) * kw + j)];
                            }
                    out.push_back(sum);
                }
    return out;
}

// PyTorch's pooling output size, written from its definition.
int64_t poolOut(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceilMode)
{
    const double span = double(in + 2 * p - d * (k - 1) - 1) / double(s);
    int64_t out = int64_t(ceilMode ? std::ceil(span) : std::floor(span)) + 1;
    if (ceilMode && (out - 1) * s >= in + p)
        --out;
    return out;
}

struct PoolCase {
    Shape x;
    IntList kernel, stride, padding, dilation;
    bool ceilMode, countIncludePad;
};

enum class Pool { Max, Avg };

// Max or average over each window; the average divides by the window
// clipped to the padded input (count_include_pad) or to the input.
std::vector<double> refPool(Pool kind, const Tensor &x, const PoolCase &c, Shape &shape)
{
    const std::vector<double> xv = x.toDoubleVector();
    const Nchw in = nchw(x.sizes());
    const IntList stride = c.stride.empty() ? c.kernel : c.stride;
    const int64_t oh = poolOut(in.h, c.kernel[0], stride[0], c.padding[0], c.dilation[0], c.ceilMode);
    const int64_t ow = poolOut(in.w, c.kernel[1], stride[1], c.padding[1], c.dilation[1], c.ceilMode);
    shape = outShape(x.sizes(), in.c, oh, ow);
    std::vector<double> out;
    for (int64_t p = 0; p < in.n * in.c; ++p)
        for (int64_t y = 0; y < oh; ++y)
            for (int64_t z = 0; z < ow; ++z) {
                double best = -std::numeric_limits<double>::infinity(), sum = 0;
                int64_t inside = 0;
                for (int64_t i = 0; i < c.kernel[0]; ++i)
                    for (int64_t j = 0; j < c.kernel[1]; ++j) {
                        const int64_t ih = y * stride[0] - c.padding[0] + i * c.dilation[0];
                        const int64_t iw = z * stride[1] - c.padding[1] + j * c.dilation[1];
                        if (ih < 0 || ih >= in.h || iw < 0 || iw >= in.w)
                            continue;
                        const double v = xv[size_t((p * in.h + ih) * in.w + iw)];
                        best = (std::isnan(v) || v > best) ? v : best;
                        sum += v;
                        ++inside;
                    }
                if (kind == Pool::Max) {
                    out.push_back(best);
                    continue;
                }
                const int64_t hs = y * stride[0] - c.padding[0], ws = z * stride[1] - c.padding[1];
                const int64_t he = std::min(hs + c.kernel[0], in.h + c.padding[0]);
                const int64_t we = std::min(ws + c.kernel[1], in.w + c.padding[1]);
                out.push_back(sum / double(c.countIncludePad ? (he - hs) * (we - ws) : inside));
            }
    return out;
}

std::vector<double> refAdaptive(const Tensor &x, int64_t oh, int64_t ow, Shape &shape)
{
    const std::vector<double> xv = x.toDoubleVector();
    const Nchw in = nchw(x.sizes());
    shape = outShape(x.sizes(), in.c, oh, ow);
    std::vector<double> out;
    for (int64_t p = 0; p < in.n * in.c; ++p)
        for (int64_t y = 0; y < oh; ++y)
            for (int64_t z = 0; z < ow; ++z) {
                const auto h0 = int64_t(std::floor(double(y * in.h) / double(oh)));
                const auto h1 = int64_t(std::ceil(double((y + 1) * in.h) / double(oh)));
                const auto w0 = int64_t(std::floor(double(z * in.w) / double(ow)));
                const auto w1 = int64_t(std::ceil(double((z + 1) * in.w) / double(ow)));
                double sum = 0;
                for (int64_t i = h0; i < h1; ++i)
                    for (int64_t j = w0; j < w1; ++j)
                        sum += xv[size_t((p * in.h + i) * in.w + j)];
                out.push_back(sum / double((h1 - h0) * (w1 - w0)));
            }
    return out;
}

// Source coordinate of output o under PyTorch's linear interpolation rule.
double linearSource(int64_t o, int64_t in, int64_t out, bool alignCorners)
{
    if (alignCorners)
        return out > 1 ? double(o) * double(in - 1) / double(out - 1) : 0;
    return std::max(0.0, (double(o) + 0.5) * double(in) / double(out) - 0.5);
}

std::vector<double> refUpsample(const Tensor &x, int64_t oh, int64_t ow, bool bilinear, bool alignCorners,
                                Shape &shape)
{
    const std::vector<double> xv = x.toDoubleVector();
    const Nchw in = nchw(x.sizes());
    shape = outShape(x.sizes(), in.c, oh, ow);
    std::vector<double> out;
    auto at = [&](int64_t p, int64_t i, int64_t j) { return xv[size_t((p * in.h + i) * in.w + j)]; };
    for (int64_t p = 0; p < in.n * in.c; ++p)
        for (int64_t y = 0; y < oh; ++y)
            for (int64_t z = 0; z < ow; ++z) {
                if (!bilinear) { // floor(dst * in / out), exactly
                    out.push_back(at(p, std::min(y * in.h / oh, in.h - 1), std::min(z * in.w / ow, in.w - 1)));
                    continue;
                }
                const double sy = linearSource(y, in.h, oh, alignCorners), sz = linearSource(z, in.w, ow, alignCorners);
                const int64_t y0 = std::min(int64_t(sy), in.h - 1), z0 = std::min(int64_t(sz), in.w - 1);
                const int64_t y1 = std::min(y0 + 1, in.h - 1), z1 = std::min(z0 + 1, in.w - 1);
                const double fy = sy - double(y0), fz = sz - double(z0);
                out.push_back((1 - fy) * ((1 - fz) * at(p, y0, z0) + fz * at(p, y0, z1))
                              + fy * ((1 - fz) * at(p, y1, z0) + fz * at(p, y1, z1)));
            }
    return out;
}

double atolFor(DType t)
{
    switch (t) {
    case DType::F16: return 4e-3;
    case DType::BF16: return 3e-2;
    case DType::F32: return 1e-4;
    default: return 1e-10;
    }
}

} // namespace

Q_DECLARE_METATYPE(ConvCase)
Q_DECLARE_METATYPE(PoolCase)

class TestConv : public QObject
{
    Q_OBJECT
private slots:
    void conv2d_data()
    {
        QTest::addColumn<ConvCase>("c");
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("dtype");
        const std::vector<std::pair<const char *, ConvCase>> cases = {
            {"3x3 bias", {{2, 3, 9, 11}, {4, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"3x3 no bias", {{2, 3, 9, 11}, {4, 3, 3, 3}, false, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"stride 2 pad 1", {{2, 3, 9, 11}, {5, 3, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 1}},
            {"asymmetric", {{2, 3, 9, 11}, {4, 3, 3, 5}, true, {2, 1}, {1, 2}, {1, 1}, 1}},
            {"7x7 stride 2 pad 3", {{1, 3, 20, 20}, {8, 3, 7, 7}, false, {2, 2}, {3, 3}, {1, 1}, 1}},
            {"dilation", {{1, 2, 10, 10}, {3, 2, 3, 3}, true, {1, 1}, {2, 2}, {2, 2}, 1}},
            {"dilation stride", {{2, 2, 11, 9}, {3, 2, 3, 2}, false, {2, 3}, {1, 0}, {2, 3}, 1}},
            {"groups 2", {{2, 4, 7, 7}, {6, 2, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2}},
            {"groups 3 stride 2", {{2, 6, 8, 8}, {3, 2, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 3}},
            {"depthwise", {{2, 4, 8, 8}, {4, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 4}},
            {"depthwise stride 2", {{2, 4, 9, 8}, {4, 1, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 4}},
            {"depthwise x2 dilated", {{1, 3, 9, 9}, {6, 1, 3, 3}, true, {1, 1}, {2, 2}, {2, 2}, 3}},
            {"1x1", {{2, 8, 5, 6}, {4, 8, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"1x1 no bias", {{2, 8, 5, 6}, {4, 8, 1, 1}, false, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"1x1 stride 2", {{2, 8, 5, 6}, {4, 8, 1, 1}, false, {2, 2}, {0, 0}, {1, 1}, 1}},
            {"1x1 groups", {{2, 8, 5, 6}, {6, 4, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 2}},
            {"1x1 padded", {{1, 3, 4, 4}, {2, 3, 1, 1}, true, {1, 1}, {1, 1}, {1, 1}, 1}},
            {"unbatched", {{3, 9, 11}, {4, 3, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1}},
            {"images batched", {{30, 2, 6, 6}, {3, 2, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1}},
            {"images batched groups", {{5, 4, 5, 5}, {4, 2, 3, 3}, false, {1, 1}, {0, 0}, {1, 1}, 2}},
            {"kernel fills padded input", {{1, 2, 3, 3}, {2, 2, 5, 5}, true, {1, 1}, {1, 1}, {1, 1}, 1}},
            {"empty batch", {{0, 3, 5, 5}, {2, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"no output channels", {{2, 3, 5, 5}, {0, 3, 3, 3}, false, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"no input channels", {{2, 0, 5, 5}, {3, 0, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"scalar stride", {{1, 2, 7, 7}, {2, 2, 3, 3}, true, {2}, {1}, {1}, 1}},
            {"large image in bands", {{1, 64, 122, 122}, {2, 64, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1}},
            {"depthwise 5x5 stride 2", {{1, 6, 7, 7}, {6, 1, 5, 5}, true, {2, 2}, {2, 2}, {1, 1}, 6}},
            {"depthwise asymmetric", {{2, 3, 10, 9}, {3, 1, 3, 5}, false, {2, 3}, {0, 3}, {2, 1}, 3}},
            {"depthwise pad beyond kernel", {{1, 2, 4, 4}, {2, 1, 3, 3}, true, {1, 1}, {4, 4}, {1, 1}, 2}},
            {"depthwise in bands", {{1, 2, 70, 130}, {4, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2}},
            {"grouped 16 per group", {{1, 32, 14, 14}, {32, 16, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2}},
            {"grouped stride 2, 6 per group", {{2, 12, 11, 9}, {18, 4, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 3}},
            {"grouped dilated asymmetric", {{1, 8, 12, 10}, {8, 4, 3, 2}, false, {1, 2}, {2, 0}, {2, 1}, 2}},
            {"depthwise 5x5 channels-last", {{2, 40, 9, 7}, {40, 1, 5, 5}, true, {1, 1}, {2, 1}, {1, 1}, 40}},
            {"winograd", {{2, 16, 17, 23}, {20, 16, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1}},
            {"winograd unpadded", {{1, 24, 30, 31}, {16, 24, 3, 3}, false, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"winograd asymmetric pad", {{4, 16, 12, 14}, {17, 16, 3, 3}, true, {1, 1}, {2, 0}, {1, 1}, 1}},
            {"depthwise 5x5 channels-last dilated", {{1, 33, 12, 11}, {33, 1, 5, 5}, false, {1, 1}, {3, 0}, {2, 1}, 33}},
            // Output channels per group in blocks of 8 (AVX-512), 4 and 1.
            {"grouped 12 per group", {{1, 24, 9, 10}, {24, 12, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2}},
            {"grouped 21 per group stride 2", {{2, 42, 13, 11}, {42, 21, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 2}},
            // 1x1 on images of 32 pixels and more (register blocks with AVX-512): output channels in
            // blocks of 8, 4, 2 and 1 (12 and 6 in blocks of 2 and 4 vectors), a row's last vector
            // partial or whole, images and groups, channels cut between threads.
            {"1x1 blocks, 99 pixels", {{2, 19, 9, 11}, {23, 19, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"1x1 blocks, 7x7", {{1, 40, 7, 7}, {30, 40, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"1x1 blocks, groups", {{1, 12, 8, 10}, {10, 6, 1, 1}, false, {1, 1}, {0, 0}, {1, 1}, 2}},
            {"1x1 blocks, 32 pixels", {{2, 5, 4, 8}, {23, 5, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            // Depthwise output rows of 14 pixels and more (register blocks with AVX-512): 3x3 and 5x5 at
            // strides 1 and 2, rows in blocks of 4 and single ones, a row's last vector partial or whole.
            {"depthwise rows 3x3 stride 2", {{1, 3, 33, 37}, {3, 1, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 3}},
            {"depthwise rows 5x5", {{2, 2, 19, 21}, {2, 1, 5, 5}, false, {1, 1}, {2, 2}, {1, 1}, 2}},
            {"depthwise rows 5x5 stride 2", {{1, 3, 40, 36}, {3, 1, 5, 5}, true, {2, 2}, {2, 2}, {1, 1}, 3}},
            {"depthwise rows 14 wide", {{1, 2, 14, 14}, {2, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2}},
            {"depthwise rows 32 wide x2", {{1, 2, 9, 32}, {4, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2}},
            {"1x1 blocks, 3 channels out", {{1, 17, 12, 12}, {3, 17, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            // Depthwise output planes of 6 to 8 columns (two rows a vector with AVX-512): one load a tap
            // at stride 1 with same-size padding, else two and a permute; a last pair of one row.
            {"depthwise small 7x7", {{2, 5, 7, 7}, {5, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 5}},
            {"depthwise small 14x14 stride 2", {{1, 4, 14, 14}, {4, 1, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 4}},
            {"depthwise small 5x5", {{1, 3, 7, 7}, {3, 1, 5, 5}, false, {1, 1}, {2, 2}, {1, 1}, 3}},
            {"depthwise small 5x5 stride 2", {{1, 3, 15, 15}, {3, 1, 5, 5}, true, {2, 2}, {2, 2}, {1, 1}, 3}},
            {"depthwise small unpadded 8x6", {{1, 2, 10, 8}, {2, 1, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 2}},
            {"depthwise small 5 rows", {{1, 2, 5, 7}, {2, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 2}},
            {"depthwise small padded across only", {{1, 2, 9, 7}, {2, 1, 3, 3}, true, {1, 1}, {0, 1}, {1, 1}, 2}},
            // More pixels than output channels, rows of whole cache lines: pixels cut between threads.
            {"1x1 blocks, pixels cut", {{1, 24, 16, 20}, {12, 24, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1}},
            {"1x1 blocks, pixels cut within lines", {{1, 256, 23, 23}, {8, 256, 1, 1}, false, {1, 1}, {0, 0}, {1, 1}, 1}},
            // Stems: column matrices at most 288 deep go through the 1x1 register blocks (AVX-512), and
            // stride-2 rows are gathered a vector at a time; odd widths end on a partial vector.
            {"stem 7x7 stride 2", {{2, 3, 64, 61}, {16, 3, 7, 7}, true, {2, 2}, {3, 3}, {1, 1}, 1}},
            {"shallow 32 channels stride 2", {{1, 32, 40, 45}, {20, 32, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 1}},
            {"stem 3x3 stride 2", {{4, 3, 67, 71}, {20, 3, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 1}},
            {"stem 3x3 stride 2 unpadded", {{2, 3, 70, 99}, {16, 3, 3, 3}, false, {2, 2}, {0, 0}, {1, 1}, 1}},
            {"stem 5x5 stride 2", {{2, 3, 40, 45}, {12, 3, 5, 5}, true, {2, 2}, {2, 2}, {1, 1}, 1}},
            // Column matrices deeper than the shallow tiles take and 32-64 pixels wide (7x7, 8x8 outputs
            // at batch 1): the 1x1 register blocks over im2col instead of BLAS (AVX-512), with and
            // without bias, at stride 1 and 2.
            {"narrow 3x3 on 7x7", {{1, 24, 7, 7}, {20, 24, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1}},
            {"narrow 3x3 stride 2", {{1, 40, 13, 15}, {24, 40, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 1}},
            {"narrow 3x3 on 8x8", {{1, 40, 8, 8}, {24, 40, 3, 3}, false, {1, 1}, {1, 1}, {1, 1}, 1}},
            // Strided 1x1 (downsampling shortcuts): the read pixels gathered, then the 1x1 blocks (AVX-512).
            {"1x1 stride 2 blocks", {{2, 16, 17, 23}, {24, 16, 1, 1}, true, {2, 2}, {0, 0}, {1, 1}, 1}},
            {"1x1 stride 2x1 blocks", {{1, 8, 10, 40}, {12, 8, 1, 1}, false, {2, 1}, {0, 0}, {1, 1}, 1}},
            {"1x1 stride 3 blocks, groups", {{1, 12, 20, 26}, {10, 6, 1, 1}, true, {3, 3}, {0, 0}, {1, 1}, 2}},
        };
        for (const auto &[name, c] : cases) {
            for (const char *layout : {"contiguous", "transposed"})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(name, layout))) << c << layout << int(DType::F32);
        }
        for (DType t : {DType::F64, DType::F16, DType::BF16}) {
            for (size_t i : {size_t(0), size_t(9), size_t(12), size_t(18)})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(cases[i].first, dtypeName(t))))
                    << cases[i].second << "sliced" << int(t);
        }
    }
    void conv2d()
    {
        QFETCH(ConvCase, c);
        QFETCH(QString, layout);
        QFETCH(int, dtype);
        const auto t = static_cast<DType>(dtype);
        const Tensor x = withLayout(input(c.x, t, 1), layout);
        const Tensor w = withLayout(input(c.w, t, 2), layout);
        const std::optional<Tensor> bias = c.bias ? std::optional(input({c.w[0]}, t, 3)) : std::nullopt;
        Shape shape;
        const std::vector<double> expected =
            refConv(x, w, bias ? bias->toDoubleVector() : std::vector<double>(), c, shape);
        const Tensor y = ops::conv2d(x, w, bias, c.stride, c.padding, c.dilation, c.groups);
        QCOMPARE(int(y.dtype()), dtype);
        FS_COMPARE_VALUES(y, shape, expected, rtolOrExact(t), atolFor(t));
        const std::optional<Tensor> metaBias = c.bias ? std::optional(meta({c.w[0]}, t)) : std::nullopt;
        const Tensor m = ops::conv2d(meta(c.x, t), meta(c.w, t), metaBias, c.stride, c.padding, c.dilation, c.groups);
        QVERIFY(m.isMeta());
        QCOMPARE(m.sizes(), shape);
    }

    // Random geometries against the definition (fixed seed): depthwise 3x3
    // and 5x5 at strides 1 and 2 over planes of 5 to 20 columns (the small-
    // plane, wide-row and per-plane kernels), and 1x1 over images whose
    // pixels may be cut between threads.
    void randomDepthwiseAndPointwise()
    {
        std::mt19937 rng(17);
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        for (int i = 0; i < 120; ++i) {
            ConvCase c;
            const bool depthwise = i % 2 == 0;
            const int64_t k = depthwise ? (pick(0, 1) ? 5 : 3) : 1;
            const int64_t channels = pick(1, 6), h = pick(5, 20), w = pick(5, 20);
            c.x = {pick(1, 2), depthwise ? channels : pick(1, 40), h, w};
            c.w = {depthwise ? channels : pick(1, 20), depthwise ? 1 : c.x[1], k, k};
            c.bias = pick(0, 1) == 1;
            const int64_t s = depthwise ? pick(1, 2) : 1, pad = depthwise ? pick(0, k / 2) : 0;
            c.stride = {s, s};
            c.padding = {pad, pad};
            c.dilation = {1, 1};
            c.groups = depthwise ? channels : 1;
            const Tensor x = input(c.x, DType::F32, 10 + i), wt = input(c.w, DType::F32, 200 + i);
            const std::optional<Tensor> bias = c.bias ? std::optional(input({c.w[0]}, DType::F32, 400 + i)) : std::nullopt;
            Shape shape;
            const std::vector<double> expected =
                refConv(x, wt, bias ? bias->toDoubleVector() : std::vector<double>(), c, shape);
            const Tensor y = ops::conv2d(x, wt, bias, c.stride, c.padding, c.dilation, c.groups);
            FS_COMPARE_VALUES(y, shape, expected, rtolOrExact(DType::F32), atolFor(DType::F32));
        }
    }

    // A second call reuses the first one's scratch blocks.
    void conv2dReusesScratch()
    {
        const Tensor x = input({2, 8, 12, 12}, DType::F32, 4), w = input({8, 8, 3, 3}, DType::F32, 5);
        ops::conv2d(x, w, std::nullopt, {1, 1}, {1, 1});
        const int64_t hits = hostAllocator().stats().cacheHits;
        ops::conv2d(x, w, std::nullopt, {1, 1}, {1, 1});
        QVERIFY(hostAllocator().stats().cacheHits >= hits + 2);
    }

    void pool_data()
    {
        QTest::addColumn<PoolCase>("c");
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("dtype");
        const std::vector<std::pair<const char *, PoolCase>> cases = {
            {"k3 s2 p1", {{2, 3, 9, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true}},
            {"k2 default stride", {{2, 3, 8, 9}, {2, 2}, {}, {0, 0}, {1, 1}, false, true}},
            {"k2 ceil", {{1, 2, 5, 7}, {2, 2}, {}, {0, 0}, {1, 1}, true, true}},
            {"k3 s2 p1 ceil", {{1, 2, 6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true, true}},
            {"ceil drops window in padding", {{1, 2, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, true, true}},
            {"k3 s2 p1 ceil no pad count", {{1, 2, 6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true, false}},
            {"k3 s1 p1 no pad count", {{2, 2, 5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false}},
            {"rect", {{2, 3, 9, 10}, {2, 3}, {1, 2}, {1, 1}, {1, 1}, false, true}},
            {"dilation", {{1, 2, 11, 12}, {3, 3}, {1, 2}, {1, 1}, {2, 2}, false, true}},
            {"dilation ceil", {{1, 2, 10, 11}, {2, 3}, {3, 2}, {1, 1}, {2, 3}, true, true}},
            {"unbatched", {{3, 8, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true, true}},
            {"window = input", {{2, 3, 4, 4}, {4, 4}, {}, {0, 0}, {1, 1}, false, true}},
            {"empty batch", {{0, 3, 4, 4}, {2, 2}, {}, {0, 0}, {1, 1}, false, true}},
            // Wide rows: many windows between the two edge ones.
            {"k3 s2 ceil wide", {{1, 3, 23, 61}, {3, 3}, {2, 2}, {0, 0}, {1, 1}, true, true}},
            {"k3 s2 p1 wide", {{2, 2, 12, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true}},
            {"k3 s2 p1 ceil odd", {{1, 3, 15, 33}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true, true}},
            {"k3 s2 p0 ceil even", {{1, 2, 16, 34}, {3, 3}, {2, 2}, {0, 0}, {1, 1}, true, true}},
            {"k3 s3 p1 wide", {{1, 2, 17, 50}, {3, 3}, {3, 3}, {1, 1}, {1, 1}, false, true}},
            {"k5 s1 p2 wide", {{1, 2, 9, 45}, {5, 5}, {1, 1}, {2, 2}, {1, 1}, false, true}},
        };
        for (const auto &[name, c] : cases) {
            for (const char *layout : {"contiguous", "transposed"})
                QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(name, layout))) << c << layout << int(DType::F32);
        }
        for (DType t : {DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32})
            QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(cases[0].first, dtypeName(t))))
                << cases[0].second << "sliced" << int(t);
    }
    void pool()
    {
        QFETCH(PoolCase, c);
        QFETCH(QString, layout);
        QFETCH(int, dtype);
        const auto t = static_cast<DType>(dtype);
        const Tensor x = withLayout(input(c.x, t, 6), layout);
        Shape shape;
        const std::vector<double> maxExpected = refPool(Pool::Max, x, c, shape);
        FS_COMPARE_VALUES(ops::maxPool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceilMode), shape,
                          maxExpected, 0, 0);
        QCOMPARE(ops::maxPool2d(meta(c.x, t), c.kernel, c.stride, c.padding, c.dilation, c.ceilMode).sizes(), shape);
        if (isIntegral(t) || c.dilation != IntList{1, 1})
            return;
        const std::vector<double> avgExpected = refPool(Pool::Avg, x, c, shape);
        FS_COMPARE_VALUES(ops::avgPool2d(x, c.kernel, c.stride, c.padding, c.ceilMode, c.countIncludePad), shape,
                          avgExpected, rtolOrExact(t), atolFor(t));
        QCOMPARE(ops::avgPool2d(meta(c.x, t), c.kernel, c.stride, c.padding, c.ceilMode, c.countIncludePad).sizes(),
                 shape);
    }

    // The output-size rule, with sizes PyTorch gives.
    void poolOutputSize_data()
    {
        QTest::addColumn<PoolCase>("c");
        QTest::addColumn<Shape>("expected");
        QTest::newRow("floor") << PoolCase{{1, 1, 5, 5}, {2, 2}, {}, {0, 0}, {1, 1}, false, true} << Shape{1, 1, 2, 2};
        QTest::newRow("ceil") << PoolCase{{1, 1, 5, 5}, {2, 2}, {}, {0, 0}, {1, 1}, true, true} << Shape{1, 1, 3, 3};
        QTest::newRow("ceil, last window would start in the right padding")
            << PoolCase{{1, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, true, true} << Shape{1, 1, 3, 3};
        QTest::newRow("resnet stem") << PoolCase{{1, 1, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true}
                                     << Shape{1, 1, 56, 56};
    }
    void poolOutputSize()
    {
        QFETCH(PoolCase, c);
        QFETCH(Shape, expected);
        QCOMPARE(ops::maxPool2d(meta(c.x), c.kernel, c.stride, c.padding, c.dilation, c.ceilMode).sizes(), expected);
    }

    void maxPoolPropagatesNan()
    {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const Tensor x = fromVector({1, nan, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
        const Tensor y = ops::maxPool2d(x, {2, 2}, {1, 1});
        FS_COMPARE_VALUES(y, Shape({1, 1, 2, 2}), std::vector<double>({nan, nan, 8, 9}), 0, 0);
        // Rows of 40 (one output row of 20 windows, each over columns 2o-1 .. 2o+1):
        // NaN in a window in the middle of a row and in the last, edge, window.
        std::vector<double> row(80, 1.0);
        row[20] = nan; // row 0, column 20: window 10
        row[79] = nan; // row 1, column 39: window 19
        const Tensor wide = ops::maxPool2d(fromVector(row, {1, 1, 2, 40}), {3, 3}, {2, 2}, {1, 1});
        const std::vector<double> out = wide.toDoubleVector();
        for (size_t o = 0; o < out.size(); ++o)
            QVERIFY2(std::isnan(out[o]) == (o == 10 || o == 19), qPrintable(QString::number(o)));
    }

    // Equal maxima: the first in the window (row-major) is the result, so +0
    // and -0 come out as they came in.
    void maxPoolKeepsFirstOfEqualMaxima()
    {
        const Tensor x = fromVector({0.0, -0.0, -0.0, 0.0, -1.0, -1.0}, {1, 1, 3, 2});
        const std::vector<double> y = ops::maxPool2d(x, {2, 2}, {1, 1}).toDoubleVector();
        QCOMPARE(y.size(), size_t(2));
        QVERIFY(!std::signbit(y[0])); // window +0 -0 / -0 +0
        QVERIFY(std::signbit(y[1]));  // window -0 +0 / -1 -1: the first zero is -0
        // 3x3 stride 2 (its own kernel on AVX-512): the first zero in row-major
        // order, though a column-first reduction would meet the other first.
        for (const double first : {0.0, -0.0}) {
            const Tensor w = fromVector({-1.0, first, -1.0, -first, -1.0, -1.0, -1.0, -1.0, -1.0}, {1, 1, 3, 3},
                                        DType::F32);
            const std::vector<double> z = ops::maxPool2d(w, {3, 3}, {2, 2}).toDoubleVector();
            QCOMPARE(z.size(), size_t(1));
            QCOMPARE(std::signbit(z[0]), std::signbit(first));
        }
    }

    void adaptiveAvgPool_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<IntList>("size");
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("dtype");
        QTest::newRow("global") << Shape{2, 3, 7, 7} << IntList{1, 1} << "contiguous" << int(DType::F32);
        QTest::newRow("uneven") << Shape{2, 3, 10, 9} << IntList{3, 4} << "transposed" << int(DType::F32);
        QTest::newRow("upscale") << Shape{1, 2, 5, 5} << IntList{7, 3} << "sliced" << int(DType::F32);
        QTest::newRow("one value") << Shape{2, 6, 6} << IntList{4} << "contiguous" << int(DType::F32);
        QTest::newRow("f64") << Shape{2, 3, 10, 9} << IntList{3, 4} << "contiguous" << int(DType::F64);
        QTest::newRow("f16") << Shape{2, 3, 10, 9} << IntList{3, 4} << "contiguous" << int(DType::F16);
        QTest::newRow("bf16") << Shape{2, 3, 10, 9} << IntList{1, 1} << "contiguous" << int(DType::BF16);
        QTest::newRow("empty output") << Shape{2, 3, 4, 4} << IntList{0, 2} << "contiguous" << int(DType::F32);
        // Windows wider than the summing lanes: whole rows, and halves of rows.
        QTest::newRow("whole rows") << Shape {1, 2, 6, 40} << IntList {2, 1} << "contiguous" << int(DType::F32);
        QTest::newRow("half rows") << Shape {1, 2, 4, 70} << IntList {2, 2} << "contiguous" << int(DType::F64);
    }
    void adaptiveAvgPool()
    {
        QFETCH(Shape, shape);
        QFETCH(IntList, size);
        QFETCH(QString, layout);
        QFETCH(int, dtype);
        const auto t = static_cast<DType>(dtype);
        const Tensor x = withLayout(input(shape, t, 7), layout);
        const int64_t oh = size[0], ow = size.size() > 1 ? size[1] : size[0];
        Shape expectedShape;
        const std::vector<double> expected = refAdaptive(x, oh, ow, expectedShape);
        FS_COMPARE_VALUES(ops::adaptiveAvgPool2d(x, size), expectedShape, expected, rtolOrExact(t), atolFor(t));
        QCOMPARE(ops::adaptiveAvgPool2d(meta(shape, t), size).sizes(), expectedShape);
    }

    void upsample_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<IntList>("size");
        QTest::addColumn<QString>("mode");
        QTest::addColumn<bool>("alignCorners");
        QTest::addColumn<int>("dtype");
        for (const IntList &size : {IntList{6, 8}, IntList{5, 7}, IntList{2, 3}, IntList{9, 4}}) {
            const QString s = QString::fromStdString(shapeStr(size));
            QTest::newRow(qPrintable("nearest " + s)) << Shape{2, 2, 3, 4} << size << "nearest" << false << int(DType::F32);
            QTest::newRow(qPrintable("bilinear " + s)) << Shape{2, 2, 3, 4} << size << "bilinear" << false << int(DType::F32);
            QTest::newRow(qPrintable("bilinear aligned " + s))
                << Shape{2, 2, 3, 4} << size << "bilinear" << true << int(DType::F32);
        }
        QTest::newRow("bilinear aligned to 1x1") << Shape{1, 2, 3, 4} << IntList{1, 1} << "bilinear" << true << int(DType::F32);
        QTest::newRow("nearest unbatched") << Shape{3, 4, 5} << IntList{8, 10} << "nearest" << false << int(DType::F32);
        QTest::newRow("nearest i64") << Shape{1, 2, 3, 4} << IntList{7, 9} << "nearest" << false << int(DType::I64);
        QTest::newRow("nearest f16") << Shape{1, 2, 3, 4} << IntList{7, 9} << "nearest" << false << int(DType::F16);
        QTest::newRow("bilinear f64") << Shape{1, 2, 3, 4} << IntList{7, 9} << "bilinear" << false << int(DType::F64);
        QTest::newRow("bilinear bf16") << Shape{1, 2, 3, 4} << IntList{7, 9} << "bilinear" << true << int(DType::BF16);
        QTest::newRow("empty batch") << Shape{0, 2, 3, 4} << IntList{6, 8} << "bilinear" << false << int(DType::F32);
    }
    void upsample()
    {
        QFETCH(Shape, shape);
        QFETCH(IntList, size);
        QFETCH(QString, mode);
        QFETCH(bool, alignCorners);
        QFETCH(int, dtype);
        const auto t = static_cast<DType>(dtype);
        const Tensor x = withLayout(input(shape, t, 8), "transposed");
        const bool bilinear = mode == QLatin1String("bilinear");
        Shape expectedShape;
        const std::vector<double> expected = refUpsample(x, size[0], size[1], bilinear, alignCorners, expectedShape);
        const Tensor y = ops::upsample2d(x, size, mode.toStdString(), alignCorners);
        FS_COMPARE_VALUES(y, expectedShape, expected, rtolOrExact(t), bilinear ? atolFor(t) : 0);
        QCOMPARE(ops::upsample2d(meta(shape, t), size, mode.toStdString(), alignCorners).sizes(), expectedShape);
    }

    void cost()
    {
        const Tensor x = zeros({2, 3, 8, 8}), w = zeros({4, 3, 3, 3});
        const Tensor y = ops::conv2d(x, w, std::nullopt, {1, 1}, {1, 1});
        const OpDef &conv = OpRegistry::instance().get("aten.conv2d");
        QCOMPARE(int(conv.kind), int(OpKind::Convolution));
        QCOMPARE(conv.estimateCost({x, w, Value(), IntList{1, 1}, IntList{1, 1}, IntList{1, 1}, int64_t(1)},
                                   std::span<const Tensor>(&y, 1))
                     .flops,
                 2.0 * (2 * 4 * 8 * 8) * (3 * 3 * 3));
    }

    // Which kernel ran shows in the profiler, under the algorithm's name.
    void kernelEvents()
    {
        const Tensor x = zeros({1, 4, 6, 6}), small = zeros({1, 32, 14, 14}), wide = zeros({1, 32, 24, 24});
        // Depthwise planes of 6 to 8 columns: two rows a vector where the CPU has AVX-512.
        const char *smallPlanes = loops::wideVectors() ? "conv2d_depthwise_small" : "conv2d_depthwise";
        // 1x1 on 32 pixels and more: register blocks where the CPU has AVX-512, else BLAS.
        const char *pointwise = loops::wideVectors() ? "conv2d_1x1_direct" : "conv2d_1x1_gemm";
        const char *strided = loops::wideVectors() ? "conv2d_1x1_strided" : "conv2d_im2col_gemm";
        const std::vector<std::string> ran = kernelsDuring([&] {
            ops::conv2d(x, zeros({4, 1, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, 4);
            ops::conv2d(small, zeros({32, 1, 5, 5}), std::nullopt, {1, 1}, {2, 2}, {1, 1}, 32);
            ops::conv2d(x, zeros({2, 4, 1, 1}));
            ops::conv2d(wide, zeros({32, 16, 3, 3}), std::nullopt, {1, 1}, {1, 1}, {1, 1}, 2);
            ops::conv2d(wide, zeros({32, 32, 3, 3}), std::nullopt, {1, 1}, {1, 1});
            ops::conv2d(x, zeros({2, 4, 3, 3}));
            ops::conv2d(x.to(DType::F64), zeros({32, 4, 3, 3}, DType::F64), std::nullopt, {1, 1}, {1, 1});
            ops::conv2d(zeros({1, 4, 5, 5}), zeros({2, 4, 1, 1}));
            ops::conv2d(wide, zeros({8, 32, 1, 1}), std::nullopt, {2, 2});
            ops::conv2d(small, zeros({32, 1, 3, 3}), std::nullopt, {2, 2}, {1, 1}, {1, 1}, 32);
        });
        QCOMPARE(ran, (std::vector<std::string>{"conv2d_depthwise", "conv2d_depthwise_channels_last", pointwise,
                                                "conv2d_grouped_direct", "conv2d_winograd", "conv2d_im2col_gemm",
                                                "conv2d_im2col_gemm", "conv2d_1x1_gemm", strided, smallPlanes}));
    }

    // The two halves the compiler splits a Winograd conv2d into compute what
    // conv2d computes: bit for bit with F(2x2) tiles, within F(4x4)'s rounding
    // of the direct sum with F(4x4) tiles.
    void winogradOpsEqualConv2d_data()
    {
        QTest::addColumn<ConvCase>("c");
        QTest::newRow("padded, bias") << ConvCase{{2, 16, 17, 23}, {20, 16, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1};
        QTest::newRow("asymmetric pad") << ConvCase{{4, 16, 12, 14}, {17, 16, 3, 3}, false, {1, 1}, {2, 0}, {1, 1}, 1};
    }
    void winogradOpsEqualConv2d()
    {
        QFETCH(ConvCase, c);
        const Tensor x = input(c.x, DType::F32, 6), w = input(c.w, DType::F32, 7);
        const std::optional<Tensor> bias = c.bias ? std::optional(input({c.w[0]}, DType::F32, 8)) : std::nullopt;
        const Args convArgs{x, w, Value(bias), c.stride, c.padding, c.dilation, c.groups};
        QCOMPARE(ops::conv2dWinogradTile(convArgs, false), 2);
        const Tensor u = callOp1("fusescope.winograd_weights", {w});
        QCOMPARE(u.sizes(), (Shape{16, c.w[0], c.w[1]}));
        const Tensor y = callOp1("fusescope.conv2d_winograd", {x, u, Value(bias), c.padding});
        const Tensor expected = ops::conv2d(x, w, bias, c.stride, c.padding);
        QCOMPARE(y.sizes(), expected.sizes());
        QVERIFY(y.toDoubleVector() == expected.toDoubleVector());
        QCOMPARE(kernelsDuring([&] { callOp1("fusescope.conv2d_winograd", {x, u, Value(bias), c.padding}); }),
                 std::vector<std::string>{"conv2d_winograd"});
        // F(4x4, 3x3) is not eager's arithmetic: within its rounding of the direct sum.
        Shape shape;
        const std::vector<double> direct =
            refConv(x, w, bias ? bias->toDoubleVector() : std::vector<double>(), c, shape);
        double peak = 0;
        for (double v : direct)
            peak = std::max(peak, std::abs(v));
        const Tensor u4 = callOp1("fusescope.winograd_weights", {w, int64_t(4)});
        QCOMPARE(u4.sizes(), (Shape{36, c.w[0], c.w[1]}));
        const auto y4 = [&] { return callOp1("fusescope.conv2d_winograd", {x, u4, Value(bias), c.padding}); };
        FS_COMPARE_VALUES(y4(), shape, direct, 0, 1e-5 * peak);
        QCOMPARE(kernelsDuring([&] { y4(); }), std::vector<std::string>{"conv2d_winograd_f4"});
    }

    // fusescope.conv2d_relu and conv2d_clamp, the activation applied where
    // each kernel stores its output, equal relu(conv2d) and clamp(conv2d)
    // bit for bit on every kernel conv2d picks (the cases of kernelEvents,
    // then im2col's tiles, bands and batched images), NaN and -0 kept as
    // aten.relu keeps them.
    void conv2dReluEqualsReluOfConv2d_data()
    {
        QTest::addColumn<ConvCase>("c");
        QTest::addColumn<int>("dtype");
        const int f32 = int(DType::F32), f64 = int(DType::F64);
        QTest::newRow("depthwise") << ConvCase{{1, 4, 6, 6}, {4, 1, 3, 3}, true, {1}, {0}, {1}, 4} << f32;
        QTest::newRow("depthwise wide") << ConvCase{{1, 8, 40, 40}, {8, 1, 3, 3}, true, {1}, {1}, {1}, 8} << f32;
        QTest::newRow("depthwise channels last") << ConvCase{{1, 32, 14, 14}, {32, 1, 5, 5}, true, {1}, {2}, {1}, 32} << f32;
        QTest::newRow("1x1 direct") << ConvCase{{2, 16, 9, 9}, {24, 16, 1, 1}, true, {1}, {0}, {1}, 1} << f32;
        QTest::newRow("1x1 blas") << ConvCase{{1, 4, 5, 5}, {2, 4, 1, 1}, true, {1}, {0}, {1}, 1} << f32;
        QTest::newRow("1x1 strided") << ConvCase{{1, 32, 24, 24}, {8, 32, 1, 1}, false, {2}, {0}, {1}, 1} << f32;
        QTest::newRow("grouped direct") << ConvCase{{1, 32, 24, 24}, {32, 16, 3, 3}, true, {1}, {1}, {1}, 2} << f32;
        QTest::newRow("winograd") << ConvCase{{1, 32, 24, 24}, {32, 32, 3, 3}, true, {1}, {1}, {1}, 1} << f32;
        QTest::newRow("im2col small") << ConvCase{{1, 4, 6, 6}, {2, 4, 3, 3}, true, {1}, {0}, {1}, 1} << f32;
        QTest::newRow("im2col f64") << ConvCase{{1, 4, 6, 6}, {32, 4, 3, 3}, true, {1}, {1}, {1}, 1} << f64;
        QTest::newRow("stem tiles") << ConvCase{{1, 3, 64, 64}, {16, 3, 3, 3}, true, {2}, {0}, {1}, 1} << f32;
        QTest::newRow("deep tiles") << ConvCase{{1, 64, 60, 60}, {32, 64, 3, 3}, true, {1}, {2}, {2}, 1} << f32;
        QTest::newRow("narrow bands") << ConvCase{{1, 64, 14, 14}, {32, 64, 3, 3}, true, {2}, {1}, {1}, 1} << f32;
        QTest::newRow("batched images") << ConvCase{{8, 32, 6, 6}, {16, 32, 3, 3}, true, {1}, {0}, {1}, 1} << f32;
    }
    void conv2dReluEqualsReluOfConv2d()
    {
        QFETCH(ConvCase, c);
        QFETCH(int, dtype);
        Tensor x = input(c.x, DType(dtype), 11);
        const Tensor w = input(c.w, DType(dtype), 12);
        const std::optional<Tensor> bias = c.bias ? std::optional(input({c.w[0]}, DType(dtype), 13)) : std::nullopt;
        if (x.dtype() == DType::F32) // one NaN input: every output it reaches is NaN, relu keeps it
            x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
        else
            x.data<double>()[0] = std::numeric_limits<double>::quiet_NaN();
        const Args args{x, w, Value(bias), both(c.stride), both(c.padding), both(c.dilation), c.groups};
        const Tensor conv = callOp1("aten.conv2d", args);
        const Tensor relu = callOp1("fusescope.conv2d_relu", args);
        int negative = 0;
        for (double v : relu.toDoubleVector())
            negative += std::signbit(v) ? 1 : 0;
        QCOMPARE(negative, 0);
        sameValues(relu, ops::relu(conv));
        // relu6 as ONNX's Clip writes it, both bounds biting, one bound only.
        for (const auto &[lo, hi] : std::vector<std::pair<Value, Value>>{
                 {Value(0.0), Value(6.0)}, {Value(-0.5), Value(0.25)}, {Value(), Value(0.5)}, {Value(int64_t(-1)), Value()}}) {
            Args clampArgs = args;
            clampArgs.push_back(lo);
            clampArgs.push_back(hi);
            sameValues(callOp1("fusescope.conv2d_clamp", clampArgs), callOp1("aten.clamp", {conv, lo, hi}));
        }
    }

    void winogradActivationsEqualTheOps()
    {
        const Tensor x = input({2, 16, 30, 30}, DType::F32, 21), w = input({24, 16, 3, 3}, DType::F32, 22);
        const Tensor bias = input({24}, DType::F32, 23);
        for (int64_t tile : {2, 4}) {
            const Tensor u = callOp1("fusescope.winograd_weights", {w, tile});
            const Tensor conv = callOp1("fusescope.conv2d_winograd", {x, u, bias, IntList{1, 1}, false});
            const Tensor fused = callOp1("fusescope.conv2d_winograd", {x, u, bias, IntList{1, 1}, true});
            QVERIFY(fused.toDoubleVector() == ops::relu(conv).toDoubleVector());
            QVERIFY(ops::min(fused).itemDouble() == 0.0); // the relu had work to do
            const Tensor clamped = callOp1("fusescope.conv2d_winograd", {x, u, bias, IntList{1, 1}, false, -0.5, 0.25});
            QVERIFY(clamped.toDoubleVector() == callOp1("aten.clamp", {conv, -0.5, 0.25}).toDoubleVector());
            QCOMPARE(ops::max(clamped).itemDouble(), 0.25);
            FS_EXPECT_ERROR(callOp1("fusescope.conv2d_winograd", {x, u, bias, IntList{1, 1}, true, 0.0, 6.0}),
                            "relu and min/max are two activations");
        }
    }

    void winogradWhereItPays()
    {
        const Tensor x = meta({2, 16, 24, 24}), w = meta({16, 16, 3, 3});
        auto uses = [&](const Tensor &in, const Tensor &weight, IntList stride, int64_t groups) {
            const Args args{in, weight, Value(), stride, IntList{1, 1}, IntList{1, 1}, groups};
            return 10 * ops::conv2dWinogradTile(args, false) + ops::conv2dWinogradTile(args, true);
        };
        QCOMPARE(uses(x, w, {1, 1}, 1), 22);                    // 288 tiles: eager and compiled
        QCOMPARE(uses(meta({1, 16, 14, 14}), w, {1, 1}, 1), 2); // 49 tiles: with weights transformed once
        QCOMPARE(uses(meta({2, 32, 48, 48}), meta({16, 32, 3, 3}), {1, 1}, 1), 24); // 288 tiles of 4x4: F(4x4) compiled
        QCOMPARE(uses(meta({2, 16, 48, 48}), w, {1, 1}, 1), 22); // ... but not on 16 input channels
        QCOMPARE(uses(meta({1, 16, 6, 6}), w, {1, 1}, 1), 0);   // 9 tiles
        QCOMPARE(uses(x, w, {2, 2}, 1), 0);                     // strided
        QCOMPARE(uses(x, meta({32, 8, 3, 3}), {1, 1}, 2), 0);   // grouped
        QCOMPARE(uses(x, meta({16, 16, 5, 5}), {1, 1}, 1), 0);  // 5x5
        QCOMPARE(uses(meta({2, 16, 24, 24}, DType::F64), meta({16, 16, 3, 3}, DType::F64), {1, 1}, 1), 0);
        QCOMPARE(uses(meta({16, 24, 24}), w, {1, 1}, 1), 0);    // unbatched
    }

    void winogradOpErrors()
    {
        const Tensor x = zeros({1, 16, 8, 8}), u = zeros({16, 4, 16});
        FS_EXPECT_ERROR(callOp1("fusescope.winograd_weights", {zeros({4, 16, 5, 5})}),
                        "fusescope.winograd_weights: weight must be 4-D [O,C,3,3], got [4,16,5,5]");
        FS_EXPECT_ERROR(callOp1("fusescope.winograd_weights", {zeros({4, 16, 3, 3}), int64_t(3)}),
                        "fusescope.winograd_weights: tile must be 2 or 4 (F(2x2, 3x3) or F(4x4, 3x3)), got 3");
        FS_EXPECT_ERROR(callOp1("fusescope.winograd_weights", {zeros({4, 16, 3, 3}, DType::F64)}),
                        "fusescope.winograd_weights: weight must be f32, got f64 [4,16,3,3]");
        FS_EXPECT_ERROR(callOp1("fusescope.conv2d_winograd", {x, zeros({16, 4, 8}), Value(), IntList{1, 1}}),
                        "fusescope.conv2d_winograd: weights [16,4,8] are not the transformed [16,O,16] or [36,O,16] "
                        "weights of input [1,16,8,8]");
        FS_EXPECT_ERROR(callOp1("fusescope.conv2d_winograd", {x, u, zeros({5}), IntList{1, 1}}),
                        "fusescope.conv2d_winograd: bias [5] f32 does not match 4 f32 output channels");
        FS_EXPECT_ERROR(callOp1("fusescope.conv2d_winograd", {zeros({1, 16, 1, 8}), u, Value(), IntList{0, 0}}),
                        "fusescope.conv2d_winograd: input [1,16,1,8] padded by [0,0] is smaller than the 3x3 kernel");
        FS_EXPECT_ERROR(callOp1("fusescope.conv2d_winograd", {x, u, Value(), IntList{-1, 1}}),
                        "fusescope.conv2d_winograd: padding must be two non-negative ints, got [-1,1]");
        FS_EXPECT_ERROR(callOp1("fusescope.conv2d_winograd", {zeros({16, 8, 8}), u, Value(), IntList{1, 1}}),
                        "fusescope.conv2d_winograd: expected a 4-D [N,C,H,W] input, got [16,8,8]");
    }

    void errors()
    {
        FS_EXPECT_ERROR(ops::conv2d(meta({4, 3, 224, 224}), meta({64, 4, 7, 7})),
                        "aten.conv2d: input [4,3,224,224] has 3 channels but weight [64,4,7,7] expects 4");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 4, 5, 5}), zeros({6, 1, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, 2),
                        "aten.conv2d: input [1,4,5,5] has 4 channels but weight [6,1,3,3] with groups=2 expects 2");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 8, 5, 5}), zeros({6, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, 4),
                        "aten.conv2d: weight [6,2,3,3] has 6 output channels, which groups=4 does not divide");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 5, 5}), zeros({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, 0),
                        "aten.conv2d: groups must be positive, got 0");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 4, 4}), zeros({3, 2, 7, 7}), std::nullopt, {1, 1}, {1, 1}),
                        "aten.conv2d: kernel of weight [3,2,7,7] (dilated [7,7]) is larger than input [1,2,4,4] "
                        "padded to [6,6]");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 6, 6}), zeros({3, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {3, 3}),
                        "(dilated [7,7]) is larger than input [1,2,6,6]");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 5, 5}), zeros({3, 2, 3, 3}), zeros({4})),
                        "aten.conv2d: bias [4] does not match weight [3,2,3,3] with 3 output channels");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 5, 5}), zeros({3, 2, 3, 3}, DType::F64)),
                        "aten.conv2d: expected floating input, weight and bias of one dtype, got f32 input and f64 weight");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 5, 5}, DType::I64), zeros({3, 2, 3, 3}, DType::I64)),
                        "aten.conv2d: expected floating input");
        FS_EXPECT_ERROR(ops::conv2d(zeros({2, 5, 5}), zeros({3, 2, 3})), "aten.conv2d: weight must be 4-D");
        FS_EXPECT_ERROR(ops::conv2d(zeros({5, 5}), zeros({3, 2, 3, 3})),
                        "aten.conv2d: expected a 3-D [C,H,W] or 4-D [N,C,H,W] input, got [5,5]");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 5, 5}), zeros({3, 2, 3, 3}), std::nullopt, {0, 1}),
                        "aten.conv2d: stride must be positive, got [0,1]");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 5, 5}), zeros({3, 2, 3, 3}), std::nullopt, {1, 1}, {-1, 0}),
                        "aten.conv2d: padding must be non-negative, got [-1,0]");
        FS_EXPECT_ERROR(ops::conv2d(zeros({1, 2, 5, 5}), zeros({3, 2, 3, 3}), std::nullopt, {1, 1, 1}),
                        "aten.conv2d: stride takes one or two values, got [1,1,1]");
        // The fused forms share conv2d's checks and name themselves.
        const Args badChannels{zeros({1, 3, 8, 8}), zeros({4, 5, 3, 3}), Value(), IntList{1, 1}, IntList{0, 0},
                               IntList{1, 1}, int64_t(1)};
        FS_EXPECT_ERROR(callOp1("fusescope.conv2d_relu", badChannels),
                        "fusescope.conv2d_relu: input [1,3,8,8] has 3 channels but weight [4,5,3,3] expects 5");
        Args badPadding = badChannels;
        badPadding[1] = zeros({4, 3, 3, 3});
        badPadding[4] = IntList{-1, 0};
        badPadding.push_back(Value(0.0));
        badPadding.push_back(Value(6.0));
        FS_EXPECT_ERROR(callOp1("fusescope.conv2d_clamp", badPadding),
                        "fusescope.conv2d_clamp: padding must be non-negative, got [-1,0]");

        FS_EXPECT_ERROR(ops::maxPool2d(zeros({1, 1, 5, 5}), {3, 3}, {1, 1}, {2, 2}),
                        "aten.max_pool2d: padding [2,2] must be at most half of kernel_size [3,3]");
        FS_EXPECT_ERROR(ops::maxPool2d(zeros({1, 1, 2, 2}), {3, 3}),
                        "aten.max_pool2d: input [1,1,2,2] is too small for kernel_size [3,3]");
        FS_EXPECT_ERROR(ops::maxPool2d(zeros({1, 1, 4, 4}), {2, 2}, {0, 0}), "aten.max_pool2d: stride must be positive");
        FS_EXPECT_ERROR(ops::maxPool2d(zeros({1, 1, 4, 4}, DType::Bool), {2, 2}), "aten.max_pool2d: not supported for bool");
        FS_EXPECT_ERROR(ops::maxPool2d(zeros({1, 1, 0, 4}), {2, 2}), "aten.max_pool2d: input [1,1,0,4] has an empty spatial dim");
        FS_EXPECT_ERROR(ops::avgPool2d(zeros({1, 1, 4, 4}, DType::I64), {2, 2}),
                        "aten.avg_pool2d: expected a floating input, got i64 [1,1,4,4]");
        FS_EXPECT_ERROR(ops::avgPool2d(meta({4, 4}), {2, 2}), "aten.avg_pool2d: expected a 3-D [C,H,W] or 4-D");
        FS_EXPECT_ERROR(ops::adaptiveAvgPool2d(zeros({1, 1, 4, 4}), {-1, 2}),
                        "aten.adaptive_avg_pool2d: output_size must be non-negative, got [-1,2]");
        FS_EXPECT_ERROR(ops::upsample2d(zeros({1, 1, 4, 4}), {8, 8}, "bicubic"),
                        "aten.upsample2d: mode must be 'nearest' or 'bilinear', got 'bicubic'");
        FS_EXPECT_ERROR(ops::upsample2d(zeros({1, 1, 4, 4}), {8, 8}, "nearest", true),
                        "aten.upsample2d: align_corners only applies to mode 'bilinear'");
        FS_EXPECT_ERROR(ops::upsample2d(zeros({1, 1, 4, 4}), {0, 8}), "aten.upsample2d: output_size must be positive");
        FS_EXPECT_ERROR(ops::upsample2d(zeros({1, 1, 4, 4}, DType::I64), {8, 8}, "bilinear"),
                        "aten.upsample2d: expected a floating input");
    }
};

QTEST_GUILESS_MAIN(TestConv)
#include "tst_core_conv.moc"
