#include "core/onnx/onnxops.h"

namespace fusescope::onnx {

namespace {

const OnnxAttribute *find(const OnnxNode &node, const std::string &name)
{
    auto it = node.attributes.find(name);
    return it == node.attributes.end() ? nullptr : &it->second;
}

} // namespace

bool OnnxOpContext::has(const std::string &name) const
{
    return find(m_node, name) != nullptr;
}

int64_t OnnxOpContext::attrInt(const std::string &name, int64_t fallback) const
{
    const OnnxAttribute *a = find(m_node, name);
    return a && a->kind == OnnxAttribute::Kind::Int ? a->i : fallback;
}

double OnnxOpContext::attrFloat(const std::string &name, double fallback) const
{
    const OnnxAttribute *a = find(m_node, name);
    return a && a->kind == OnnxAttribute::Kind::Float ? a->f : fallback;
}

std::string OnnxOpContext::attrString(const std::string &name, const std::string &fallback) const
{
    const OnnxAttribute *a = find(m_node, name);
    return a && a->kind == OnnxAttribute::Kind::String ? a->s : fallback;
}

std::vector<int64_t> OnnxOpContext::attrInts(const std::string &name, std::vector<int64_t> fallback) const
{
    const OnnxAttribute *a = find(m_node, name);
    return a && a->kind == OnnxAttribute::Kind::Ints ? a->ints : fallback;
}

std::vector<double> OnnxOpContext::attrFloats(const std::string &name, std::vector<double> fallback) const
{
    const OnnxAttribute *a = find(m_node, name);
    return a && a->kind == OnnxAttribute::Kind::Floats ? a->floats : fallback;
}

Tensor OnnxOpContext::attrTensor(const std::string &name) const
{
    const OnnxAttribute *a = find(m_node, name);
    if (!a || a->kind != OnnxAttribute::Kind::Tensor)
        fail("missing tensor attribute '" + name + "'");
    return a->t;
}

void OnnxOpContext::fail(const std::string &what) const
{
    throw Error("'" + m_node.label() + "' (" + m_node.opType + "): " + what);
}

const OnnxOpDef *findOnnxOp(const std::string &opType, int64_t opset)
{
    for (std::span<const OnnxOpDef> table : {mathOps(), tensorOps()}) {
        for (const OnnxOpDef &def : table) {
            if (opType == def.opType && opset >= def.minOpset)
                return &def;
        }
    }
    return nullptr;
}

const Tensor &input(const OnnxOpContext &ctx, const OnnxInputs &inputs, size_t index)
{
    if (!hasInput(inputs, index))
        ctx.fail("input " + std::to_string(index) + " is required");
    return *inputs[index];
}

bool hasInput(const OnnxInputs &inputs, size_t index)
{
    return index < inputs.size() && inputs[index].has_value();
}

std::vector<int64_t> constantInts(const OnnxOpContext &ctx, const OnnxInputs &inputs, size_t index)
{
    const Tensor &t = input(ctx, inputs, index);
    if (t.isMeta())
        ctx.fail("input " + std::to_string(index) +
                 " is computed from the model's data; only values known at import (constants, shapes) are supported");
    const Tensor c = t.to(DType::I64).contiguous();
    const int64_t *p = c.data<int64_t>();
    return std::vector<int64_t>(p, p + c.numel());
}

} // namespace fusescope::onnx
