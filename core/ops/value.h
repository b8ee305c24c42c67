#pragma once

#include "core/tensor/tensor.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fusescope {

using IntList = std::vector<int64_t>;
using TensorList = std::vector<Tensor>;

// One argument or result of an op call: what a graph node's args hold too.
class Value
{
public:
    using Storage = std::variant<std::monostate, Tensor, double, int64_t, bool, IntList, TensorList, std::string,
                                 DType>;

    Value() = default;
    Value(std::nullopt_t) {}
    Value(Tensor t) : m_v(std::move(t)) {}
    Value(double d) : m_v(d) {}
    Value(float f) : m_v(static_cast<double>(f)) {}
    Value(int64_t i) : m_v(i) {}
    Value(int i) : m_v(static_cast<int64_t>(i)) {}
    Value(bool b) : m_v(b) {}
    Value(IntList l) : m_v(std::move(l)) {}
    Value(std::initializer_list<int64_t> l) : m_v(IntList(l)) {}
    Value(TensorList l) : m_v(std::move(l)) {}
    Value(std::string s) : m_v(std::move(s)) {}
    Value(const char *s) : m_v(std::string(s)) {}
    Value(DType t) : m_v(t) {}
    template <typename T>
    Value(const std::optional<T> &o)
    {
        if (o)
            *this = Value(*o);
    }

    bool isNone() const { return std::holds_alternative<std::monostate>(m_v); }
    bool isTensor() const { return std::holds_alternative<Tensor>(m_v); }
    bool isDouble() const { return std::holds_alternative<double>(m_v); }
    bool isInt() const { return std::holds_alternative<int64_t>(m_v); }
    bool isBool() const { return std::holds_alternative<bool>(m_v); }
    bool isIntList() const { return std::holds_alternative<IntList>(m_v); }
    bool isTensorList() const { return std::holds_alternative<TensorList>(m_v); }
    bool isString() const { return std::holds_alternative<std::string>(m_v); }
    bool isDType() const { return std::holds_alternative<DType>(m_v); }
    bool isNumber() const { return isDouble() || isInt() || isBool(); }

    const Tensor &toTensor() const { return std::get<Tensor>(m_v); }
    double toDouble() const; // from double, int or bool
    int64_t toInt() const;   // from int or bool
    bool toBool() const { return std::get<bool>(m_v); }
    const IntList &toIntList() const { return std::get<IntList>(m_v); }
    const TensorList &toTensorList() const { return std::get<TensorList>(m_v); }
    const std::string &toStringRef() const { return std::get<std::string>(m_v); }
    DType toDType() const { return std::get<DType>(m_v); }
    std::optional<Tensor> toOptionalTensor() const;

    const Storage &storage() const { return m_v; }
    // "1.5", "[2,3]", "f32", "None", "Tensor[8,256]:f32"
    std::string repr() const;

private:
    Storage m_v;
};

using Args = std::vector<Value>;

} // namespace fusescope
