// The tensor rules: layout (stride-fixing copies, strided elementwise
// inputs, GEMM shapes tensor cores dislike), precision (f32 GEMMs on GPUs
// with TF32/bf16 tensor cores) and memory (activations at the peak, an
// allocator holding far more than it hands out). Listed by hintrules_graph.cpp.

#include "profiler/hintrules.h"
#include "profiler/hinttimeline.h"

#include "core/ops/registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

namespace fusescope::profiler {

namespace hinting {
HintRule layoutRule();
HintRule precisionRule();
HintRule memoryRule();
int64_t graphRulesBaseNs(const HintContext &c); // hintrules_graph.cpp
} // namespace hinting

namespace {

using namespace hinting;
using Dims = std::vector<int64_t>;

constexpr double kCopyShare = 0.02;      // stride-fixing copies
constexpr double kStridedShare = 0.02;   // elementwise ops on strided inputs
constexpr double kGemmShare = 0.05;      // misaligned tensor-core GEMMs
constexpr double kF32GemmShare = 0.05;   // f32 GEMMs on Ampere and later
constexpr double kActivationShare = 0.5; // of the peak
constexpr int64_t kMinPeak = 16ll << 20;
constexpr double kReservedRatio = 1.5;
constexpr int64_t kMinUnused = 128ll << 20;

const std::string &nameOf(const HintContext &c, const Event &e)
{
    return c.trace.strings[e.name];
}

int64_t baseTime(const HintContext &c)
{
    return graphRulesBaseNs(c);
}

std::string formatMiB(double bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024.0));
    return text;
}

std::vector<EventId> byDuration(const Run &run, const std::vector<EventId> &events)
{
    std::vector<std::pair<double, EventId>> weighted;
    for (EventId id : events)
        weighted.emplace_back(double(run.event(id).duration), id);
    return strongest(std::move(weighted));
}

// Our op names ("aten.add") and PyTorch's ("aten::add_", in place) alike.
const OpDef *opDefOf(std::string name)
{
    if (name.rfind("aten::", 0) == 0)
        name = "aten." + name.substr(6);
    const OpDef *def = OpRegistry::instance().find(name);
    if (!def && !name.empty() && name.back() == '_')
        def = OpRegistry::instance().find(name.substr(0, name.size() - 1));
    return def;
}

// The event's extra arguments (imported traces), or null.
std::optional<nlohmann::json> extraOf(const HintContext &c, const Event &e)
{
    const EventArgs *args = argsOf(c.run, e);
    if (!args || !args->extra.valid())
        return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(c.trace.strings[args->extra], nullptr, false);
    return j.is_object() ? std::optional<nlohmann::json>(std::move(j)) : std::nullopt;
}

// Compute capability from the GPU's marketing name (the importers keep only
// the name); -1 when unknown (CPU runs, AMD). Longer names first: "A100" before "A10".
double computeCapability(const std::string &gpu)
{
    static const std::pair<const char *, double> table[] = {
        {"B200", 10.0}, {"B100", 10.0}, {"H100", 9.0}, {"H200", 9.0}, {"H800", 9.0}, {"GH200", 9.0},
        {"A100", 8.0},  {"A800", 8.0},  {"A30", 8.0},  {"L40", 8.9},  {"L4", 8.9},   {"RTX 40", 8.9},
        {"Ada", 8.9},   {"A40", 8.6},   {"A10", 8.6},  {"RTX 30", 8.6}, {"RTX A", 8.6}, {"V100", 7.0},
        {"TITAN V", 7.0}, {"T4", 7.5},  {"RTX 20", 7.5}, {"P100", 6.0},
    };
    for (const auto &[name, cc] : table) {
        if (gpu.find(name) != std::string::npos)
            return cc;
    }
    return -1;
}

// ---------------------------------------------------------------- rule 8

bool isStrideCopy(const std::string &name)
{
    return name == "aten::contiguous" || name == "aten::clone" || name == "aten.contiguous" || name == "aten.clone";
}

// contiguous → clone → copy_ is one copy: keep the outermost of them.
std::vector<EventId> strideCopies(const HintContext &c)
{
    std::vector<EventId> copies;
    for (uint32_t i = 0; i < c.run.events.size(); ++i) {
        const Event &e = c.run.events[i];
        if (e.kind == EventKind::Op && isStrideCopy(nameOf(c, e)))
            copies.emplace_back(i);
    }
    std::sort(copies.begin(), copies.end(), [&c](EventId a, EventId b) {
        const Event &x = c.run.event(a);
        const Event &y = c.run.event(b);
        return std::tuple(x.track, x.start, -x.duration) < std::tuple(y.track, y.start, -y.duration);
    });
    std::vector<EventId> outer;
    for (EventId id : copies) {
        const Event &e = c.run.event(id);
        if (outer.empty() || c.run.event(outer.back()).track != e.track || e.start >= c.run.event(outer.back()).end())
            outer.push_back(id);
    }
    return outer;
}

double totalNs(const Run &run, const std::vector<EventId> &events)
{
    double ns = 0;
    for (EventId id : events)
        ns += double(run.event(id).duration);
    return ns;
}

std::optional<Hint> copyHint(const HintContext &c)
{
    const std::vector<EventId> copies = strideCopies(c);
    const double ns = totalNs(c.run, copies);
    const double base = double(baseTime(c));
    if (copies.empty() || base <= 0 || ns < kCopyShare * base)
        return std::nullopt;
    Hint hint;
    hint.rule = "layout";
    hint.savingUs = ns / 1000.0;
    hint.severity = severityFor(ns, int64_t(base));
    hint.message = std::to_string(copies.size()) + " copies only to fix strides (contiguous/clone) take "
        + formatNs(ns) + ", " + formatPercent(ns / base) + " of the step time (threshold 2 %)";
    hint.fix = inFramework(c.framework,
                           "keep tensors in the layout the next op reads: avoid .contiguous() after transpose/permute "
                           "(transpose the weight once instead), and .reshape() of non-contiguous views",
                           "avoid the layout copies: produce data in the layout its consumer reads",
                           "a reshape of a transposed tensor copies (aten.clone): keep the layout the next op reads, "
                           "or compile so the copy becomes index arithmetic");
    hint.events = byDuration(c.run, copies);
    return hint;
}

// A list of integers, or nothing (Kineto writes a TensorList as a list of lists).
std::optional<Dims> dimsOf(const nlohmann::json &j)
{
    if (!j.is_array())
        return std::nullopt;
    Dims out;
    for (const nlohmann::json &v : j) {
        if (!v.is_number_integer())
            return std::nullopt;
        out.push_back(v.get<int64_t>());
    }
    return out;
}

// Whether row-major strides would differ, ignoring size-1 dims and
// broadcasts (stride 0).
bool isStrided(const Dims &sizes, const Dims &strides)
{
    if (sizes.size() != strides.size())
        return false;
    int64_t expected = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        if (sizes[i] != 1 && strides[i] != 0 && strides[i] != expected)
            return true;
        expected *= std::max<int64_t>(sizes[i], 1);
    }
    return false;
}

// Elementwise ops whose recorded inputs ("Input Dims" + "Input Strides",
// newer Kineto with record_shapes) are strided.
bool readsStrided(const HintContext &c, const Event &e)
{
    const OpDef *def = opDefOf(nameOf(c, e));
    if (!def || def->kind != OpKind::Pointwise)
        return false;
    const std::optional<nlohmann::json> extra = extraOf(c, e);
    if (!extra || !extra->contains("Input Dims") || !extra->contains("Input Strides"))
        return false;
    const nlohmann::json &dims = (*extra)["Input Dims"];
    const nlohmann::json &strides = (*extra)["Input Strides"];
    if (!dims.is_array() || !strides.is_array())
        return false;
    for (size_t i = 0; i < std::min(dims.size(), strides.size()); ++i) {
        const std::optional<Dims> d = dimsOf(dims[i]);
        const std::optional<Dims> s = dimsOf(strides[i]);
        if (d && s && !d->empty() && isStrided(*d, *s))
            return true;
    }
    return false;
}

// Strided elementwise access wastes much of each memory transaction; taken
// to run at half the contiguous speed, so the saving is half their time.
std::optional<Hint> stridedHint(const HintContext &c)
{
    std::vector<EventId> strided;
    for (uint32_t i = 0; i < c.run.events.size(); ++i) {
        if (c.run.events[i].kind == EventKind::Op && readsStrided(c, c.run.events[i]))
            strided.emplace_back(i);
    }
    const double ns = totalNs(c.run, strided);
    const double base = double(baseTime(c));
    if (strided.empty() || base <= 0 || ns < kStridedShare * base)
        return std::nullopt;
    Hint hint;
    hint.rule = "layout";
    hint.savingUs = ns / 2000.0;
    hint.severity = severityFor(ns / 2, int64_t(base));
    hint.message = std::to_string(strided.size()) + " elementwise ops read non-contiguous inputs, " + formatNs(ns)
        + " (" + formatPercent(ns / base) + " of the step time, threshold 2 %); strided reads run at about half speed";
    hint.fix = inFramework(c.framework,
                           "make the producer write the layout its consumers read (e.g. channels_last end to end), "
                           "or torch.compile so the access is fused",
                           "write the data in the layout its consumers read",
                           "make the producer write the layout its consumers read, or compile the model");
    hint.events = byDuration(c.run, strided);
    return hint;
}

struct Gemm {
    int64_t m = 0;
    int64_t n = 0;
    int64_t k = 0;
    int64_t batch = 1;
    std::string dtype; // "float", "c10::Half", "f32", "bf16" …
    double flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
};

// "[8,128,256] f32, [768,256] f32" (our op detail) as dims and dtypes.
void parseShapes(const std::string &text, std::vector<Dims> &dims, std::vector<std::string> &dtypes)
{
    size_t pos = 0;
    while ((pos = text.find('[', pos)) != std::string::npos) {
        const size_t close = text.find(']', pos);
        if (close == std::string::npos)
            return;
        Dims d;
        for (size_t at = pos + 1; at < close;) {
            size_t used = 0;
            d.push_back(std::stoll(text.substr(at, close - at), &used));
            at += used + 1;
        }
        const size_t end = std::min(text.find(',', close), text.size());
        std::string dtype = close + 2 <= end ? text.substr(close + 2, end - close - 2) : "";
        dims.push_back(std::move(d));
        dtypes.push_back(std::move(dtype));
        pos = close;
    }
}

bool readInputs(const HintContext &c, const Event &e, std::vector<Dims> &dims, std::vector<std::string> &dtypes)
{
    if (const std::optional<nlohmann::json> extra = extraOf(c, e)) {
        const nlohmann::json inputs = extra->value("Input Dims", nlohmann::json());
        const nlohmann::json types = extra->value("Input type", nlohmann::json());
        for (size_t i = 0; inputs.is_array() && i < inputs.size(); ++i)
            dims.push_back(dimsOf(inputs[i]).value_or(Dims{}));
        for (size_t i = 0; types.is_array() && i < types.size(); ++i)
            dtypes.push_back(types[i].is_string() ? types[i].get<std::string>() : "");
        return !dims.empty();
    }
    try {
        parseShapes(c.trace.strings[e.detail], dims, dtypes);
    } catch (const std::exception &) {
        return false;
    }
    return !dims.empty();
}

// M, N, K of a GEMM op from its inputs' dims.
std::optional<Gemm> gemmOf(const HintContext &c, const Event &e)
{
    std::string name = nameOf(c, e);
    if (name.rfind("aten::", 0) == 0)
        name = "aten." + name.substr(6);
    std::vector<Dims> dims;
    std::vector<std::string> dtypes;
    const bool addmm = name == "aten.addmm" || name == "aten.baddbmm";
    if ((name != "aten.mm" && name != "aten.bmm" && name != "aten.matmul" && name != "aten.linear" && !addmm)
        || !readInputs(c, e, dims, dtypes))
        return std::nullopt;
    const size_t a = addmm ? 1 : 0;
    if (dims.size() < a + 2 || dims[a].size() < 2 || dims[a + 1].size() < 2)
        return std::nullopt;
    const Dims &x = dims[a];
    const Dims &w = dims[a + 1];
    Gemm g;
    g.k = x.back();
    g.m = 1;
    for (size_t i = 0; i + 1 < x.size(); ++i)
        (name == "aten.linear" || i + 2 == x.size() ? g.m : g.batch) *= x[i];
    g.n = name == "aten.linear" ? w[w.size() - 2] : w.back();
    g.dtype = dtypes.size() > a ? dtypes[a] : "";
    return g;
}

bool isHalfType(const std::string &dtype)
{
    return dtype == "c10::Half" || dtype == "c10::BFloat16" || dtype == "f16" || dtype == "bf16";
}

// Tensor cores take 16-bit GEMMs from Volta on and f32 ones (as TF32, or
// as bf16 after the precision fix) from Ampere on.
bool onTensorCores(const Gemm &g, double cc)
{
    return (cc >= 7.0 && isHalfType(g.dtype)) || cc >= 8.0;
}

// GPU time of an op: its kernels (Kineto's "External id" joins them), else
// the op's own duration (CPU runs).
std::map<int64_t, double> kernelNsByExternalId(const HintContext &c)
{
    std::map<int64_t, double> ns;
    for (const Event &e : c.run.events) {
        const EventArgs *args = e.kind == EventKind::Kernel ? argsOf(c.run, e) : nullptr;
        if (args && args->externalId >= 0)
            ns[args->externalId] += double(e.duration);
    }
    return ns;
}

struct GemmSet {
    std::vector<EventId> events;
    double ns = 0;
    double flops = 0;
};

// Misaligned GEMMs are compared with the aligned ones of the same run: the
// saving is their time minus their flops at the aligned GEMMs' measured rate.
std::optional<Hint> gemmShapeHint(const HintContext &c)
{
    const double cc = computeCapability(c.trace.meta.gpu);
    if (cc < 7.0)
        return std::nullopt;
    const std::map<int64_t, double> kernelNs = kernelNsByExternalId(c);
    GemmSet aligned;
    GemmSet misaligned;
    for (uint32_t i = 0; i < c.run.events.size(); ++i) {
        const Event &e = c.run.events[i];
        const std::optional<Gemm> g = e.kind == EventKind::Op ? gemmOf(c, e) : std::nullopt;
        if (!g || !onTensorCores(*g, cc))
            continue;
        const EventArgs *args = argsOf(c.run, e);
        auto it = args && args->externalId >= 0 ? kernelNs.find(args->externalId) : kernelNs.end();
        GemmSet &set = g->m % 8 || g->n % 8 || g->k % 8 ? misaligned : aligned;
        set.events.emplace_back(i);
        set.ns += it != kernelNs.end() ? it->second : double(e.duration);
        set.flops += g->flops();
    }
    const double base = double(baseTime(c));
    if (misaligned.events.empty() || base <= 0 || misaligned.ns < kGemmShare * base)
        return std::nullopt;
    const double rate = aligned.ns > 0 ? aligned.flops / aligned.ns : 0;
    const double saving = rate > 0 ? std::max(0.0, misaligned.ns - misaligned.flops / rate) : 0;
    Hint hint;
    hint.rule = "layout";
    hint.savingUs = saving / 1000.0;
    hint.severity = severityFor(std::max(saving, misaligned.ns / 4), int64_t(base));
    hint.message = std::to_string(misaligned.events.size()) + " GEMMs with M, N or K not a multiple of 8 take "
        + formatNs(misaligned.ns) + " (" + formatPercent(misaligned.ns / base)
        + " of the step time, threshold 5 %); tensor cores want multiples of 8 (16 for int8)";
    hint.fix = inFramework(c.framework,
                           "pad the feature, hidden and vocabulary sizes (and the batch) to multiples of 8",
                           "pad the GEMM dimensions to multiples of 8", "pad the GEMM dimensions to multiples of 8");
    hint.events = byDuration(c.run, misaligned.events);
    return hint;
}

std::vector<Hint> checkLayout(const HintContext &c)
{
    std::vector<Hint> hints;
    for (std::optional<Hint> h : {copyHint(c), stridedHint(c), gemmShapeHint(c)}) {
        if (h)
            hints.push_back(std::move(*h));
    }
    return hints;
}

// ---------------------------------------------------------------- rule 9

// cuBLAS/cuDNN f32 kernels: "sgemm", "scudnn"; "tf32" names and the TF32
// tensor-core shape "s1688" mean TF32 is on already.
bool isF32Gemm(const std::string &name)
{
    if (containsNoCase(name, "tf32") || name.find("1688") != std::string::npos)
        return false;
    return containsNoCase(name, "sgemm") || containsNoCase(name, "scudnn");
}

bool onGpuTrack(const Run &run, const Event &e)
{
    return e.track.value < run.tracks.size() && run.tracks[e.track.value].kind == TrackKind::GpuStream;
}

// TF32 tensor cores have 8× the f32 peak on A100 (bf16 16×); small and
// memory-bound GEMMs gain less, so half the time is the estimate.
std::vector<Hint> checkPrecision(const HintContext &c)
{
    const double cc = computeCapability(c.trace.meta.gpu);
    if (cc < 8.0)
        return {};
    std::vector<EventId> gemms;
    double kernelNs = 0;
    for (uint32_t i = 0; i < c.run.events.size(); ++i) {
        const Event &e = c.run.events[i];
        if (e.kind != EventKind::Kernel || !onGpuTrack(c.run, e))
            continue;
        kernelNs += double(e.duration);
        if (isF32Gemm(nameOf(c, e)))
            gemms.emplace_back(i);
    }
    // Against the GPU's kernel time: the fix speeds up the GPU's work, whether
    // or not the GPU is what bounds the step (gpu-idle tells that part).
    const double ns = totalNs(c.run, gemms);
    const double base = double(baseTime(c));
    if (gemms.empty() || kernelNs <= 0 || ns < kF32GemmShare * kernelNs)
        return {};
    char cap[16];
    std::snprintf(cap, sizeof cap, "%.1f", cc);
    Hint hint;
    hint.rule = "precision";
    hint.savingUs = ns / 2000.0;
    hint.severity = severityFor(ns / 2, int64_t(base));
    hint.message = std::to_string(gemms.size()) + " f32 GEMM/convolution kernels (no TF32) take " + formatNs(ns)
        + ", " + formatPercent(ns / kernelNs) + " of the GPU's kernel time, on a GPU of compute capability " + cap
        + " (threshold: ≥ 8.0 and ≥ 5 %)";
    hint.fix = inFramework(c.framework,
                           "allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True, torch.backends.cudnn.allow_tf32 "
                           "= True, or torch.set_float32_matmul_precision('high')), or run the forward under "
                           "torch.autocast('cuda', dtype=torch.bfloat16)",
                           "enable TF32 math (cublasSetMathMode CUBLAS_TF32_TENSOR_OP_MATH, or NVIDIA_TF32_OVERRIDE) "
                           "or compute in bf16",
                           "run the model in bf16 (cast the parameters and inputs) so GEMMs use tensor cores");
    hint.events = byDuration(c.run, gemms);
    return {hint};
}

// ---------------------------------------------------------------- rule 10

bool hasBackward(const HintContext &c)
{
    for (const Flow &f : c.run.flows) {
        if (f.kind == FlowKind::ForwardBackward)
            return true;
    }
    for (const Event &e : c.run.events) {
        if ((e.kind == EventKind::Op || e.kind == EventKind::UserRange) && containsNoCase(nameOf(c, e), "backward"))
            return true;
    }
    return false;
}

// The Step holding `time`, or none.
const Event *stepAt(const Run &run, int64_t time)
{
    for (const Event &e : run.events) {
        if (e.kind == EventKind::Step && e.start <= time && time <= e.end())
            return &e;
    }
    return nullptr;
}

// Bytes allocated on `device` just before `time`: the step's baseline
// (parameters, optimizer state, whatever lives across steps).
int64_t allocatedBefore(const Run &run, int device, int64_t time)
{
    int64_t allocated = 0;
    bool seen = false;
    for (const Allocation &a : run.allocations) {
        if (a.device != device)
            continue;
        if (a.time >= time) {
            return seen ? allocated : a.allocatedAfter - a.bytes;
        }
        allocated = a.allocatedAfter;
        seen = true;
    }
    return allocated;
}

// Older Kineto traces give allocation sizes only; the importer then leaves
// the reserved total 0 and counts the allocated one from the capture's start.
bool hasTotals(const Run &run, int device)
{
    return std::any_of(run.allocations.begin(), run.allocations.end(),
                       [device](const Allocation &a) { return a.device == device && a.reservedAfter > 0; });
}

// Peak − baseline is what the step allocated and still held at the peak (net
// of older tensors freed meanwhile): in training, the activations saved for
// backward. Inference runs have nothing to checkpoint, so they never fire.
std::optional<Hint> activationHint(const HintContext &c, const MemoryStats &m, bool training)
{
    if (!training || m.peakAllocated < kMinPeak)
        return std::nullopt;
    const Event *step = stepAt(c.run, m.peakAllocatedTime);
    const int64_t from = step ? step->start : (c.run.allocations.empty() ? 0 : c.run.allocations.front().time);
    const double activations = double(m.peakAllocated - allocatedBefore(c.run, m.device, from));
    const double share = activations / double(m.peakAllocated);
    if (share < kActivationShare)
        return std::nullopt;
    Hint hint;
    hint.rule = "memory";
    hint.severity = share >= 0.8 ? HintSeverity::Warning : HintSeverity::Info;
    hint.message = std::string(m.device < 0 ? "CPU" : "GPU " + std::to_string(m.device)) + " memory peak "
        + formatMiB(double(m.peakAllocated)) + ": " + formatMiB(activations) + " (" + formatPercent(share)
        + ") were allocated in the step and still held, the activations kept for backward (threshold 50 % of a "
          "peak ≥ 16 MiB); it saves memory, not time"
        + (hasTotals(c.run, m.device) ? "" : " (the trace has no allocator totals: counted from the capture's start)");
    hint.fix = inFramework(c.framework,
                           "activation checkpointing: wrap blocks in torch.utils.checkpoint.checkpoint(block, x, "
                           "use_reentrant=False) to recompute their activations in backward, or use a smaller "
                           "micro-batch",
                           "recompute activations in backward (activation checkpointing) or use a smaller micro-batch",
                           "recompute activations instead of keeping them, or use a smaller batch");
    return hint;
}

std::optional<Hint> fragmentationHint(const HintContext &c, const MemoryStats &m)
{
    const double unused = double(m.peakReserved - m.peakAllocated);
    if (m.peakAllocated <= 0 || double(m.peakReserved) < kReservedRatio * double(m.peakAllocated)
        || unused < double(kMinUnused))
        return std::nullopt;
    Hint hint;
    hint.rule = "memory";
    hint.severity = HintSeverity::Warning;
    hint.message = std::string(m.device < 0 ? "CPU" : "GPU " + std::to_string(m.device)) + " allocator reserved "
        + formatMiB(double(m.peakReserved)) + " for a peak of " + formatMiB(double(m.peakAllocated))
        + " allocated: " + formatMiB(unused) + " held but unused, fragmentation (threshold: reserved ≥ 1.5 × "
        + "allocated and ≥ 128 MiB unused)";
    hint.fix = inFramework(c.framework,
                           "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, and avoid many differently sized "
                           "temporaries (torch.cuda.empty_cache() does not lower the peak)",
                           "reuse buffers of equal size, or use an allocator with growable segments",
                           "reuse tensors of equal size (the caching allocator keeps freed blocks by size)");
    return hint;
}

// Activations live where the model runs: on the GPUs when the run has any.
std::vector<Hint> checkMemory(const HintContext &c)
{
    const bool training = hasBackward(c);
    const bool gpu = std::any_of(c.stats.memory.begin(), c.stats.memory.end(),
                                 [](const MemoryStats &m) { return m.device >= 0; });
    std::vector<Hint> hints;
    for (const MemoryStats &m : c.stats.memory) {
        const bool model = m.device >= 0 || !gpu;
        for (std::optional<Hint> h : {activationHint(c, m, training && model), fragmentationHint(c, m)}) {
            if (h)
                hints.push_back(std::move(*h));
        }
    }
    return hints;
}

} // namespace

namespace hinting {

HintRule layoutRule()
{
    return {"layout", "Layout",
            "copies made only to fix strides (contiguous/clone) ≥ 2 % of the step time, saving their time; "
            "elementwise ops on strided inputs (Kineto \"Input Strides\") ≥ 2 %, saving half their time; GEMMs "
            "with M, N or K not a multiple of 8 on tensor cores (16-bit from compute capability 7.0, any from 8.0) "
            "≥ 5 %, saving their time minus their flops at the aligned GEMMs' measured rate",
            checkLayout};
}

HintRule precisionRule()
{
    return {"precision", "Precision",
            "f32 GEMM/convolution kernels without TF32 (sgemm, scudnn; not tf32 or s1688) on a GPU of compute "
            "capability ≥ 8.0, ≥ 5 % of the GPU's kernel time. Saving: half their time",
            checkPrecision};
}

HintRule memoryRule()
{
    return {"memory", "Memory",
            "training runs: activations (allocated in the step and still held at the peak) ≥ 50 % of a peak ≥ "
            "16 MiB; any run: reserved ≥ 1.5 × allocated at the peaks with ≥ 128 MiB unused. Saves memory, no time",
            checkMemory};
}

} // namespace hinting

} // namespace fusescope::profiler
