// Ops that make tensors from nothing but arguments: they appear in captured
// graphs (a causal mask built with arange, say) like any other op.
#include "core/ops/builtin.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/tensor/factory.h"

#include <cmath>

namespace fusescope {
namespace {

int64_t arangeLength(double start, double end, double step)
{
    if (step == 0)
        throw Error("aten.arange: step must be nonzero");
    if (!std::isfinite(start) || !std::isfinite(end))
        throw Error("aten.arange: start and end must be finite");
    const double n = std::ceil((end - start) / step);
    return n > 0 ? static_cast<int64_t>(n) : 0;
}

DType arangeDType(const Args &a)
{
    if (!a[3].isNone())
        return a[3].toDType();
    const bool integral = !a[0].isDouble() && !a[1].isDouble() && !a[2].isDouble();
    return integral ? DType::I64 : DType::F32;
}

void registerFull(OpRegistry &r)
{
    OpDef full;
    full.kind = OpKind::Pointwise;
    full.scalarFn = "full";
    full.flopsPerElement = 0;
    full.shape = [](const Args &a) {
        for (int64_t s : a[0].toIntList()) {
            if (s < 0)
                throw Error("aten.full: negative size in shape " + shapeStr(a[0].toIntList()));
        }
        return std::vector<TensorSpec>{{a[0].toIntList(), a[2].toDType()}};
    };
    full.cpu = [](const Args &a, std::span<Tensor> outs) { fill_(outs[0], a[1].toDouble()); };
    r.add("aten.full(int[] size, Scalar fill_value, *, ScalarType dtype=f32) -> Tensor", std::move(full));
}

void registerArange(OpRegistry &r)
{
    OpDef arange;
    arange.kind = OpKind::Pointwise;
    arange.scalarFn = "arange";
    arange.shape = [](const Args &a) {
        const int64_t n = arangeLength(a[0].toDouble(), a[1].toDouble(), a[2].toDouble());
        return std::vector<TensorSpec>{{{n}, arangeDType(a)}};
    };
    arange.cpu = [](const Args &a, std::span<Tensor> outs) {
        const double start = a[0].toDouble(), step = a[2].toDouble();
        visitDType(outs[0].dtype(), [&](auto tag) {
            using T = decltype(tag);
            T *p = outs[0].data<T>();
            for (int64_t i = 0; i < outs[0].numel(); ++i)
                p[i] = static_cast<T>(static_cast<compute_t<T>>(start + static_cast<double>(i) * step));
        });
    };
    r.add("aten.arange(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None) -> Tensor",
          std::move(arange));
}

void registerEye(OpRegistry &r)
{
    OpDef eye;
    eye.kind = OpKind::Opaque;
    eye.shape = [](const Args &a) {
        if (a[0].toInt() < 0 || a[1].toInt() < 0)
            throw Error("aten.eye: sizes must be non-negative");
        return std::vector<TensorSpec>{{{a[0].toInt(), a[1].toInt()}, a[2].toDType()}};
    };
    eye.cpu = [](const Args &a, std::span<Tensor> outs) {
        fill_(outs[0], 0);
        const int64_t n = std::min(a[0].toInt(), a[1].toInt());
        const Tensor &o = outs[0];
        fill_(o.alias({n}, {o.stride(0) + o.stride(1)}, o.offset()), 1);
    };
    r.add("aten.eye(int n, int m, *, ScalarType dtype=f32) -> Tensor", std::move(eye));
}

} // namespace

void registerCreationOps(OpRegistry &r)
{
    registerFull(r);
    registerArange(r);
    registerEye(r);
}

} // namespace fusescope
