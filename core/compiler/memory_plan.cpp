#include "core/compiler/memory_plan.h"

#include "core/compiler/fusion_rules.h"

#include <algorithm>
#include <map>

namespace fusescope::compiler {

int MemoryPlan::indexOf(NodeRef value) const
{
    for (size_t i = 0; i < buffers.size(); ++i) {
        if (buffers[i].value == value)
            return static_cast<int>(i);
    }
    return -1;
}

bool MemoryPlan::skips(size_t kernel) const
{
    // Asked before every extern kernel of every call; the list is in kernel order.
    return std::binary_search(concatsInPlace.begin(), concatsInPlace.end(), static_cast<int>(kernel));
}

namespace {

constexpr int64_t kAlign = 64;

int64_t aligned(int64_t bytes)
{
    return (bytes + kAlign - 1) / kAlign * kAlign;
}

std::vector<BufferPlan> collectBuffers(const Graph &graph, const Schedule &schedule)
{
    std::vector<BufferPlan> buffers;
    std::map<std::pair<const Node *, int>, size_t> index;
    for (size_t k = 0; k < schedule.kernels.size(); ++k) {
        for (const NodeRef &out : schedule.kernels[k].outputs) {
            index[{out.node, out.index}] = buffers.size();
            buffers.push_back({out, out.node->meta(out.index).nbytes(), 0, static_cast<int>(k), static_cast<int>(k)});
        }
        for (const NodeRef &in : schedule.kernels[k].inputs) {
            auto it = index.find({in.node, in.index});
            if (it != index.end())
                buffers[it->second].last = static_cast<int>(k);
        }
    }
    for (const NodeRef &r : graph.outputNode()->inputs()) {
        auto it = index.find({storageRoot(r).node, storageRoot(r).index});
        if (it != index.end())
            buffers[it->second].graphOutput = true;
    }
    return buffers;
}

// --- concatenation in place -----------------------------------------------------
// A cat along a dim with only size-1 dims before it (channels at batch 1) is
// its inputs laid end to end. When every input is a buffer of its own,
// written by an earlier kernel and read by nothing that could write over it,
// each input is placed inside the output at its offset, so the producing
// kernels write the concatenation and the cat has nothing to copy
// (SqueezeNet's fire modules). Later cats are placed first: DenseNet's last
// cat of a block holds every feature of the block, and each earlier cat of the
// block then finds its inputs one after another inside it and becomes a view
// of that stretch.

// The byte offset of each input in the output, or nothing when the layout
// does not allow it.
std::optional<std::vector<int64_t>> concatLayout(const Node &cat)
{
    if (cat.args().size() < 2 || cat.args()[0].kind != Arg::Kind::RefList || !cat.args()[1].constant.isInt())
        return std::nullopt;
    const TensorMeta &out = cat.meta();
    const auto rank = static_cast<int64_t>(out.sizes.size());
    const int64_t dim = wrapDim(cat.args()[1].constant.toInt(), rank, "aten.cat");
    for (int64_t d = 0; d < dim; ++d) {
        if (out.sizes[static_cast<size_t>(d)] != 1)
            return std::nullopt;
    }
    std::vector<int64_t> offsets;
    int64_t at = 0;
    for (const NodeRef &r : cat.args()[0].refs) {
        const TensorMeta &m = r.node->meta(r.index);
        if (m.dtype != out.dtype || static_cast<int64_t>(m.sizes.size()) != rank)
            return std::nullopt;
        offsets.push_back(at);
        at += m.nbytes();
    }
    if (at != out.nbytes())
        return std::nullopt;
    return offsets;
}

// The buffers of a cat's inputs, or nothing when one is a view, a graph
// output, listed twice or missing.
std::optional<std::vector<int>> concatInputs(const Node &cat, const MemoryPlan &plan)
{
    std::vector<int> inputs;
    for (const NodeRef &r : cat.args()[0].refs) {
        const int i = isAliasView(*r.node) ? -1 : plan.indexOf(r);
        if (i < 0 || plan.buffers[static_cast<size_t>(i)].graphOutput
            || std::find(inputs.begin(), inputs.end(), i) != inputs.end())
            return std::nullopt;
        inputs.push_back(i);
    }
    return inputs;
}

// Places free inputs inside the cat's output c.
bool claimParts(int c, const std::vector<int> &inputs, const std::vector<int64_t> &offsets, MemoryPlan &plan)
{
    for (int i : inputs) {
        if (plan.buffers[static_cast<size_t>(i)].partOf >= 0)
            return false;
    }
    plan.buffers[static_cast<size_t>(c)].holdsParts = true;
    for (size_t p = 0; p < inputs.size(); ++p) {
        BufferPlan &part = plan.buffers[static_cast<size_t>(inputs[p])];
        part.partOf = c;
        part.partOffset = offsets[p];
    }
    return true;
}

// The outermost buffer b lies in, and b's byte offset inside it.
std::pair<int, int64_t> placeInRoot(const std::vector<BufferPlan> &buffers, int b)
{
    int64_t offset = 0;
    for (; buffers[static_cast<size_t>(b)].partOf >= 0; b = buffers[static_cast<size_t>(b)].partOf)
        offset += buffers[static_cast<size_t>(b)].partOffset;
    return {b, offset};
}

// Makes the cat's output c a view of a placed cat that holds its inputs one
// after another.
bool viewInsidePlaced(int c, const std::vector<int> &inputs, MemoryPlan &plan)
{
    BufferPlan &out = plan.buffers[static_cast<size_t>(c)];
    if (out.partOf >= 0 || out.holdsParts || inputs.empty())
        return false;
    const auto [root, start] = placeInRoot(plan.buffers, inputs.front());
    int64_t at = start;
    for (int i : inputs) {
        if (plan.buffers[static_cast<size_t>(i)].partOf < 0 || placeInRoot(plan.buffers, i) != std::pair{root, at})
            return false;
        at += plan.buffers[static_cast<size_t>(i)].bytes;
    }
    out.partOf = root;
    out.partOffset = start;
    out.viewOfParts = true;
    return true;
}

void placeConcatInputs(const Schedule &schedule, MemoryPlan &plan, PassLog &log)
{
    for (size_t k = schedule.kernels.size(); k-- > 0;) {
        const Kernel &kernel = schedule.kernels[k];
        if (kernel.kind != KernelKind::Extern || !kernel.anchor || kernel.anchor->target != "aten.cat")
            continue;
        const int c = plan.indexOf(kernel.anchor->out());
        const std::optional<std::vector<int64_t>> offsets = concatLayout(*kernel.anchor);
        const std::optional<std::vector<int>> inputs
            = offsets ? concatInputs(*kernel.anchor, plan) : std::nullopt;
        if (c < 0 || plan.buffers[static_cast<size_t>(c)].graphOutput || !inputs)
            continue;
        if (claimParts(c, *inputs, *offsets, plan)) {
            log.push_back(kernel.name + ": its " + std::to_string(inputs->size())
                          + " inputs are written in place in its output, nothing to copy");
        } else if (viewInsidePlaced(c, *inputs, plan)) {
            const BufferPlan &root = plan.buffers[static_cast<size_t>(plan.buffers[static_cast<size_t>(c)].partOf)];
            log.push_back(kernel.name + ": its inputs lie one after another in the output of "
                          + schedule.kernels[static_cast<size_t>(root.first)].name + ", a view of them, nothing to copy");
        } else {
            continue;
        }
        plan.concatsInPlace.push_back(static_cast<int>(k));
    }
    std::reverse(plan.concatsInPlace.begin(), plan.concatsInPlace.end());
    // The outermost buffer's slot holds every part and view for all their lives.
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
        const int root = placeInRoot(plan.buffers, static_cast<int>(b)).first;
        BufferPlan &r = plan.buffers[static_cast<size_t>(root)];
        r.first = std::min(r.first, plan.buffers[b].first);
        r.last = std::max(r.last, plan.buffers[b].last);
    }
}

// An elementwise kernel reads input element i only to write output element
// i, so its output may overwrite an input that dies in it when every read of
// that input walks the domain in the output's order (no broadcast, no
// transpose; a contiguous reshape is fine).
bool canWriteOver(const Kernel &k, const BufferPlan &in, const BufferPlan &out)
{
    if ((k.kind != KernelKind::Pointwise && k.kind != KernelKind::Gemm) || in.graphOutput || out.graphOutput)
        return false;
    if (in.bytes != out.bytes)
        return false;
    const Shape dense = contiguousStrides(k.domain);
    for (const Node *n : k.nodes) {
        for (const NodeRef &r : n->inputs()) {
            if (storageRoot(r) != in.value)
                continue;
            const TensorMeta &m = r.node->meta(r.index);
            if (m.sizes != k.domain || m.strides != dense || m.offset != 0)
                return false;
        }
    }
    return true;
}

void pairInPlace(const Schedule &schedule, std::vector<BufferPlan> &buffers)
{
    std::vector<bool> taken(buffers.size(), false);
    for (size_t o = 0; o < buffers.size(); ++o) {
        BufferPlan &out = buffers[o];
        const Kernel &k = schedule.kernels[static_cast<size_t>(out.first)];
        if (out.value.node == k.anchor || out.partOf >= 0 || out.holdsParts)
            continue; // BLAS writes its output while it still reads its operands; a concatenation's places are set
        for (size_t i = 0; i < buffers.size(); ++i) {
            BufferPlan &in = buffers[i];
            if (i == o || taken[i] || in.last != out.first || in.inPlaceOf >= 0 || in.partOf >= 0 || in.holdsParts
                || !canWriteOver(k, in, out))
                continue;
            const bool readHere = std::find(k.inputs.begin(), k.inputs.end(), in.value) != k.inputs.end()
                || (k.anchor && in.value.node == k.anchor);
            if (!readHere)
                continue;
            out.inPlaceOf = static_cast<int>(i);
            taken[i] = true;
            break;
        }
    }
}

bool overlaps(const BufferPlan &a, const BufferPlan &b)
{
    return a.first <= b.last && b.first <= a.last;
}

// Largest first, each at the lowest offset free for its whole lifetime.
int64_t placeInArena(std::vector<BufferPlan> &buffers)
{
    std::vector<size_t> order;
    for (size_t i = 0; i < buffers.size(); ++i) {
        if (!buffers[i].graphOutput && buffers[i].inPlaceOf < 0 && buffers[i].partOf < 0)
            order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
    std::vector<size_t> placed;
    int64_t arena = 0;
    for (size_t i : order) {
        BufferPlan &b = buffers[i];
        std::vector<std::pair<int64_t, int64_t>> busy;
        for (size_t p : placed) {
            if (overlaps(buffers[p], b))
                busy.push_back({buffers[p].offset, buffers[p].offset + aligned(buffers[p].bytes)});
        }
        std::sort(busy.begin(), busy.end());
        int64_t offset = 0;
        for (const auto &[lo, hi] : busy) {
            if (offset + aligned(b.bytes) <= lo)
                break;
            offset = std::max(offset, hi);
        }
        b.offset = offset;
        arena = std::max(arena, offset + aligned(b.bytes));
        placed.push_back(i);
    }
    return arena;
}

// A buffer written in place takes its input's offset (chains resolve in
// kernel order); a concatenation's input lies at its offset inside the
// output, which may itself be an input of a later concatenation (pairwise
// chains: DenseNet as older exporters write it).
void resolveInPlace(std::vector<BufferPlan> &buffers)
{
    for (BufferPlan &b : buffers) {
        if (b.inPlaceOf >= 0)
            b.offset = buffers[static_cast<size_t>(b.inPlaceOf)].offset;
        if (b.partOf < 0)
            continue;
        int64_t offset = b.partOffset;
        int whole = b.partOf;
        for (; buffers[static_cast<size_t>(whole)].partOf >= 0; whole = buffers[static_cast<size_t>(whole)].partOf)
            offset += buffers[static_cast<size_t>(whole)].partOffset;
        b.offset = buffers[static_cast<size_t>(whole)].offset + offset;
    }
}

int64_t liveBound(const std::vector<BufferPlan> &buffers, int kernels)
{
    int64_t best = 0;
    for (int k = 0; k < kernels; ++k) {
        int64_t live = 0;
        for (const BufferPlan &b : buffers) {
            if (!b.graphOutput && b.first <= k && k <= b.last && b.inPlaceOf < 0 && b.partOf < 0)
                live += aligned(b.bytes);
        }
        best = std::max(best, live);
    }
    return best;
}

} // namespace

MemoryPlan planMemory(const Graph &graph, const Schedule &schedule, PassLog &log)
{
    MemoryPlan plan;
    plan.buffers = collectBuffers(graph, schedule);
    placeConcatInputs(schedule, plan, log);
    pairInPlace(schedule, plan.buffers);
    // An in-place chain shares one slot: extend the root's lifetime over it.
    for (BufferPlan &b : plan.buffers) {
        int root = b.inPlaceOf;
        while (root >= 0 && plan.buffers[static_cast<size_t>(root)].inPlaceOf >= 0)
            root = plan.buffers[static_cast<size_t>(root)].inPlaceOf;
        if (root >= 0) {
            BufferPlan &r = plan.buffers[static_cast<size_t>(root)];
            r.last = std::max(r.last, b.last);
            b.inPlaceOf = root;
        }
    }
    plan.arenaBytes = placeInArena(plan.buffers);
    resolveInPlace(plan.buffers);
    int inPlace = 0;
    for (const BufferPlan &b : plan.buffers) {
        if (!b.graphOutput)
            plan.unplannedBytes += aligned(b.bytes);
        inPlace += b.inPlaceOf >= 0 ? 1 : 0;
    }
    plan.liveBytesBound = liveBound(plan.buffers, static_cast<int>(schedule.kernels.size()));
    log.push_back(std::to_string(plan.buffers.size()) + " buffers, " + std::to_string(inPlace) + " written in place");
    log.push_back("planned peak " + std::to_string(plan.arenaBytes) + " bytes (unplanned "
                  + std::to_string(plan.unplannedBytes) + ", lower bound " + std::to_string(plan.liveBytesBound) + ")");
    return plan;
}

} // namespace fusescope::compiler
