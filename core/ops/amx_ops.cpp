// A GEMM by a constant right operand on the AMX tile units (core/ops/amx_gemm.h),
// as two ops so that the compiler packs the weight once (constant folding)
// and keeps only the product in the compiled program:
//   fusescope.pack_bf16x6(b, transposed) [K, N] f32 (or [N, K], transposed) -> the three bf16 parts of
//                                        the [K, N] matrix, in panels
//   fusescope.mm_bf16x6(x, packed, n)   = x @ b, [M, K] x [K, n] -> [M, n] f32
// (the packed size tells K and n only to the 32 its panels are padded to).
// Where the tiles are not there, or x holds a value the split cannot carry
// (infinity, NaN, beyond 2^120, nonzero below 2^-100), the product runs
// through BLAS on the unpacked b, which equals the original exactly.
#include "core/ops/amx_gemm.h"
#include "core/ops/builtin.h"
#include "core/ops/linalg.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"

namespace fusescope {
namespace {

const char *const kPack = "fusescope.pack_bf16x6";
const char *const kMm = "fusescope.mm_bf16x6";

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

// The [K, N] matrix packed: b itself, or b transposed when `transposed` (a
// linear layer's [N, K] weight, read in place rather than copied first).
struct PackSource {
    const float *data; // null until the kernel runs (shapes come from meta tensors)
    int64_t k, n, sk, sn;
};

PackSource packSource(const Args &a)
{
    const Tensor &b = arg(a, 0);
    if (b.dtype() != DType::F32 || b.dim() != 2)
        throw Error(std::string(kPack) + ": expected a 2-D f32 matrix, got " + dtypeName(b.dtype()) + " "
                    + shapeStr(b.sizes()));
    const bool t = a[1].toBool();
    return {nullptr, b.size(t ? 1 : 0), b.size(t ? 0 : 1), b.stride(t ? 1 : 0), b.stride(t ? 0 : 1)};
}

std::vector<TensorSpec> packShape(const Args &a)
{
    const PackSource p = packSource(a);
    return {{{amx::packedElements(p.k, p.n)}, DType::BF16}};
}

void packKernel(const Args &a, std::span<Tensor> outs)
{
    PackSource p = packSource(a);
    p.data = arg(a, 0).data<float>();
    if (amx::packRight(p.data, p.k, p.n, p.sk, p.sn, outs[0].data<uint16_t>()))
        return;
    // packRight met a value that does not split: name the first one.
    for (int64_t i = 0; i < p.k; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
            const float x = p.data[i * p.sk + j * p.sn];
            if (!amx::splittable(&x, 1, 1, 0, 0))
                throw Error(std::string(kPack) + ": value " + std::to_string(x) + " at [" + std::to_string(i) + ","
                            + std::to_string(j)
                            + "] does not split exactly into three bf16 parts (non-finite, above 2^120 or "
                              "nonzero below 2^-100)");
        }
    }
}

struct MmProblem {
    int64_t m, k, n;
};

MmProblem mmProblem(const Args &a)
{
    const Tensor &x = arg(a, 0), &packed = arg(a, 1);
    const int64_t n = a[2].toInt();
    if (x.dtype() != DType::F32 || x.dim() != 2)
        throw Error(std::string(kMm) + ": expected a 2-D f32 input, got " + dtypeName(x.dtype()) + " "
                    + shapeStr(x.sizes()));
    if (n < 1 || packed.dtype() != DType::BF16 || packed.dim() != 1
        || packed.size(0) != amx::packedElements(x.size(1), n))
        throw Error(std::string(kMm) + ": " + dtypeName(packed.dtype()) + " " + shapeStr(packed.sizes())
                    + " is not a packed [" + std::to_string(x.size(1)) + "," + std::to_string(n)
                    + "] matrix (fusescope.pack_bf16x6)");
    return {x.size(0), x.size(1), n};
}

std::vector<TensorSpec> mmShape(const Args &a)
{
    const MmProblem p = mmProblem(a);
    return {{{p.m, p.n}, DType::F32}};
}

// Rows of unit-stride elements, each row at least a row's length from the next
// (what both the tiles and BLAS take as a matrix with a leading dimension).
bool rowMajor(const Tensor &t)
{
    return t.stride(1) == 1 && (t.size(0) == 1 || t.stride(0) >= t.size(1));
}

void mmKernel(const Args &a, std::span<Tensor> outs)
{
    const MmProblem p = mmProblem(a);
    const Tensor x = rowMajor(arg(a, 0)) ? arg(a, 0) : arg(a, 0).contiguous();
    const uint16_t *packed = arg(a, 1).data<uint16_t>();
    // A planned output may be a view into a larger buffer (a concatenation written in place).
    const Tensor out = rowMajor(outs[0]) ? outs[0] : Tensor::empty({p.m, p.n});
    float *c = out.data<float>();
    const int64_t lda = std::max<int64_t>(x.stride(0), p.k), ldc = std::max<int64_t>(out.stride(0), p.n);
    KernelEvent event;
    event.name = "amx_gemm_bf16x6";
    event.cost.flops = 2.0 * static_cast<double>(p.m * p.n) * static_cast<double>(p.k);
    event.cost.bytesRead = static_cast<double>(x.nbytes() + arg(a, 1).nbytes());
    event.cost.bytesWritten = static_cast<double>(outs[0].nbytes());
    bool done = false;
    if (amx::available()) {
        const KernelScope scope(event);
        done = amx::gemm(x.data<float>(), p.m, p.k, lda, packed, p.n, c, ldc);
    }
    if (!done) {
        event.name = "cblas_sgemm";
        const KernelScope scope(event);
        const std::vector<float> b = amx::unpackRight(packed, p.k, p.n);
        blas::gemm(false, false, p.m, p.n, p.k, 1.0f, x.data<float>(), lda, b.data(), p.n, 0.0f, c, ldc);
    }
    if (!rowMajor(outs[0]))
        loops::copyInto(outs[0], out);
}

} // namespace

void registerAmxOps(OpRegistry &r)
{
    OpDef pack;
    pack.kind = OpKind::Opaque;
    pack.shape = packShape;
    pack.cpu = packKernel;
    pack.foldWhenConstant = true;
    pack.cost = [](const Args &a, std::span<const Tensor> outs) {
        OpCost cost = ioBytes(a, outs);
        cost.flops = 6.0 * static_cast<double>(arg(a, 0).numel());
        return cost;
    };
    r.add(std::string(kPack) + "(Tensor b, bool transposed=False) -> Tensor", std::move(pack));

    OpDef mm;
    mm.kind = OpKind::Matmul;
    mm.shape = mmShape;
    mm.cpu = mmKernel;
    mm.cost = [](const Args &a, std::span<const Tensor> outs) {
        OpCost cost = ioBytes(a, outs);
        cost.flops = 2.0 * static_cast<double>(outs[0].numel()) * static_cast<double>(arg(a, 0).size(1));
        return cost;
    };
    r.add(std::string(kMm) + "(Tensor input, Tensor packed, int n) -> Tensor", std::move(mm));
}

} // namespace fusescope
