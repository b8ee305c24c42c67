#pragma once

#include "core/ops/schema.h"
#include "core/runtime/observer.h"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace fusescope {

// How the compiler may treat an op.
enum class OpKind {
    Pointwise,   // out[i] = f(in[i]...) after broadcasting; fusable into loops
    Reduction,   // reduces dims; fusable with pointwise prologue/epilogue
    View,        // aliases its input's storage (becomes index arithmetic)
    Matmul,      // GEMM through BLAS; may take a pointwise epilogue
    Convolution, // conv; may take a pointwise epilogue
    Composite,   // decomposes into other ops before fusion
    Opaque,      // runs as an extern kernel (or splits the graph)
};
const char *opKindName(OpKind kind);

struct TensorSpec {
    Shape sizes;
    DType dtype = DType::F32;
};

using ShapeFn = std::function<std::vector<TensorSpec>(const Args &)>;
// Computes into preallocated contiguous outputs shaped by the ShapeFn.
using KernelFn = std::function<void(const Args &, std::span<Tensor> outs)>;
// View ops build their results as aliases of an input (meta tensors too).
using ViewFn = std::function<TensorList(const Args &)>;
// Re-expresses the op with other registered ops (the compiler's decompose
// stage; also the eager path of ops that have no kernel of their own).
using DecompFn = std::function<TensorList(const Args &)>;
using CostFn = std::function<OpCost(const Args &, std::span<const Tensor> outs)>;

// How generated code computes one element of a pointwise op: a function of
// core/ops/scalarmath.h applied to the tensor operands and then `constants`.
struct ScalarCall {
    std::string fn;
    std::vector<double> constants;
};
using ScalarCallFn = std::function<ScalarCall(const Args &)>;

// The single source of truth for one op: eager execution, capture,
// decomposition, ONNX mapping, codegen and `fusescope ops` all read this.
struct OpDef {
    Schema schema;
    OpKind kind = OpKind::Opaque;
    ShapeFn shape;     // required unless `view` is set
    KernelFn cpu;      // optional when `decompose` is set
    ViewFn view;       // for OpKind::View
    DecompFn decompose;
    // The compiler's decompose stage keeps the op whole where this holds (a
    // batched matmul runs as one strided GEMM instead of reshaped copies).
    std::function<bool(const Args &)> keepWhole;
    // Prepares a constant's layout (Winograd's weight transform): constant
    // folding runs it at compile time although its output is bigger than its input.
    bool foldWhenConstant = false;
    CostFn cost;       // optional: a default from bytes and flopsPerElement is used
    double flopsPerElement = 1; // default cost of pointwise and reduction ops
    // Pointwise ops: the name of the scalar function in core/ops/scalarmath.h
    // that both the eager kernel and generated code call.
    std::string scalarFn;
    // Pointwise ops whose call depends on non-tensor arguments (alpha, a
    // rounding mode, clamp bounds); unset: scalarFn on the operands alone.
    ScalarCallFn scalarCall;
    // Integer results come from a division whose divisor the eager kernel
    // checks for zeros (a zero would trap): the compiler runs such nodes on
    // that kernel rather than in generated code.
    bool checksIntDivisor = false;
    // Reductions the compiler fuses: "sum", "prod", "max" or "min".
    std::string reduceFn;
    // The output shape depends on the input values (nonzero): no shape on meta
    // tensors, so the compiler's capture breaks the graph at this op.
    bool dataDependent = false;
    bool cudaKernel = false;    // implemented on the CUDA backend
    bool custom = false;        // registered at run time by an application

    const std::string &name() const { return schema.name; }
    // The scalar call for these arguments (pointwise ops with a scalarFn).
    ScalarCall scalarCallFor(const Args &args) const { return scalarCall ? scalarCall(args) : ScalarCall{scalarFn, {}}; }
    OpCost estimateCost(const Args &args, std::span<const Tensor> outs) const;
};

// Bytes of the tensor arguments (numbers given for tensors excluded) and of
// the outputs, flops 0: the memory side of most cost rules.
OpCost ioBytes(const Args &args, std::span<const Tensor> outs);

class OpRegistry
{
public:
    static OpRegistry &instance();

    // Registers an op; the schema text is parsed. Throws Error when the name
    // is taken or the definition is incomplete.
    const OpDef &add(const std::string &schemaText, OpDef def);
    const OpDef *find(const std::string &name) const;
    const OpDef &get(const std::string &name) const; // throws Error naming the op
    std::vector<const OpDef *> all() const;          // sorted by name

private:
    OpRegistry();
    struct Impl;
    std::unique_ptr<Impl> d;
};

// Receives every op call made on this thread (the compiler's capture).
class DispatchTracer
{
public:
    virtual ~DispatchTracer() = default;
    virtual void record(const OpDef &op, const Args &args, const TensorList &outputs) = 0;
    // A data-dependent op met meta arguments: the tracer computes its real
    // result (a graph break) and returns meta tensors of the real shapes.
    virtual TensorList breakGraph(const OpDef &op, const Args &args);
};
// Installs a tracer for the current thread; returns the previous one.
DispatchTracer *setDispatchTracer(DispatchTracer *tracer);

// Binds args to the op's schema: fills in defaults, checks types, and makes a
// number passed for a tensor a 0-d tensor. callOp does it; so must whoever
// runs an op's kernel directly (the compiled runtime).
void bindArgs(const OpDef &op, Args &args);

// Calls an op: binds args to the schema (defaults, type checks), runs the
// shape rule, and then the kernel, the view or the decomposition. Meta
// inputs give meta outputs without running anything.
TensorList callOp(const OpDef &op, Args args);
TensorList callOp(const std::string &name, Args args);
Tensor callOp1(const std::string &name, Args args);

// Reports one run of `op` to observers for the scope's lifetime, the cost
// estimated from `outs` as they are at its end: callOp's eager runs, and the
// compiled runtime's extern kernels, which call an op's kernel themselves.
class ObservedOpScope
{
public:
    ObservedOpScope(const OpDef &op, const Args &args, const TensorList &outs);
    ~ObservedOpScope();
    ObservedOpScope(const ObservedOpScope &) = delete;
    ObservedOpScope &operator=(const ObservedOpScope &) = delete;

private:
    bool m_active;
    const Args &m_args;
    const TensorList &m_outs;
    std::vector<Tensor> m_inputs;
    OpEvent m_event;
};

} // namespace fusescope
