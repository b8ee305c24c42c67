// The two halves of a Winograd convolution as ops of their own, so that the
// compiler can run the weight half once at compile time (constant folding)
// and keep only the input half in the compiled program:
//   fusescope.winograd_weights(w, tile)           [O, C, 3, 3] -> [(tile + 2)^2, O, C]
//   fusescope.conv2d_winograd(x, u, bias, padding, relu, min, max) = conv2d(x, w, bias, 1, padding),
//       then relu when `relu`, or clamp(min, max) when either is given (applied as each output
//       tile is stored)
// tile 2 is F(2x2, 3x3), the code aten.conv2d runs when it picks Winograd,
// so the compiled result equals the eager one bit for bit; tile 4 is
// F(4x4, 3x3), which only compiled code runs. conv2d_winograd tells the two
// apart by the number of points.
#include "core/ops/builtin.h"
#include "core/ops/registry.h"
#include "core/ops/winograd.h"

namespace fusescope {
namespace {

const char *const kWeights = "fusescope.winograd_weights";
const char *const kConv = "fusescope.conv2d_winograd";

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

void requireF32(const char *op, const char *name, const Tensor &t)
{
    if (t.dtype() != DType::F32)
        throw Error(std::string(op) + ": " + name + " must be f32, got " + dtypeName(t.dtype()) + " "
                    + shapeStr(t.sizes()));
}

int64_t pointsOfTile(int64_t tile)
{
    if (tile != 2 && tile != 4)
        throw Error(std::string(kWeights) + ": tile must be 2 or 4 (F(2x2, 3x3) or F(4x4, 3x3)), got "
                    + std::to_string(tile));
    return tile == 2 ? winograd::kTransformedPoints : winograd::kTransformedPoints4;
}

std::vector<TensorSpec> weightsShape(const Args &a)
{
    const Tensor &w = arg(a, 0);
    requireF32(kWeights, "weight", w);
    if (w.dim() != 4 || w.size(2) != 3 || w.size(3) != 3)
        throw Error(std::string(kWeights) + ": weight must be 4-D [O,C,3,3], got " + shapeStr(w.sizes()));
    return {{{pointsOfTile(a[1].toInt()), w.size(0), w.size(1)}, DType::F32}};
}

void weightsKernel(const Args &a, std::span<Tensor> outs)
{
    const Tensor w = arg(a, 0).contiguous();
    if (a[1].toInt() == 2)
        winograd::transformWeights(w.size(0), w.size(1), w.data<float>(), outs[0].data<float>());
    else
        winograd::transformWeights4(w.size(0), w.size(1), w.data<float>(), outs[0].data<float>());
}

struct ConvProblem {
    winograd::Problem p;
    Shape outShape;
};

// relu=True, or a clamp where min or max is given (not both with relu).
StoreActivation activationOf(const Args &a)
{
    auto given = [&](size_t i) { return a.size() > i && !a[i].isNone(); };
    const bool relu = given(4) && a[4].toBool(), clamp = given(5) || given(6);
    if (relu && clamp)
        throw Error(std::string(kConv) + ": relu and min/max are two activations; give one");
    if (relu)
        return StoreActivation::relu();
    return clamp ? StoreActivation::clampBounds(a, 5) : StoreActivation{};
}

ConvProblem convProblem(const Args &a)
{
    const Tensor &x = arg(a, 0), &u = arg(a, 1);
    const std::optional<Tensor> bias = a[2].toOptionalTensor();
    const IntList pad = a[3].toIntList();
    requireF32(kConv, "input", x);
    requireF32(kConv, "weights", u);
    if (x.dim() != 4)
        throw Error(std::string(kConv) + ": expected a 4-D [N,C,H,W] input, got " + shapeStr(x.sizes()));
    const bool points = u.dim() == 3 && (u.size(0) == winograd::kTransformedPoints
                                         || u.size(0) == winograd::kTransformedPoints4);
    if (!points || u.size(2) != x.size(1))
        throw Error(std::string(kConv) + ": weights " + shapeStr(u.sizes()) + " are not the transformed [16,O,"
                    + std::to_string(x.size(1)) + "] or [36,O," + std::to_string(x.size(1)) + "] weights of input "
                    + shapeStr(x.sizes()));
    if (bias && (bias->dtype() != DType::F32 || bias->dim() != 1 || bias->size(0) != u.size(1)))
        throw Error(std::string(kConv) + ": bias " + shapeStr(bias->sizes()) + " " + dtypeName(bias->dtype())
                    + " does not match " + std::to_string(u.size(1)) + " f32 output channels");
    if (pad.size() != 2 || pad[0] < 0 || pad[1] < 0)
        throw Error(std::string(kConv) + ": padding must be two non-negative ints, got " + shapeStr(pad));
    ConvProblem c;
    c.p = {x.size(0), x.size(1), x.size(2), x.size(3), u.size(1), x.size(2) + 2 * pad[0] - 2,
           x.size(3) + 2 * pad[1] - 2, pad[0], pad[1], activationOf(a)};
    if (c.p.outH < 1 || c.p.outW < 1)
        throw Error(std::string(kConv) + ": input " + shapeStr(x.sizes()) + " padded by " + shapeStr(pad)
                    + " is smaller than the 3x3 kernel");
    c.outShape = {c.p.n, c.p.outC, c.p.outH, c.p.outW};
    return c;
}

std::vector<TensorSpec> convShape(const Args &a)
{
    return {{convProblem(a).outShape, DType::F32}};
}

// The flops of the direct convolution it equals, as aten.conv2d reports them.
double nominalFlops(const Args &a, const Tensor &out)
{
    return 2.0 * 9.0 * static_cast<double>(arg(a, 0).size(1)) * static_cast<double>(out.numel());
}

void convKernel(const Args &a, std::span<Tensor> outs)
{
    const ConvProblem c = convProblem(a);
    const Tensor x = arg(a, 0).contiguous(), u = arg(a, 1).contiguous();
    const std::optional<Tensor> bias = a[2].toOptionalTensor();
    const Tensor b = bias ? bias->contiguous() : Tensor();
    KernelEvent event;
    event.name = u.size(0) == winograd::kTransformedPoints ? "conv2d_winograd" : "conv2d_winograd_f4";
    event.cost.flops = nominalFlops(a, outs[0]);
    const KernelScope scope(event);
    const float *pb = b.defined() ? b.data<float>() : nullptr;
    if (u.size(0) == winograd::kTransformedPoints)
        winograd::conv3x3Transformed(c.p, x.data<float>(), u.data<float>(), pb, outs[0].data<float>());
    else
        winograd::conv3x3Transformed4(c.p, x.data<float>(), u.data<float>(), pb, outs[0].data<float>());
}

OpCost convCost(const Args &a, std::span<const Tensor> outs)
{
    OpCost cost = ioBytes(a, outs);
    cost.flops = nominalFlops(a, outs[0]);
    return cost;
}

} // namespace

void registerWinogradOps(OpRegistry &r)
{
    OpDef weights;
    weights.kind = OpKind::Opaque;
    weights.shape = weightsShape;
    weights.cpu = weightsKernel;
    weights.foldWhenConstant = true;
    weights.cost = [](const Args &a, std::span<const Tensor> outs) {
        OpCost cost = ioBytes(a, outs);
        cost.flops = 4.0 * static_cast<double>(outs[0].numel());
        return cost;
    };
    r.add(std::string(kWeights) + "(Tensor weight, int tile=2) -> Tensor", std::move(weights));

    OpDef conv;
    conv.kind = OpKind::Convolution;
    conv.shape = convShape;
    conv.cpu = convKernel;
    conv.cost = convCost;
    r.add(std::string(kConv)
              + "(Tensor input, Tensor weights, Tensor? bias=None, int[] padding=[1,1], bool relu=False, "
                "Scalar? min=None, Scalar? max=None) -> Tensor",
          std::move(conv));
}

} // namespace fusescope
