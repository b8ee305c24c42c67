// Matrix products. f32/f64 go to OpenBLAS, reading strided operands in place
// whenever a unit stride lets BLAS see them as (transposed) row-major
// matrices; f16/bf16 compute in f32; integers use a plain loop.
#include "core/ops/linalg.h"

#include "core/ops/builtin.h"
#include "core/ops/loops.h"
#include "core/ops/pointwise.h"
#include "core/ops/registry.h"
#include "core/ops/views.h"
#include "core/runtime/threadpool.h"

#include <cblas.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace fusescope {
namespace {

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

// OpenBLAS runs a GEMM of at most this M*N*K on the calling thread (its SMP
// threshold), so many of them can run side by side on the pool.
constexpr int64_t kSerialBlasWork = int64_t(65536) * 4;
// Up to this m*n*k a batched GEMM runs one matrix per pool thread.
constexpr int64_t kBatchPerThreadWork = int64_t(512) * 512 * 128;

// --- checks --------------------------------------------------------------------

[[noreturn]] void cannotMultiply(const std::string &op, const Tensor &a, const Tensor &b)
{
    throw Error(op + ": shapes " + shapeStr(a.sizes()) + " and " + shapeStr(b.sizes()) + " cannot be multiplied");
}

void checkSameDType(const std::string &op, const Tensor &a, const Tensor &b)
{
    if (a.dtype() != b.dtype())
        throw Error(op + ": expected operands of one dtype, got " + dtypeName(a.dtype()) + " " + shapeStr(a.sizes())
                    + " and " + dtypeName(b.dtype()) + " " + shapeStr(b.sizes()));
    if (a.dtype() == DType::Bool)
        throw Error(op + ": not supported for bool tensors");
}

void checkRank(const std::string &op, const Tensor &a, const Tensor &b, int64_t rank)
{
    if (a.dim() != rank || b.dim() != rank)
        throw Error(op + ": expected " + std::to_string(rank) + "-D operands, got " + shapeStr(a.sizes()) + " and "
                    + shapeStr(b.sizes()));
}

// Integer tensors take integral factors only, as in PyTorch.
void checkIntegralFactors(const std::string &op, DType t, std::initializer_list<double> factors)
{
    if (!isIntegral(t))
        return;
    for (double f : factors) {
        if (f != std::trunc(f))
            throw Error(op + ": " + dtypeName(t) + " operands need integral alpha and beta, got " + std::to_string(f));
    }
}

// --- geometry ------------------------------------------------------------------

// t seen at `shape`: broadcast dims get stride 0; shares storage.
Tensor broadcastTo(const Tensor &t, const Shape &shape)
{
    return t.alias(shape, loops::broadcastStrides(t, shape), t.offset());
}

// A contiguous copy of t in `dtype` (internal: no op event).
Tensor packed(const Tensor &t, DType dtype)
{
    Tensor out = Tensor::empty(t.sizes(), dtype, t.device());
    loops::copyInto(out, t);
    return out;
}

// The one stride with which dims [0, n) of (sizes, strides) step as a single
// dim, or -1 when they do not collapse without a copy.
int64_t collapsedStride(const Shape &sizes, const Shape &strides, size_t n)
{
    int64_t stride = 0, next = -1;
    for (size_t d = n; d-- > 0;) {
        if (sizes[d] == 1)
            continue;
        if (next >= 0 && strides[d] != next)
            return -1;
        if (next < 0)
            stride = strides[d];
        next = strides[d] * sizes[d];
    }
    return stride;
}

// Whether `shape` broadcasts to `target` without growing it.
bool broadcastsTo(const Shape &shape, const Shape &target)
{
    if (shape.size() > target.size())
        return false;
    const size_t lead = target.size() - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] != 1 && shape[i] != target[lead + i])
            return false;
    }
    return true;
}

Shape withMatrix(Shape batch, int64_t rows, int64_t cols)
{
    batch.push_back(rows);
    batch.push_back(cols);
    return batch;
}

Shape batchOf(const Tensor &t)
{
    return Shape(t.sizes().begin(), t.sizes().end() - 2);
}

// How BLAS reads a strided rows x cols matrix in place: row-major with a unit
// column stride (NoTrans, ld = row stride) or with a unit row stride (Trans,
// ld = column stride). The stride of a size-1 dim is free, so it is chosen to fit.
struct BlasOperand {
    bool ok = false;
    CBLAS_TRANSPOSE trans = CblasNoTrans;
    int64_t ld = 1;
};

BlasOperand blasOperand(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    if (cols == 1)
        cs = 1;
    if (rows == 1)
        rs = std::max<int64_t>(cols, 1);
    if (cs == 1 && rs >= std::max<int64_t>(cols, 1))
        return {true, CblasNoTrans, rs};
    if (rs == 1 && cs >= std::max<int64_t>(rows, 1))
        return {true, CblasTrans, cs};
    return {};
}

BlasOperand blasOperand(const Tensor &t)
{
    return blasOperand(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1));
}

// t itself when BLAS can read its matrices in place, else a contiguous copy.
Tensor blasReady(const Tensor &t)
{
    return blasOperand(t).ok ? t : packed(t, t.dtype());
}

// Element offsets of every batch's matrices, row-major over `batch`; a and b
// are already broadcast to it.
struct BatchOffsets {
    int64_t count = 1;
    std::vector<int64_t> a, b;
};

BatchOffsets batchOffsets(const Tensor &a, const Tensor &b, const Shape &batch)
{
    BatchOffsets o;
    o.count = numelOf(batch);
    o.a.resize(static_cast<size_t>(o.count));
    o.b.resize(static_cast<size_t>(o.count));
    Shape index(batch.size(), 0);
    for (int64_t i = 0; i < o.count; ++i) {
        int64_t offA = 0, offB = 0;
        for (size_t d = 0; d < batch.size(); ++d) {
            offA += index[d] * a.strides()[d];
            offB += index[d] * b.strides()[d];
        }
        o.a[static_cast<size_t>(i)] = offA;
        o.b[static_cast<size_t>(i)] = offB;
        for (size_t d = batch.size(); d-- > 0 && ++index[d] == batch[d];)
            index[d] = 0;
    }
    return o;
}

// --- GEMM drivers ----------------------------------------------------------------
// All compute out = alpha * a @ b + beta * out, where a is [..., M, K], b is
// [..., K, N] and out is a contiguous [batch..., M, N] with a's and b's batch
// dims broadcasting to batch. beta == 0 never reads out.

void blasGemv(CBLAS_TRANSPOSE t, int rows, int cols, float alpha, const float *a, int lda, const float *x, int incx,
              float *y, int incy)
{
    cblas_sgemv(CblasRowMajor, t, rows, cols, alpha, a, lda, x, incx, 1.0f, y, incy);
}

void blasGemv(CBLAS_TRANSPOSE t, int rows, int cols, double alpha, const double *a, int lda, const double *x,
              int incx, double *y, int incy)
{
    cblas_dgemv(CblasRowMajor, t, rows, cols, alpha, a, lda, x, incx, 1.0, y, incy);
}

// A product with one row or one column is a matrix-vector product. OpenBLAS's
// GEMM packs the whole matrix first: a CNN's classifier at batch 1 ([1,1280] x
// [1280,1000]) took 0.35 ms as sgemm and 0.07 ms as sgemv. Returns false where
// it does not apply. y is scaled by beta here (beta 0 clears it, never reads
// it) so that gemv only accumulates.
template <typename T>
bool vectorProduct(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, T alpha, const T *a, int lda,
                   const T *b, int ldb, T beta, T *c, int ldc)
{
    if ((m != 1 && n != 1) || k == 0)
        return false;
    const bool row = m == 1;
    const int len = row ? n : m, incy = row ? 1 : ldc;
    for (int i = 0; i < len; ++i)
        c[int64_t(i) * incy] = beta == T(0) ? T(0) : beta * c[int64_t(i) * incy];
    if (row) { // c = op(b)^T x, x the one row of op(a)
        const int incx = ta == CblasNoTrans ? 1 : lda;
        if (tb == CblasNoTrans)
            blasGemv(CblasTrans, k, n, alpha, b, ldb, a, incx, c, incy);
        else
            blasGemv(CblasNoTrans, n, k, alpha, b, ldb, a, incx, c, incy);
    } else { // c = op(a) x, x the one column of op(b)
        const int incx = tb == CblasNoTrans ? ldb : 1;
        if (ta == CblasNoTrans)
            blasGemv(CblasNoTrans, m, k, alpha, a, lda, b, incx, c, incy);
        else
            blasGemv(CblasTrans, k, m, alpha, a, lda, b, incx, c, incy);
    }
    return true;
}

void blasCall(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float *a, int lda,
              const float *b, int ldb, float beta, float *c, int ldc)
{
    if (!vectorProduct(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
        cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void blasCall(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha, const double *a, int lda,
              const double *b, int ldb, double beta, double *c, int ldc)
{
    if (!vectorProduct(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
        cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int blasInt(int64_t v)
{
    if (v > INT_MAX)
        throw Error("GEMM: dimension or leading stride " + std::to_string(v) + " exceeds what BLAS can index");
    return static_cast<int>(v);
}

struct BlasProblem {
    BlasOperand a, b;
    int64_t m, n, k;
};

template <typename T>
void blasMatrix(const BlasProblem &p, const T *a, const T *b, T *c, T alpha, T beta)
{
    blasCall(p.a.trans, p.b.trans, blasInt(p.m), blasInt(p.n), blasInt(p.k), alpha, a, blasInt(p.a.ld), b,
             blasInt(p.b.ld), beta, c, blasInt(p.n));
}

// When every batch shares b and a's batch and row dims step as one dim, the
// batch is one tall GEMM ([B*M, K] x [K, N]): one BLAS call instead of B.
bool foldBatchIntoRows(Tensor &a, Tensor &b, Tensor &out)
{
    const size_t nb = static_cast<size_t>(out.dim()) - 2;
    if (nb == 0)
        return false;
    for (size_t d = 0; d < nb; ++d) {
        if (b.strides()[d] != 0 && out.sizes()[d] != 1)
            return false;
    }
    const int64_t rowStride = collapsedStride(a.sizes(), a.strides(), nb + 1);
    if (rowStride < 0)
        return false;
    const int64_t rows = numelOf(batchOf(out)) * out.size(-2);
    const Tensor tall = a.alias({rows, a.size(-1)}, {rowStride, a.stride(-1)}, a.offset());
    if (!blasOperand(tall).ok) // an a expanded along the batch
        return false;
    a = tall;
    b = b.alias({b.size(-2), b.size(-1)}, {b.stride(-2), b.stride(-1)}, b.offset());
    out = out.alias({rows, out.size(-1)}, {out.size(-1), 1}, out.offset());
    return true;
}

// What observers (the profiler) see of one GEMM: its kernel and its flops.
KernelEvent gemmEvent(const char *name, const Tensor &out, int64_t k)
{
    KernelEvent e;
    e.name = name;
    const double outs = static_cast<double>(out.numel());
    const double m = static_cast<double>(out.dim() >= 2 ? out.size(-2) : 1);
    const double n = static_cast<double>(out.size(-1));
    const double batch = outs / std::max(1.0, m * n);
    const double elem = static_cast<double>(itemSize(out.dtype()));
    e.cost.flops = 2.0 * outs * static_cast<double>(k);
    e.cost.bytesRead = elem * batch * (m + n) * static_cast<double>(k);
    e.cost.bytesWritten = elem * outs;
    return e;
}

template <typename T>
void blasGemm(const Tensor &a0, const Tensor &b0, const Tensor &out0, double alpha, double beta)
{
    numThreads(); // starts the pool, which tells BLAS how many threads to use
    if (!inParallelRegion())
        restPool();
    const Shape batch = batchOf(out0);
    const int64_t m = out0.size(-2), n = out0.size(-1), k = a0.size(-1);
    Tensor a = broadcastTo(blasReady(a0), withMatrix(batch, m, k));
    Tensor b = broadcastTo(blasReady(b0), withMatrix(batch, k, n));
    Tensor out = out0;
    const bool folded = foldBatchIntoRows(a, b, out);
    // Named after what BLAS runs: one-row and one-column products are gemv (vectorProduct).
    const bool vector = k > 0 && (n == 1 || (folded ? out.size(0) : m) == 1);
    const bool f32 = std::is_same_v<T, float>;
    const KernelEvent event = gemmEvent(vector ? (f32 ? "cblas_sgemv" : "cblas_dgemv")
                                               : (f32 ? "cblas_sgemm" : "cblas_dgemm"),
                                        out0, k);
    const KernelScope scope(event);
    if (folded) {
        const BlasProblem p{blasOperand(a), blasOperand(b), out.size(0), n, k};
        blasMatrix<T>(p, a.data<T>(), b.data<T>(), out.data<T>(), T(alpha), T(beta));
        return;
    }
    const BlasProblem p{blasOperand(a), blasOperand(b), m, n, k};
    const BatchOffsets off = batchOffsets(a, b, batch);
    const T *pa = a.data<T>(), *pb = b.data<T>();
    T *pc = out.data<T>();
    auto run = [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
            blasMatrix<T>(p, pa + off.a[size_t(i)], pb + off.b[size_t(i)], pc + i * m * n, T(alpha), T(beta));
    };
    // Small matrices: BLAS stays on one thread, so spread the batch instead.
    const int64_t work = m * n * k;
    if (work <= kSerialBlasWork) {
        parallelFor(0, off.count, std::max<int64_t>(1, kSerialBlasWork / std::max<int64_t>(work, 1)), run);
    } else if (off.count > 1 && work <= kBatchPerThreadWork && !inParallelRegion()) {
        // A batch of mid-sized products (attention's heads): one single-threaded
        // GEMM per matrix on each pool thread. Threaded BLAS would synchronize
        // its threads for every small product, which on a busy 2-core machine
        // cost 40x.
        const SerialBlasScope serial;
        parallelFor(0, off.count, 1, run);
    } else {
        run(0, off.count);
    }
}

// Integer GEMM wraps on overflow like PyTorch's; unsigned arithmetic keeps
// that defined.
template <typename T>
void loopGemm(const Tensor &a0, const Tensor &b0, const Tensor &out, double alpha, double beta)
{
    using U = std::make_unsigned_t<T>;
    const Shape batch = batchOf(out);
    const int64_t m = out.size(-2), n = out.size(-1), k = a0.size(-1);
    const Tensor a = broadcastTo(a0, withMatrix(batch, m, k)), b = broadcastTo(b0, withMatrix(batch, k, n));
    const BatchOffsets off = batchOffsets(a, b, batch);
    const int64_t ars = a.stride(-2), acs = a.stride(-1), brs = b.stride(-2), bcs = b.stride(-1);
    const T *pa = a.data<T>(), *pb = b.data<T>();
    T *pc = out.data<T>();
    const U ua = U(static_cast<int64_t>(alpha)), ub = U(static_cast<int64_t>(beta));
    const KernelEvent event = gemmEvent("gemm_integer_loop", out, k);
    const KernelScope scope(event);
    parallelFor(0, off.count * m, std::max<int64_t>(1, loops::kGrain / std::max<int64_t>(n * k, 1)),
                [&](int64_t r0, int64_t r1) {
        std::vector<U> acc(static_cast<size_t>(n));
        for (int64_t r = r0; r < r1; ++r) {
            const T *arow = pa + off.a[size_t(r / m)] + (r % m) * ars;
            const T *bmat = pb + off.b[size_t(r / m)];
            std::fill(acc.begin(), acc.end(), U(0));
            for (int64_t kk = 0; kk < k; ++kk) {
                const U av = U(arow[kk * acs]);
                const T *brow = bmat + kk * brs;
                for (int64_t j = 0; j < n; ++j)
                    acc[size_t(j)] += av * U(brow[j * bcs]);
            }
            T *crow = pc + r * n;
            for (int64_t j = 0; j < n; ++j)
                crow[j] = T(ua * acc[size_t(j)] + (beta != 0 ? ub * U(crow[j]) : U(0)));
        }
    });
}

// out = beta * out: what a product over an empty K leaves.
void scaleInPlace(const Tensor &out, double beta)
{
    if (beta == 0) {
        std::memset(out.rawData(), 0, out.nbytes());
        return;
    }
    visitNumeric(out.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using C = compute_t<T>;
        loops::pointwise<T, T, 1>(out, {out}, [beta](C x) { return C(x * C(beta)); });
    });
}

void runGemm(const Tensor &a, const Tensor &b, const Tensor &out, double alpha, double beta);

void gemmViaF32(const Tensor &a, const Tensor &b, const Tensor &out, double alpha, double beta)
{
    const Tensor out32 = beta == 0 ? Tensor::empty(out.sizes(), DType::F32) : packed(out, DType::F32);
    runGemm(packed(a, DType::F32), packed(b, DType::F32), out32, alpha, beta);
    loops::copyInto(out, out32);
}

void runGemm(const Tensor &a, const Tensor &b, const Tensor &out, double alpha, double beta)
{
    if (out.numel() == 0)
        return;
    if (a.size(-1) == 0)
        return scaleInPlace(out, beta);
    switch (out.dtype()) {
    case DType::F32: return blasGemm<float>(a, b, out, alpha, beta);
    case DType::F64: return blasGemm<double>(a, b, out, alpha, beta);
    case DType::F16:
    case DType::BF16: return gemmViaF32(a, b, out, alpha, beta);
    case DType::I32: return loopGemm<int32_t>(a, b, out, alpha, beta);
    case DType::I64: return loopGemm<int64_t>(a, b, out, alpha, beta);
    case DType::Bool: break;
    }
    throw Error("GEMM: not supported for bool tensors");
}

// --- cost ----------------------------------------------------------------------

// 2*M*N*K flops: every output element takes K multiply-adds.
CostFn gemmCost(std::function<int64_t(const Args &)> kOf)
{
    return [kOf](const Args &args, std::span<const Tensor> outs) {
        OpCost c = ioBytes(args, outs);
        for (const Tensor &t : outs)
            c.flops += 2.0 * static_cast<double>(t.numel()) * static_cast<double>(kOf(args));
        return c;
    };
}

// --- mm, bmm, addmm ----------------------------------------------------------------

std::vector<TensorSpec> mmShape(const Args &args)
{
    const Tensor &a = arg(args, 0), &b = arg(args, 1);
    checkRank("aten.mm", a, b, 2);
    if (a.size(1) != b.size(0))
        cannotMultiply("aten.mm", a, b);
    checkSameDType("aten.mm", a, b);
    return {{{a.size(0), b.size(1)}, a.dtype()}};
}

std::vector<TensorSpec> bmmShape(const Args &args)
{
    const Tensor &a = arg(args, 0), &b = arg(args, 1);
    checkRank("aten.bmm", a, b, 3);
    if (a.size(0) != b.size(0))
        throw Error("aten.bmm: batch sizes of " + shapeStr(a.sizes()) + " and " + shapeStr(b.sizes()) + " differ");
    if (a.size(2) != b.size(1))
        cannotMultiply("aten.bmm", a, b);
    checkSameDType("aten.bmm", a, b);
    return {{{a.size(0), a.size(1), b.size(2)}, a.dtype()}};
}

std::vector<TensorSpec> addmmShape(const Args &args)
{
    const Tensor &self = arg(args, 0), &a = arg(args, 1), &b = arg(args, 2);
    checkRank("aten.addmm", a, b, 2);
    if (a.size(1) != b.size(0))
        cannotMultiply("aten.addmm", a, b);
    checkSameDType("aten.addmm", a, b);
    checkSameDType("aten.addmm", self, a);
    const Shape out{a.size(0), b.size(1)};
    if (!broadcastsTo(self.sizes(), out))
        throw Error("aten.addmm: self of shape " + shapeStr(self.sizes()) + " does not broadcast to the product's "
                    + shapeStr(out));
    checkIntegralFactors("aten.addmm", a.dtype(), {args[3].toDouble(), args[4].toDouble()});
    return {{out, a.dtype()}};
}

void addmmKernel(const Args &args, std::span<Tensor> outs)
{
    const double beta = args[3].toDouble(), alpha = args[4].toDouble();
    if (beta != 0)
        loops::copyInto(outs[0], broadcastTo(arg(args, 0), outs[0].sizes()));
    runGemm(arg(args, 1), arg(args, 2), outs[0], alpha, beta);
}

// A number operand of the dtype's category, so mul keeps the tensor's dtype.
Value factor(double f, DType t)
{
    return isIntegral(t) ? Value(static_cast<int64_t>(f)) : Value(f);
}

// beta * self + alpha * (mat1 @ mat2)
TensorList addmmDecomposition(const Args &args)
{
    const Tensor &self = arg(args, 0);
    const double beta = args[3].toDouble(), alpha = args[4].toDouble();
    Tensor product = ops::mm(arg(args, 1), arg(args, 2));
    if (alpha != 1)
        product = ops::mul(product, factor(alpha, product.dtype()));
    if (beta == 0) // PyTorch ignores self then, NaNs included
        return {product};
    const Tensor scaled = beta == 1 ? self : ops::mul(self, factor(beta, self.dtype()));
    return {ops::add(scaled, product)};
}

// --- matmul --------------------------------------------------------------------------

// NumPy matmul geometry: 1-D operands become [1,K] / [K,1], batch dims
// broadcast, and the dims a 1-D operand gained are dropped from the result.
struct MatmulShape {
    Shape batch;
    int64_t m = 1, k = 1, n = 1;
    Shape out;
};

bool batchesBroadcast(const Shape &a, const Shape &b)
{
    for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
        const int64_t x = a[a.size() - i], y = b[b.size() - i];
        if (x != y && x != 1 && y != 1)
            return false;
    }
    return true;
}

Shape leadingDims(const Tensor &t)
{
    return t.dim() > 2 ? batchOf(t) : Shape{};
}

MatmulShape matmulShape(const Tensor &a, const Tensor &b)
{
    if (a.dim() == 0 || b.dim() == 0)
        throw Error("aten.matmul: both operands need at least one dimension, got " + shapeStr(a.sizes()) + " and "
                    + shapeStr(b.sizes()));
    MatmulShape s;
    s.k = a.size(-1);
    s.m = a.dim() == 1 ? 1 : a.size(-2);
    s.n = b.dim() == 1 ? 1 : b.size(-1);
    const Shape ba = leadingDims(a), bb = leadingDims(b);
    if ((b.dim() == 1 ? b.size(0) : b.size(-2)) != s.k || !batchesBroadcast(ba, bb))
        cannotMultiply("aten.matmul", a, b);
    s.batch = loops::broadcastShapes("aten.matmul", ba, bb);
    s.out = s.batch;
    if (a.dim() > 1)
        s.out.push_back(s.m);
    if (b.dim() > 1)
        s.out.push_back(s.n);
    return s;
}

std::vector<TensorSpec> matmulShapeRule(const Args &args)
{
    const Tensor &a = arg(args, 0), &b = arg(args, 1);
    const MatmulShape s = matmulShape(a, b);
    checkSameDType("aten.matmul", a, b);
    return {{s.out, a.dtype()}};
}

// A 1-D operand as a [1,K] row (left) or a [K,1] column (right); no copy.
Tensor asMatrix(const Tensor &t, bool left)
{
    if (t.dim() != 1)
        return t;
    return left ? t.alias({1, t.size(0)}, {0, t.stride(0)}, t.offset())
                : t.alias({t.size(0), 1}, {t.stride(0), 0}, t.offset());
}

void matmulKernel(const Args &args, std::span<Tensor> outs)
{
    const Tensor &a = arg(args, 0), &b = arg(args, 1);
    const MatmulShape s = matmulShape(a, b);
    const Shape full = withMatrix(s.batch, s.m, s.n);
    runGemm(asMatrix(a, true), asMatrix(b, false), outs[0].alias(full, contiguousStrides(full), outs[0].offset()),
            1, 0);
}

Tensor bmmBroadcast(const Tensor &a, const Tensor &b, const MatmulShape &s)
{
    const int64_t count = numelOf(s.batch);
    const Tensor a3 = ops::reshape(ops::expand(a, withMatrix(s.batch, s.m, s.k)), {count, s.m, s.k});
    const Tensor b3 = ops::reshape(ops::expand(b, withMatrix(s.batch, s.k, s.n)), {count, s.k, s.n});
    return ops::bmm(a3, b3);
}

// Equal batches of two or more dims (attention's [batch, heads]): one GEMM
// per matrix with the operands' own strides, where bmm would need them
// reshaped to three dims, which copies transposed heads.
bool matmulKeepsWhole(const Args &args)
{
    const Tensor &a = arg(args, 0), &b = arg(args, 1);
    return a.dim() >= 4 && b.dim() == a.dim() && batchOf(a) == batchOf(b);
}

TensorList matmulDecomposition(const Args &args)
{
    const Tensor &a0 = arg(args, 0), &b0 = arg(args, 1);
    const MatmulShape s = matmulShape(a0, b0);
    const Tensor a = a0.dim() == 1 ? ops::unsqueeze(a0, 0) : a0;
    const Tensor b = b0.dim() == 1 ? ops::unsqueeze(b0, 1) : b0;
    Tensor product;
    if (a.dim() == 2 && b.dim() == 2)
        product = ops::mm(a, b);
    else if (b.dim() == 2) // [..., M, K] x [K, N]: the batch folds into the rows
        product = ops::mm(ops::reshape(a, {numelOf(s.batch) * s.m, s.k}), b);
    else
        product = bmmBroadcast(a, b, s);
    return {ops::reshape(product, s.out)};
}

// --- linear --------------------------------------------------------------------------

std::vector<TensorSpec> linearShape(const Args &args)
{
    const Tensor &x = arg(args, 0), &w = arg(args, 1);
    if (x.dim() < 1 || w.dim() != 2 || x.size(-1) != w.size(1))
        throw Error("aten.linear: input " + shapeStr(x.sizes()) + " and weight " + shapeStr(w.sizes())
                    + " cannot be multiplied (weight is [out_features, in_features])");
    checkSameDType("aten.linear", x, w);
    Shape out(x.sizes().begin(), x.sizes().end() - 1);
    out.push_back(w.size(0));
    if (const std::optional<Tensor> bias = args[2].toOptionalTensor()) {
        if (!broadcastsTo(bias->sizes(), {w.size(0)}))
            throw Error("aten.linear: bias " + shapeStr(bias->sizes()) + " does not match weight "
                        + shapeStr(w.sizes()));
        checkSameDType("aten.linear", x, *bias);
    }
    return {{out, x.dtype()}};
}

// One GEMM when x's leading dims collapse into rows (else one per batch, still
// without copies): the weight is read transposed in place, and the bias is
// written into the output first and kept by beta = 1.
void linearKernel(const Args &args, std::span<Tensor> outs)
{
    const Tensor &w = arg(args, 1);
    const Tensor x = asMatrix(arg(args, 0), true);
    const std::optional<Tensor> bias = args[2].toOptionalTensor();
    const Shape full = withMatrix(batchOf(x), x.size(-2), w.size(0));
    const Tensor out = outs[0].alias(full, contiguousStrides(full), outs[0].offset());
    const Tensor wt = w.alias({w.size(1), w.size(0)}, {w.stride(1), w.stride(0)}, w.offset());
    if (bias && out.numel() > 0)
        loops::copyInto(out, broadcastTo(*bias, full));
    runGemm(x, wt, out, 1, bias ? 1 : 0);
}

TensorList linearDecomposition(const Args &args)
{
    const Tensor product = ops::matmul(arg(args, 0), ops::transpose(arg(args, 1), 0, 1));
    const std::optional<Tensor> bias = args[2].toOptionalTensor();
    return {bias ? ops::add(product, *bias) : product};
}

void addGemmOp(OpRegistry &r, const char *schema, OpKind kind, ShapeFn shape, KernelFn cpu, DecompFn decompose,
               std::function<int64_t(const Args &)> kOf, std::function<bool(const Args &)> keepWhole = {})
{
    OpDef def;
    def.kind = kind;
    def.shape = std::move(shape);
    def.cpu = std::move(cpu);
    def.decompose = std::move(decompose);
    def.keepWhole = std::move(keepWhole);
    def.cost = gemmCost(std::move(kOf));
    r.add(schema, std::move(def));
}

void gemmKernel(const Args &args, std::span<Tensor> outs)
{
    runGemm(arg(args, 0), arg(args, 1), outs[0], 1, 0);
}

int64_t kOfFirst(const Args &args)
{
    return arg(args, 0).size(-1);
}

} // namespace

void registerLinalgOps(OpRegistry &r)
{
    addGemmOp(r, "aten.mm(Tensor self, Tensor mat2) -> Tensor", OpKind::Matmul, mmShape, gemmKernel, nullptr,
              kOfFirst);
    addGemmOp(r, "aten.bmm(Tensor self, Tensor mat2) -> Tensor", OpKind::Matmul, bmmShape, gemmKernel, nullptr,
              kOfFirst);
    addGemmOp(r, "aten.addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
              OpKind::Matmul, addmmShape, addmmKernel, addmmDecomposition,
              [](const Args &a) { return arg(a, 1).size(-1); });
    addGemmOp(r, "aten.matmul(Tensor self, Tensor other) -> Tensor", OpKind::Composite, matmulShapeRule,
              matmulKernel, matmulDecomposition, kOfFirst, matmulKeepsWhole);
    addGemmOp(r, "aten.linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", OpKind::Composite,
              linearShape, linearKernel, linearDecomposition, kOfFirst);
}

namespace ops {

Tensor matmul(const Tensor &a, const Tensor &b) { return callOp1("aten.matmul", {a, b}); }
Tensor mm(const Tensor &a, const Tensor &b) { return callOp1("aten.mm", {a, b}); }
Tensor bmm(const Tensor &a, const Tensor &b) { return callOp1("aten.bmm", {a, b}); }
Tensor linear(const Tensor &x, const Tensor &weight, const std::optional<Tensor> &bias)
{
    return callOp1("aten.linear", {x, weight, Value(bias)});
}
Tensor addmm(const Tensor &self, const Tensor &a, const Tensor &b, double beta, double alpha)
{
    return callOp1("aten.addmm", {self, a, b, beta, alpha});
}

} // namespace ops

namespace blas {
namespace {

template <typename T>
void gemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha, const T *a, int64_t lda,
                  const T *b, int64_t ldb, T beta, T *c, int64_t ldc)
{
    numThreads(); // starts the pool, which tells BLAS how many threads to use
    blasCall(transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, blasInt(m), blasInt(n),
             blasInt(k), alpha, a, blasInt(lda), b, blasInt(ldb), beta, c, blasInt(ldc));
}

} // namespace

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    gemmRowMajor(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
          const double *b, int64_t ldb, double beta, double *c, int64_t ldc)
{
    gemmRowMajor(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

} // namespace blas
} // namespace fusescope
