// A GEMM by a constant right operand on the AMX tile units (core/ops/amx_gemm.h),
// as two ops so that the compiler packs the weight once (constant folding)
// and keeps only the product in the compiled program:
//   fusescope.pack_bf16x6(b)            [K, N] f32 -> the three bf16 parts of b, in panels
//   fusescope.mm_bf16x6(x, packed, n)   = x @ b, [M, K] x [K, n] -> [M, n] f32
// (the packed size tells K and n only to the 32 its panels are padded to).
// Where the tiles are not there, or x holds a value the split cannot carry
// (infinity, NaN, beyond 2^120, nonzero below 2^-100), the product runs
// through BLAS on the unpacked b, which equals the original exactly.
#include "core/ops/amx_gemm.h"
#include "core/ops/builtin.h"
#include "core/ops/linalg.h"
#include "core/ops/registry.h"

namespace fusescope {
namespace {

const char *const kPack = "fusescope.pack_bf16x6";
const char *const kMm = "fusescope.mm_bf16x6";

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

std::vector<TensorSpec> packShape(const Args &a)
{
    const Tensor &b = arg(a, 0);
    if (b.dtype() != DType::F32 || b.dim() != 2)
        throw Error(std::string(kPack) + ": expected a 2-D f32 [K,N] matrix, got " + dtypeName(b.dtype()) + " "
                    + shapeStr(b.sizes()));
    return {{{amx::packedElements(b.size(0), b.size(1))}, DType::BF16}};
}

void packKernel(const Args &a, std::span<Tensor> outs)
{
    const Tensor &b = arg(a, 0);
    const float *p = b.data<float>();
    for (int64_t i = 0; i < b.size(0); ++i) {
        for (int64_t j = 0; j < b.size(1); ++j) {
            if (!amx::splittable(p + i * b.stride(0) + j * b.stride(1), 1, 1, 0, 0))
                throw Error(std::string(kPack) + ": value " + std::to_string(p[i * b.stride(0) + j * b.stride(1)])
                            + " at [" + std::to_string(i) + "," + std::to_string(j)
                            + "] does not split exactly into three bf16 parts (non-finite, above 2^120 or nonzero "
                              "below 2^-100)");
        }
    }
    amx::packRight(p, b.size(0), b.size(1), b.stride(0), b.stride(1), outs[0].data<uint16_t>());
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

void mmKernel(const Args &a, std::span<Tensor> outs)
{
    const MmProblem p = mmProblem(a);
    const Tensor x = arg(a, 0).stride(1) == 1 ? arg(a, 0) : arg(a, 0).contiguous();
    const uint16_t *packed = arg(a, 1).data<uint16_t>();
    float *c = outs[0].data<float>();
    KernelEvent event;
    event.name = "amx_gemm_bf16x6";
    event.cost.flops = 2.0 * static_cast<double>(p.m * p.n) * static_cast<double>(p.k);
    event.cost.bytesRead = static_cast<double>(x.nbytes() + arg(a, 1).nbytes());
    event.cost.bytesWritten = static_cast<double>(outs[0].nbytes());
    if (amx::available()) {
        const KernelScope scope(event);
        if (amx::gemm(x.data<float>(), p.m, p.k, x.stride(0), packed, p.n, c, p.n))
            return;
    }
    event.name = "cblas_sgemm";
    const KernelScope scope(event);
    const std::vector<float> b = amx::unpackRight(packed, p.k, p.n);
    blas::gemm(false, false, p.m, p.n, p.k, 1.0f, x.data<float>(), x.stride(0), b.data(), p.n, 0.0f, c, p.n);
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
    r.add(std::string(kPack) + "(Tensor b) -> Tensor", std::move(pack));

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
