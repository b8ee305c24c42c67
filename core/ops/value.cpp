#include "core/ops/value.h"

#include <sstream>

namespace fusescope {

double Value::toDouble() const
{
    if (isDouble())
        return std::get<double>(m_v);
    if (isInt())
        return static_cast<double>(std::get<int64_t>(m_v));
    return std::get<bool>(m_v) ? 1.0 : 0.0;
}

int64_t Value::toInt() const
{
    if (isBool())
        return std::get<bool>(m_v) ? 1 : 0;
    return std::get<int64_t>(m_v);
}

std::optional<Tensor> Value::toOptionalTensor() const
{
    if (isNone())
        return std::nullopt;
    return toTensor();
}

std::string Value::repr() const
{
    std::ostringstream out;
    std::visit(
        [&](const auto &v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::monostate>) {
                out << "None";
            } else if constexpr (std::is_same_v<V, Tensor>) {
                out << "Tensor" << (v.defined() ? shapeStr(v.sizes()) + ":" + dtypeName(v.dtype()) : "<undefined>");
            } else if constexpr (std::is_same_v<V, bool>) {
                out << (v ? "True" : "False");
            } else if constexpr (std::is_same_v<V, IntList>) {
                out << shapeStr(v);
            } else if constexpr (std::is_same_v<V, TensorList>) {
                out << "[" << v.size() << " tensors]";
            } else if constexpr (std::is_same_v<V, std::string>) {
                out << '"' << v << '"';
            } else if constexpr (std::is_same_v<V, DType>) {
                out << dtypeName(v);
            } else {
                out << v;
            }
        },
        m_v);
    return out.str();
}

} // namespace fusescope
