#pragma once

#include "core/ops/value.h"

#include <string>
#include <vector>

namespace fusescope {

enum class ArgType { Tensor, TensorList, Int, IntList, Float, Bool, Scalar, String, DType };

struct SchemaArg {
    std::string name;
    ArgType type = ArgType::Tensor;
    bool optional = false;   // written `Type?`: accepts None
    bool hasDefault = false;
    Value defaultValue;
    bool kwargOnly = false;  // after `*`
};

// Parsed ATen-style schema: "aten.add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
struct Schema {
    std::string name;
    std::vector<SchemaArg> args;
    std::vector<ArgType> returns; // Tensor or Tensor[]
    std::string text;

    static Schema parse(const std::string &text); // throws Error on malformed text
    int indexOf(const std::string &argName) const;
    int numTensorReturns() const { return static_cast<int>(returns.size()); }
};

const char *argTypeName(ArgType t);

} // namespace fusescope
