// One fused kernel as C++. A kernel iterates its domain with the reduced
// dims (or, for pointwise kernels, the last dim) innermost. Per outer index
// it runs one inner loop per reduction level: loop k computes the
// reductions whose inputs are ready after k loops and stores the full-shape
// outputs ready then; reduced-shape values are computed between loops.
#include "core/compiler/codegen.h"
#include "core/compiler/fusion_rules.h"
#include "core/compiler/row_max.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace fusescope::compiler {
namespace {

const char *ctype(DType t)
{
    switch (t) {
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
    case DType::Bool: return "bool";
    default: throw Error(std::string("codegen: no C++ type for ") + dtypeName(t));
    }
}

// The element type operands are addressed as. bool has no vector type in
// GCC, so a loop that loads a bool mask (masked_fill's causal mask) did not
// vectorize at all; its bytes are read and written as uint8_t, always 0 or 1.
const char *storageType(DType t)
{
    return t == DType::Bool ? "uint8_t" : ctype(t);
}

std::string literal(double v, DType t)
{
    if (std::isnan(v))
        return std::string("static_cast<") + ctype(t) + ">(NAN)";
    if (std::isinf(v))
        return std::string("static_cast<") + ctype(t) + ">(" + (v > 0 ? "INFINITY" : "-INFINITY") + ")";
    std::ostringstream out;
    out.precision(17);
    out << v;
    return std::string("static_cast<") + ctype(t) + ">(" + out.str() + ")";
}

// How one tensor is addressed over the domain: operand, element offset, a stride per domain dim.
struct Access {
    int operand = 0;
    int64_t offset = 0;
    Shape strides;
    DType dtype = DType::F32;
    bool operator==(const Access &) const = default;
};

// Strides over the domain of a tensor with geometry (sizes, strides) read by
// a node whose own shape is `nodeShape`: broadcast into the node's shape,
// then node dims mapped onto domain dims (a dropped-dims reduced shape maps
// onto the dims that are not reduced).
Shape domainStrides(const Shape &sizes, const Shape &strides, const Shape &nodeShape, const Shape &domain,
                    const std::vector<int64_t> &reduceDims)
{
    Shape onNode(nodeShape.size(), 0);
    const size_t lead = nodeShape.size() - sizes.size();
    for (size_t d = 0; d < sizes.size(); ++d)
        onNode[lead + d] = sizes[d] == 1 ? 0 : strides[d];
    Shape out(domain.size(), 0);
    if (nodeShape.size() == domain.size())
        return onNode;
    size_t j = 0;
    for (size_t d = 0; d < domain.size(); ++d) {
        const bool reduced = std::find(reduceDims.begin(), reduceDims.end(), static_cast<int64_t>(d)) != reduceDims.end();
        if (!reduced)
            out[d] = onNode[j++];
    }
    return out;
}

struct LoopDim {
    int64_t size = 1;
    bool inner = false;
    std::vector<int> domainDims;
};

class KernelEmitter
{
public:
    KernelEmitter(const Kernel &k, std::vector<std::string> *notes)
        : m_k(k), m_notes(notes)
        , m_members(k.nodes.begin(), k.nodes.end())
    {
        for (const NodeRef &r : k.inputs)
            m_operands.push_back(r);
        for (const NodeRef &r : k.outputs)
            m_operands.push_back(r);
        m_hasCat = std::any_of(k.nodes.begin(), k.nodes.end(), [](const Node *n) { return isFusableCat(*n); });
    }

    std::optional<std::string> emit()
    {
        if (m_k.kind == KernelKind::Extern || computeNodes().empty())
            return std::nullopt;
        computeLevels();
        useRowMaxFacts();
        collectAccesses();
        buildLoops();
        planColumns();
        planTiles();
        planSplit();
        planLoops();
        planHeldRows();
        planRowPrefetches();
        return function();
    }

private:
    // What a row's max lets the code leave out (row_max.h), each said in the codegen log.
    void useRowMaxFacts()
    {
        for (const Node *n : computeNodes()) {
            if (isReductionNode(n) && countsNaN(n) && rowNaNReachesOutputs(m_k, n)) {
                m_rowNaNReachesOutputs.insert(n);
                note(n->name + " counts no NaNs: a NaN in its row reaches every output through the row's sum of exp");
            }
            if (n->target == "aten.exp" && shiftedByRowMax(m_k, n)) {
                m_expNonPositive.insert(n);
                note(n->name + " is of x minus its row's max, at most 0: no overflow clamp");
            }
        }
    }

    void note(const std::string &line) const
    {
        if (m_notes)
            m_notes->push_back(m_k.name + ": " + line);
    }

    // --- the kernel's values ------------------------------------------------------

    // Every member but the anchor and the ops a cat computes inline (catExpr).
    std::vector<const Node *> computeNodes() const
    {
        std::vector<const Node *> out;
        for (const Node *n : m_k.nodes) {
            if (n != m_k.anchor && !inlinedIntoCat(n))
                out.push_back(n);
        }
        return out;
    }

    bool inlinedIntoCat(const Node *n) const
    {
        return m_hasCat && feedsCatOnly(*n) && m_members.count(n->users().front());
    }

    bool isReductionNode(const Node *n) const
    {
        return !OpRegistry::instance().get(n->target).reduceFn.empty();
    }

    bool internal(const NodeRef &r) const
    {
        const NodeRef root = storageRoot(r);
        return m_members.count(root.node) && root.node != m_k.anchor;
    }

    bool isFull(const Node *n) const
    {
        return !isReductionNode(n) && levelOf(n->meta().sizes, m_k.domain, m_k.reduceDims) == Level::Full;
    }

    // ready[n]: loops that must finish before n can be computed.
    void computeLevels()
    {
        for (const Node *n : computeNodes()) {
            int ready = 0;
            for (const NodeRef &r : n->inputs()) {
                if (internal(r) && !inlinedIntoCat(r.node))
                    ready = std::max(ready, m_ready.at(r.node));
            }
            if (isReductionNode(n)) {
                m_loopOf[n] = ready;
                ready += 1;
            }
            m_ready[n] = ready;
            m_loops = std::max(m_loops, isReductionNode(n) ? ready : (isFull(n) ? ready + 1 : 0));
        }
        m_loops = std::max(m_loops, 1);
    }

    int operandOf(const NodeRef &root) const
    {
        for (size_t i = 0; i < m_operands.size(); ++i) {
            if (m_operands[i] == root)
                return static_cast<int>(i);
        }
        throw Error("codegen: " + root.node->name + " is not an operand of " + m_k.name);
    }

    Access accessOf(const NodeRef &r, const Shape &nodeShape) const
    {
        const NodeRef root = storageRoot(r);
        const TensorMeta &m = r.node->meta(r.index);
        Access a;
        a.operand = operandOf(root);
        a.offset = m.offset - root.node->meta(root.index).offset;
        a.strides = domainStrides(m.sizes, m.strides, nodeShape, m_k.domain, m_k.reduceDims);
        a.dtype = m.dtype;
        return a;
    }

    int addAccess(const Access &a)
    {
        for (size_t i = 0; i < m_accesses.size(); ++i) {
            if (m_accesses[i] == a)
                return static_cast<int>(i);
        }
        m_accesses.push_back(a);
        return static_cast<int>(m_accesses.size() - 1);
    }

    void collectAccesses()
    {
        std::vector<const Node *> readers = computeNodes();
        for (const Node *n : m_k.nodes) {
            if (inlinedIntoCat(n))
                readers.push_back(n);
        }
        for (const Node *n : readers) {
            const Shape shape = isReductionNode(n) ? m_k.domain : n->meta().sizes;
            for (const NodeRef &r : n->inputs()) {
                if (!internal(r))
                    m_loadOf[{n, r.node, r.index}] = addAccess(accessOf(r, shape));
            }
        }
        for (const NodeRef &out : m_k.outputs) {
            if (out.node == m_k.anchor)
                continue;
            const TensorMeta &m = out.node->meta(out.index);
            Access a;
            a.operand = operandOf(out);
            a.strides = domainStrides(m.sizes, contiguousStrides(m.sizes), m.sizes, m_k.domain, m_k.reduceDims);
            a.dtype = m.dtype;
            m_storeOf[out.node] = addAccess(a);
        }
    }

    // --- loops --------------------------------------------------------------------

    bool coalescible(const LoopDim &outer, const LoopDim &inner) const
    {
        // A fused cat selects its input by the last dim's index: that dim keeps a loop of its own.
        const int last = static_cast<int>(m_k.domain.size()) - 1;
        if (m_hasCat && (inner.domainDims.front() == last || outer.domainDims.back() == last))
            return false;
        for (const Access &a : m_accesses) {
            const int64_t so = a.strides[static_cast<size_t>(outer.domainDims.back())];
            const int64_t si = a.strides[static_cast<size_t>(inner.domainDims.front())];
            if (so != si * inner.size)
                return false;
        }
        return true;
    }

    // Merges neighbours whose strides line up; each LoopDim keeps the
    // stride of its innermost domain dim.
    std::vector<LoopDim> coalesce(std::vector<LoopDim> dims) const
    {
        std::vector<LoopDim> out;
        for (LoopDim &d : dims) {
            if (d.size == 1)
                continue;
            if (!out.empty() && out.back().inner == d.inner && coalescible(out.back(), d)) {
                out.back().size *= d.size;
                out.back().domainDims.push_back(d.domainDims.back());
                continue;
            }
            out.push_back(d);
        }
        return out;
    }

    void buildLoops()
    {
        std::vector<LoopDim> outer, inner;
        for (size_t d = 0; d < m_k.domain.size(); ++d) {
            const bool reduced = std::find(m_k.reduceDims.begin(), m_k.reduceDims.end(), static_cast<int64_t>(d))
                != m_k.reduceDims.end();
            (reduced ? inner : outer).push_back({m_k.domain[d], reduced, {static_cast<int>(d)}});
        }
        std::vector<LoopDim> dims = outer;
        dims.insert(dims.end(), inner.begin(), inner.end());
        dims = coalesce(dims);
        if (m_k.reduceDims.empty() && !dims.empty())
            dims.back().inner = true; // pointwise: the last dim is the vector loop
        for (LoopDim &d : dims)
            (d.inner ? m_inner : m_outer).push_back(d);
        m_flat = m_k.reduceDims.empty() && m_outer.empty();
    }

    // A reduction over dims before the last, whose inputs are contiguous
    // along the kept last dim and never along the reduced ones (x.sum(0), a
    // mean over a sequence's positions): output by output, its loop would
    // read one element of each strided row, a cache line for 4 bytes. It
    // runs in column mode instead: each outer item takes a block of the last
    // dim's outputs, and the reduced dims walk rows with that block's
    // elements innermost (the vector loop over j), accumulating a lane per
    // output. sum(2 x, 0) over [4096, 4096] f32 took 74.8 ms output by output
    // and 7.4 in eager mode (see docs/performance.md for column mode's).
    static constexpr int64_t kColumnBlock = 128;
    // Fewer outputs than a vector's lanes leave column mode's loop short: the
    // sums of exp over [4 M, 4] took 11-13 ms in column mode against 9 ms
    // output by output, whose strided loads GCC vectorizes.
    static constexpr int64_t kMinColumns = 16;

    void planColumns()
    {
        if (m_hasCat || m_k.reduceDims.empty() || m_outer.empty() || m_inner.empty())
            return;
        bool alongColumns = false;
        for (const Access &a : m_accesses) {
            if (a.operand >= static_cast<int>(m_k.inputs.size()))
                continue;
            if (strideOf(a, m_inner.back()) == 1)
                return;
            alongColumns = alongColumns || strideOf(a, m_outer.back()) == 1;
        }
        if (!alongColumns || m_outer.back().size < kMinColumns)
            return;
        m_columns = std::min(m_outer.back().size, kColumnBlock);
        note("reduces in column mode: blocks of " + std::to_string(m_columns)
             + " outputs along the last dim, its inputs' rows read in order");
    }

    // A pointwise kernel whose input lies across the rows it writes (x.T + y:
    // along the vectorized last dim, the input's elements are rows apart)
    // touched a cache line, and soon a page, for each element it read, and
    // came back for the line's next element a whole row later: x.T + y over
    // [4096, 4096] f32 took 105 ms. It runs in tiles instead, kTileT rows of
    // that input's contiguous dim (t) by kTileL elements of the last dim (l).
    // Each tile first copies such inputs' part into a buffer in the tile's
    // order (a line of the input at a time), so the tile's loop reads them
    // contiguously and vectorizes: GCC leaves a load with a stride of rows
    // scalar. An item of the pool is a block of 4 x 4 tiles. x.T + y took
    // 18-19 ms with 64 x 64 tiles, and as long with 16 x 512, 32 x 256 or
    // one tile an item; where its 48 MB stay in the cache ([2048, 2048]),
    // 2.0 ms against 0.86 for x + y.
    static constexpr int64_t kTileT = 64, kTileL = 64, kBlockT = 256, kBlockL = 256;
    static constexpr int64_t kAcross = 16; // elements apart (a line of f32) that make an input lie across

    // Whether access `a` goes through a tile buffer.
    bool staged(int a) const
    {
        const Access &ac = m_accesses[static_cast<size_t>(a)];
        return m_tileDim >= 0 && ac.operand < static_cast<int>(m_k.inputs.size())
            && std::abs(strideOf(ac, m_inner[0])) >= kAcross;
    }

    void planTiles()
    {
        if (!m_k.reduceDims.empty() || m_flat || m_hasCat || m_inner.size() != 1 || m_inner[0].size < kTileL)
            return;
        for (const Access &a : m_accesses) {
            if (a.operand >= static_cast<int>(m_k.inputs.size()) || std::abs(strideOf(a, m_inner[0])) < kAcross)
                continue;
            for (size_t d = 0; d < m_outer.size(); ++d) {
                if (strideOf(a, m_outer[d]) == 1 && m_outer[d].size >= kAcross) {
                    m_tileDim = static_cast<int>(d);
                    note("runs in tiles of " + std::to_string(kTileT) + " x " + std::to_string(kTileL)
                         + ": an input lies across its rows");
                    return;
                }
            }
        }
    }

    // The item's tiles, each after copying its part of the staged inputs;
    // the caller closes the two loops.
    void openTiles(std::ostringstream &out) const
    {
        const std::string tileT = std::to_string(kTileT), tileL = std::to_string(kTileL);
        out << "    for (int64_t tt = 0; tt < tn0; tt += " << tileT << ") {\n";
        out << "    const int64_t tn = std::min<int64_t>(" << tileT << ", tn0 - tt);\n";
        out << "    for (int64_t lb = lb0; lb < lb0 + ln0; lb += " << tileL << ") {\n";
        out << "        const int64_t ln = std::min<int64_t>(" << tileL << ", lb0 + ln0 - lb);\n";
        for (size_t a = 0; a < m_accesses.size(); ++a) {
            if (!staged(static_cast<int>(a)))
                continue;
            const Access &ac = m_accesses[a];
            const std::string id = std::to_string(a);
            const int64_t rowStride = strideOf(ac, m_outer[static_cast<size_t>(m_tileDim)]);
            out << "        for (int64_t l = 0; l < ln; ++l)\n";
            out << "            for (int64_t t = 0; t < tn; ++t)\n";
            out << "                t" << id << "[t * " << tileL << " + l] = p" << id << "[b" << id << " + (tt + t)"
                << (rowStride == 1 ? "" : " * " + std::to_string(rowStride)) << " + (lb + l) * "
                << strideOf(ac, m_inner[0]) << "];\n";
        }
    }

    static int64_t blocks(int64_t size, int64_t width)
    {
        return (size + width - 1) / width;
    }

    // Outer items the pool shares out: outputs, or blocks of them in column
    // mode, or tiles.
    int64_t itemCount() const
    {
        if (m_flat)
            return innerCount();
        if (m_tileDim >= 0) {
            const int64_t rows = m_outer[static_cast<size_t>(m_tileDim)].size;
            return outerCount() / rows * blocks(rows, kBlockT) * blocks(m_inner[0].size, kBlockL);
        }
        return m_columns ? outerCount() / m_outer.back().size * columnBlocks() : outerCount();
    }

    // A reduction with few outputs (a loss, a norm of a whole tensor, the
    // column sums of a narrow matrix) would run on as many threads as it has
    // outputs, so its reduced range splits into parts along the first
    // reduced dim: each part's results go to a scratch array and a last step
    // combines them in order and runs the epilogue. The parts depend on the
    // shapes only, never on the pool, so results are the same on any number
    // of threads. One reduction level only: a second one needs the first's
    // combined results before it can start.
    static constexpr int64_t kSplitBelowItems = 16, kMaxParts = 64, kMinPartValues = 1 << 15;
    static constexpr int64_t kMinInsidePartValues = 2048;
    static constexpr int64_t kMaxScratchBytes = 64 << 10;

    // Whether the kept dims lie inside the first reduced one in memory (the
    // channels of a batch norm's statistics over N, H and W): output by
    // output, each item jumps between far rows; parts taken part by part
    // walk the memory in order. The mean over dims 0, 2 and 3 of [32, 64, 56,
    // 56] took 0.85 ms compiled against 0.48 eager.
    bool keptInsideReduced() const
    {
        if (m_inner.size() < 2 || m_outer.empty())
            return false;
        return std::any_of(m_accesses.begin(), m_accesses.end(), [&](const Access &a) {
            return a.operand < static_cast<int>(m_k.inputs.size())
                && std::abs(strideOf(a, m_inner[0])) > std::abs(strideOf(a, m_outer.back()))
                && strideOf(a, m_outer.back()) != 0;
        });
    }

    void planSplit()
    {
        const int64_t items = itemCount();
        const bool inside = keptInsideReduced();
        if (m_k.reduceDims.empty() || m_hasCat || m_loops != 1 || m_inner.empty()
            || (items >= kSplitBelowItems && !inside))
            return;
        const int64_t width = std::max<int64_t>(m_columns, 1);
        m_splitUnit = !m_columns && m_inner.size() == 1 ? std::max(reductionLanes(), 1) : 1;
        const int64_t units = m_inner[0].size / m_splitUnit;
        const int64_t wanted = inside ? kMaxParts : (kMaxParts + items - 1) / items;
        const int64_t minValues = inside ? kMinInsidePartValues : kMinPartValues;
        int64_t parts = std::min({kMaxParts, wanted, units, innerCount() * width / minValues});
        int64_t scratch = 0;
        for (const Node *r : computeNodes())
            scratch += isReductionNode(r) ? items * width * static_cast<int64_t>(itemSize(r->meta().dtype)) : 0;
        while (parts > 1 && parts * scratch > kMaxScratchBytes)
            parts /= 2;
        if (parts < 2)
            return;
        m_parts = parts;
        const char *what = m_columns ? " blocks of outputs" : items > 1 ? " outputs" : " output";
        note("reduces in " + std::to_string(parts) + " parts of its reduced range, combined in order, for its "
             + std::to_string(items) + what);
    }

    int64_t columnBlocks() const { return blocks(m_outer.back().size, m_columns); }

    int64_t strideOf(const Access &a, const LoopDim &d) const
    {
        return a.strides[static_cast<size_t>(d.domainDims.back())];
    }

    int64_t outerCount() const
    {
        int64_t n = 1;
        for (const LoopDim &d : m_outer)
            n *= d.size;
        return n;
    }

    int64_t innerCount() const
    {
        int64_t n = 1;
        for (const LoopDim &d : m_inner)
            n *= d.size;
        return n;
    }

    // Whether access `a` covers one dense block of innerCount() elements from
    // its base, the inner dims row-major.
    bool denseInner(int a) const
    {
        int64_t expected = 1;
        for (size_t i = m_inner.size(); i-- > 0;) {
            if (m_inner[i].size != 1 && strideOf(m_accesses[static_cast<size_t>(a)], m_inner[i]) != expected)
                return false;
            expected *= m_inner[i].size;
        }
        return true;
    }

    // A full-shape result that only the caller reads, from a memory-bound
    // kernel writing more than the caches keep (loops::streamBytes(), as eager
    // mode), leaves through a row buffer and streaming stores: a plain store
    // first reads each line it writes, a third of such a kernel's memory
    // traffic (softmax_ln: 16 MiB in, 16 out, 2 flops a byte by the cost
    // rules, about 5 % faster on a VM with a 260 MB L3; 18 % slower on one with
    // 504 MB, where its output stays in the cache). A kernel that computes
    // more per byte is not waiting on memory, and the extra copy made
    // `pointwise` (3.75 flops a byte) slower.
    bool streams(const Node *n) const
    {
        constexpr int64_t kMaxRowBytes = 64 << 10;
        const int64_t minBytes = loops::streamBytes();
        constexpr double kMaxFlopsPerByte = 3;
        const double bytes = m_k.bytesRead + m_k.bytesWritten;
        if (bytes <= 0 || m_k.flops / bytes >= kMaxFlopsPerByte)
            return false;
        if (m_flat || m_columns || m_parts || m_tileDim >= 0 || m_inner.empty() || !isFull(n) || !m_storeOf.count(n)
            || n->meta().nbytes() < minBytes
            || innerCount() * static_cast<int64_t>(itemSize(n->meta().dtype)) > kMaxRowBytes
            || !denseInner(m_storeOf.at(n)))
            return false;
        return std::all_of(n->users().begin(), n->users().end(),
                           [&](const Node *u) { return u->kind == NodeKind::Output || m_members.count(u); });
    }

    // --- expressions ------------------------------------------------------------------

    // In column mode a value per output (a reduction, or a value computed
    // from one) is an array over the block's outputs, read at j.
    std::string var(const Node *n) const
    {
        return "v" + std::to_string(n->id) + (m_columns && !isFull(n) ? "[j]" : "");
    }

    // Index of access `a` inside the inner loops (`withInner` false: at inner index 0).
    std::string index(int a, bool withInner) const
    {
        std::string s = "b" + std::to_string(a);
        if (m_columns) {
            const int64_t st = strideOf(m_accesses[static_cast<size_t>(a)], m_outer.back());
            s += st == 0 ? "" : st == 1 ? " + j" : " + j * " + std::to_string(st);
        }
        if (!withInner)
            return s;
        if (m_tileDim >= 0) {
            const int64_t st = strideOf(m_accesses[static_cast<size_t>(a)], m_outer[static_cast<size_t>(m_tileDim)]);
            s += st == 0 ? "" : st == 1 ? " + it" : " + it * " + std::to_string(st);
        }
        for (size_t i = 0; i < m_inner.size(); ++i) {
            const int64_t st = strideOf(m_accesses[static_cast<size_t>(a)], m_inner[i]);
            if (st == 1)
                s += " + r" + std::to_string(i);
            else if (st != 0)
                s += " + r" + std::to_string(i) + " * " + std::to_string(st);
        }
        return s;
    }

    // `catStart`: the read is for the stretch of a cat starting there along
    // the last dim, so its index is shifted back by as much.
    std::string load(const Node *n, const NodeRef &r, bool withInner, int64_t catStart = 0) const
    {
        const int a = m_loadOf.at({n, r.node, r.index});
        if (staged(a)) // (no cat in a tiled kernel)
            return "t" + std::to_string(a) + "[(it - tt) * " + std::to_string(kTileL) + " + r0 - lb]";
        const int64_t shift = catStart ? catStart * m_accesses[static_cast<size_t>(a)].strides.back() : 0;
        return "p" + std::to_string(a) + "[" + index(a, withInner) + (shift ? " - " + std::to_string(shift) : "") + "]";
    }

    DType computeType(const Node *n) const
    {
        const DType out = n->meta().dtype;
        if (out != DType::Bool)
            return out;
        DType t = DType::Bool;
        bool anyFloatConst = false, anyIntConst = false;
        for (const Arg &a : n->args()) {
            if (a.isRef())
                t = promoteTypes(t, a.ref().node->meta(a.ref().index).dtype);
            else if (a.kind == Arg::Kind::Const && a.constant.isDouble())
                anyFloatConst = true;
            else if (a.kind == Arg::Kind::Const && a.constant.isInt())
                anyIntConst = true;
        }
        if (anyFloatConst && !isFloating(t))
            return DType::F32;
        if (anyIntConst && t == DType::Bool)
            return DType::I64;
        return t;
    }

    std::string operand(const Node *n, size_t argIndex, DType tc, bool withInner, int64_t catStart = 0) const
    {
        const Arg &a = n->args()[argIndex];
        std::string value;
        if (a.kind == Arg::Kind::Const)
            return literal(a.constant.toDouble(), tc);
        const NodeRef r = a.ref();
        value = internal(r) ? var(r.node) : load(n, r, withInner, catStart);
        return std::string("static_cast<") + ctype(tc) + ">(" + value + ")";
    }

    // A row-invariant divisor (softmax's sum, a norm's count): one
    // reciprocal per row and a multiply per element, as a division per
    // element is the costliest instruction of such loops (within an ulp of
    // the quotient).
    bool rowInvariantDivisor(const Node *n, const ScalarCall &call, DType tc) const
    {
        if (call.fn != "div" || !isFloating(tc) || !isFull(n) || n->args().size() < 2 || !n->args()[1].isRef())
            return false;
        const NodeRef r = n->args()[1].ref();
        return internal(r) && (isReductionNode(r.node)
                               || levelOf(r.node->meta().sizes, m_k.domain, m_k.reduceDims) == Level::Reduced);
    }

    // A cat along the last dim, the innermost loop (r0): each element comes
    // from the input whose stretch holds it, chosen by a chain of selects:
    // a load shifted back to that input's own index, or the op that computes
    // the input (its only reader is the cat) evaluated there.
    std::string catExpr(const Node *n, bool withInner) const
    {
        const std::vector<NodeRef> &ins = n->args()[0].refs;
        std::vector<int64_t> ends;
        for (const NodeRef &r : ins)
            ends.push_back((ends.empty() ? 0 : ends.back()) + r.node->meta(r.index).sizes.back());
        std::string expr;
        for (size_t i = ins.size(); i-- > 0;) {
            const int64_t start = i ? ends[i - 1] : 0;
            const std::string value = internal(ins[i]) ? pointwiseExpr(ins[i].node, withInner, start)
                                                       : load(n, ins[i], withInner, start);
            expr = expr.empty() ? value : "(r0 < " + std::to_string(ends[i]) + " ? " + value + " : " + expr + ")";
        }
        return std::string("static_cast<") + ctype(n->meta().dtype) + ">(" + expr + ")";
    }

    std::string pointwiseExpr(const Node *n, bool withInner, int64_t catStart = 0) const
    {
        if (isFusableCat(*n))
            return catExpr(n, withInner);
        const OpDef &op = OpRegistry::instance().get(n->target);
        const DType tc = computeType(n);
        ScalarCall call = op.scalarCallFor(constArgs(n));
        if (call.fn == "exp" && m_expNonPositive.count(n))
            call.fn = "exp_nonpositive";
        if (rowInvariantDivisor(n, call, tc)) {
            const std::string t = ctype(tc);
            return std::string("static_cast<") + ctype(n->meta().dtype) + ">(fusescope::sm::mul<" + t + ">("
                + operand(n, 0, tc, withInner) + ", fusescope::sm::reciprocal<" + t + ">(" + operand(n, 1, tc, withInner)
                + ")))";
        }
        std::string args;
        for (size_t i = 0; i < op.schema.args.size() && i < n->args().size(); ++i) {
            if (op.schema.args[i].type != ArgType::Tensor)
                continue;
            args += (args.empty() ? "" : ", ") + operand(n, i, tc, withInner, catStart);
        }
        for (double c : call.constants)
            args += ", " + literal(c, tc);
        return std::string("static_cast<") + ctype(n->meta().dtype) + ">(fusescope::sm::" + call.fn + "<"
            + ctype(tc) + ">(" + args + "))";
    }

    // Arguments with references replaced by meta tensors: what scalarCall reads.
    Args constArgs(const Node *n) const
    {
        Args args(n->args().size());
        for (size_t i = 0; i < args.size(); ++i) {
            const Arg &a = n->args()[i];
            args[i] = a.kind == Arg::Kind::Const ? a.constant : Value(Tensor::empty({}, DType::F32, kMeta));
        }
        return args;
    }

    // --- the function -------------------------------------------------------------------

    std::string accumulator(const Node *r) const
    {
        return "acc" + std::to_string(r->id);
    }

    std::string reduceFn(const Node *r) const
    {
        return OpRegistry::instance().get(r->target).reduceFn;
    }

    std::string initValue(const Node *r) const
    {
        const std::string fn = reduceFn(r);
        const DType t = r->meta().dtype;
        if (fn == "sum")
            return literal(0, t);
        if (fn == "prod")
            return literal(1, t);
        const char *c = ctype(t);
        const bool fp = isFloating(t);
        if (fn == "max")
            return fp ? std::string("-static_cast<") + c + ">(INFINITY)" : std::string("std::numeric_limits<") + c + ">::lowest()";
        return fp ? std::string("static_cast<") + c + ">(INFINITY)" : std::string("std::numeric_limits<") + c + ">::max()";
    }

    // Roots of loop `k`: its reductions and the full-shape outputs stored in it.
    std::vector<const Node *> loopRoots(int k) const
    {
        std::vector<const Node *> roots;
        for (const Node *n : computeNodes()) {
            const bool reduction = isReductionNode(n) && m_loopOf.at(n) == k;
            const bool store = isFull(n) && m_storeOf.count(n) && storeLoop(n) == k;
            if (reduction || store)
                roots.push_back(n);
        }
        return roots;
    }

    // A full value that a later loop reads again is kept in a per-row array
    // instead of being recomputed (softmax's exp, layer_norm's centered x),
    // as long as the arrays fit in a small stack budget.
    bool worthCaching(const Node *n, int64_t &budget) const
    {
        if (isReductionNode(n) || !isFull(n) || m_loops < 2 || m_columns)
            return false;
        bool laterReader = false;
        for (const Node *u : n->users()) {
            if (!m_members.count(u) || u == m_k.anchor)
                continue;
            const int loop = isReductionNode(u) ? m_loopOf.at(u) : m_ready.at(u);
            laterReader = laterReader || loop > m_ready.at(n);
        }
        const int64_t bytes = innerCount() * static_cast<int64_t>(itemSize(n->meta().dtype));
        if (!laterReader || bytes > budget)
            return false;
        budget -= bytes;
        return true;
    }

    // The nodes each loop computes, in order; values cached by an earlier
    // loop are read back rather than recomputed.
    void planLoops()
    {
        int64_t budget = 48 * 1024;
        for (int k = 0; k < m_loops; ++k) {
            m_loopNodes[k]; // every loop has a list, maybe empty
            std::set<const Node *> need;
            std::vector<const Node *> stack = loopRoots(k);
            while (!stack.empty()) {
                const Node *n = stack.back();
                stack.pop_back();
                if (!need.insert(n).second)
                    continue;
                for (const NodeRef &r : n->inputs()) {
                    const bool cachedEarlier = m_cachedIn.count(r.node) && m_cachedIn.at(r.node) < k;
                    if (internal(r) && isFull(r.node) && !cachedEarlier)
                        stack.push_back(r.node);
                    else if (internal(r) && cachedEarlier)
                        m_cacheReads[k].insert(r.node);
                }
            }
            for (const Node *n : computeNodes()) {
                if (!need.count(n))
                    continue;
                m_loopNodes[k].push_back(n);
                if (!m_cachedIn.count(n) && worthCaching(n, budget))
                    m_cachedIn[n] = k;
            }
        }
    }

    // A row kernel's last loop writes its output row just before the next
    // row's loops begin: every store misses (the line is read before it is
    // written), and as stores commit in order, the next row's stores to L1
    // queue behind them. Held in an L1 row instead and copied out a block at
    // a time inside the next row's costliest laned loop, those stores spread
    // over its arithmetic: softmax_ln's body (harness, two threads, four
    // alternations) ran 0.68-0.71 ms against 0.74-0.81, and 0.61 with its
    // output kept in L1. Held only where the copy's blocks are the loop's, and
    // for rows of 2 to 8 KiB: layer_norm(softmax(x)) over 4 M floats ran 13 %
    // faster held with rows of 2 KiB, 3 % with 4 and 8 KiB, but 11 % slower
    // with 16 KiB (three row arrays no longer fit in L1), 5 % slower with 1
    // KiB and 50 % with 256 B, whose rows GCC otherwise keeps in registers.
    void planHeldRows()
    {
        constexpr int64_t kMinRowBytes = 2 << 10, kMaxRowBytes = 8 << 10;
        if (m_flat || m_columns || m_loops < 2 || m_inner.size() != 1 || !reductionLanes()
            || innerCount() > kCascadeChunk)
            return; // (the drain sits in the block loop, which a cascade's chunk loop would move)
        m_drainLoop = costliestLanedLoop(m_loops - 1);
        if (m_drainLoop < 0)
            return;
        for (const Node *n : computeNodes()) {
            const int64_t rowBytes = innerCount() * static_cast<int64_t>(itemSize(n->meta().dtype));
            if (!isReductionNode(n) && m_storeOf.count(n) && storeLoop(n) == m_loops - 1 && isFull(n) && !streams(n)
                && denseInner(m_storeOf.at(n)) && rowBytes >= kMinRowBytes && rowBytes <= kMaxRowBytes) {
                m_held.push_back(n);
                note(n->name + " is held a row and stored during the next row's loop " + std::to_string(m_drainLoop));
            }
        }
    }

    // The held rows' blocks at r0b, stored where the previous row goes.
    void emitHeldDrain(std::ostringstream &out, const std::string &indent, int lanes) const
    {
        for (const Node *n : m_held) {
            const std::string id = std::to_string(n->id);
            out << indent << "if (ht" << id << ") {\n";
            out << indent << "    #pragma omp simd\n";
            out << indent << "    for (int64_t d = 0; d < " << lanes << "; ++d)\n";
            out << indent << "        ht" << id << "[r0b + d] = h" << id << "[r0b + d];\n";
            out << indent << "}\n";
        }
    }

    bool held(const Node *n) const
    {
        return std::find(m_held.begin(), m_held.end(), n) != m_held.end();
    }

    // Row-major position inside the inner loops.
    std::string flatInnerIndex() const
    {
        if (m_inner.empty())
            return "0";
        std::string s = "r0";
        for (size_t i = 1; i < m_inner.size(); ++i)
            s = "(" + s + ") * " + std::to_string(m_inner[i].size) + " + r" + std::to_string(i);
        return s;
    }

    int storeLoop(const Node *n) const
    {
        return m_ready.at(n);
    }

    std::string store(const Node *n, bool withInner) const
    {
        const int a = m_storeOf.at(n);
        return "        p" + std::to_string(a) + "[" + index(a, withInner) + "] = " + var(n) + ";\n";
    }

    void emitPointers(std::ostringstream &out) const
    {
        for (size_t a = 0; a < m_accesses.size(); ++a) {
            const Access &ac = m_accesses[a];
            const bool isStore = ac.operand >= static_cast<int>(m_k.inputs.size())
                && std::any_of(m_storeOf.begin(), m_storeOf.end(), [&](const auto &s) { return s.second == static_cast<int>(a); });
            out << "    " << (isStore ? "" : "const ") << storageType(ac.dtype) << " *const p" << a << " = static_cast<"
                << (isStore ? "" : "const ") << storageType(ac.dtype) << " *>(ops[" << ac.operand << "])"
                << (ac.offset ? " + " + std::to_string(ac.offset) : "") << ";\n";
        }
    }

    // `first` = the first index of the item's block of `width` along a dim
    // of `size`, taken off rest; `count` = the block's length.
    static void emitBlock(std::ostringstream &out, const std::string &first, const std::string &count, int64_t size,
                          int64_t width)
    {
        const int64_t n = blocks(size, width);
        out << "        const int64_t " << first << " = rest % " << n << " * " << width << "; rest /= " << n << ";\n";
        if (size % width == 0)
            out << "        constexpr int64_t " << count << " = " << width << ";\n";
        else
            out << "        const int64_t " << count << " = std::min<int64_t>(" << width << ", " << size << " - "
                << first << ");\n";
    }

    void emitOuterIndex(std::ostringstream &out) const
    {
        out << "        int64_t rest = o;\n";
        if (m_tileDim >= 0) // the item's columns: r0 from lb0 to lb0 + ln0
            emitBlock(out, "lb0", "ln0", m_inner[0].size, kBlockL);
        std::vector<std::string> terms(m_accesses.size());
        for (size_t i = m_outer.size(); i-- > 0;) {
            const std::string idx = "i" + std::to_string(i);
            if (m_columns && i + 1 == m_outer.size()) // the first output of the item's block
                emitBlock(out, idx, "jn", m_outer.back().size, m_columns);
            else if (m_tileDim == static_cast<int>(i)) // the tile's first row
                emitBlock(out, idx, "tn0", m_outer[i].size, kBlockT);
            else if (i == 0)
                out << "        const int64_t " << idx << " = rest;\n";
            else
                out << "        const int64_t " << idx << " = rest % " << m_outer[i].size << "; rest /= "
                    << m_outer[i].size << ";\n";
            for (size_t a = 0; a < m_accesses.size(); ++a) {
                const int64_t st = strideOf(m_accesses[a], m_outer[i]);
                if (st)
                    terms[a] += " + " + idx + " * " + std::to_string(st);
            }
        }
        out << "        (void)rest;\n";
        for (size_t a = 0; a < m_accesses.size(); ++a)
            out << "        const int64_t b" << a << " = 0" << terms[a] << ";\n";
    }

    // A kernel that walks each row more than once (softmax, norms) reads the
    // row from memory in its first loop and then works from L1, so memory and
    // arithmetic take turns. Prefetching the row after next during the work
    // lets them overlap: softmax_ln's generated body on two threads, 8192 rows
    // of 2 KiB, ran 15-20 % faster in a harness (0.36-0.39 against 0.45-0.47 ns
    // an element). Only rows that follow each other, 512 B to 16 KiB (two rows
    // ahead stay within L1). Outputs, fetched for writing, only where the
    // prefetches go a block at a time; not the streamed ones, which skip the
    // cache.
    std::vector<int> prefetchedAccesses(bool withOutputs) const
    {
        constexpr int64_t kMinRowBytes = 512, kMaxRowBytes = 16 << 10;
        std::vector<int> found;
        if (m_outer.empty() || m_columns)
            return found;
        for (size_t a = 0; a < m_accesses.size(); ++a) {
            const Access &ac = m_accesses[a];
            const int64_t rowBytes = innerCount() * static_cast<int64_t>(itemSize(ac.dtype));
            const bool input = ac.operand < static_cast<int>(m_k.inputs.size());
            if ((input || (withOutputs && storedAccess(static_cast<int>(a)))) && rowBytes >= kMinRowBytes
                && rowBytes <= kMaxRowBytes && denseInner(static_cast<int>(a))
                && strideOf(ac, m_outer.back()) == innerCount())
                found.push_back(static_cast<int>(a));
        }
        return found;
    }

    // Written through the cache: some node stores to it and none streams.
    bool storedAccess(int a) const
    {
        bool stored = false;
        for (const auto &[n, access] : m_storeOf) {
            if (access == a && streams(n))
                return false;
            stored = stored || access == a;
        }
        return stored;
    }

    // Where the prefetches go: a block at a time inside the costliest laned
    // loop of a one-dim row, so they trickle out between the arithmetic. All
    // of a row's prefetches at its start filled the line fill buffers, and
    // the loop behind them waited: softmax_ln's body on two threads, 8192
    // rows of 2 KiB, ran 7-9 % faster with them spread (0.63-0.66 against
    // 0.68-0.70 ms, harness, alternated), and 4 % faster again with its
    // output fetched for writing too.
    // A one-loop kernel runs its row in blocks for them when it computes a
    // flop a byte or more: the `pointwise` workload's body (3.4) ran 7-8 %
    // faster on two threads, one of sigmoid(x w + b) + x (1.6) 5-7 %, while
    // x w + b + x (0.4), waiting on memory either way, ran 3 % slower.
    void planRowPrefetches()
    {
        constexpr double kMinFlopsPerByte = 1;
        if (m_flat || m_parts || m_tileDim >= 0 || m_inner.size() != 1 || !reductionLanes()
            || innerCount() > kCascadeChunk || prefetchedAccesses(true).empty())
            return; // (a cascade's chunk loop would sit between the block loop and the row)
        if (m_loops > 1) {
            m_prefetchLoop = costliestLanedLoop(m_loops);
            return;
        }
        if (rowFlopsPerByte() >= kMinFlopsPerByte)
            m_prefetchLoop = 0;
    }

    // Flops of the row loop's nodes against the bytes of the row-long
    // accesses, an element each: a GEMM's epilogue counts its own work, not
    // the GEMM's, and a broadcast weight row costs nothing.
    double rowFlopsPerByte() const
    {
        double bytes = 0;
        for (const Access &ac : m_accesses) {
            if (strideOf(ac, m_outer.back()) != 0)
                bytes += static_cast<double>(itemSize(ac.dtype));
        }
        return bytes > 0 ? loopFlops(0) / bytes : 0;
    }

    // Flops an element of loop k's nodes.
    double loopFlops(int k) const
    {
        double flops = 0;
        for (const Node *n : m_loopNodes.at(k))
            flops += OpRegistry::instance().get(n->target).flopsPerElement;
        return flops;
    }

    // Of loops 0 .. below - 1, the one with a reduction (so its row runs in
    // blocks) and the most flops an element; -1 if none has a reduction.
    int costliestLanedLoop(int below) const
    {
        int found = -1;
        double costliest = 0;
        for (int k = 0; k < below; ++k) {
            const std::vector<const Node *> &nodes = m_loopNodes.at(k);
            const bool laned
                = std::any_of(nodes.begin(), nodes.end(), [&](const Node *n) { return isReductionNode(n); });
            if (laned && loopFlops(k) > costliest) {
                costliest = loopFlops(k);
                found = k;
            }
        }
        return found;
    }

    // The whole row after next at the row's start, where no loop takes the
    // prefetches a block at a time.
    void emitRowPrefetches(std::ostringstream &out) const
    {
        if (m_prefetchLoop >= 0 || m_loops < 2)
            return;
        for (int a : prefetchedAccesses(false)) {
            const Access &ac = m_accesses[static_cast<size_t>(a)];
            out << "        if (o + 2 < end)\n";
            out << "            for (int64_t q = 0; q < " << innerCount() << "; q += " << 64 / itemSize(ac.dtype)
                << ")\n";
            out << "                __builtin_prefetch(" << rowAfterNext(a) << " + q, 0, 3);\n";
        }
    }

    // The lines of the row after next that the block at r0b will take.
    void emitBlockPrefetches(std::ostringstream &out, const std::string &indent, int lanes) const
    {
        for (int a : prefetchedAccesses(true)) {
            const Access &ac = m_accesses[static_cast<size_t>(a)];
            const bool write = ac.operand >= static_cast<int>(m_k.inputs.size()); // an output the kernel stores
            out << indent << "if (o + 2 < end)\n";
            out << indent << "    for (int64_t q = 0; q < " << lanes << "; q += " << 64 / itemSize(ac.dtype) << ")\n";
            out << indent << "        __builtin_prefetch(" << rowAfterNext(a) << " + r0b + q, " << (write ? 1 : 0)
                << ", 3);\n";
        }
    }

    std::string rowAfterNext(int a) const
    {
        return "p" + std::to_string(a) + " + b" + std::to_string(a) + " + " + std::to_string(2 * innerCount());
    }

    void emitReducedNodes(std::ostringstream &out, int ready, bool withStores = true) const
    {
        std::ostringstream body;
        for (const Node *n : computeNodes()) {
            if (isReductionNode(n) || isFull(n) || m_ready.at(n) != ready)
                continue;
            body << "        " << (m_columns ? "" : "const " + std::string(ctype(n->meta().dtype)) + " ") << var(n)
                 << " = " << pointwiseExpr(n, false) << ";\n";
        }
        for (const Node *n : computeNodes()) {
            const bool reducedValue = isReductionNode(n) || !isFull(n);
            if (withStores && reducedValue && m_ready.at(n) == ready && m_storeOf.count(n))
                body << store(n, false);
        }
        if (m_columns && !body.str().empty())
            out << "        #pragma omp simd\n        for (int64_t j = 0; j < jn; ++j) {\n"
                << body.str() << "        }\n";
        else
            out << body.str();
    }

    // Lanes of partial results a reduction loop keeps. With one vector
    // accumulator a row's sum is a chain of dependent adds, and GCC sums the
    // vector's lanes in order; 64 lanes are four independent vectors whose
    // lanes combine as a tree after the loop (softmax_ln's kernel ran 15 %
    // faster on one thread). 0 where the vectorized dim does not split evenly.
    int reductionLanes() const
    {
        if (m_flat || m_inner.empty())
            return 0;
        for (int lanes : {64, 32, 16}) {
            if (m_inner.back().size % lanes == 0)
                return lanes;
        }
        return 0;
    }

    // Floating sums over more values than a chunk join their chunks pairwise
    // (fusescope_cascade_push in the prelude); shorter ones, every softmax
    // and norm row of the zoo included, keep the plain loop.
    static constexpr int64_t kCascadeChunk = 2048;
    static constexpr int kCascadeLevels = 48; // room for 2^48 chunks

    // Values each lane adds up before its chunk goes to the counter: row
    // mode spreads a chunk over 16 to 64 lanes, column mode gives each
    // output a lane of its own, so its chunks are as short as row mode's
    // lanes' (2048 rows left the test's strided sum 2.4e-5 off).
    int64_t cascadeChunk() const { return m_columns ? kCascadeChunk / 16 : kCascadeChunk; }

    // Levels the counter needs: column mode's are counted, as its lanes are
    // as many as the block's outputs.
    int cascadeLevels() const
    {
        if (!m_columns)
            return kCascadeLevels;
        const uint64_t chunks = static_cast<uint64_t>((innerCount() + cascadeChunk() - 1) / cascadeChunk());
        return static_cast<int>(std::bit_width(chunks));
    }

    bool cascades(const Node *r) const
    {
        return reduceFn(r) == "sum" && isFloating(r->meta().dtype) && innerCount() > cascadeChunk();
    }

    // fusescope_cascade_push or _total for r: its chunk is the lanes, or the
    // one accumulator, its partial sums are in.
    std::string cascadeCall(const char *fn, const Node *r, int lanes, const std::string &moreArgs = "") const
    {
        const std::string chunk = lanes ? accumulator(r) + "l" : "&" + accumulator(r);
        return std::string("fusescope_cascade_") + fn + "<" + ctype(r->meta().dtype) + ", "
            + std::to_string(std::max(lanes, 1)) + moreArgs + ">(" + chunk + ", " + accumulator(r) + "c, done"
            + std::to_string(r->id) + ");\n";
    }

    // After each row of the last inner loop: a full chunk goes to the counter.
    void emitCascadeStep(std::ostringstream &out, const std::string &indent, const std::vector<const Node *> &cascading,
                         int k, int lanes, const std::string &rowLength) const
    {
        const std::string fill = "fill" + std::to_string(k);
        out << indent << fill << " += " << rowLength << ";\n";
        out << indent << "if (" << fill << " >= " << cascadeChunk() << ") {\n";
        for (const Node *r : cascading)
            out << indent << "    " << cascadeCall("push", r, lanes);
        out << indent << "    " << fill << " = 0;\n";
        out << indent << "}\n";
    }

    // The last, partial chunk and the counter's total, back in the chunk's lanes.
    void emitCascadeTotal(std::ostringstream &out, const Node *r, int k, int lanes) const
    {
        out << "        if (fill" << k << ")\n";
        out << "            " << cascadeCall("push", r, lanes);
        out << "        " << cascadeCall("total", r, lanes, ", " + std::to_string(cascadeLevels()));
    }

    bool countsNaN(const Node *r) const
    {
        const std::string fn = reduceFn(r);
        return isFloating(r->meta().dtype) && (fn == "max" || fn == "min") && !m_rowNaNReachesOutputs.count(r);
    }

    // `a` combined with `b` as reduction r combines values; NaN is counted apart.
    std::string combine(const Node *r, const std::string &a, const std::string &b) const
    {
        const std::string fn = reduceFn(r);
        if (fn == "sum")
            return a + " + " + b;
        if (fn == "prod")
            return a + " * " + b;
        return b + " " + (fn == "max" ? ">" : "<") + " " + a + " ? " + b + " : " + a;
    }

    void declareAccumulators(std::ostringstream &out, const Node *r, int lanes) const
    {
        const std::string t = ctype(r->meta().dtype), id = std::to_string(r->id);
        if (cascades(r))
            out << "        " << t << " " << accumulator(r) << "c[" << cascadeLevels() << "][" << std::max(lanes, 1)
                << "];\n        uint64_t done" << id << " = 0;\n";
        if (!lanes) {
            out << "        " << t << " " << accumulator(r) << " = " << initValue(r) << ";\n";
            if (countsNaN(r))
                out << "        int nan" << id << " = 0; // a NaN count: a bool flag stops vectorization\n";
            return;
        }
        const std::string n = std::to_string(lanes);
        out << "        alignas(64) " << t << " " << accumulator(r) << "l[" << n << "];\n";
        if (countsNaN(r))
            out << "        int nan" << id << "l[" << n << "];\n";
        out << "        for (int l = 0; l < " << n << "; ++l) {\n";
        out << "            " << accumulator(r) << "l[l] = " << initValue(r) << ";\n";
        if (countsNaN(r))
            out << "            nan" << id << "l[l] = 0;\n";
        out << "        }\n";
    }

    // The lanes folded pairwise into lane 0, then named as a one-accumulator
    // loop names them. One loop per halving with a constant trip count: a
    // loop over the widths left GCC a variable inner count, which it
    // vectorized with run-time checks and a scalar tail every row.
    void foldLanes(std::ostringstream &out, const Node *r, int lanes) const
    {
        const std::string a = accumulator(r) + "l", id = std::to_string(r->id);
        for (int w = lanes / 2; w > 0; w /= 2) {
            const std::string half = std::to_string(w);
            out << "        #pragma omp simd\n";
            out << "        for (int l = 0; l < " << half << "; ++l)\n";
            out << "            " << a << "[l] = " << combine(r, a + "[l]", a + "[l + " + half + "]") << ";\n";
        }
        out << "        const " << ctype(r->meta().dtype) << " " << accumulator(r) << " = " << a << "[0];\n";
        if (countsNaN(r)) {
            out << "        int nan" << id << " = 0;\n";
            out << "        for (int l = 0; l < " << lanes << "; ++l)\n";
            out << "            nan" << id << " += nan" << id << "l[l];\n";
        }
    }

    // Column mode: each lane is one output's result.
    void emitColumnResults(std::ostringstream &out, const Node *r) const
    {
        const std::string id = std::to_string(r->id), lane = accumulator(r) + "l[j]";
        out << "        #pragma omp simd\n        for (int64_t j = 0; j < jn; ++j)\n";
        out << "            " << var(r) << " = "
            << (countsNaN(r) ? "nan" + id + "l[j] ? static_cast<" + std::string(ctype(r->meta().dtype)) + ">(NAN) : "
                             : "")
            << lane << ";\n";
    }

    // Column mode stores an output whose elements lie along the reduced last
    // dim (softmax(x.T, -1)) a row apart from lane to lane, and GCC scattered
    // them: softmax(x.T, -1) over [4096, 4096] f32 took 36 ms, eager mode 16.
    // Such stores go to a buffer a run of kBufferRun elements of the last dim
    // at a time, and from it to memory a row at a time, each row's run a
    // whole cache line (14-17 ms).
    static constexpr int64_t kBufferRun = 16;

    std::vector<const Node *> bufferedStores(int k) const
    {
        std::vector<const Node *> buffered;
        if (!m_columns || m_parts || m_inner.empty())
            return buffered;
        for (const Node *n : m_loopNodes.at(k)) {
            if (isReductionNode(n))
                return {}; // (the run loop would sit between the rows and their lanes' pushes)
            if (!m_storeOf.count(n) || storeLoop(n) != k || !isFull(n))
                continue;
            const Access &a = m_accesses[static_cast<size_t>(m_storeOf.at(n))];
            if (strideOf(a, m_outer.back()) != 1 && strideOf(a, m_inner.back()) == 1)
                buffered.push_back(n);
        }
        return buffered;
    }

    std::string bufferIndex() const
    {
        const std::string r = "r" + std::to_string(m_inner.size() - 1);
        return "(" + r + " - " + r + "c) * " + std::to_string(m_columns) + " + j";
    }

    // Rows of f32 runs of 16 go 16 at a time through fusescope_transpose16
    // (the prelude); the rest element by element.
    void emitBufferCopies(std::ostringstream &out, const std::string &indent,
                          const std::vector<const Node *> &buffered) const
    {
        const std::string r = "r" + std::to_string(m_inner.size() - 1);
        for (const Node *n : buffered) {
            const int a = m_storeOf.at(n);
            const std::string to = "p" + std::to_string(a) + "[" + index(a, true) + "]";
            out << indent << "{\n" << indent << "    int64_t j = 0;\n";
            if (n->meta().dtype == DType::F32 && kBufferRun == 16 && m_inner.back().size % 16 == 0) {
                out << indent << "    for (const int64_t " << r << " = " << r
                    << "c; j + 16 <= jn; j += 16) // rows j .. j + 15\n";
                out << indent << "        fusescope_transpose16(g" << n->id << " + j, " << m_columns << ", &" << to
                    << ", " << strideOf(m_accesses[static_cast<size_t>(a)], m_outer.back()) << ");\n";
            }
            out << indent << "    for (; j < jn; ++j) {\n";
            out << indent << "        #pragma omp simd\n";
            out << indent << "        for (int64_t " << r << " = " << r << "c; " << r << " < " << r << "e; ++" << r
                << ")\n";
            out << indent << "            " << to << " = g" << n->id << "[" << bufferIndex() << "];\n";
            out << indent << "    }\n" << indent << "}\n";
        }
    }

    void emitLoop(std::ostringstream &out, int k) const
    {
        const std::vector<const Node *> &nodes = m_loopNodes.at(k);
        std::vector<const Node *> reductions;
        for (const Node *n : nodes) {
            if (isReductionNode(n))
                reductions.push_back(n);
        }
        // (a loop without reductions runs in blocks only for the prefetches)
        const int lanes = reductions.empty() ? (k == m_prefetchLoop ? reductionLanes() : 0)
            : m_columns                      ? static_cast<int>(m_columns)
                                             : reductionLanes();
        std::vector<const Node *> cascading;
        std::string clauses;
        for (const Node *r : reductions) {
            declareAccumulators(out, r, lanes);
            if (cascades(r))
                cascading.push_back(r);
            if (lanes)
                continue;
            const std::string fn = reduceFn(r);
            const char *opc = fn == "sum" ? "+" : fn == "prod" ? "*" : fn.c_str();
            clauses += std::string(" reduction(") + opc + ":" + accumulator(r) + ")";
            if (countsNaN(r))
                clauses += " reduction(+:nan" + std::to_string(r->id) + ")";
        }
        if (!cascading.empty())
            out << "        int64_t fill" << k << " = 0; // values in the chunk's sums\n";
        emitInnerLoops(out, nodes, clauses, k, lanes, cascading);
        for (const Node *r : reductions) {
            if (cascades(r))
                emitCascadeTotal(out, r, k, lanes);
            if (m_columns) {
                emitColumnResults(out, r);
                continue;
            }
            if (lanes)
                foldLanes(out, r, lanes);
            out << "        const " << ctype(r->meta().dtype) << " " << var(r) << " = "
                << (countsNaN(r) ? "nan" + std::to_string(r->id) + " ? static_cast<" + std::string(ctype(r->meta().dtype)) + ">(NAN) : " : "")
                << accumulator(r) << ";\n";
        }
    }

    // With lanes, the last inner dim runs as blocks of `lanes` elements and
    // each reduction accumulates into the lane of its position in the block.
    // With cascading sums, a last dim longer than a chunk runs a chunk at a
    // time, and each row (or chunk) of it counts towards the next push.
    void emitInnerLoops(std::ostringstream &out, const std::vector<const Node *> &nodes, const std::string &clauses,
                        int k, int lanes, const std::vector<const Node *> &cascading) const
    {
        std::string indent = "        ";
        int open = 0, rowLoop = 0;
        std::string rowLength;
        auto openLoop = [&](const std::string &header) {
            out << indent << header << (header.empty() ? "{\n" : " {\n");
            indent += "    ";
            ++open;
        };
        if (m_inner.empty()) // every inner dim has size 1: a scope still keeps each loop's names apart
            openLoop("");
        const std::vector<const Node *> buffered = bufferedStores(k);
        int runLoop = 0; // the loop over runs of the buffered stores
        if (m_columns) {
            for (size_t i = 0; i < m_inner.size(); ++i) {
                const std::string r = "r" + std::to_string(i), size = std::to_string(m_inner[i].size);
                const bool part = i == 0 && m_parts;
                if (i + 1 == m_inner.size() && !buffered.empty()) {
                    openLoop("for (int64_t " + r + "c = 0; " + r + "c < " + size + "; " + r
                             + "c += " + std::to_string(kBufferRun) + ")");
                    runLoop = open;
                    for (const Node *n : buffered)
                        out << indent << "alignas(64) " << storageType(n->meta().dtype) << " g" << n->id << "["
                            << kBufferRun * m_columns << "];\n";
                    if (m_inner[i].size % kBufferRun == 0) // every run whole
                        out << indent << "const int64_t " << r << "e = " << r << "c + " << kBufferRun << ";\n";
                    else
                        out << indent << "const int64_t " << r << "e = std::min<int64_t>(" << r << "c + " << kBufferRun
                            << ", " << size << ");\n";
                    openLoop("for (int64_t " + r + " = " + r + "c; " + r + " < " + r + "e; ++" + r + ")");
                    continue;
                }
                openLoop("for (int64_t " + r + " = " + (part ? "rlo" : "0") + "; " + r + " < " + (part ? "rhi" : size)
                         + "; ++" + r + ")");
            }
            out << indent << "#pragma omp simd\n";
            openLoop("for (int64_t j = 0; j < jn; ++j)");
            rowLoop = open;
            rowLength = "1";
        }
        for (size_t i = 0; i < m_inner.size() && !m_columns; ++i) {
            const std::string r = "r" + std::to_string(i), size = std::to_string(m_inner[i].size);
            const bool last = i + 1 == m_inner.size();
            const bool part = i == 0 && m_parts;
            std::string begin = part ? "rlo" : "0", end = part ? "rhi" : size;
            if (m_tileDim >= 0) {
                openLoop("for (int64_t it = tt; it < tt + tn; ++it)");
                begin = "lb";
                end = "lb + ln";
            }
            if (last && !cascading.empty()) {
                rowLength = part ? "rhi - rlo" : size;
                if (m_inner[i].size > kCascadeChunk) {
                    const std::string chunk = std::to_string(kCascadeChunk);
                    openLoop("for (int64_t " + r + "c = " + begin + "; " + r + "c < " + end + "; " + r + "c += " + chunk
                             + ")");
                    out << indent << "const int64_t " << r << "e = std::min<int64_t>(" << r << "c + " << chunk << ", "
                        << end << ");\n";
                    begin = r + "c";
                    end = r + "e";
                    rowLength = end + " - " + begin;
                }
            }
            if (last && lanes) {
                const std::string n = std::to_string(lanes);
                openLoop("for (int64_t " + r + "b = " + begin + "; " + r + "b < " + end + "; " + r + "b += " + n + ")");
                rowLoop = open;
                out << indent << "#pragma omp simd\n";
                openLoop("for (int64_t " + r + "l = 0; " + r + "l < " + n + "; ++" + r + "l)");
                out << indent << "const int64_t " << r << " = " << r << "b + " << r << "l;\n";
                continue;
            }
            if (last)
                out << indent << "#pragma omp simd" << clauses << "\n";
            if (m_flat)
                openLoop("for (int64_t " + r + " = begin; " + r + " < end; ++" + r + ")");
            else
                openLoop("for (int64_t " + r + " = " + begin + "; " + r + " < " + end + "; ++" + r + ")");
            if (last)
                rowLoop = open;
        }
        const std::string flat = flatInnerIndex();
        if (m_cacheReads.count(k)) {
            for (const Node *c : m_cacheReads.at(k))
                out << indent << "const " << ctype(c->meta().dtype) << " " << var(c) << " = c" << c->id << "[" << flat
                    << "];\n";
        }
        const std::string lane = m_columns ? "l[j]" : lanes ? "l[r" + std::to_string(m_inner.size() - 1) + "l]" : "";
        for (const Node *n : nodes) {
            emitInnerNode(out, n, indent, lane);
            if (m_cachedIn.count(n) && m_cachedIn.at(n) == k)
                out << indent << "c" << n->id << "[" << flat << "] = " << var(n) << ";\n";
        }
        // Stores come after every load of the element: an output may be
        // planned over an input it reads (in place).
        for (const Node *n : nodes) {
            if (isReductionNode(n) || !m_storeOf.count(n) || storeLoop(n) != k)
                continue;
            const int a = m_storeOf.at(n);
            if (streams(n))
                out << indent << "s" << n->id << "[" << flat << "] = " << var(n) << ";\n";
            else if (std::find(buffered.begin(), buffered.end(), n) != buffered.end())
                out << indent << "g" << n->id << "[" << bufferIndex() << "] = " << var(n) << ";\n";
            else if (held(n))
                out << indent << "h" << n->id << "[" << flat << "] = " << var(n) << ";\n";
            else
                out << indent << "p" << a << "[" << index(a, true) << "] = " << var(n) << ";\n";
        }
        for (; open > 0; --open) {
            indent.resize(indent.size() - 4);
            out << indent << "}\n";
            if (open == 2 && lanes && k == m_drainLoop) // the inner loop closed, the block loop still open
                emitHeldDrain(out, indent, lanes);
            if (open == 2 && lanes && k == m_prefetchLoop)
                emitBlockPrefetches(out, indent, lanes);
            if (runLoop && open == runLoop + 1)
                emitBufferCopies(out, indent, buffered);
            if (open == rowLoop && !cascading.empty())
                emitCascadeStep(out, indent, cascading, k, lanes, rowLength);
        }
        for (const Node *n : nodes) {
            if (!isReductionNode(n) && m_storeOf.count(n) && storeLoop(n) == k && streams(n))
                out << indent << "fusescope_stream_row(p" << m_storeOf.at(n) << " + " << index(m_storeOf.at(n), false)
                    << ", s" << n->id << ", sizeof s" << n->id << ");\n";
        }
    }

    // `lane` indexes the accumulator arrays of a laned loop; empty otherwise.
    void emitInnerNode(std::ostringstream &out, const Node *n, const std::string &indent, const std::string &lane) const
    {
        if (!isReductionNode(n)) {
            out << indent << "const " << ctype(n->meta().dtype) << " " << var(n) << " = " << pointwiseExpr(n, true)
                << ";\n";
            return;
        }
        const NodeRef in = n->args()[0].ref();
        const std::string v = "static_cast<" + std::string(ctype(n->meta().dtype)) + ">("
            + (internal(in) ? var(in.node) : load(n, in, true)) + ")";
        const std::string acc = accumulator(n) + lane;
        if (countsNaN(n))
            out << indent << "{ const auto x = " << v << "; " << acc << " = " << combine(n, acc, "x") << "; nan"
                << n->id << lane << " += x != x; }\n";
        else
            out << indent << acc << " = " << combine(n, acc, v) << ";\n";
    }

    std::string function() const
    {
        std::ostringstream out;
        out << "// " << m_k.name << ": " << kernelKindName(m_k.kind) << ", domain " << shapeStr(m_k.domain);
        if (!m_k.reduceDims.empty())
            out << " reducing dims " << shapeStr(m_k.reduceDims);
        out << "\n// nodes:";
        for (const Node *n : m_k.nodes)
            out << " " << n->name;
        out << "\nstatic void " << m_k.name << "_body(void *ctx, int64_t begin, int64_t end)\n{\n";
        emitBodyLocals(out);
        for (const auto &[n, loop] : m_cachedIn)
            out << "    alignas(64) " << storageType(n->meta().dtype) << " c" << n->id << "[" << std::max<int64_t>(innerCount(), 1)
                << "];\n";
        bool streaming = false;
        for (const Node *n : computeNodes()) {
            if (!isReductionNode(n) && streams(n)) {
                out << "    alignas(64) " << storageType(n->meta().dtype) << " s" << n->id << "[" << innerCount() << "];\n";
                streaming = true;
            }
        }
        for (const Node *n : m_held) {
            const std::string id = std::to_string(n->id);
            out << "    alignas(64) " << storageType(n->meta().dtype) << " h" << id << "[" << innerCount() << "];\n";
            out << "    " << storageType(n->meta().dtype) << " *ht" << id << " = nullptr; // where the held row goes\n";
        }
        if (m_flat) {
            out << "    {\n";
            for (size_t a = 0; a < m_accesses.size(); ++a)
                out << "        const int64_t b" << a << " = 0;\n";
            emitLoop(out, 0);
            out << "    }\n";
        } else if (m_parts) {
            emitPartLoop(out);
        } else {
            out << "    for (int64_t o = begin; o < end; ++o) {\n";
            emitOuterIndex(out);
            emitRowPrefetches(out);
            if (m_tileDim >= 0)
                openTiles(out);
            for (int k = 0; k < m_loops; ++k) {
                emitReducedNodes(out, k);
                emitLoop(out, k);
            }
            emitReducedNodes(out, m_loops);
            if (m_tileDim >= 0)
                out << "    }\n    }\n";
            for (const Node *n : m_held)
                out << "        ht" << n->id << " = p" << m_storeOf.at(n) << " + " << index(m_storeOf.at(n), false)
                    << ";\n";
            out << "    }\n";
            for (const Node *n : m_held)
                out << "    if (ht" << n->id << ")\n        std::memcpy(ht" << n->id << ", h" << n->id << ", sizeof h"
                    << n->id << ");\n";
        }
        if (streaming) // streaming stores are weakly ordered: done before the pool hears this range is
            out << "    fusescope_stream_fence();\n";
        out << "}\n\n";
        if (m_parts) {
            emitSplitFinish(out);
            return out.str();
        }
        const int64_t grain = std::max<int64_t>(1, 32768 / valuesPerItem());
        out << "extern \"C\" void " << m_k.name << "(void *const *ops, const FusescopeKernelAbi *abi)\n{\n"
            << "    abi->parallel_for(0, " << itemCount() << ", " << grain << ", &" << m_k.name
            << "_body, const_cast<void **>(ops));\n}\n";
        return out.str();
    }

    // Elements an item visits, over all its loops.
    int64_t valuesPerItem() const
    {
        if (m_flat)
            return 1;
        if (m_tileDim >= 0)
            return kBlockT * kBlockL;
        return std::max<int64_t>(innerCount() * m_loops * std::max<int64_t>(m_columns, 1), 1);
    }

    // The operands' pointers, column mode's arrays and a split's scratch (after the operands in ctx).
    void emitBodyLocals(std::ostringstream &out) const
    {
        out << "    void *const *ops = static_cast<void *const *>(ctx);\n";
        emitPointers(out);
        for (size_t a = 0; a < m_accesses.size(); ++a) {
            if (staged(static_cast<int>(a)))
                out << "    alignas(64) " << storageType(m_accesses[a].dtype) << " t" << a << "[" << kTileT * kTileL
                    << "];\n";
        }
        int scratch = static_cast<int>(m_operands.size());
        for (const Node *n : computeNodes()) {
            const char *t = ctype(n->meta().dtype);
            if (m_columns && !isFull(n))
                out << "    alignas(64) " << storageType(n->meta().dtype) << " v" << n->id << "[" << m_columns
                    << "];\n";
            if (m_parts && isReductionNode(n))
                out << "    " << t << " *const q" << n->id << " = static_cast<" << t << " *>(ops[" << scratch++
                    << "]);\n";
        }
    }

    // Task t is part t / items of output (or block) t % items, taken part by
    // part so that a thread's range of tasks walks the memory in order; its
    // results go to scratch slot o * parts + part.
    void emitPartLoop(std::ostringstream &out) const
    {
        const int64_t units = m_inner[0].size / m_splitUnit;
        const std::string parts = std::to_string(m_parts), unit = std::to_string(m_splitUnit);
        out << "    for (int64_t t = begin; t < end; ++t) {\n";
        out << "        const int64_t part = t / " << itemCount() << ", o = t % " << itemCount() << ";\n";
        out << "        const int64_t slot = o * " << parts << " + part;\n";
        out << "        const int64_t rlo = part * " << units << " / " << parts << " * " << unit
            << ", rhi = (part + 1) * " << units << " / " << parts << " * " << unit << ";\n";
        emitOuterIndex(out);
        emitReducedNodes(out, 0, false); // their stores are the last step's
        emitLoop(out, 0);
        for (const Node *r : computeNodes()) {
            if (!isReductionNode(r))
                continue;
            if (m_columns)
                out << "        for (int64_t j = 0; j < jn; ++j)\n            q" << r->id << "[slot * " << m_columns
                    << " + j] = " << var(r) << ";\n";
            else
                out << "        q" << r->id << "[slot] = " << var(r) << ";\n";
        }
        out << "    }\n";
    }

    // The parts' results combined in part order, then what follows the reductions; and the kernel itself.
    void emitSplitFinish(std::ostringstream &out) const
    {
        out << "static void " << m_k.name << "_finish(void *ctx)\n{\n";
        emitBodyLocals(out);
        out << "    for (int64_t o = 0; o < " << itemCount() << "; ++o) {\n";
        emitOuterIndex(out);
        const std::string parts = std::to_string(m_parts), width = std::to_string(std::max<int64_t>(m_columns, 1));
        for (const Node *r : computeNodes()) {
            if (!isReductionNode(r))
                continue;
            const std::string t = ctype(r->meta().dtype), id = std::to_string(r->id), lane = m_columns ? " + j" : "";
            const std::string at = "(o * " + parts + " + s) * " + width + lane, a = "a" + id, nan = "nan" + id;
            if (m_columns)
                out << "        for (int64_t j = 0; j < jn; ++j) {\n";
            const bool nans = countsNaN(r); // a part's NaN is the NaN it counted
            out << "        " << t << " " << a << " = " << initValue(r) << ";\n";
            if (nans)
                out << "        int " << nan << " = 0;\n";
            out << "        for (int64_t s = 0; s < " << parts << "; ++s) {\n";
            out << "            const " << t << " x = q" << id << "[" << at << "];\n";
            out << "            " << a << " = " << combine(r, a, "x") << ";\n";
            if (nans)
                out << "            " << nan << " += x != x;\n";
            out << "        }\n";
            out << "        " << (m_columns ? "" : "const " + t + " ") << var(r) << " = "
                << (nans ? nan + " ? static_cast<" + t + ">(NAN) : " + a : a) << ";\n";
            if (m_columns)
                out << "        }\n";
        }
        emitReducedNodes(out, 0);
        emitReducedNodes(out, 1);
        out << "    }\n}\n\n";
        const size_t operands = m_operands.size();
        out << "extern \"C\" void " << m_k.name << "(void *const *ops, const FusescopeKernelAbi *abi)\n{\n";
        out << "    void *ctx[" << operands + scratchCount() << "];\n";
        out << "    for (int i = 0; i < " << operands << "; ++i)\n        ctx[i] = ops[i];\n";
        size_t slot = operands;
        for (const Node *r : computeNodes()) {
            if (!isReductionNode(r))
                continue;
            out << "    alignas(64) " << ctype(r->meta().dtype) << " q" << r->id << "["
                << itemCount() * m_parts * std::max<int64_t>(m_columns, 1) << "];\n    ctx[" << slot++ << "] = q"
                << r->id << ";\n";
        }
        out << "    abi->parallel_for(0, " << itemCount() * m_parts << ", 1, &" << m_k.name << "_body, ctx);\n";
        out << "    " << m_k.name << "_finish(ctx);\n}\n";
    }

    size_t scratchCount() const
    {
        const std::vector<const Node *> nodes = computeNodes();
        return static_cast<size_t>(
            std::count_if(nodes.begin(), nodes.end(), [&](const Node *n) { return isReductionNode(n); }));
    }

    const Kernel &m_k;
    std::vector<std::string> *m_notes;
    std::set<const Node *> m_members;
    std::set<const Node *> m_rowNaNReachesOutputs; // max/min reductions that need no NaN count
    std::set<const Node *> m_expNonPositive;       // exps of x minus its row's max
    std::vector<NodeRef> m_operands;
    std::vector<Access> m_accesses;
    std::map<std::tuple<const Node *, const Node *, int>, int> m_loadOf; // (reader, node, output) -> access
    std::map<const Node *, int> m_storeOf;
    std::map<const Node *, int> m_ready;
    std::map<const Node *, int> m_loopOf;
    int m_loops = 0;
    std::map<int, std::vector<const Node *>> m_loopNodes;
    std::map<int, std::set<const Node *>> m_cacheReads;
    std::map<const Node *, int> m_cachedIn; // node -> the loop that stores it in its row array
    std::vector<const Node *> m_held;       // outputs of the last loop stored a row late (planHeldRows)
    int m_drainLoop = -1;                   // the loop that stores them
    int m_prefetchLoop = -1; // the loop that prefetches a block at a time
    std::vector<LoopDim> m_outer, m_inner;
    bool m_flat = false;
    int64_t m_columns = 0; // column mode (planColumns): outputs in a block, 0 for rows
    int64_t m_parts = 0; // split reductions (planSplit): parts of the reduced range, 0 for none
    int64_t m_splitUnit = 1; // parts' bounds are multiples of this (a row mode's lanes)
    int m_tileDim = -1;      // tiles (planTiles): the outer dim of a tile's rows, -1 for none
    bool m_hasCat = false;
};

} // namespace

std::optional<std::string> generateKernel(const Kernel &kernel, std::vector<std::string> *notes)
{
    return KernelEmitter(kernel, notes).emit();
}

} // namespace fusescope::compiler
