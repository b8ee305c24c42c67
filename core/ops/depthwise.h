// Depthwise convolution of one plane in AVX-512 register blocks, from a
// padded, phase-split copy of its input (the layout of conv.cpp's
// PhasedPlane, with an aligned pitch, filled by fillWide). Internal to
// aten.conv2d's depthwise kernel (core/ops/conv.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace fusescope::depthwise {

// One plane's phases: `phases` planes of `rows` x `pitch` floats, `size`
// apart; phase (r, c) row i, column j holds padded input row i * stride + r,
// column j * stride + c. `data` is 64-byte aligned, the pitch a multiple of
// kPitchAlign, and kSlack floats past the last phase are readable.
struct Phased {
    const float *data = nullptr;
    int64_t size = 0, pitch = 0;
};

constexpr int64_t kPitchAlign = 16;
constexpr int64_t kSlack = 64;

// The input plane and its phases: `rows` x `pitch` per phase, stride x stride phases.
struct Layout {
    int64_t inH = 0, inW = 0, padH = 0, padW = 0, stride = 1, rows = 0, pitch = 0;
};

// Fills `dst` (64-byte aligned, stride^2 * rows * pitch floats) with the
// phases of `plane` (inH x inW, contiguous), zeros where the taps read the
// padding; a vector per 16 columns, where a loop of library copies per row
// took as long as the convolution itself. `next` (may be null): the plane
// filled after this one, prefetched meanwhile.
void fillWide(const float *plane, const Layout &layout, float *dst, const float *next);

// Whether planeWide runs this kernel: the CPU has AVX-512, square 3x3 or 5x5
// taps, undilated, stride 1 or 2 both ways, and output rows of at least 14
// pixels (narrower ones waste most lanes of a row's vectors).
bool worthIt(int64_t kernelH, int64_t kernelW, int64_t strideH, int64_t strideW, int64_t dilationH,
             int64_t dilationW, int64_t outW);

// out[oh][ow] = bias + sum over taps (ki, kj) of w[ki * k + kj] * padded input
// (oh * stride + ki, ow * stride + kj), for an outH x outW output plane.
void planeWide(int64_t kernel, int64_t stride, const Phased &in, const float *w, float bias, float *out, int64_t outH,
               int64_t outW);

// --- planes of 6 to 8 columns (7x7 at the end of MobileNets and EfficientNets) ---
// Rows that short leave most lanes of planeWide's vectors idle, and its fill
// costs more than the taps. Here a vector holds two output rows, and a tap
// reads them straight from the input plane as it lies: at stride 1 with
// same-size padding the two rows' inputs are one run of memory, one masked
// load; otherwise two masked loads whose columns one permute picks. The
// padding is the masked-off lanes.
struct SmallPlane {
    int64_t inH = 0, inW = 0, padH = 0, padW = 0, kernel = 3, stride = 1, outH = 0, outW = 0;
};

// Whether SmallPlanes runs this kernel: the CPU has AVX-512, square 3x3 or
// 5x5 taps, undilated, stride 1 or 2 both ways, an output of 6 to 8 columns
// and at most 8 rows.
bool smallWorthIt(int64_t kernelH, int64_t kernelW, int64_t strideH, int64_t strideW, int64_t dilationH,
                  int64_t dilationW, int64_t outH, int64_t outW);

// The loads of every tap, worked out once per convolution and shared by its planes.
class SmallPlanes
{
public:
    explicit SmallPlanes(const SmallPlane &p);

    // out[oh][ow] = bias + sum over taps (ki, kj) of w[ki * kernel + kj] * in[oh * stride + ki - padH][ow *
    // stride + kj - padW], zero outside the input (inH x inW, contiguous); out is outH x outW, contiguous.
    void run(const float *in, const float *w, float bias, float *out) const;

    struct Load {
        int64_t at = 0;     // first float, from the plane's start (may be negative: masked)
        uint16_t lanes = 0; // the lanes inside the input
    };

private:
    SmallPlane m_p;
    bool m_oneRun = false;     // one load per tap and pair of rows
    int64_t m_pairs = 0;
    std::vector<Load> m_loads; // per tap, per pair: one, or the two rows'
    std::vector<int32_t> m_permutation;
};

} // namespace fusescope::depthwise
