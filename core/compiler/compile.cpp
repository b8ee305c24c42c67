#include "core/compiler/compile.h"

#include "core/compiler/codegen.h"
#include "core/compiler/fusion_rules.h"
#include "core/compiler/graph_json.h"
#include "core/compiler/loader.h"
#include "core/nn/module.h"
#include "core/runtime/observer.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>

namespace fusescope::compiler {

const std::vector<std::string> &stageNames()
{
    static const std::vector<std::string> names{"capture", "decompose", "simplify", "fuse", "plan-memory", "codegen",
                                                "load"};
    return names;
}

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Before fuse every op that is not a view is one eager kernel reading its
// inputs and writing its outputs.
StageStats graphStats(const Graph &g)
{
    StageStats s;
    s.nodes = static_cast<int64_t>(g.size());
    for (const Node *n : g.nodes()) {
        if (n->kind != NodeKind::CallFunction || isAliasView(*n))
            continue;
        ++s.kernels;
        for (const NodeRef &r : n->inputs())
            s.bytesMoved += static_cast<double>(r.node->meta(r.index).nbytes());
        for (const TensorMeta &m : n->outputs)
            s.bytesMoved += static_cast<double>(m.nbytes());
    }
    return s;
}

class Pipeline
{
public:
    explicit Pipeline(std::vector<CompileStage> &stages) : m_stages(stages) {}

    // Runs one stage and records its snapshot; `f(log)` returns the details
    // JSON. `observed` is false where the caller reported the stage's real work.
    template <typename F>
    void run(const std::string &name, const Graph &graph, F &&f, bool observed = true)
    {
        observed = observed && observers::active();
        if (observed)
            observers::compileStageBegin(name);
        CompileStage stage;
        stage.name = name;
        const Clock::time_point start = Clock::now();
        stage.detailsJson = f(stage.log);
        stage.durationMs = msSince(start);
        if (observed)
            observers::compileStageEnd(name);
        stage.graphJson = graphToJsonText(graph);
        stage.stats = m_schedule ? scheduled(graph) : graphStats(graph);
        m_stages.push_back(std::move(stage));
    }

    void setSchedule(const Schedule *s) { m_schedule = s; }
    void setPlan(const MemoryPlan *p) { m_plan = p; }

private:
    StageStats scheduled(const Graph &g) const
    {
        StageStats s;
        s.nodes = static_cast<int64_t>(g.size());
        s.kernels = static_cast<int64_t>(m_schedule->kernels.size());
        s.bytesMoved = m_schedule->bytesMoved();
        if (m_plan) {
            s.plannedPeak = m_plan->arenaBytes;
            s.unplannedPeak = m_plan->unplannedBytes;
        }
        return s;
    }

    std::vector<CompileStage> &m_stages;
    const Schedule *m_schedule = nullptr;
    const MemoryPlan *m_plan = nullptr;
};

nlohmann::json planToJson(const MemoryPlan &plan)
{
    nlohmann::json buffers = nlohmann::json::array();
    for (const BufferPlan &b : plan.buffers)
        buffers.push_back({{"node", b.value.node->id}, {"output", b.value.index}, {"bytes", b.bytes},
                           {"offset", b.offset}, {"first_kernel", b.first}, {"last_kernel", b.last},
                           {"graph_output", b.graphOutput}, {"in_place_of", b.inPlaceOf}, {"part_of", b.partOf},
                           {"part_offset", b.partOffset}, {"view_of_parts", b.viewOfParts}});
    return {{"arena_bytes", plan.arenaBytes}, {"unplanned_bytes", plan.unplannedBytes},
            {"live_bytes_bound", plan.liveBytesBound}, {"buffers", buffers}};
}

void loadKernels(Executable &exe, const GeneratedModule &module, const CompileOptions &options, PassLog &log)
{
    std::string why;
    std::optional<Toolchain> tc = options.interpret ? std::nullopt : findToolchain(why);
    if (options.interpret)
        why = "interpreter requested: kernels run node by node with the eager kernels";
    if (!tc) {
        log.push_back(why);
        return;
    }
    std::vector<std::string> symbols = module.symbols;
    symbols.push_back(kWrapperSymbol);
    LoadedModule loaded = loadModule(*tc, module.source, symbols, log);
    for (size_t i = 0; i + 1 < loaded.symbols.size(); ++i) {
        if (loaded.symbols[i])
            exe.setKernel(i, reinterpret_cast<FusescopeKernelFn>(loaded.symbols[i]));
    }
    exe.setWrapper(reinterpret_cast<FusescopeCallFn>(loaded.symbols.back()));
    exe.holdLibrary(loaded.handle);
}

} // namespace

CompileResult compileGraph(Graph graph, double captureMs, const CompileOptions &options)
{
    CompileResult result;
    Pipeline p(result.stages);
    p.run(
        "capture", graph,
        [&](PassLog &log) {
            log.push_back(std::to_string(graph.size()) + " nodes captured");
            return std::string();
        },
        false);
    result.stages.back().durationMs = captureMs;
    p.run("decompose", graph, [&](PassLog &log) { decompose(graph, log); return std::string(); });
    p.run("simplify", graph, [&](PassLog &log) { simplify(graph, log); return std::string(); });
    Schedule schedule;
    p.setSchedule(&schedule); // filled by the stage before its stats are taken
    p.run("fuse", graph, [&](PassLog &log) {
        schedule = fuse(graph, log);
        return scheduleToJson(schedule).dump();
    });
    MemoryPlan plan;
    p.setPlan(&plan);
    p.run("plan-memory", graph, [&](PassLog &log) {
        plan = planMemory(graph, schedule, log);
        return planToJson(plan).dump();
    });
    GeneratedModule module;
    p.run("codegen", graph, [&](PassLog &log) {
        module = generateModule(graph, schedule, log);
        return std::string();
    });
    result.stages.back().code = module.source;
    // The executable owns the graph from here; nodes keep their addresses.
    auto exe = std::make_shared<Executable>(std::move(graph), std::move(schedule), std::move(plan));
    p.setSchedule(&exe->schedule());
    p.setPlan(&exe->plan());
    p.run("load", exe->graph(), [&](PassLog &log) {
        loadKernels(*exe, module, options, log);
        return std::string();
    });
    result.executable = exe;
    return result;
}

// --- guards and variants ----------------------------------------------------------------

std::string guardMismatch(const std::vector<InputGuard> &guards, const TensorList &inputs)
{
    if (guards.size() != inputs.size())
        return "input count " + std::to_string(guards.size()) + " -> " + std::to_string(inputs.size());
    for (size_t i = 0; i < guards.size(); ++i) {
        const InputGuard &g = guards[i];
        const Tensor &t = inputs[i];
        const std::string in = "input " + std::to_string(i) + ": ";
        if (g.dtype != t.dtype())
            return in + "dtype " + dtypeName(g.dtype) + " -> " + dtypeName(t.dtype());
        if (g.sizes != t.sizes())
            return in + "shape " + shapeStr(g.sizes) + " -> " + shapeStr(t.sizes());
        if (g.strides != t.strides())
            return in + "strides " + shapeStr(g.strides) + " -> " + shapeStr(t.strides());
        if (!(g.device == t.device()))
            return in + "device " + g.device.str() + " -> " + t.device().str();
    }
    return {};
}

CompiledFunction::CompiledFunction(TensorFn fn, NamedTensors parameters, CompileOptions options)
    : m_fn(std::move(fn))
    , m_parameters(std::move(parameters))
    , m_options(options)
{
}

std::vector<CompileStage> CompiledFunction::stages() const
{
    std::vector<CompileStage> all;
    if (m_variants.empty())
        return all;
    for (const Segment &s : m_variants.back().segments)
        all.insert(all.end(), s.result.stages.begin(), s.result.stages.end());
    return all;
}

const std::vector<GraphBreak> &CompiledFunction::graphBreaks() const
{
    static const std::vector<GraphBreak> none;
    return m_variants.empty() ? none : m_variants.back().breaks;
}

namespace {

std::vector<InputGuard> placeholderGuards(const Graph &g)
{
    std::vector<InputGuard> guards;
    for (const Node *n : g.placeholders())
        guards.push_back({n->meta().sizes, n->meta().strides, n->meta().dtype, kCPU});
    return guards;
}

} // namespace

CompiledFunction::Variant &CompiledFunction::compileFor(const TensorList &inputs)
{
    std::vector<CaptureInput> specs;
    Variant v;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const Tensor &t = inputs[i];
        if (t.isMeta())
            throw Error("compiled function: input " + std::to_string(i) + " is a meta tensor; call it with data");
        specs.push_back({inputs.size() == 1 ? "x" : "x" + std::to_string(i), t.sizes(), t.strides(), t.dtype()});
        v.guards.push_back({t.sizes(), t.strides(), t.dtype(), t.device()});
    }
    const Clock::time_point start = Clock::now();
    if (observers::active())
        observers::compileStageBegin("capture");
    CapturedProgram program = captureProgram(m_fn, specs, inputs, m_parameters);
    if (observers::active()) {
        observers::compileStageEnd("capture");
        for (const GraphBreak &b : program.breaks)
            observers::instant("graph break", b.reason);
    }
    const double captureMs = msSince(start);
    for (size_t i = 0; i < program.segments.size(); ++i) {
        Segment seg;
        seg.guards = placeholderGuards(program.segments[i]);
        seg.result = compileGraph(std::move(program.segments[i]), i == 0 ? captureMs : 0, m_options);
        for (CompileStage &st : seg.result.stages)
            st.segment = static_cast<int>(i);
        if (i > 0)
            seg.result.stages.front().log.push_back("starts after the graph break at " + program.breaks[i - 1].op);
        v.segments.push_back(std::move(seg));
    }
    v.inputsOf = std::move(program.inputsOf);
    v.breaks = std::move(program.breaks);
    v.outputs = std::move(program.outputs);
    m_lastCompileMs = msSince(start);
    m_variants.push_back(std::move(v));
    return m_variants.back();
}

std::optional<TensorList> CompiledFunction::run(const Variant &v, const TensorList &inputs, std::string &why)
{
    std::map<Source, Tensor> values;
    auto valueOf = [&](const Source &s) {
        return s.kind == Source::Kind::Input ? inputs.at(static_cast<size_t>(s.index)) : values.at(s);
    };
    for (size_t i = 0; i < v.segments.size(); ++i) {
        TensorList in;
        for (const Source &s : v.inputsOf[i])
            in.push_back(valueOf(s));
        const std::string mismatch = guardMismatch(v.segments[i].guards, in);
        if (!mismatch.empty()) {
            why = "segment " + std::to_string(i) + " " + mismatch;
            return std::nullopt;
        }
        const Executable &exe = *v.segments[i].result.executable;
        if (i == 0)
            m_last = &exe;
        const TensorList outs = exe.run(in);
        for (size_t k = 0; k < outs.size(); ++k)
            values[{Source::Kind::Segment, static_cast<int>(i), static_cast<int>(k)}] = outs[k];
        if (i < v.breaks.size()) {
            const TensorList b = runBreak(v.breaks[i], valueOf);
            for (size_t k = 0; k < b.size(); ++k)
                values[{Source::Kind::Break, static_cast<int>(i), static_cast<int>(k)}] = b[k];
        }
    }
    TensorList results;
    for (const Source &s : v.outputs)
        results.push_back(valueOf(s));
    return results;
}

TensorList CompiledFunction::operator()(const TensorList &inputs)
{
    std::string segmentMismatch;
    for (const Variant &v : m_variants) {
        if (!guardMismatch(v.guards, inputs).empty())
            continue;
        if (std::optional<TensorList> out = run(v, inputs, segmentMismatch))
            return *out;
    }
    if (!m_variants.empty()) {
        m_recompiles.push_back(segmentMismatch.empty() ? closestMismatch(inputs) : segmentMismatch);
        if (observers::active())
            observers::instant("recompile", m_recompiles.back());
    }
    std::string why;
    std::optional<TensorList> out = run(compileFor(inputs), inputs, why);
    if (!out)
        throw Error("compiled function: a fresh compile does not accept its own inputs (" + why + ")");
    return *out;
}

// The reason against the variant that comes closest (its first difference
// is latest in the order dtype, shape, strides, device); the newest on ties.
std::string CompiledFunction::closestMismatch(const TensorList &inputs) const
{
    static const char *order[] = {"input count", "dtype", "shape", "strides", "device"};
    auto rank = [](const std::string &reason) {
        int r = 0;
        for (int i = 0; i < 5; ++i) {
            if (reason.find(order[i]) != std::string::npos)
                r = i;
        }
        return r;
    };
    std::string best;
    int bestRank = -1;
    for (const Variant &v : m_variants) {
        const std::string reason = guardMismatch(v.guards, inputs);
        if (rank(reason) >= bestRank) {
            best = reason;
            bestRank = rank(reason);
        }
    }
    return best;
}

CompiledFunction compile(TensorFn fn, NamedTensors parameters, CompileOptions options)
{
    return CompiledFunction(std::move(fn), std::move(parameters), options);
}

CompiledFunction compile(std::shared_ptr<nn::Module> module, CompileOptions options)
{
    NamedTensors params = moduleTensors(*module);
    return CompiledFunction([module](const TensorList &in) { return TensorList{(*module)(in)}; }, std::move(params),
                            options);
}

} // namespace fusescope::compiler
