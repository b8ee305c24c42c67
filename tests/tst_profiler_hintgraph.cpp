// The graph and compiler rules (unfused-pointwise, missed-fusion, layout,
// precision, memory, recompiles): a positive and a negative fixture each, the
// eager and compiled `encoder` recorded by our own binary, and the real
// Kineto traces of the test data.
#include "hintfixture.h"

#include "profiler/hintrules.h"
#include "profiler/hints.h"
#include "profiler/importer.h"
#include "profiler/tracereader.h"

#include "core/compiler/graph_json.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

using namespace fusescope;
using namespace fusescope::profiler;
using compiler::NodeKind;
using fixture::fixtureTrace;

Q_DECLARE_METATYPE(std::string)

namespace {

const std::string kTestData = FUSESCOPE_TESTDATA_DIR;

const HintRule &rule(const std::string &id)
{
    static const std::vector<HintRule> rules = graphHintRules();
    return *std::find_if(rules.begin(), rules.end(), [&id](const HintRule &r) { return r.id == id; });
}

std::string frameworkOf(const Run &run)
{
    return run.info.mode == "imported" ? "pytorch" : "fusescope";
}

// One rule on one run of `trace`, with the stages given (or the run's own).
std::vector<Hint> check(const std::string &id, const Trace &trace, const Run &run, const CompileStages *stages = nullptr)
{
    const RunStatistics stats = computeStatistics(trace, run);
    const HintContext ctx{trace, run, stats, stages ? stages : (run.stages.empty() ? nullptr : &run.stages),
                          frameworkOf(run), nullptr};
    return rule(id).check(ctx);
}

std::string names(const Trace &trace, const Run &run, const std::vector<EventId> &ids)
{
    std::set<std::string> unique;
    for (EventId id : ids)
        unique.insert(trace.strings[run.event(id).name]);
    std::string out;
    for (const std::string &n : unique)
        out += (out.empty() ? "" : ",") + n;
    return out;
}

// A small graph written in C++: placeholders and calls of contiguous f32 tensors.
class GraphBuilder
{
public:
    compiler::Node *input(const std::string &name, const Shape &shape)
    {
        return m_graph.add(NodeKind::Placeholder, name, {}, {meta(shape)}, name);
    }
    compiler::Node *call(const std::string &target, const std::vector<compiler::Node *> &inputs, const Shape &shape,
                         const std::string &name)
    {
        std::vector<compiler::Arg> args;
        for (compiler::Node *n : inputs)
            args.push_back(compiler::Arg::of(compiler::NodeRef{n, 0}));
        m_last = m_graph.add(NodeKind::CallFunction, target, std::move(args), {meta(shape)}, name);
        return m_last;
    }
    // Origins in the captured graph (a later stage's nodes keep them).
    void origins(compiler::Node *node, std::vector<int> ids) { node->origins = std::move(ids); }
    std::string json()
    {
        m_graph.add(NodeKind::Output, "output", {compiler::Arg::list({compiler::NodeRef{m_last, 0}})}, {}, "output");
        return compiler::graphToJsonText(m_graph);
    }

private:
    static compiler::TensorMeta meta(const Shape &shape)
    {
        compiler::TensorMeta m;
        m.sizes = shape;
        m.strides = contiguousStrides(shape);
        return m;
    }
    compiler::Graph m_graph;
    compiler::Node *m_last = nullptr;
};

compiler::CompileStage stage(const std::string &name, std::string graph, std::string details = {}, int segment = 0)
{
    compiler::CompileStage s;
    s.name = name;
    s.graphJson = std::move(graph);
    s.detailsJson = std::move(details);
    s.segment = segment;
    return s;
}

// x → mm → add(bias) → gelu: two 1 MiB intermediates ([256,1024] f32).
std::string mmAddGeluGraph()
{
    GraphBuilder g;
    compiler::Node *x = g.input("x", {256, 512});
    compiler::Node *w = g.input("w", {512, 1024});
    compiler::Node *b = g.input("b", {1024});
    compiler::Node *mm = g.call("aten.mm", {x, w}, {256, 1024}, "mm");
    compiler::Node *add = g.call("aten.add", {mm, b}, {256, 1024}, "add");
    g.call("aten.gelu", {add}, {256, 1024}, "gelu");
    return g.json();
}

// Two eager steps of that graph; add and gelu reach 5 MiB / 200 µs.
const char *kEagerChain = R"(
source fusescope
step 0 {step}
op aten.mm 10 300 shapes="[256,512] f32, [512,1024] f32"
op aten.add 320 100 bytes=3145728
op aten.gelu 430 100 bytes=2097152
step {step} {step}
op aten.mm {t1} 300
op aten.add {t2} 100 bytes=3145728
op aten.gelu {t3} 100 bytes=2097152
)";

std::string eagerChainText(int64_t stepUs)
{
    std::string text = kEagerChain;
    auto put = [&text](const std::string &key, int64_t value) {
        for (size_t at; (at = text.find(key)) != std::string::npos;)
            text.replace(at, key.size(), std::to_string(value));
    };
    put("{step}", stepUs);
    put("{t1}", stepUs + 10);
    put("{t2}", stepUs + 320);
    put("{t3}", stepUs + 430);
    return text;
}

const char *kAddFunctor = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "
                          "at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)";
const char *kMulFunctor = "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, "
                          "at::detail::Array<char*, 3> >(int, at::native::MulFunctor<float>, at::detail::Array<char*, 3>)";

// Four times: add, mul, add (30 µs each), then a GEMM; `pairs` drops the third.
std::string kernelSequenceText(bool pairs)
{
    std::ostringstream text;
    text << "repeat 4 every 100 kernel \"" << kAddFunctor << "\" 0 30\n"
         << "repeat 4 every 100 kernel \"" << kMulFunctor << "\" 30 30\n";
    if (!pairs)
        text << "repeat 4 every 100 kernel \"" << kAddFunctor << "\" 60 30\n";
    text << "repeat 4 every 100 kernel volta_sgemm_128x64_nn 90 10\n";
    return text.str();
}

// The compiled form: gemm_mm_add_0 holds mm and add; mul reads add through a
// transpose, so fuse refused it and fused_mul_1 reads add back.
// `consumer`: the kind of the refused consumer's kernel; as "gemm" the run
// measures no memory-bound kernel. `consumerBytes`: what fused_mul_1 moves per launch.
Trace missedFusionTrace(bool refused, const std::string &consumer = "pointwise", int consumerBytes = 2097152)
{
    GraphBuilder g;
    compiler::Node *x = g.input("x", {256, 512});
    compiler::Node *w = g.input("w", {512, 1024});
    compiler::Node *b = g.input("b", {1024});
    compiler::Node *mm = g.call("aten.mm", {x, w}, {256, 1024}, "mm");
    compiler::Node *add = g.call("aten.add", {mm, b}, {256, 1024}, "add");
    compiler::Node *t = g.call("aten.transpose", {add}, {1024, 256}, "transpose");
    compiler::Node *mul = g.call("aten.mul", {t}, {1024, 256}, "mul");
    g.origins(mm, {3});
    g.origins(add, {3});
    g.origins(t, {4});
    g.origins(mul, {5});
    const std::string graph = g.json();
    const std::string decision = refused
        ? R"j({"producer":"add","consumer":"mul","fused":false,"reason":"mul reads add through a view (aten.transpose)","bytes_saved":0})j"
        : R"({"producer":"mm","consumer":"add","fused":true,"reason":"epilogue of aten.mm","bytes_saved":1048576})";
    const std::string details = R"({"kernels":[{"name":"gemm_mm_add_0","kind":"gemm","nodes":[)" + std::to_string(mm->id)
        + "," + std::to_string(add->id) + R"(]},{"name":"fused_mul_1","kind":")" + consumer + R"(","nodes":[)"
        + std::to_string(mul->id) + R"(]}],"decisions":[)" + decision + "]}";
    const std::string bytes = std::to_string(consumerBytes);
    Trace trace = fixtureTrace(R"(
source fusescope
step 0 1000
kernel gemm_mm_add_0 10 400 thread=1 detail=3 bytes=3145728
kernel fused_mul_1 420 100 thread=1 detail=5 bytes=)" + bytes + R"(
step 1000 1000
kernel gemm_mm_add_0 1010 400 thread=1 detail=3 bytes=3145728
kernel fused_mul_1 1420 100 thread=1 detail=5 bytes=)" + bytes + "\n");
    Run &run = trace.runs.front();
    run.info.mode = "compiled";
    run.stages = {stage("capture", graph), stage("fuse", graph, details)};
    return trace;
}

void addCompileStageEvent(Trace &trace, int64_t start, int64_t duration)
{
    Run &run = trace.runs.front();
    Event e;
    e.kind = EventKind::CompileStage;
    e.name = trace.strings.intern("capture");
    e.start = start;
    e.duration = duration;
    e.track = TrackId(0);
    run.events.push_back(e);
}

// The fixture, plus lines "extra <start µs> <JSON>" (Kineto's args, which the
// fixture's quoting cannot carry) attached to the op starting then.
Trace withExtras(const std::string &text)
{
    std::istringstream in(text);
    std::string plain;
    std::vector<std::pair<int64_t, std::string>> extras;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("extra ", 0) != 0) {
            plain += line + "\n";
            continue;
        }
        const size_t space = line.find(' ', 6);
        extras.emplace_back(std::stoll(line.substr(6, space - 6)) * 1000, line.substr(space + 1));
    }
    Trace trace = fixtureTrace(plain);
    Run &run = trace.runs.front();
    for (const auto &[start, json] : extras) {
        for (Event &e : run.events) {
            if (e.kind != EventKind::Op || e.start != start)
                continue;
            EventArgs args;
            args.extra = trace.strings.intern(json);
            run.args.push_back(args);
            e.args = ArgsId(uint32_t(run.args.size() - 1));
        }
    }
    return trace;
}

std::optional<Trace> importFile(const std::string &relative)
{
    const std::string path = kTestData + "/kineto/" + relative;
    if (!std::filesystem::exists(path))
        return std::nullopt;
    return importKineto({path});
}

std::vector<Hint> allGraphHints(const Trace &trace)
{
    std::vector<Hint> hints;
    for (const HintRule &r : graphHintRules()) {
        for (Hint &h : check(r.id, trace, trace.runs.front()))
            hints.push_back(std::move(h));
    }
    return hints;
}

std::string describe(const std::vector<Hint> &hints)
{
    std::string text;
    for (const Hint &h : hints)
        text += h.rule + " " + std::to_string(h.savingUs) + " µs: " + h.message + "\n";
    return text;
}

} // namespace

class TestHintGraph : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { setenv("XDG_CACHE_HOME", FUSESCOPE_TEST_CACHE_DIR, 1); }

    void rulesInOrder()
    {
        std::string ids;
        for (const HintRule &r : graphHintRules()) {
            ids += (ids.empty() ? "" : ",") + r.id;
            QVERIFY2(!r.thresholds.empty() && !r.title.empty(), r.id.c_str());
        }
        QCOMPARE(ids, std::string("unfused-pointwise,missed-fusion,layout,precision,memory,recompiles"));
    }

    // Eager ops matched to the captured graph: saving = 2 × (1 MiB + 1 MiB)
    // × 2 calls ÷ add's 3 MiB / 100 µs (faster than gelu's 2 MiB / 100 µs) = 266.7 µs.
    void unfusedChainFromGraph_data()
    {
        QTest::addColumn<std::string>("mode");
        QTest::addColumn<int>("stepUs");
        QTest::addColumn<int>("hints");
        QTest::newRow("eager") << std::string("eager") << 1000 << 1;
        QTest::newRow("compiled: the fuse stage's") << std::string("compiled") << 1000 << 0;
        QTest::newRow("below 1 % of the steps") << std::string("eager") << 20'000'000 << 0;
    }
    void unfusedChainFromGraph()
    {
        QFETCH(std::string, mode);
        QFETCH(int, stepUs);
        QFETCH(int, hints);
        Trace trace = fixtureTrace(eagerChainText(stepUs));
        Run &run = trace.runs.front();
        run.info.mode = mode;
        const CompileStages stages{stage("capture", mmAddGeluGraph())};
        const std::vector<Hint> found = check("unfused-pointwise", trace, run, &stages);
        QCOMPARE(int(found.size()), hints);
        if (!hints)
            return;
        const Hint &h = found.front();
        QCOMPARE(h.rule, std::string("unfused-pointwise"));
        QVERIFY2(std::abs(h.savingUs - 800.0 / 3) < 1e-6, std::to_string(h.savingUs).c_str());
        QCOMPARE(h.nodes, (std::vector<int>{3, 4, 5}));
        QCOMPARE(names(trace, run, h.events), std::string("aten.add,aten.gelu,aten.mm"));
        QCOMPARE(h.events.size(), size_t(6));
        QVERIFY2(h.message.find("mm (aten.mm) → add (aten.add) → gelu (aten.gelu)") != std::string::npos, h.message.c_str());
        QVERIFY2(h.message.find("2 intermediates") != std::string::npos, h.message.c_str());
        QVERIFY2(h.fix.find("--compile") != std::string::npos, h.fix.c_str());
    }

    // No graph: four runs of add → mul → add; saving = 4 × 2/3 × 60 µs = 160 µs.
    void unfusedChainFromKernels_data()
    {
        QTest::addColumn<bool>("pairs");
        QTest::newRow("three in a row") << false;
        QTest::newRow("only pairs") << true;
    }
    void unfusedChainFromKernels()
    {
        QFETCH(bool, pairs);
        const Trace trace = fixtureTrace(kernelSequenceText(pairs));
        const std::vector<Hint> found = check("unfused-pointwise", trace, trace.runs.front());
        QCOMPARE(found.size(), size_t(pairs ? 0 : 1));
        if (pairs)
            return;
        const Hint &h = found.front();
        QCOMPARE(h.savingUs, 160.0);
        QCOMPARE(h.events.size(), size_t(12));
        QVERIFY2(h.message.find("AddFunctor<float> → MulFunctor<float> → AddFunctor<float>") != std::string::npos,
                 h.message.c_str());
        QVERIFY2(h.message.find("ran 4 times") != std::string::npos, h.message.c_str());
        QVERIFY2(h.fix.find("torch.compile") != std::string::npos, h.fix.c_str());
    }

    // add's 1 MiB written and read back per launch of fused_mul_1, 2 launches,
    // at fused_mul_1's 2 MiB / 100 µs: 2 × 1 MiB × 2 / 20.97 B/ns = 200 µs.
    void missedFusion_data()
    {
        QTest::addColumn<bool>("refused");
        QTest::addColumn<std::string>("consumer");
        QTest::addColumn<int>("consumerBytes");
        QTest::addColumn<bool>("priced");
        QTest::newRow("refused through a view") << true << std::string("pointwise") << 2097152 << true;
        QTest::newRow("everything fused") << false << std::string("pointwise") << 2097152 << false;
        // Only compute-bound kernels measured: no rate to price the round trip at.
        QTest::newRow("refused, no memory-bound kernel") << true << std::string("gemm") << 2097152 << false;
        // 4 KiB a launch times the launch, not the memory: no rate either.
        QTest::newRow("refused, memory-bound kernel too small") << true << std::string("pointwise") << 4096 << false;
    }
    void missedFusion()
    {
        QFETCH(bool, refused);
        QFETCH(std::string, consumer);
        QFETCH(int, consumerBytes);
        QFETCH(bool, priced);
        const Trace trace = missedFusionTrace(refused, consumer, consumerBytes);
        const std::vector<Hint> found = check("missed-fusion", trace, trace.runs.front());
        QCOMPARE(found.size(), size_t(priced ? 1 : 0));
        if (found.empty())
            return;
        const Hint &h = found.front();
        QCOMPARE(h.savingUs, 200.0);
        QCOMPARE(h.nodes, (std::vector<int>{3, 5}));
        QCOMPARE(names(trace, trace.runs.front(), h.events), std::string("fused_mul_1,gemm_mm_add_0"));
        QVERIFY2(h.message.find("cannot fuse add with mul: mul reads add through a view (aten.transpose)") == 0,
                 h.message.c_str());
        QVERIFY2(h.fix.find("layout the consumer reads") != std::string::npos, h.fix.c_str());
    }

    void layout_data()
    {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::string>("gpu");
        QTest::addColumn<double>("savingUs");
        QTest::addColumn<std::string>("evidence");
        QTest::addColumn<std::string>("piece");
        // contiguous → clone → copy_ counts once: 3 × 50 µs of a 1 ms step.
        const char *copies = R"(
step 0 1000
op aten::contiguous 100 50
op aten::clone 101 48
op aten::copy_ 102 40
op aten::contiguous 300 50
op aten::clone 301 48
op aten::contiguous 500 50
op aten::mm 600 300
)";
        QTest::newRow("stride copies") << std::string(copies) << std::string() << 150.0
                                       << std::string("aten::contiguous") << std::string("3 copies only to fix strides");
        QTest::newRow("copies under 2 %") << std::string("step 0 100000\nop aten::contiguous 100 50\n") << std::string()
                                          << -1.0 << std::string() << std::string();
        const char *strided = R"(
step 0 1000
op aten::add 100 400
op aten::add 600 100
extra 100 {"Input Dims":[[64,32],[64,32]],"Input Strides":[[1,64],[32,1]]}
extra 600 {"Input Dims":[[64,32],[1,32]],"Input Strides":[[32,1],[0,1]]}
)";
        QTest::newRow("strided elementwise") << std::string(strided) << std::string() << 200.0
                                             << std::string("aten::add") << std::string("1 elementwise ops read non-contiguous");
        // K = 13: its flops at the aligned GEMM's rate take 4.96 µs of its 200.
        const char *gemms = R"(
step 0 1000
op aten::mm 100 100
op aten::mm 300 200
extra 100 {"Input Dims":[[1024,256],[256,256]],"Input type":["float","float"]}
extra 300 {"Input Dims":[[1000,13],[13,256]],"Input type":["float","float"]}
)";
        QTest::newRow("GEMM K=13 on A100") << std::string(gemms) << std::string("NVIDIA A100-SXM4-40GB") << 195.041
                                           << std::string("aten::mm") << std::string("1 GEMMs with M, N or K not a multiple of 8");
        QTest::newRow("f32 GEMM K=13 on V100") << std::string(gemms) << std::string("Tesla V100-SXM2-32GB") << -1.0
                                               << std::string() << std::string();
    }
    void layout()
    {
        QFETCH(std::string, text);
        QFETCH(std::string, gpu);
        QFETCH(double, savingUs);
        QFETCH(std::string, evidence);
        QFETCH(std::string, piece);
        Trace trace = withExtras(text);
        trace.meta.gpu = gpu;
        const std::vector<Hint> found = check("layout", trace, trace.runs.front());
        QCOMPARE(found.size(), size_t(savingUs < 0 ? 0 : 1));
        if (savingUs < 0)
            return;
        const Hint &h = found.front();
        QVERIFY2(std::abs(h.savingUs - savingUs) < 0.01, std::to_string(h.savingUs).c_str());
        QCOMPARE(names(trace, trace.runs.front(), h.events), evidence);
        QVERIFY2(h.message.find(piece) == 0, h.message.c_str());
    }

    // 500 µs of f32 GEMMs in a 1 ms step: half of it on TF32 tensor cores.
    void precision_data()
    {
        QTest::addColumn<std::string>("gpu");
        QTest::addColumn<std::string>("kernel");
        QTest::addColumn<bool>("fires");
        QTest::newRow("sgemm on A100") << std::string("NVIDIA A100-PG509-200") << std::string("ampere_sgemm_32x32_sliced1x4_tn") << true;
        QTest::newRow("sgemm on H100") << std::string("NVIDIA H100 80GB HBM3") << std::string("sm90_sgemm_128x64_nn") << true;
        QTest::newRow("sgemm on V100") << std::string("Tesla V100-SXM2-32GB") << std::string("volta_sgemm_128x64_nn") << false;
        QTest::newRow("TF32 already") << std::string("NVIDIA A100-PG509-200")
                                      << std::string("sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x16") << false;
        QTest::newRow("CPU run") << std::string() << std::string("ampere_sgemm_32x32_sliced1x4_tn") << false;
    }
    void precision()
    {
        QFETCH(std::string, gpu);
        QFETCH(std::string, kernel);
        QFETCH(bool, fires);
        Trace trace = fixtureTrace("step 0 1000\nrepeat 5 every 200 kernel " + kernel + " 0 100\n");
        trace.meta.gpu = gpu;
        const std::vector<Hint> found = check("precision", trace, trace.runs.front());
        QCOMPARE(found.size(), size_t(fires ? 1 : 0));
        if (!fires)
            return;
        QCOMPARE(found.front().savingUs, 250.0);
        QCOMPARE(found.front().events.size(), size_t(5));
        QVERIFY2(found.front().fix.find("allow_tf32") != std::string::npos, found.front().fix.c_str());
        QVERIFY2(found.front().fix.find("bfloat16") != std::string::npos, found.front().fix.c_str());
    }

    void memory_data()
    {
        QTest::addColumn<bool>("backward");
        QTest::addColumn<int64_t>("reservedMiB");
        QTest::addColumn<std::string>("pieces");
        QTest::newRow("activations in training") << true << int64_t(0) << std::string("300.0 MiB (75%)");
        QTest::newRow("inference: nothing to checkpoint") << false << int64_t(0) << std::string();
        QTest::newRow("fragmentation") << false << int64_t(1024) << std::string("624.0 MiB held but unused");
        QTest::newRow("reserved 1.25 ×") << false << int64_t(500) << std::string();
    }
    // 100 MiB before the step, +300 MiB in forward, freed in backward.
    void memory()
    {
        QFETCH(bool, backward);
        QFETCH(int64_t, reservedMiB);
        QFETCH(std::string, pieces);
        std::string text = R"(
alloc 1 104857600 device=0
step 10 1000
op aten::linear 10 400
alloc 20 104857600 device=0
alloc 200 209715200 device=0
alloc 600 -209715200 device=0
alloc 800 -104857600 device=0
)";
        if (backward)
            text += "op \"autograd::engine::evaluate_function: AddmmBackward0\" 500 400\n";
        Trace trace = fixtureTrace(text);
        for (Allocation &a : trace.runs.front().allocations)
            a.reservedAfter = std::max(a.reservedAfter, reservedMiB << 20);
        const std::vector<Hint> found = check("memory", trace, trace.runs.front());
        QCOMPARE(found.size(), size_t(pieces.empty() ? 0 : 1));
        if (pieces.empty())
            return;
        QVERIFY2(found.front().message.find(pieces) != std::string::npos, found.front().message.c_str());
        QCOMPARE(found.front().savingUs, 0.0);
        const char *fix = backward ? "torch.utils.checkpoint" : "expandable_segments";
        QVERIFY2(found.front().fix.find(fix) != std::string::npos, found.front().fix.c_str());
    }

    // Two recompiles; the compile after the first took 300 µs.
    void recompiles_data()
    {
        QTest::addColumn<bool>("recompile");
        QTest::addColumn<int>("segments");
        QTest::addColumn<std::string>("ids");
        QTest::newRow("recompiles") << true << 1 << std::string("recompiles");
        QTest::newRow("a graph break") << false << 2 << std::string("recompiles");
        QTest::newRow("neither") << false << 1 << std::string();
    }
    void recompiles()
    {
        QFETCH(bool, recompile);
        QFETCH(int, segments);
        QFETCH(std::string, ids);
        Trace trace = fixtureTrace(recompile ? R"(
source fusescope
step 0 1000
instant recompile 100 text="input 0: shape [8,128,256] -> [4,128,256]"
instant recompile 600 text="input 0: shape [8,128,256] -> [4,128,256]"
)"
                                             : "source fusescope\nstep 0 1000\n");
        if (recompile) {
            addCompileStageEvent(trace, 10'000, 50'000);
            addCompileStageEvent(trace, 110'000, 300'000);
        }
        Run &run = trace.runs.front();
        run.info.mode = "compiled";
        GraphBuilder g;
        g.call("aten.relu", {g.input("x", {8, 128, 256})}, {8, 128, 256}, "relu");
        const std::string graph = g.json();
        for (int s = 0; s < segments; ++s)
            run.stages.push_back(stage("capture", graph, {}, s));
        const std::vector<Hint> found = check("recompiles", trace, run);
        QCOMPARE(found.size(), size_t(ids.empty() ? 0 : 1));
        if (ids.empty())
            return;
        const Hint &h = found.front();
        if (recompile) {
            QCOMPARE(h.savingUs, 300.0);
            QCOMPARE(h.events.size(), size_t(2));
            QCOMPARE(h.nodes, std::vector<int>{0});
            QVERIFY2(h.message.find("2 recompiles: input 0: shape [8,128,256] -> [4,128,256] (×2)") == 0, h.message.c_str());
        } else {
            QCOMPARE(h.savingUs, 0.0);
            QVERIFY2(h.message.find("1 graph break") == 0, h.message.c_str());
        }
    }

    // Our own runs: the eager encoder's chains (linear → gelu, the residual
    // adds after their linears) are named, the compiled run's are fused.
    void ownEncoder()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("encoder.fstrace"));
        QProcess p;
        p.start(QStringLiteral(FUSESCOPE_BINARY),
                {QStringLiteral("profile"), QStringLiteral("encoder"), QStringLiteral("--compare"), QStringLiteral("--steps"),
                 QStringLiteral("3"), QStringLiteral("--record-shapes"), QStringLiteral("--profile-memory"),
                 QStringLiteral("-o"), file});
        QVERIFY(p.waitForFinished(120'000));
        QCOMPARE(p.exitCode(), 0);
        const std::optional<Trace> trace = TraceReader(file.toStdString()).load();
        QVERIFY(trace && trace->runs.size() == 2);
        const Run &eager = trace->runs[0];
        const Run &compiled = trace->runs[1];
        QCOMPARE(compiled.info.mode, std::string("compiled"));
        const std::vector<Hint> hints = check("unfused-pointwise", *trace, eager, &compiled.stages);
        QVERIFY2(!hints.empty(), "rule 2 stays silent on the eager encoder");
        std::string messages;
        for (const Hint &h : hints) {
            messages += h.message + "\n";
            QVERIFY(h.savingUs > 0 && !h.events.empty() && h.nodes.size() >= 2);
        }
        QVERIFY2(messages.find("→ gelu (aten.gelu)") != std::string::npos, messages.c_str());
        QVERIFY2(messages.find("→ add (aten.add)") != std::string::npos, messages.c_str());
        QVERIFY2(messages.find("→ add_1 (aten.add)") != std::string::npos, messages.c_str());
        // Each chain runs as one compiled kernel: some kernel's origins hold all its nodes.
        for (const Hint &h : hints) {
            bool oneKernel = false;
            for (const Event &e : compiled.events) {
                if (e.kind != EventKind::Kernel)
                    continue;
                std::set<int> origins;
                std::istringstream in(trace->strings[e.detail]);
                for (std::string id; std::getline(in, id, ',');)
                    origins.insert(std::atoi(id.c_str()));
                oneKernel = oneKernel
                    || std::all_of(h.nodes.begin(), h.nodes.end(), [&origins](int n) { return origins.count(n) > 0; });
            }
            QVERIFY2(oneKernel, h.message.c_str());
        }
        qInfo("%s", describe(hints).c_str());
        QVERIFY(check("unfused-pointwise", *trace, compiled).empty());
        QVERIFY(computeStatistics(*trace, compiled).kernels.size() > 0);
        qInfo("%s", describe(check("missed-fusion", *trace, compiled)).c_str());
    }

    void realTraces_data()
    {
        QTest::addColumn<std::string>("file");
        QTest::addColumn<std::string>("expected"); // rule ids of the graph rules, in rule order
        // A100: f32 sgemm/scudnn kernels without TF32.
        QTest::newRow("alexnet A100") << std::string("hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz")
                                      << std::string("precision");
        // V100 training: Add → Add → ReLU runs, the optimizer's Add/Mul loop,
        // 192 .contiguous() copies, 2.6 GB of activations; f32 on V100 is fine.
        QTest::newRow("resnet50 V100") << std::string("kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
                                       << std::string("unfused-pointwise,unfused-pointwise,layout,memory");
        QTest::newRow("V100 ns") << std::string("hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
                                 << std::string("unfused-pointwise");
        QTest::newRow("dlrm V100") << std::string("param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json")
                                   << std::string();
        QTest::newRow("mi250") << std::string("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz") << std::string();
        QTest::newRow("triton A100, one kernel") << std::string("hta/triton_example/triton_example.json.gz") << std::string();
    }
    void realTraces()
    {
        QFETCH(std::string, file);
        QFETCH(std::string, expected);
        const std::optional<Trace> trace = importFile(file);
        if (!trace)
            QSKIP("the Kineto test data is not here");
        const std::vector<Hint> hints = allGraphHints(*trace);
        qInfo("%s gpu=%s\n%s", file.c_str(), trace->meta.gpu.c_str(), describe(hints).c_str());
        std::string ids;
        for (const Hint &h : hints)
            ids += (ids.empty() ? "" : ",") + h.rule;
        QCOMPARE(ids, expected);
        for (const Hint &h : hints)
            QVERIFY2(!h.fix.empty() && (!h.events.empty() || h.rule == "memory"), h.message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestHintGraph)
#include "tst_profiler_hintgraph.moc"
