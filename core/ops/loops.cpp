#include "core/ops/loops.h"

namespace fusescope::loops {

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

void copyInto(const Tensor &dst, const Tensor &src)
{
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
