// Attention: aten.scaled_dot_product_attention (eager runs one fused kernel,
// the compiler the decomposition) and fusescope.attention, the form the
// compiler's simplify stage gives a decomposed attention back. The kernel
// runs (batch, head) blocks, or blocks of query rows, as tasks on the pool:
// scores = scale * q k^T by BLAS into a per-task buffer, the masked softmax
// of each row in place, then scores v by BLAS into the output.
#include "core/ops/attention.h"

#include "core/ops/builtin.h"
#include "core/ops/conv1x1.h"
#include "core/ops/functional.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/ops/rowmath.h"
#include "core/ops/scalarmath.h"
#include "core/runtime/threadpool.h"

#include <cblas.h>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define FUSESCOPE_ATTN_AVX512 1
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusescope {
namespace {

using namespace rowmath;
using loops::contiguousAs;

const char *const kSdpa = "aten.scaled_dot_product_attention";

const Tensor &arg(const Args &a, size_t i)
{
    return a[i].toTensor();
}

std::optional<Tensor> optArg(const Args &a, size_t i)
{
    return a[i].toOptionalTensor();
}

// q [..., L, E], k [..., S, E], v [..., S, Ev] -> out [batch..., L, Ev], the
// batch dims of q, k and v broadcast together.
struct AttnShape {
    Shape batch;
    int64_t L = 0, S = 0, E = 0, Ev = 0;

    Shape withInner(int64_t rows, int64_t cols) const
    {
        Shape s = batch;
        s.push_back(rows);
        s.push_back(cols);
        return s;
    }
};

Shape batchDims(const Tensor &t)
{
    return Shape(t.sizes().begin(), t.sizes().end() - 2);
}

std::string qkvShapes(const Tensor &q, const Tensor &k, const Tensor &v)
{
    return "query " + shapeStr(q.sizes()) + ", key " + shapeStr(k.sizes()) + " and value " + shapeStr(v.sizes());
}

void checkQkv(const char *op, const Tensor &q, const Tensor &k, const Tensor &v)
{
    const std::string prefix = std::string(op) + ": ";
    if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
        throw Error(prefix + "need at least 2 dims each, got " + qkvShapes(q, k, v));
    requireFloating(op, "query", q);
    if (k.dtype() != q.dtype() || v.dtype() != q.dtype())
        throw Error(prefix + "query, key and value must have the same dtype, got " + dtypeName(q.dtype()) + ", "
                    + dtypeName(k.dtype()) + " and " + dtypeName(v.dtype()));
    if (k.size(-1) != q.size(-1))
        throw Error(prefix + "query and key must have the same embedding size, got " + qkvShapes(q, k, v));
    if (v.size(-2) != k.size(-2))
        throw Error(prefix + "key and value must have the same sequence length, got " + qkvShapes(q, k, v));
}

bool broadcastsTo(const Shape &from, const Shape &to)
{
    if (from.size() > to.size())
        return false;
    const size_t lead = to.size() - from.size();
    for (size_t i = 0; i < from.size(); ++i) {
        if (from[i] != 1 && from[i] != to[lead + i])
            return false;
    }
    return true;
}

void checkMask(const std::optional<Tensor> &mask, bool causal, const AttnShape &s)
{
    if (!mask)
        return;
    const std::string prefix = std::string(kSdpa) + ": ";
    if (causal)
        throw Error(prefix + "attn_mask and is_causal cannot both be set");
    if (mask->dtype() != DType::Bool && !isFloating(mask->dtype()))
        throw Error(prefix + "attn_mask must be bool or floating-point, got " + dtypeName(mask->dtype()));
    const Shape target = s.withInner(s.L, s.S);
    if (!broadcastsTo(mask->sizes(), target))
        throw Error(prefix + "attn_mask of shape " + shapeStr(mask->sizes()) + " does not broadcast to the scores' shape "
                    + shapeStr(target));
}

AttnShape qkvShape(const char *op, const Args &a)
{
    const Tensor &q = arg(a, 0), &k = arg(a, 1), &v = arg(a, 2);
    checkQkv(op, q, k, v);
    AttnShape s;
    try {
        s.batch = loops::broadcastAll(op, {batchDims(q), batchDims(k), batchDims(v)});
    } catch (const Error &) {
        throw Error(std::string(op) + ": the batch dims of " + qkvShapes(q, k, v) + " cannot be broadcast together");
    }
    s.L = q.size(-2);
    s.S = k.size(-2);
    s.E = q.size(-1);
    s.Ev = v.size(-1);
    return s;
}

AttnShape attnShape(const Args &a)
{
    const AttnShape s = qkvShape(kSdpa, a);
    checkMask(optArg(a, 3), a[4].toBool(), s);
    return s;
}

// fusescope.attention(query, key, value, masked, fill, scale): the compiler's
// form of a decomposed attention. `masked` is a bool tensor broadcasting to
// the scores; where it holds, the score becomes `fill`.
const char *const kFusedAttention = "fusescope.attention";

// fusescope.attention's `transposed`: the result with the heads after the rows.
bool transposedResult(const Args &a)
{
    return a.size() > 6 && a[6].toBool();
}

AttnShape fusedAttnShape(const Args &a)
{
    const AttnShape s = qkvShape(kFusedAttention, a);
    if (const std::optional<Tensor> masked = optArg(a, 3)) {
        const Shape target = s.withInner(s.L, s.S);
        if (masked->dtype() != DType::Bool || !broadcastsTo(masked->sizes(), target))
            throw Error(std::string(kFusedAttention) + ": masked must be a bool tensor broadcasting to the scores' shape "
                        + shapeStr(target) + ", got " + dtypeName(masked->dtype()) + " " + shapeStr(masked->sizes()));
    }
    if (transposedResult(a) && s.batch.empty())
        throw Error(std::string(kFusedAttention) + ": a transposed result needs a batch dim to move after the rows, "
                    "got the 2-d " + qkvShapes(arg(a, 0), arg(a, 1), arg(a, 2)));
    return s;
}

// fusescope.attention's result shape: [..., L, Ev], or with `transposed`
// [..., L, H, Ev], H the last batch dim (the heads, merged next).
Shape fusedResultShape(const Args &a, const AttnShape &s)
{
    Shape out = s.withInner(s.L, s.Ev);
    if (transposedResult(a))
        std::swap(out[out.size() - 3], out[out.size() - 2]);
    return out;
}

double attnScale(const Args &a, int64_t e)
{
    return a[5].isNone() ? 1.0 / std::sqrt(static_cast<double>(e)) : a[5].toDouble();
}

// Element offsets of each batch block, walking `batch` in row-major order
// with the given per-dim strides.
std::vector<int64_t> blockOffsets(const Shape &batch, const Shape &strides)
{
    std::vector<int64_t> out(static_cast<size_t>(numelOf(batch)));
    Shape index(batch.size(), 0);
    int64_t offset = 0;
    for (int64_t &o : out) {
        o = offset;
        for (size_t d = batch.size(); d-- > 0;) {
            offset += strides[d];
            if (++index[d] < batch[d])
                break;
            offset -= strides[d] * batch[d];
            index[d] = 0;
        }
    }
    return out;
}

// One operand of a batched GEMM: a [rows, cols] matrix per batch block,
// read in place when either inner dim is unit-stride (BLAS takes both
// orders), otherwise from a contiguous copy.
template <typename C>
struct MatrixOperand {
    Tensor storage;
    const C *data = nullptr;
    std::vector<int64_t> offsets;
    bool colMajor = false;
    int64_t ld = 1;

    // Zero-size operands have no data: pointer arithmetic on null is undefined.
    const C *block(int64_t b) const { return data ? data + offsets[static_cast<size_t>(b)] : nullptr; }
};

bool rowMajorLd(int64_t rows, int64_t cols, int64_t sRow, int64_t sCol, int64_t &ld)
{
    if ((cols > 1 && sCol != 1) || (rows > 1 && sRow < std::max<int64_t>(cols, 1)))
        return false;
    ld = rows > 1 ? sRow : std::max<int64_t>(cols, 1);
    return true;
}

template <typename C>
MatrixOperand<C> matrixOperand(const Tensor &t, const AttnShape &s)
{
    MatrixOperand<C> m;
    const int64_t rows = t.size(-2), cols = t.size(-1);
    m.storage = t.dtype() == DTypeOf<C>::value ? t : contiguousAs(t, DTypeOf<C>::value);
    bool ok = rowMajorLd(rows, cols, m.storage.stride(-2), m.storage.stride(-1), m.ld);
    if (!ok) {
        m.colMajor = rowMajorLd(cols, rows, m.storage.stride(-1), m.storage.stride(-2), m.ld);
        ok = m.colMajor;
    }
    if (!ok) { // neither order fits, so t is not contiguous and this copies
        m.storage = contiguousAs(m.storage, DTypeOf<C>::value);
        m.ld = std::max<int64_t>(cols, 1);
    }
    m.data = m.storage.template data<C>();
    m.offsets = blockOffsets(s.batch, loops::broadcastStrides(m.storage, s.withInner(rows, cols)));
    return m;
}

// A mask kept at its own shape and read through broadcast strides: additive
// scores of type C, or the bool positions whose score becomes a fill value.
template <typename E>
struct ScoreMask {
    Tensor storage;
    const E *data = nullptr;
    std::vector<int64_t> offsets;
    int64_t rowStride = 0, colStride = 0;

    const E *row(int64_t b, int64_t i) const { return data + offsets[static_cast<size_t>(b)] + i * rowStride; }
};

template <typename E>
ScoreMask<E> scoreMask(Tensor storage, const AttnShape &s)
{
    ScoreMask<E> m;
    m.storage = std::move(storage);
    m.data = m.storage.template data<E>();
    const Shape strides = loops::broadcastStrides(m.storage, s.withInner(s.L, s.S));
    m.offsets = blockOffsets(s.batch, strides);
    m.rowStride = strides[s.batch.size()];
    m.colStride = strides[s.batch.size() + 1];
    return m;
}

// bool: 0 to attend, -inf not.
template <typename C>
ScoreMask<C> additiveMask(const Tensor &mask, const AttnShape &s)
{
    if (mask.dtype() != DType::Bool)
        return scoreMask<C>(contiguousAs(mask, DTypeOf<C>::value), s);
    Tensor scores = Tensor::empty(mask.sizes(), DTypeOf<C>::value, mask.device());
    loops::pointwise<C, bool, 1>(scores, {mask}, [](bool keep) { return keep ? C(0) : -std::numeric_limits<C>::infinity(); });
    return scoreMask<C>(scores, s);
}

inline void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                 int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc)
{
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0f, c, static_cast<blasint>(ldc));
}

inline void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
                 int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc)
{
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0, c, static_cast<blasint>(ldc));
}

template <typename C>
struct AttnPlan {
    AttnShape shape;
    C scale = 1;
    bool causal = false;
    MatrixOperand<C> q, k, v;
    std::optional<ScoreMask<C>> mask;
    std::optional<ScoreMask<bool>> masked; // fusescope.attention: score = fill where it holds
    C fill = 0;
    // aten.scaled_dot_product_attention gives a row with nothing to attend to
    // zero weights (PyTorch's _safe_softmax); a decomposed softmax gives NaN.
    bool safe = true;
    C *out = nullptr;
    bool transposed = false; // out is [..., L, H, Ev]: a block's rows lie H * Ev apart

    C *outRows(int64_t b, int64_t i0) const
    {
        if (!transposed)
            return out + (b * shape.L + i0) * shape.Ev;
        const int64_t heads = shape.batch.back();
        return out + ((b / heads * shape.L + i0) * heads + b % heads) * shape.Ev;
    }
    int64_t outLd() const { return transposed ? shape.batch.back() * shape.Ev : shape.Ev; }

    // Keys a row cannot see get weight exactly 0: the causal ones, and those
    // `masked` fills with -inf. Columns past the last visible one need no work.
    bool fillHides() const { return masked && fill == -std::numeric_limits<C>::infinity(); }
    bool hidesKeys() const { return causal || fillHides(); }
};

// What one row of scores goes through before its softmax.
template <typename C>
struct RowMasks {
    const C *add = nullptr;
    int64_t addStride = 0;
    const bool *masked = nullptr;
    int64_t maskedStride = 0;
    C fill = 0;
    bool safe = true;
    C scale = 1; // not yet applied by the product that wrote the scores
};

// Softmax of scores[0, valid) in place; the columns a causal mask hides and
// rows with nothing left to attend to (all -inf) become 0, as PyTorch's
// _safe_softmax.
template <typename C>
void attnSoftmaxRow(C *row, int64_t n, int64_t valid, const RowMasks<C> &masks)
{
    if (masks.scale != C(1)) {
        for (int64_t j = 0; j < valid; ++j)
            row[j] *= masks.scale;
    }
    if (masks.masked && masks.maskedStride == 1) {
        // As bytes: GCC has no vector type for bool, and the strided loop
        // below, element by element, took a fifth of an attention's time.
        const auto *hidden = reinterpret_cast<const uint8_t *>(masks.masked);
        for (int64_t j = 0; j < valid; ++j)
            row[j] = hidden[j] ? masks.fill : row[j];
    } else if (masks.masked) {
        for (int64_t j = 0; j < valid; ++j)
            row[j] = masks.masked[j * masks.maskedStride] ? masks.fill : row[j];
    }
    if (masks.add) {
        for (int64_t j = 0; j < valid; ++j)
            row[j] += masks.add[j * masks.addStride];
    }
    const C m = rowMax(row, valid);
    if (masks.safe && (valid == 0 || m == -std::numeric_limits<C>::infinity())) {
        std::fill(row, row + n, C(0));
        return;
    }
    expNormalize(row, row, valid, m);
    std::fill(row + valid, row + n, C(0));
}

// The keys rows [i0, i1) attend to at all, from the first: past the last
// column that a `masked` filling with -inf leaves open in some row, every
// weight is exactly 0, so neither GEMM computes those columns (a causal mask
// given as a tensor halves the work). With none open, all are kept: those
// rows' softmax is NaN, as the decomposed graph's.
template <typename C>
int64_t openColumns(const AttnPlan<C> &p, int64_t b, int64_t i0, int64_t i1)
{
    const int64_t all = p.causal ? std::min(p.shape.S, i1) : p.shape.S;
    if (!p.fillHides())
        return all;
    int64_t open = 0;
    for (int64_t i = i0; i < i1; ++i) {
        const bool *row = p.masked->row(b, i);
        for (int64_t j = all; j-- > open;) {
            if (!row[j * p.masked->colStride]) {
                open = j + 1;
                break;
            }
        }
    }
    return open ? open : all;
}

// keys[e * cols + j] = k[j * ld + e], e < E, j < cols. Sixteen rows of k at
// a time are gathered into one row of keys: element by element, each store a
// row of keys from the last (512 bytes for the encoder's 128 keys), the
// transpose cost as much as the product that reads it.
#ifdef FUSESCOPE_ATTN_AVX512
__attribute__((target("avx512f"))) void transposeKeys(const float *k, int64_t ld, int64_t cols, int64_t E, float *keys)
{
    int64_t j = 0;
    if (16 * ld <= std::numeric_limits<int32_t>::max()) {
        const __m512i rows = _mm512_mullo_epi32(
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(int32_t(ld)));
        for (; j + 16 <= cols; j += 16) {
            for (int64_t e = 0; e < E; ++e)
                _mm512_storeu_ps(keys + e * cols + j,
                                 _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, rows, k + j * ld + e, 4));
        }
    }
    for (; j < cols; ++j)
        for (int64_t e = 0; e < E; ++e)
            keys[e * cols + j] = k[j * ld + e];
}
#else
void transposeKeys(const float *k, int64_t ld, int64_t cols, int64_t E, float *keys)
{
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t e = 0; e < E; ++e)
            keys[e * cols + j] = k[j * ld + e];
}
#endif

// Attention's products are small (the encoder's 128 x 128 x 64 per head),
// and BLAS packs both operands on every call: single-threaded OpenBLAS ran
// the encoder's pair of products per head at 68 GFLOP/s. conv1x1's register
// blocks read them in place. They take f32, row-major left operands and at
// least 32 output columns, on CPUs with AVX-512, and run on the calling
// thread: only for tasks on the pool (a whole block, or a chunk of its
// rows), not where a block's products are meant to use every thread. q k^T
// needs k^T row-major: a row-major k is transposed into `keys` first.
//
// scores[r][j] = sum over e of q[r][e] k[j][e], unscaled, for the rows of q given and j < cols;
// false, with nothing written, where the register blocks do not take the products.
bool scoresInRegisterBlocks(const AttnPlan<float> &p, int64_t b, const float *q, int64_t rows, int64_t cols,
                            float *scores, float *keys)
{
    const AttnShape &s = p.shape;
    if ((numThreads() > 1 && !inParallelRegion()) || p.q.colMajor || p.v.colMajor
        || !conv1x1::fits({rows, s.E, cols, cols, cols, {}, 0})
        || !conv1x1::fits({rows, cols, s.Ev, s.Ev, s.Ev, {}, 0}))
        return false;
    const float *kT = p.k.block(b);
    int64_t ldk = p.k.ld;
    if (!p.k.colMajor) {
        transposeKeys(kT, p.k.ld, cols, s.E, keys);
        kT = keys, ldk = cols;
    }
    conv1x1::gemm({rows, s.E, cols, ldk, s.S, {}, p.q.ld}, q, kT, nullptr, scores);
    return true;
}

// Query rows [i0, i1) of one (batch, head) block: scores = scale * q k^T,
// masked softmax, scores v. Causal rows never see keys past i1, so those
// columns are not computed at all. `keys` holds E x S values.
template <typename C>
void attendRows(const AttnPlan<C> &p, int64_t b, int64_t i0, int64_t i1, C *scores, C *keys)
{
    const AttnShape &s = p.shape;
    const int64_t rows = i1 - i0, cols = openColumns(p, b, i0, i1);
    const C *q = p.q.block(b) + (p.q.colMajor ? i0 : i0 * p.q.ld);
    bool blocks = false;
    if constexpr (std::is_same_v<C, float>)
        blocks = scoresInRegisterBlocks(p, b, q, rows, cols, scores, keys);
    if (!blocks && s.E == 0) {
        std::fill(scores, scores + rows * s.S, C(0));
    } else if (!blocks) { // k^T: a row-major k is read transposed, a column-major one as is
        gemm(p.q.colMajor, !p.k.colMajor, rows, cols, s.E, p.scale, q, p.q.ld, p.k.block(b), p.k.ld, scores, s.S);
    } // else unscaled: the softmax rows below apply the scale
    // The rows' softmax is compute-bound (the scores sit in the cache): with
    // AVX-512 where the CPU has it, as the contiguous pointwise loops.
    parallelFor(0, rows, grainFor(cols), [&](int64_t begin, int64_t end) {
        loops::runVectorized([&] {
            for (int64_t r = begin; r < end; ++r) {
                const int64_t i = i0 + r;
                const int64_t valid = p.causal ? std::min(i + 1, s.S) : cols;
                RowMasks<C> masks;
                if (p.mask) {
                    masks.add = p.mask->row(b, i);
                    masks.addStride = p.mask->colStride;
                }
                if (p.masked) {
                    masks.masked = p.masked->row(b, i);
                    masks.maskedStride = p.masked->colStride;
                    masks.fill = p.fill;
                }
                masks.safe = p.safe;
                masks.scale = blocks ? p.scale : C(1);
                attnSoftmaxRow(scores + r * s.S, cols, valid, masks);
            }
        });
    });
    C *out = p.outRows(b, i0);
    if constexpr (std::is_same_v<C, float>) {
        if (blocks)
            return conv1x1::gemm({rows, cols, s.Ev, p.v.ld, p.outLd(), {}, s.S}, scores, p.v.block(b), nullptr, out);
    }
    gemm(false, p.v.colMajor, rows, s.Ev, cols, C(1), scores, s.S, p.v.block(b), p.v.ld, out, p.outLd());
}

// OpenBLAS runs a GEMM of up to this many multiply-adds on the calling
// thread alone, so tasks this small can run side by side on the pool
// without oversubscribing the cores (BLAS is never threaded inside it).
constexpr int64_t kSingleThreadGemm = 65536 * 4;
// Fewer query rows per GEMM than this waste most of what BLAS is good at.
constexpr int64_t kMinRowsPerTask = 16;
// A whole block's scores, at most (1 MiB in f32: within a core's L2).
constexpr int64_t kMaxBlockScores = 512 * 512;

template <typename C>
void runAttention(const AttnPlan<C> &p)
{
    const AttnShape &s = p.shape;
    const int64_t blocks = numelOf(s.batch);
    const int64_t macsPerRow = std::max<int64_t>(1, s.S * std::max(s.E, s.Ev));
    const int64_t rowsPerTask = std::clamp<int64_t>(kSingleThreadGemm / macsPerRow, 1, s.L);
    if (rowsPerTask < std::min(s.L, kMinRowsPerTask)) {
        // Long keys: whole blocks one after the other, BLAS and the softmax rows use all threads.
        std::vector<C> scores(static_cast<size_t>(s.L * s.S)), keys(static_cast<size_t>(s.E * s.S));
        for (int64_t b = 0; b < blocks; ++b)
            attendRows(p, b, 0, s.L, scores.data(), keys.data());
        return;
    }
    // Tasks of (block, row chunk) on the pool, each with its single-threaded
    // GEMMs. With blocks enough for every thread, a task is a whole block, so
    // its keys and values are packed once, not once per row chunk: the
    // encoder's 32 blocks of 128 x 128 x 64 ran as 128 tasks of 32 rows.
    // Where whole columns may be skipped (a causal mask, or one filling with
    // -inf), a quarter of the rows: their first blocks attend to fewer keys.
    const bool wholeBlocks = blocks >= 2 * numThreads() && s.L * s.S <= kMaxBlockScores;
    const int64_t rows = !wholeBlocks ? rowsPerTask : p.hidesKeys() ? std::max(rowsPerTask, s.L / 4) : s.L;
    const int64_t chunks = (s.L + rows - 1) / rows;
    const SerialBlasScope serialBlas;
    parallelFor(0, blocks * chunks, 1, [&](int64_t begin, int64_t end) {
        std::vector<C> scores(static_cast<size_t>(rows * s.S)), keys(static_cast<size_t>(s.E * s.S));
        for (int64_t t = begin; t < end; ++t) {
            const int64_t i0 = (t % chunks) * rows;
            attendRows(p, t / chunks, i0, std::min(s.L, i0 + rows), scores.data(), keys.data());
        }
    });
}

template <typename C>
void attentionInType(const Args &a, const AttnShape &s, const Tensor &out, bool fused)
{
    AttnPlan<C> p;
    p.shape = s;
    p.q = matrixOperand<C>(arg(a, 0), s);
    p.k = matrixOperand<C>(arg(a, 1), s);
    p.v = matrixOperand<C>(arg(a, 2), s);
    if (fused) {
        p.scale = C(a[5].toDouble());
        if (const auto masked = optArg(a, 3)) {
            p.masked = scoreMask<bool>(*masked, s);
            p.fill = C(a[4].toDouble());
        }
        p.safe = false;
        p.transposed = transposedResult(a);
    } else {
        p.scale = C(attnScale(a, s.E));
        p.causal = a[4].toBool();
        if (const auto mask = optArg(a, 3))
            p.mask = additiveMask<C>(*mask, s);
    }
    p.out = out.data<C>();
    runAttention(p);
}

// `fused`: fusescope.attention's arguments, else aten.scaled_dot_product_attention's.
void attentionKernel(const Args &a, const Tensor &out, bool fused)
{
    if (out.numel() == 0)
        return;
    const AttnShape s = fused ? fusedAttnShape(a) : attnShape(a);
    if (s.S == 0) { // nothing to attend to: _safe_softmax gives zero weights
        visitFloating(out.dtype(), [&](auto tag) {
            using T = decltype(tag);
            std::fill(out.data<T>(), out.data<T>() + out.numel(), T(0.0f));
        });
        return;
    }
    const DType c = computeDType(out.dtype());
    const Tensor o = out.dtype() == c ? out : Tensor::empty(out.sizes(), c, out.device());
    if (c == DType::F64)
        attentionInType<double>(a, s, o, fused);
    else
        attentionInType<float>(a, s, o, fused);
    if (o.dtype() != out.dtype())
        loops::copyInto(out, o);
}

// Scores expanded to the mask's batch dims where the mask has more of them
// than q and k (v's batch dims can add some too).
Tensor expandToMask(const Tensor &scores, const Tensor &mask)
{
    const Shape target = loops::broadcastShapes(kSdpa, scores.sizes(), mask.sizes());
    return target == scores.sizes() ? scores : ops::expand(scores, target);
}

Tensor causalMaskedScores(const Tensor &scores)
{
    const int64_t l = scores.size(-2), s = scores.size(-1);
    const Tensor rows = ops::view(callOp1("aten.arange", {int64_t(0), l}), {l, 1});
    const Tensor cols = callOp1("aten.arange", {int64_t(0), s});
    return ops::maskedFill(scores, ops::lt(rows, cols), -std::numeric_limits<double>::infinity());
}

TensorList attentionDecomposition(const Args &a)
{
    const Tensor q = upcast(arg(a, 0)), k = upcast(arg(a, 1)), v = upcast(arg(a, 2));
    // Scaling q rather than the scores: fewer elements when E < S, and an
    // empty q (E = 0, scale inf) gives zero scores as in the kernel and PyTorch.
    Tensor scores = ops::matmul(ops::mul(q, attnScale(a, q.size(-1))), ops::transpose(k, -2, -1));
    if (a[4].toBool())
        scores = causalMaskedScores(scores);
    const auto mask = optArg(a, 3);
    if (mask) {
        scores = expandToMask(scores, *mask);
        if (mask->dtype() == DType::Bool)
            scores = ops::maskedFill(scores, ops::logicalNot(*mask), -std::numeric_limits<double>::infinity());
        else
            scores = ops::add(scores, upcast(*mask));
    }
    Tensor weights = ops::softmax(scores, -1);
    if (mask) { // rows the mask hides completely attend to nothing, as in the kernel
        const Tensor hidden = ops::all(ops::eq(scores, -std::numeric_limits<double>::infinity()), {-1}, true);
        weights = ops::where(hidden, 0.0, weights);
    }
    return {castBack(ops::matmul(weights, v), arg(a, 0).dtype())};
}

OpCost attentionCost(const Args &a, std::span<const Tensor> outs, bool fused)
{
    OpCost c = ioBytes(a, outs);
    const AttnShape s = fused ? fusedAttnShape(a) : attnShape(a);
    const double scores = static_cast<double>(numelOf(s.batch)) * static_cast<double>(s.L * s.S);
    c.flops = scores * (2.0 * static_cast<double>(s.E + s.Ev) + 12.0);
    return c;
}

} // namespace

void registerAttentionOps(OpRegistry &r)
{
    OpDef def;
    def.kind = OpKind::Composite;
    def.shape = [](const Args &a) {
        const AttnShape s = attnShape(a);
        return std::vector<TensorSpec>{{s.withInner(s.L, s.Ev), arg(a, 0).dtype()}};
    };
    def.cpu = [](const Args &a, std::span<Tensor> outs) { attentionKernel(a, outs[0], false); };
    def.decompose = attentionDecomposition;
    def.cost = [](const Args &a, std::span<const Tensor> outs) { return attentionCost(a, outs, false); };
    r.add("aten.scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
          "bool is_causal=False, float? scale=None) -> Tensor",
          std::move(def));
    // The compiler's simplify stage forms this from a decomposed attention
    // (matmul, scale, mask, softmax, matmul): one kernel whose scores stay in
    // the cache, row block by row block, instead of two GEMMs and a softmax
    // over scores written out in full. `transposed` writes the result as
    // result.transpose(-3, -2) laid out contiguously: the heads' rows where
    // merging the heads ([B, H, L, Ev] -> [B, L, H * Ev]) finds them, so
    // that merge is a view instead of a copy.
    OpDef fused;
    fused.kind = OpKind::Opaque;
    fused.shape = [](const Args &a) {
        return std::vector<TensorSpec>{{fusedResultShape(a, fusedAttnShape(a)), arg(a, 0).dtype()}};
    };
    fused.cpu = [](const Args &a, std::span<Tensor> outs) { attentionKernel(a, outs[0], true); };
    fused.cost = [](const Args &a, std::span<const Tensor> outs) { return attentionCost(a, outs, true); };
    r.add("fusescope.attention(Tensor query, Tensor key, Tensor value, Tensor? masked=None, float fill=0.0, "
          "float scale=1.0, bool transposed=False) -> Tensor",
          std::move(fused));
}

namespace ops {

Tensor scaledDotProductAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                                 const std::optional<Tensor> &attnMask, bool isCausal, std::optional<double> scale)
{
    return callOp1(kSdpa, {q, k, v, Value(attnMask), isCausal, Value(scale)});
}

} // namespace ops
} // namespace fusescope
