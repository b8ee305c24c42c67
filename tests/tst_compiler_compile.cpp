// compile(): compiled and interpreted results against eager on every zoo
// model and on 300 random graphs, guards and recompiles, the on-disk cache,
// compiler failures, and the stage snapshots.
#include "core/compiler/compile.h"
#include "core/compiler/graph_json.h"
#include "core/ops/functional.h"
#include "core/ops/loops.h"
#include "core/ops/registry.h"
#include "core/runtime/threadpool.h"
#include "core/tensor/factory.h"
#include "core/zoo/zoo.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>

using namespace fusescope;
using namespace fusescope::compiler;

using RowFn = std::function<TensorList(const Tensor &)>;
Q_DECLARE_METATYPE(RowFn)

namespace {

// An executable shell script in `dir`, standing in for the C++ compiler ($CXX).
QString fakeCompiler(const QTemporaryDir &dir, const char *body)
{
    const QString script = dir.filePath(QStringLiteral("fake-cxx"));
    QFile f(script);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(body);
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return script;
}

// Of the finite elements: an infinite one would make any difference pass.
double maxAbs(const Tensor &t)
{
    double m = 0;
    for (double v : t.toDoubleVector())
        m = std::isfinite(v) ? std::max(m, std::abs(v)) : m;
    return m;
}

// max |a - b| <= 1e-4 * max |b| (+ a floor for all-zero results); NaN must
// match NaN, an infinity the same infinity.
bool matches(const Tensor &a, const Tensor &b, std::string &why)
{
    if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
        why = "got " + shapeStr(a.sizes()) + " " + dtypeName(a.dtype()) + ", want " + shapeStr(b.sizes()) + " "
            + dtypeName(b.dtype());
        return false;
    }
    const std::vector<double> x = a.toDoubleVector(), y = b.toDoubleVector();
    const double tol = 1e-4 * maxAbs(b) + 1e-6;
    for (size_t i = 0; i < x.size(); ++i) {
        const bool same = x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i]));
        if (!same && !(std::abs(x[i] - y[i]) <= tol)) {
            why = "element " + std::to_string(i) + ": " + std::to_string(x[i]) + " vs " + std::to_string(y[i]);
            return false;
        }
    }
    return true;
}

// Whether a line of the compile log (any stage's) contains `what`.
bool logged(const CompiledFunction &fn, const std::string &what)
{
    for (const CompileStage &s : fn.stages()) {
        for (const std::string &l : s.log) {
            if (l.find(what) != std::string::npos)
                return true;
        }
    }
    return false;
}

// `got` matches eager's result, or is as close to the f64 result `exact` as
// eager's is, within four times eager's own error: a random program may be
// ill-conditioned (a sum that cancels, then normalized), where any other order
// of the same f32 operations lands elsewhere.
bool asAccurateAsEager(const Tensor &got, const Tensor &eager, const Tensor &exact, std::string &why)
{
    if (matches(got, eager, why))
        return true;
    if (got.sizes() != eager.sizes() || got.dtype() != eager.dtype())
        return false;
    const std::vector<double> g = got.toDoubleVector(), e = eager.toDoubleVector(), r = exact.toDoubleVector();
    double eagerError = 0;
    for (size_t i = 0; i < r.size(); ++i) {
        if (!std::isnan(e[i]) && !std::isnan(r[i]))
            eagerError = std::max(eagerError, std::abs(e[i] - r[i]));
    }
    const double tol = 4 * eagerError + 1e-4 * maxAbs(exact) + 1e-6;
    for (size_t i = 0; i < r.size(); ++i) {
        // NaN only where eager has one; a number only where there is one to be near (an f32 product
        // that overflowed in eager's order may stay finite in another).
        const bool ok = std::isnan(g[i]) ? std::isnan(e[i]) : std::abs(g[i] - r[i]) <= tol;
        if (!ok) {
            why += "; element " + std::to_string(i) + " " + std::to_string(g[i]) + " is " + std::to_string(g[i] - r[i])
                + " off the f64 result, eager " + std::to_string(eagerError) + " at most";
            return false;
        }
    }
    return true;
}

// Points the on-disk kernel cache at a folder of the build, so test reruns are warm.
void useTestCache()
{
    static const bool once = [] {
        setenv("XDG_CACHE_HOME", FUSESCOPE_TEST_CACHE_DIR, 1);
        return true;
    }();
    (void)once;
}

// --- random graphs -----------------------------------------------------------------

// Builds a random expression over its inputs: pointwise ops with broadcasting,
// reductions, norms, views, GEMMs, cats and stacks, casts through f64, masks,
// scans and arg-reductions, over f32, f64, integer or bool inputs, from one seed.
class RandomProgram
{
public:
    explicit RandomProgram(uint64_t seed) : m_rng(seed), m_seed(seed)
    {
        const int rank = pick(1, 3);
        // A third of the dims are multiples of 16, whose rows split into vector
        // lanes (codegen's laned reductions), and one program in six has rows
        // of 2 KiB (its held output rows).
        for (int d = 0; d < rank; ++d)
            m_shape.push_back(pick(0, 2) == 0 ? 16 * pick(1, 4) : pick(1, 9));
        if (pick(0, 5) == 0) {
            for (int64_t &size : m_shape)
                size = std::min<int64_t>(size, 9);
            m_shape.back() = 512;
        }
        if (pick(0, 7) == 0) { // long rows: sums joined in chunks, rows not a multiple of 16
            for (int64_t &size : m_shape)
                size = std::min<int64_t>(size, 3);
            m_shape.back() = pick(0, 1) ? 2048 * pick(1, 3) : 1000 + pick(0, 6000);
        }
        m_inputShapes.push_back(m_shape);
        m_transposed.push_back(rank >= 2 && pick(0, 1));
        const int extra = pick(0, 2);
        for (int i = 0; i < extra; ++i) {
            m_inputShapes.push_back(broadcastable(m_shape));
            m_transposed.push_back(false);
        }
        m_steps = pick(3, 8);
        for (int i = 0; i < m_steps; ++i)
            m_choices.push_back(pick(0, 99));
        // Most programs run in f32; the rest on f64, integer or bool inputs.
        static const DType kinds[] = {DType::F64, DType::I32, DType::I64, DType::Bool};
        const int kind = pick(0, 9);
        m_dtype = kind < 4 ? kinds[kind] : DType::F32;
    }

    size_t inputCount() const { return m_inputShapes.size(); }

    TensorList inputs() const
    {
        Generator gen(m_seed);
        TensorList in;
        for (size_t i = 0; i < m_inputShapes.size(); ++i) {
            Shape s = m_inputShapes[i];
            if (m_transposed[i]) {
                std::swap(s[s.size() - 1], s[s.size() - 2]);
                in.push_back(randn(s, gen).transpose(-1, -2)); // non-contiguous input
            } else {
                in.push_back(randn(s, gen));
            }
        }
        for (Tensor &t : in) {
            if (m_dtype == DType::I32 || m_dtype == DType::I64)
                t = ops::cast(ops::round(ops::mul(t, 3.0)), m_dtype); // small integers, both signs
            else if (m_dtype == DType::Bool)
                t = ops::gt(t, 0.0);
            else if (m_dtype == DType::F64)
                t = ops::cast(t, m_dtype);
        }
        return in;
    }

    // The expression; runs eagerly on real tensors and captured on meta ones.
    TensorList operator()(const TensorList &in) const
    {
        std::vector<Tensor> pool(in.begin(), in.end());
        Tensor x = in[0];
        for (int choice : m_choices) {
            const Tensor &other = pool[static_cast<size_t>(choice) % pool.size()];
            x = step(x, other, choice);
            pool.push_back(x);
        }
        return {x};
    }

private:
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(m_rng); }

    Shape broadcastable(const Shape &s)
    {
        Shape out;
        const size_t drop = static_cast<size_t>(pick(0, static_cast<int>(s.size()) - 1));
        for (size_t d = drop; d < s.size(); ++d)
            out.push_back(pick(0, 2) == 0 ? 1 : s[d]);
        return out;
    }

    static Tensor step(const Tensor &x, const Tensor &other, int choice)
    {
        const bool fits = other.dim() <= x.dim() && broadcastsInto(other.sizes(), x.sizes());
        const Tensor y = fits ? other : x;
        const int64_t last = x.dim() >= 1 ? x.size(-1) : 0;
        switch (choice % 41) {
        case 0: return ops::exp(ops::neg(ops::abs(x)));
        case 1: return ops::tanh(x);
        case 2: return ops::sigmoid(x);
        case 3: return ops::relu(ops::sub(x, y));
        case 4: return ops::gelu(x);
        case 5: return ops::silu(ops::add(x, y));
        case 6: return ops::mul(x, y);
        case 7: return ops::div(x, ops::add(ops::abs(y), 1.0));
        case 8: return ops::maximum(x, ops::mul(y, 0.5));
        case 9: return ops::where(ops::gt(x, y), x, ops::neg(y));
        case 10: return ops::sqrt(ops::add(ops::mul(x, x), 1e-3));
        case 11: return ops::sum(x, {-1}, true);
        case 12: return ops::amax(x, {x.dim() - 1}, choice % 2 == 0);
        case 13: return ops::mean(x, {0}, true);
        case 14: return x.dim() >= 2 ? ops::add(x.transpose(-1, -2).contiguous().transpose(-1, -2), y) : ops::neg(x);
        case 15: return x.dim() >= 2 ? ops::exp(ops::neg(ops::abs(x.transpose(-1, -2)))) : ops::cos(x);
        case 16: return ops::softmax(x, -1);
        case 17: return x.dim() >= 1 ? ops::mul(x.unsqueeze(0).expand(concat({2}, x.sizes())), 0.5) : x;
        case 18:
            if (x.dim() == 4) // a batched GEMM over two strided batch dims, kept whole by the compiler
                return ops::matmul(x.transpose(1, 2), x.transpose(1, 2).transpose(-1, -2));
            return x.dim() == 2 ? ops::gelu(ops::matmul(x, ops::transpose(x, 0, 1))) : ops::flatten(x, 0, -1);
        case 19: return ops::clamp(ops::sub(x, ops::mean(x, {}, false)), -1.0, 1.0);
        case 21: return x.dim() >= 1 ? ops::logSoftmax(x, -1) : ops::exp(x);
        case 22: // + 1: a sum over the normalized dim would cancel to rounding noise
            return x.dim() >= 1 ? ops::add(ops::layerNorm(x, {last}), 1.0) : ops::tanh(x);
        case 23: return x.dim() >= 1 ? ops::rmsNorm(x, {last}) : ops::tanh(x);
        case 24: return x.dim() >= 1 && last > 1 ? ops::var(x, {-1}, 1, true) : ops::neg(x);
        case 25: return x.dim() >= 1 ? ops::logsumexp(x, {0}, true) : ops::neg(x);
        case 26: return ops::prod(ops::add(ops::mul(x, 0.01), 1.0), {-1}, true);
        case 27: return x.dim() >= 1 ? ops::amin(x, {0}, false) : ops::neg(x);
        case 28: return ops::cast(ops::sin(ops::cast(x, DType::F64)), x.dtype());
        case 29: return ops::maskedFill(x, ops::gt(x, y), 0.5);
        case 30: return ops::exp(ops::neg(ops::abs(ops::permute(x, reversedDims(x.dim())))));
        case 31: return x.dim() >= 1 && last >= 2 ? ops::tanh(ops::slice(x, -1, 0, last, 2)) : ops::sin(x);
        case 32: return x.dim() >= 1 ? ops::add(ops::flip(x, {0}), y) : ops::cos(x);
        case 33: return ops::rsqrt(ops::add(ops::pow(x, 2.0), 1.0));
        case 34: return ops::log1p(ops::abs(ops::erf(x)));
        case 35: return x.dim() >= 1 ? ops::softmax(x, 0) : ops::exp(x);
        case 36: return x.dim() >= 1 ? ops::cumsum(x, -1) : ops::neg(x);
        case 37: { // over whole numbers: ties are exact (the first wins), never two roundings of one value
            const Tensor whole = ops::round(ops::mul(x, 4.0));
            return x.dim() >= 1 ? ops::cast(ops::argmax(whole, -1, true), x.dtype()) : ops::neg(x);
        }
        case 38: return ops::mul(ops::round(ops::mul(x, 3.0)), 0.25);
        case 39: return ops::mean(ops::stack({x, ops::exp(ops::neg(ops::abs(x)))}, 0), {0});
        default: // rotate_half: a cat along the last dim of an op's result and a view
            if (x.dim() == 0 || x.size(-1) < 2)
                return ops::sin(x);
            return ops::mul(ops::cat({ops::neg(x.narrow(-1, 1, x.size(-1) - 1)), x.narrow(-1, 0, 1)}, -1), y);
        }
    }

    static Shape reversedDims(int64_t rank)
    {
        Shape order;
        for (int64_t d = rank - 1; d >= 0; --d)
            order.push_back(d);
        return order;
    }

    static Shape concat(Shape a, const Shape &b)
    {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    }

    static bool broadcastsInto(const Shape &small, const Shape &big)
    {
        const size_t lead = big.size() - small.size();
        for (size_t d = 0; d < small.size(); ++d) {
            if (small[d] != 1 && small[d] != big[lead + d])
                return false;
        }
        return true;
    }

    std::mt19937_64 m_rng;
    uint64_t m_seed;
    Shape m_shape;
    std::vector<Shape> m_inputShapes;
    std::vector<bool> m_transposed;
    int m_steps = 0;
    std::vector<int> m_choices;
    DType m_dtype = DType::F32;
};

// Many random programs as one function (one compile for the batch): its
// outputs are the programs' outputs, its inputs all their inputs.
struct Batch {
    std::vector<RandomProgram> programs;
    std::vector<uint64_t> seeds;
    std::vector<size_t> firstInput;
    TensorList inputs;

    TensorList run(const TensorList &in) const
    {
        TensorList outs;
        for (size_t p = 0; p < programs.size(); ++p) {
            const size_t n = programs[p].inputCount();
            TensorList mine(in.begin() + static_cast<long>(firstInput[p]), in.begin() + static_cast<long>(firstInput[p] + n));
            outs.push_back(programs[p](mine).front());
        }
        return outs;
    }
};

Batch makeBatch(uint64_t firstSeed, int count)
{
    Batch b;
    for (int i = 0; i < count; ++i) {
        // A program eager mode refuses (an op without an integer or bool
        // kernel, as PyTorch refuses it too) is left out of the batch.
        const RandomProgram program(firstSeed + static_cast<uint64_t>(i));
        try {
            program(program.inputs());
        } catch (const Error &) {
            continue;
        }
        b.seeds.push_back(firstSeed + static_cast<uint64_t>(i));
        b.programs.push_back(program);
        b.firstInput.push_back(b.inputs.size());
        for (const Tensor &t : b.programs.back().inputs())
            b.inputs.push_back(t);
    }
    return b;
}

} // namespace

class TestCompilerCompile : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { useTestCache(); }

    void zooCompiledMatchesEager_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("interpret");
        for (const std::string &name : zoo::modelNames()) {
            QTest::newRow((name + " codegen").c_str()) << QString::fromStdString(name) << false;
            QTest::newRow((name + " interpreter").c_str()) << QString::fromStdString(name) << true;
        }
    }
    void zooCompiledMatchesEager()
    {
        QFETCH(QString, model);
        QFETCH(bool, interpret);
        zoo::Instance inst = zoo::create(model.toStdString(), 0);
        const Tensor eager = (*inst.model)(inst.inputs);
        CompileOptions options;
        options.interpret = interpret;
        CompiledFunction fn = compile(inst.model, options);
        const TensorList first = fn(inst.inputs);
        const TensorList second = fn(inst.inputs); // the cached variant
        std::string why;
        QVERIFY2(matches(first.front(), eager, why), why.c_str());
        QVERIFY2(matches(second.front(), eager, why), why.c_str());
        QCOMPARE(fn.variants(), size_t(1));
        const Executable *exe = fn.lastExecutable();
        size_t withCode = 0;
        for (size_t k = 0; k < exe->schedule().kernels.size(); ++k)
            withCode += exe->hasCode(k) ? 1 : 0;
        QVERIFY(interpret ? withCode == 0 : withCode > 0);
        // Each stage's snapshot is written directly; it must be the text the
        // JSON tree of the same graph dumps (kernel names and aliases included).
        for (const CompileStage &s : fn.stages()) {
            const Graph back = graphFromJsonText(s.graphJson);
            QCOMPARE(s.graphJson, graphToJson(back).dump());
            QCOMPARE(graphToJsonText(back), s.graphJson);
        }
    }

    void randomGraphsAgreeEagerCompiledInterpreted_data()
    {
        QTest::addColumn<int>("firstSeed");
        // 360 seeds: 319 programs eager mode runs (≥ 300; it refuses 41: softmax,
        // mean and the norms of integers, abs and neg of bools).
        for (int b = 0; b < 12; ++b)
            QTest::newRow(("seeds " + std::to_string(b * 30) + "-" + std::to_string(b * 30 + 29)).c_str()) << b * 30;
    }
    void randomGraphsAgreeEagerCompiledInterpreted()
    {
        QFETCH(int, firstSeed);
        const Batch batch = makeBatch(static_cast<uint64_t>(firstSeed), 30);
        const TensorList eager = batch.run(batch.inputs);
        const TensorFn fn = [&](const TensorList &in) { return batch.run(in); };
        CompiledFunction compiled = compile(fn);
        CompileOptions interp;
        interp.interpret = true;
        CompiledFunction interpreted = compile(fn, {}, interp);
        const TensorList c = compiled(batch.inputs), i = interpreted(batch.inputs);
        TensorList wide;
        for (const Tensor &t : batch.inputs)
            wide.push_back(t.to(DType::F64));
        const TensorList exact = batch.run(wide);
        QVERIFY2(batch.programs.size() >= 20, qPrintable(QStringLiteral("%1 programs ran").arg(batch.programs.size())));
        for (size_t p = 0; p < eager.size(); ++p) {
            // Integer and bool inputs widened to f64 as well: a program over
            // them computes in floating point once an op promotes them.
            std::string why;
            const std::string seed = "seed " + std::to_string(batch.seeds[p]) + ": ";
            QVERIFY2(asAccurateAsEager(c[p], eager[p], exact[p], why), (seed + "compiled " + why).c_str());
            QVERIFY2(asAccurateAsEager(i[p], eager[p], exact[p], why), (seed + "interpreted " + why).c_str());
        }
    }

    // A generated sum over more than a chunk of values joins its chunks
    // pairwise: summed along the whole row in 64 lanes, the mean of a million
    // equal values was 1.2e-4 off, and 6e-4 for 4 M. Each shape takes another
    // way through the loops: lanes, a row not a multiple of 16, several
    // reduced dims, a strided reduced dim.
    void longSumsJoinChunksPairwise_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<IntList>("dims");
        QTest::newRow("one row of 4 M") << Shape{1 << 22} << IntList{0};
        QTest::newRow("rows of 7000") << Shape{1000, 7} << IntList{0, 1};
        QTest::newRow("two reduced dims") << Shape{512, 3, 4096} << IntList{0, 2};
        QTest::newRow("strided") << Shape{300000, 3} << IntList{0};
    }
    void longSumsJoinChunksPairwise()
    {
        QFETCH(Shape, shape);
        QFETCH(IntList, dims);
        const Tensor x = full(shape, 0.1);
        const TensorFn fn = [&](const TensorList &in) { return TensorList{ops::mean(ops::exp(in[0]), dims, false)}; };
        CompiledFunction compiled = compile(fn);
        const std::vector<double> y = compiled({x})[0].toDoubleVector();
        const double want = std::exp(static_cast<double>(0.1f));
        double worst = 0;
        for (double v : y)
            worst = std::max(worst, std::abs(v - want) / want);
        QVERIFY2(worst < 1e-6, qPrintable(QStringLiteral("relative error %1").arg(worst)));
        bool cascaded = false;
        for (const CompileStage &s : compiled.stages())
            cascaded = cascaded || s.code.find("fusescope_cascade_push<float") != std::string::npos;
        QVERIFY(cascaded);
    }

    // A reduction over leading dims, its inputs contiguous along the kept last
    // dim, reads their rows in order (column mode): output by output it read
    // one element of each row, 12 times slower than eager mode over [4096, 4096].
    // Each case takes another way through: a last dim that is not a multiple
    // of the block, three dims, two reduction levels, a NaN count, a long
    // column's cascade.
    void columnReductionsMatchEager_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<RowFn>("f");
        QTest::newRow("sum over rows, 300 columns")
            << Shape{513, 300} << RowFn([](const Tensor &x) { return TensorList{ops::sum(ops::mul(x, 2.0), {0})}; });
        QTest::newRow("mean over a sequence")
            << Shape{4, 50, 70} << RowFn([](const Tensor &x) { return TensorList{ops::mean(ops::exp(x), {1})}; });
        QTest::newRow("softmax over dim 0")
            << Shape{33, 40} << RowFn([](const Tensor &x) { return TensorList{ops::softmax(x, 0)}; });
        QTest::newRow("amax counting NaN")
            << Shape{64, 20} << RowFn([](const Tensor &x) { return TensorList{ops::amax(ops::abs(x), {0})}; });
        QTest::newRow("long columns")
            << Shape{20000, 19} << RowFn([](const Tensor &x) { return TensorList{ops::mean(x, {0}, true)}; });
    }
    void columnReductionsMatchEager()
    {
        QFETCH(Shape, shape);
        QFETCH(RowFn, f);
        Generator gen(11);
        std::vector<double> v = randn(shape, gen).toDoubleVector();
        const int64_t last = shape.back();
        v[static_cast<size_t>(3 * last + 5)] = std::nan(""); // row 3, column 5
        const Tensor x = fromVector(v, shape);
        CompiledFunction fn = compile([&](const TensorList &in) { return f(in[0]); });
        const TensorList got = fn({x}), want = f(x);
        std::string why;
        QVERIFY2(matches(got[0], want[0], why), why.c_str());
        const std::vector<double> y = got[0].toDoubleVector();
        QVERIFY(std::isnan(y[5]) && !std::isnan(y[4])); // the NaN's column only
        QVERIFY(logged(fn, "reduces in column mode"));
    }

    // Column mode stores an output that is contiguous along the reduced last
    // dim (softmax(x.T, -1)) through a buffer, runs of 16 along that dim at
    // a time: f32 runs of 16 rows at a time transposed, the rest element by
    // element. The shapes leave a partial run, a partial block of rows and
    // rows past the last 16; one case is f64, one stores two outputs.
    void columnStoresAlongTheReducedDim_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<bool>("transposes");
        QTest::addColumn<RowFn>("f");
        const RowFn softmax = [](const Tensor &x) { return TensorList{ops::softmax(x.transpose(0, 1), -1)}; };
        QTest::newRow("runs of 16, 200 rows") << Shape{64, 200} << DType::F32 << true << softmax;
        QTest::newRow("a partial run, 300 rows") << Shape{40, 300} << DType::F32 << false << softmax;
        QTest::newRow("f64") << Shape{48, 33} << DType::F64 << false << softmax;
        QTest::newRow("two outputs") << Shape{32, 70} << DType::F32 << true << RowFn([](const Tensor &x) {
            const Tensor t = x.transpose(0, 1), c = ops::sub(t, ops::mean(t, {1}, true));
            return TensorList{c, ops::mul(c, c)};
        });
    }
    void columnStoresAlongTheReducedDim()
    {
        QFETCH(Shape, shape);
        QFETCH(DType, dtype);
        QFETCH(bool, transposes);
        QFETCH(RowFn, f);
        Generator gen(13);
        const Tensor x = randn(shape, gen, dtype);
        CompiledFunction fn = compile([&](const TensorList &in) { return f(in[0]); });
        const TensorList got = fn({x}), want = f(x);
        QCOMPARE(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
            std::string why;
            QVERIFY2(matches(got[i], want[i], why), why.c_str());
        }
        QVERIFY(logged(fn, "reduces in column mode"));
        const std::string code = fn.stages()[5].code;
        QVERIFY2(code.find("r0c += 16") != std::string::npos, code.c_str());
        QCOMPARE(code.find("fusescope_transpose16(g") != std::string::npos, transposes);
    }

    // A kernel codegen leaves to the eager kernels (f16 arithmetic) runs each
    // op's kernel straight into its planned buffer. A number the graph keeps
    // as an argument (x * 2.0) must reach the kernel as the 0-d tensor callOp
    // makes of it: it threw std::bad_variant_access.
    void eagerKernelsInCompiledCodeBindNumbers()
    {
        Generator gen(14);
        const Tensor x = randn({4, 8}, gen);
        auto f = [](const TensorList &in) {
            return TensorList{ops::add(ops::mul(ops::cast(in[0], DType::F16), 2.0), 1.0)};
        };
        CompiledFunction fn = compile(f);
        const TensorList got = fn({x}), want = f({x});
        QCOMPARE(got[0].dtype(), DType::F16);
        std::string why;
        QVERIFY2(matches(got[0], want[0], why), why.c_str());
    }

    // Every pointwise op of the registry in every dtype its eager kernel
    // takes, compiled and interpreted against eager mode: one graph a dtype
    // holds them all (one compiler run). The first operand is a transposed
    // view, the others a broadcast row; integer divisors hold no zero (zeros
    // are integerDivisionByZeroIsAnError's). bf16 gelu came out an ulp off.
    void everyPointwiseOpCompilesLikeEager_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("least"); // ops the dtype must have taken
        for (auto [dt, least] : {std::pair{DType::F32, 51},
                                 {DType::F64, 51},
                                 {DType::F16, 51},
                                 {DType::BF16, 51},
                                 {DType::I64, 52},
                                 {DType::I32, 52},
                                 {DType::Bool, 38}})
            QTest::newRow(dtypeName(dt)) << static_cast<int>(dt) << least;
    }

    void everyPointwiseOpCompilesLikeEager()
    {
        QFETCH(int, dtype);
        QFETCH(int, least);
        const DType dt = static_cast<DType>(dtype);
        Generator gen(31);
        const auto input = [&](const Shape &shape, bool divisor) {
            if (dt == DType::Bool)
                return ops::ne(randint(0, 2, shape, gen), 0);
            if (!isFloating(dt) && divisor) // 1 .. 6 of either sign
                return ops::mul(randint(1, 7, shape, gen, dt), ops::sub(ops::mul(randint(0, 2, shape, gen, dt), 2), 1));
            if (!isFloating(dt))
                return randint(-6, 7, shape, gen, dt);
            return ops::cast(ops::mul(randn(shape, gen), 3.0), dt);
        };
        const TensorList in{input({17, 33}, false).t(), input({17}, true)};
        // An op, its arguments, and for each the input it takes (-1: a number).
        struct Call {
            const OpDef *op;
            Args args;
            std::vector<int> from;
        };
        std::vector<Call> calls;
        for (const OpDef *op : OpRegistry::instance().all()) {
            if (op->kind != OpKind::Pointwise)
                continue;
            Call c{op, {}, {}};
            bool made = true;
            for (const SchemaArg &a : op->schema.args) {
                if (a.hasDefault || a.optional)
                    break;
                const bool tensor = a.type == ArgType::Tensor;
                const bool integer = a.type == ArgType::Int || !isFloating(dt);
                made = made
                    && (tensor || integer || a.type == ArgType::Scalar || a.type == ArgType::Float
                        || a.type == ArgType::DType);
                c.from.push_back(tensor ? std::min<int>(std::count(c.from.begin(), c.from.end(), 0), 1) : -1);
                if (tensor)
                    c.args.emplace_back(in[c.from.back()]);
                else if (a.type == ArgType::DType) // cast
                    c.args.emplace_back(dt == DType::F32 ? DType::F64 : DType::F32);
                else if (integer)
                    c.args.emplace_back(int64_t(2));
                else
                    c.args.emplace_back(0.75);
            }
            try {
                if (!made || c.from.empty() || c.from.front() != 0)
                    continue;
                callOp(*op, c.args);
            } catch (const Error &) {
                continue; // not for this dtype
            }
            calls.push_back(std::move(c));
        }
        QVERIFY2(static_cast<int>(calls.size()) >= least, std::to_string(calls.size()).c_str());
        auto f = [&calls](const TensorList &x) {
            TensorList outs;
            for (const Call &c : calls) {
                Args args = c.args;
                for (size_t i = 0; i < args.size(); ++i) {
                    if (c.from[i] >= 0)
                        args[i] = x[c.from[i]];
                }
                outs.push_back(callOp(*c.op, args).front());
            }
            return outs;
        };
        const TensorList want = f(in);
        for (bool interpret : {false, true}) {
            CompileOptions options;
            options.interpret = interpret;
            const TensorList got = compile(f, {}, options)(in);
            for (size_t i = 0; i < calls.size(); ++i) {
                std::string why;
                QVERIFY2(matches(got[i], want[i], why),
                         (calls[i].op->name() + (interpret ? " interpreted: " : " compiled: ") + why).c_str());
            }
        }
    }

    // clamp of integers by float bounds is float, as in PyTorch, and by
    // integer bounds stays integer: compiled and interpreted as in eager mode.
    void clampOfIntegersPromotesLikeEager()
    {
        auto f = [](const TensorList &in) {
            return TensorList{ops::add(ops::clamp(in[0], 1.5, 2.5), 1), ops::clamp(in[0], 0, 3)};
        };
        const Tensor x = fromVector({1, 2, 3, 4, -7, 9}, {2, 3}, DType::I32);
        const TensorList want = f({x});
        QCOMPARE(want[0].dtype(), DType::F32);
        QCOMPARE(want[1].dtype(), DType::I32);
        QCOMPARE(want[0].toDoubleVector(), (std::vector<double>{2.5, 3, 3.5, 3.5, 2.5, 3.5}));
        for (bool interpret : {false, true}) {
            CompileOptions options;
            options.interpret = interpret;
            const TensorList got = compile(f, {}, options)({x});
            for (size_t i = 0; i < want.size(); ++i) {
                QCOMPARE(got[i].dtype(), want[i].dtype());
                QCOMPARE(got[i].toDoubleVector(), want[i].toDoubleVector());
            }
        }
    }

    // Integer division runs on the eager kernels, which refuse a zero divisor
    // with an error naming the op: generated code divided by it and the
    // process died (SIGFPE). The lowest value over -1 wraps as in eager mode.
    void integerDivisionByZeroIsAnError_data()
    {
        QTest::addColumn<QString>("op");
        for (const char *op : {"aten.fmod", "aten.remainder", "floor", "trunc"})
            QTest::newRow(op) << op;
    }

    void integerDivisionByZeroIsAnError()
    {
        QFETCH(QString, op);
        auto divide = [op](const Tensor &a, const Tensor &b) {
            if (op == "aten.fmod")
                return ops::fmod(a, b);
            if (op == "aten.remainder")
                return ops::remainder(a, b);
            return ops::div(a, b, op.toStdString());
        };
        auto f = [&](const TensorList &in) { return TensorList{ops::sub(divide(in[0], in[1]), in[1])}; };
        const Tensor x = fromVector({-9223372036854775808.0, 7, -7, 9}, {4}, DType::I64);
        const Tensor y = fromVector({-1, 2, 2, -4}, {4}, DType::I64);
        const Tensor zero = fromVector({-1, 2, 0, -4}, {4}, DType::I64);
        const TensorList want = f({x, y});
        const std::string error
            = (op.startsWith("aten.") ? op.toStdString() : "aten.div") + ": integer division by zero";
        for (bool interpret : {false, true}) {
            CompileOptions options;
            options.interpret = interpret;
            CompiledFunction fn = compile(f, {}, options);
            const TensorList got = fn({x, y});
            std::string why;
            QVERIFY2(matches(got[0], want[0], why), why.c_str());
            QVERIFY(
                logged(fn, "runs as its own kernel (an integer division: its eager kernel checks for zero divisors)"));
            try {
                fn({x, zero});
                QFAIL("no error");
            } catch (const Error &e) {
                QVERIFY2(std::string(e.what()).find(error) != std::string::npos, e.what());
            }
        }
    }

    // A pointwise kernel whose input lies across the rows it writes (x.T + y)
    // runs in tiles, through a buffer per such input. The shapes leave partial
    // tiles at both edges; one input is broadcast, one is f64.
    void transposedInputsRunInTiles_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<RowFn>("f");
        QTest::newRow("x.T + x") << Shape{300, 300} << RowFn([](const Tensor &x) {
            return TensorList{ops::add(x.transpose(0, 1), ops::mul(x, 0.5))};
        });
        QTest::newRow("gelu of NHWC as NCHW") << Shape{2, 9, 70, 33} << RowFn([](const Tensor &x) {
            return TensorList{ops::gelu(ops::permute(x, {0, 3, 1, 2}))};
        });
        QTest::newRow("times a broadcast row") << Shape{130, 90} << RowFn([](const Tensor &x) {
            return TensorList{ops::mul(ops::exp(x.transpose(0, 1)), x.narrow(1, 0, 1).transpose(0, 1))};
        });
        QTest::newRow("f64") << Shape{100, 80} << RowFn([](const Tensor &x) {
            return TensorList{ops::sigmoid(ops::cast(x, DType::F64).transpose(0, 1))};
        });
    }
    void transposedInputsRunInTiles()
    {
        QFETCH(Shape, shape);
        QFETCH(RowFn, f);
        Generator gen(13);
        const Tensor x = randn(shape, gen);
        CompiledFunction fn = compile([&](const TensorList &in) { return f(in[0]); });
        const TensorList got = fn({x}), want = f(x);
        std::string why;
        QVERIFY2(matches(got[0], want[0], why), why.c_str());
        QVERIFY(logged(fn, "runs in tiles"));
    }

    // A reduction with few outputs, or whose outputs lie inside its first
    // reduced dim in memory, splits its reduced range into parts that run on
    // the pool's threads, then combines them in order: the parts follow from
    // the shapes, so one thread gives the same bits as two.
    void fewOutputsSplitTheirRange_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<RowFn>("f");
        QTest::newRow("sum of squares")
            << Shape{1 << 20} << RowFn([](const Tensor &x) { return TensorList{ops::sum(ops::mul(x, x))}; });
        QTest::newRow("amax counting NaN")
            << Shape{1 << 20} << RowFn([](const Tensor &x) { return TensorList{ops::amax(ops::abs(x))}; });
        QTest::newRow("three rows' means")
            << Shape{3, 1 << 18} << RowFn([](const Tensor &x) { return TensorList{ops::mean(x, {1})}; });
        QTest::newRow("narrow columns") << Shape{1 << 18, 4} << RowFn([](const Tensor &x) {
            return TensorList{ops::div(ops::sum(ops::exp(x), {0}), 7.0)};
        });
        QTest::newRow("integer sum") << Shape{1 << 20} << RowFn([](const Tensor &x) {
            return TensorList{ops::sum(ops::cast(ops::mul(x, 100.0), DType::I32))};
        });
        QTest::newRow("channel statistics") << Shape{8, 16, 40, 40} << RowFn([](const Tensor &x) {
            return TensorList{ops::mean(x, {0, 2, 3})}; // 16 outputs, but the channels lie inside the batch
        });
        QTest::newRow("values stored too") << Shape{1 << 20} << RowFn([](const Tensor &x) {
            const Tensor y = ops::mul(x, 2.0);
            return TensorList{ops::amin(y), y};
        });
    }
    void fewOutputsSplitTheirRange()
    {
        QFETCH(Shape, shape);
        QFETCH(RowFn, f);
        Generator gen(12);
        std::vector<double> v = randn(shape, gen).toDoubleVector();
        if (QByteArray(QTest::currentDataTag()).contains("NaN"))
            v[777777] = std::nan("");
        const Tensor x = fromVector(v, shape);
        CompiledFunction fn = compile([&](const TensorList &in) { return f(in[0]); });
        const TensorList got = fn({x}), want = f(x);
        const int threads = numThreads();
        setNumThreads(1);
        const TensorList alone = fn({x});
        setNumThreads(threads);
        for (size_t i = 0; i < want.size(); ++i) {
            std::string why;
            QVERIFY2(matches(got[i], want[i], why), why.c_str());
            const std::vector<double> a = got[i].toDoubleVector(), b = alone[i].toDoubleVector();
            for (size_t k = 0; k < a.size(); ++k)
                QVERIFY(a[k] == b[k] || (std::isnan(a[k]) && std::isnan(b[k])));
        }
        QCOMPARE(std::isnan(got[0].toDoubleVector()[0]), QByteArray(QTest::currentDataTag()).contains("NaN"));
        QVERIFY(logged(fn, "parts of its reduced range"));
    }

    // A norm over a dim of size 1 gives exactly 0, as in eager mode: its sum
    // over that dim is x itself (simplify), so x - mean(x) subtracts one
    // value from itself. Computed as a reduction, the product x * w could be
    // contracted into the subtraction but rounded into the sum: 1e-5 and more
    // once divided by sqrt(var + eps).
    void normsOverOneValueAreZero()
    {
        Generator gen(4);
        const Tensor x = randn({64, 8, 1}, gen), w = randn({64, 8, 1}, gen);
        const TensorFn fn = [](const TensorList &in) {
            const Tensor p = ops::mul(ops::gelu(in[0]), in[1]);
            return TensorList{ops::layerNorm(p, {1}), ops::rmsNorm(ops::sub(p, ops::mean(p, {-1}, true)), {1}),
                              ops::amax(p, {2}, false)}; // reshaped: [64, 8]
        };
        const TensorList eager = fn({x, w});
        for (bool interpret : {false, true}) {
            CompileOptions options;
            options.interpret = interpret;
            CompiledFunction compiled = compile(fn, {}, options);
            const TensorList out = compiled({x, w});
            for (size_t i = 0; i < 2; ++i) {
                for (double v : out[i].toDoubleVector())
                    QCOMPARE(v, 0.0);
            }
            QCOMPARE(out[2].sizes(), (Shape{64, 8}));
            QVERIFY(out[2].toDoubleVector() == eager[2].toDoubleVector());
            QVERIFY(logged(compiled, "sum(x, d) = x")); // simplify's identity
        }
    }

    // Batch norm folded into the convolution's weights and bias (and the relu
    // taken in) gives eager's result within the rounding the tests allow, on
    // every convolution kernel family the folding reaches.
    void foldedBatchNormMatchesEager()
    {
        Generator gen(8);
        for (const auto &[k, pad] : std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {3, 1}, {5, 2}}) {
            const Tensor w = randn({16, 16, k, k}, gen), b = randn({16}, gen), mean = randn({16}, gen);
            const Tensor var = ops::add(ops::abs(randn({16}, gen)), 0.5), gamma = randn({16}, gen);
            const Tensor beta = randn({16}, gen), x = randn({2, 16, 20, 20}, gen);
            // Batch norm as ONNX exports write it by hand: a division by a
            // per-channel constant, then scale and shift.
            const Tensor c = ops::reshape(ops::sqrt(ops::add(var, 1e-5)), {16, 1, 1}), w2 = randn({16, 16, k, k}, gen);
            const TensorFn fn = [&](const TensorList &in) {
                const Tensor y = ops::conv2d(in[0], w, b, {1, 1}, {pad, pad});
                const Tensor y2 = ops::conv2d(in[0], w2, b, {1, 1}, {pad, pad});
                const Tensor written = ops::div(ops::sub(y2, ops::reshape(mean, {16, 1, 1})), c);
                const Tensor scaled = ops::mul(written, ops::reshape(gamma, {16, 1, 1}));
                return TensorList{ops::relu(ops::batchNorm(y, mean, var, gamma, beta, 1e-5)),
                                  ops::add(scaled, ops::reshape(beta, {16, 1, 1}))};
            };
            const NamedTensors params{{"w", w}, {"w2", w2}, {"b", b}, {"mean", mean}, {"var", var},
                                      {"gamma", gamma}, {"beta", beta}};
            CompiledFunction compiled = compile(fn, params);
            std::string why;
            const TensorList want = fn({x}), got = compiled({x});
            QVERIFY2(matches(got[0], want[0], why), why.c_str());
            QVERIFY2(matches(got[1], want[1], why), why.c_str());
            int divisions = 0, products = 0; // batch norm's two scales and the written form's one
            for (const CompileStage &s : compiled.stages()) {
                for (const std::string &l : s.log) {
                    divisions += l.find("(aten.div by a per-channel constant) folded") != std::string::npos;
                    products += l.find("(aten.mul by a per-channel constant) folded") != std::string::npos;
                }
            }
            QCOMPARE(divisions, 1);
            QCOMPARE(products, 3);
        }
    }

    void shapeChangeRecompilesWithReason()
    {
        Generator gen(3);
        CompiledFunction fn = compile([](const TensorList &in) { return TensorList{ops::gelu(ops::add(in[0], 1.0))}; });
        const Tensor a = randn({8, 16, 32}, gen), b = randn({4, 16, 32}, gen);
        fn({a});
        QCOMPARE(fn.variants(), size_t(1));
        const Tensor outB = fn({b}).front();
        QCOMPARE(fn.variants(), size_t(2));
        QCOMPARE(fn.recompileReasons(), std::vector<std::string>{"input 0: shape [8,16,32] -> [4,16,32]"});
        fn({a}); // both variants stay cached
        QCOMPARE(fn.variants(), size_t(2));
        fn({a.transpose(0, 2).contiguous().transpose(0, 2)});
        QCOMPARE(fn.recompileReasons().back(), std::string("input 0: strides [512,32,1] -> [1,8,128]"));
        fn({a.to(DType::F64)});
        QCOMPARE(fn.recompileReasons().back(), std::string("input 0: dtype f32 -> f64"));
        std::string why;
        QVERIFY2(matches(outB, ops::gelu(ops::add(b, 1.0)), why), why.c_str());
    }

    // GELU written with erf compiles as x Phi(x) (the simplify stage says
    // so) and agrees with its eager evaluation, saturation and NaN included.
    void geluWrittenWithErfRunsAsNormalCdf()
    {
        const auto f = [](const TensorList &in) {
            const Tensor x = in[0];
            return TensorList{ops::mul(ops::mul(x, ops::add(ops::erf(ops::div(x, M_SQRT2)), 1.0)), 0.5)};
        };
        Generator gen(4);
        std::vector<double> v = ops::mul(randn({16, 64}, gen), 3.0).toDoubleVector();
        v[0] = std::nan("");
        v[1] = INFINITY;
        v[2] = -12;
        const Tensor x = fromVector(v, {16, 64});
        CompiledFunction fn = compile(f);
        const Tensor y = fn({x}).front();
        const std::vector<CompileStage> stages = fn.stages();
        const std::vector<std::string> &log = stages[2].log;
        QVERIFY(std::any_of(log.begin(), log.end(), [](const std::string &l) {
            return l.find("= x Phi(x)") != std::string::npos;
        }));
        QVERIFY(stages[5].code.find("sm::normal_cdf<float>") != std::string::npos);
        std::string why;
        QVERIFY2(matches(y, f({x}).front(), why), why.c_str());
        const std::vector<double> out = y.toDoubleVector();
        QVERIFY(std::isnan(out[0]));
        QCOMPARE(out[1], double(INFINITY));
        QCOMPARE(out[2], 0.0);
    }

    // gelu's tanh form decomposes into x sigmoid(2 z), as sm::gelu_tanh
    // computes it eagerly.
    void geluTanhCompilesAsXTimesSigmoid()
    {
        const auto f = [](const TensorList &in) { return TensorList{ops::gelu(in[0], "tanh")}; };
        Generator gen(6);
        std::vector<double> v = ops::mul(randn({8, 64}, gen), 3.0).toDoubleVector();
        v[0] = std::nan("");
        v[1] = INFINITY;
        v[2] = -INFINITY;
        const Tensor x = fromVector(v, {8, 64});
        CompiledFunction fn = compile(f);
        const Tensor y = fn({x}).front();
        QVERIFY(fn.stages()[5].code.find("sm::sigmoid<float>") != std::string::npos);
        std::string why;
        QVERIFY2(matches(y, f({x}).front(), why), why.c_str());
        const std::vector<double> out = y.toDoubleVector();
        QVERIFY(std::isnan(out[0]));
        QCOMPARE(out[1], double(INFINITY));
        QVERIFY(std::isnan(out[2])); // -inf * 0, as 0.5 x (1 + tanh(z)) gives
    }

    // GELU's tanh form written out with pow (as GPT-2 writes it) compiles to
    // x sigmoid(2 z) and agrees with its eager evaluation; no pow is called.
    void geluTanhWrittenOutRunsAsSigmoid()
    {
        const Tensor three = full({}, 3.0);
        const auto f = [&](const TensorList &in) {
            const Tensor x = in[0];
            const Tensor inner = ops::mul(ops::add(x, ops::mul(ops::pow(x, three), 0.044715)), std::sqrt(2 / M_PI));
            return TensorList{ops::mul(ops::mul(x, 0.5), ops::add(ops::tanh(inner), 1.0))};
        };
        Generator gen(8);
        const Tensor x = ops::mul(randn({8, 64}, gen), 3.0);
        CompiledFunction fn = compile(f, {{"three", three}});
        const Tensor y = fn({x}).front();
        const std::vector<CompileStage> stages = fn.stages();
        QVERIFY(stages[5].code.find("sm::pow") == std::string::npos);
        QVERIFY(stages[5].code.find("sm::sigmoid<float>") != std::string::npos);
        std::string why;
        QVERIFY2(matches(y, f({x}).front(), why), why.c_str());
    }

    // pow(x, 2) runs as x * x compiled: the same bits as eager pow, overflow,
    // subnormals, infinities and NaN included.
    void squareCompilesToTheSameBits()
    {
        const auto f = [](const TensorList &in) { return TensorList{ops::pow(in[0], 2.0)}; };
        Generator gen(7);
        std::vector<double> v = ops::mul(randn({4, 64}, gen), 1e3).toDoubleVector();
        const double special[] = {std::nan(""), INFINITY, -INFINITY, 1e20, -1e-20, 1e-40, -0.0};
        std::copy(std::begin(special), std::end(special), v.begin());
        const Tensor x = fromVector(v, {4, 64});
        CompiledFunction fn = compile(f);
        const std::vector<double> got = fn({x}).front().toDoubleVector(), want = f({x}).front().toDoubleVector();
        QVERIFY(fn.stages()[5].code.find("sm::pow") == std::string::npos);
        for (size_t i = 0; i < want.size(); ++i) {
            const bool same = std::isnan(want[i]) ? std::isnan(got[i])
                                                  : std::memcmp(&got[i], &want[i], sizeof(double)) == 0;
            QVERIFY2(same, qPrintable(QString("element %1: %2 vs %3").arg(i).arg(got[i]).arg(want[i])));
        }
    }

    // sin, cos and pow of f32 in a fused loop call glibc's vector forms where
    // the build found them (the loaded object names _ZGV... symbols), and
    // agree with eager mode, special values exactly.
    void sinCosPowStayInVectorCode()
    {
        const auto f = [](const TensorList &in) {
            return TensorList{ops::add(ops::mul(in[0], ops::cos(in[1])), ops::sin(in[1])), ops::pow(in[0], in[1])};
        };
        Generator gen(14);
        std::vector<double> x = ops::mul(randn({8, 64}, gen), 3.0).toDoubleVector();
        std::vector<double> t = ops::mul(randn({8, 64}, gen), 3.0).toDoubleVector();
        const double specialX[] = {0, -0.0, -1, 1, std::nan(""), INFINITY, 2, -2, 0.5};
        const double specialT[] = {-1, 3, INFINITY, std::nan(""), 0, -1, 128, 0.5, -INFINITY};
        for (size_t i = 0; i < std::size(specialX); ++i) {
            x[i] = specialX[i];
            t[i] = specialT[i];
        }
        const Tensor xt = fromVector(x, {8, 64}), tt = fromVector(t, {8, 64});
        CompiledFunction fn = compile(f);
        const TensorList got = fn({xt, tt}), want = f({xt, tt});
        const std::vector<CompileStage> stages = fn.stages();
        QVERIFY(stages[5].code.find("sm::sin<float>") != std::string::npos);
        QVERIFY(stages[5].code.find("sm::pow<float>") != std::string::npos);
#ifdef FUSESCOPE_LIBMVEC
        std::string object;
        for (const std::string &line : stages[6].log) {
            if (line.starts_with("cache hit: "))
                object = line.substr(11);
            else if (line.starts_with("compiled "))
                object = line.substr(9, line.find(".cpp with ") - 9) + ".so";
        }
        QFile so(QString::fromStdString(object));
        QVERIFY2(so.open(QIODevice::ReadOnly), object.c_str());
        const QByteArray bytes = so.readAll();
        QVERIFY2(bytes.contains("_ZGV") && bytes.contains("_sinf") && bytes.contains("_powf"), object.c_str());
#endif
        for (size_t k = 0; k < got.size(); ++k) {
            std::string why;
            QVERIFY2(matches(got[k], want[k], why), why.c_str());
            const std::vector<double> g = got[k].toDoubleVector(), w = want[k].toDoubleVector();
            for (size_t i = 0; i < std::size(specialX); ++i) {
                const bool same = std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i];
                QVERIFY2(same, qPrintable(QString("output %1, element %2: %3 vs %4").arg(k).arg(i).arg(g[i]).arg(w[i])));
            }
        }
    }

    void graphBreakRunsTheOpEagerlyBetweenGraphs()
    {
        const TensorFn f = [](const TensorList &in) {
            const Tensor y = ops::exp(in[0]);
            const Tensor idx = ops::cast(ops::nonzero(ops::gt(y, 2.0)), DType::F32);
            return TensorList{ops::add(ops::sum(idx), ops::sum(y)), ops::mul(idx, 2.0)};
        };
        CompiledFunction fn = compile(f);
        Generator gen(11);
        // exp(1) > 2 everywhere in b, not in a: the nonzero counts differ.
        const Tensor a = randn({6, 5}, gen), b = full({6, 5}, 1.0);
        std::string why;
        const TensorList ra = fn({a}), ea = f({a});
        QVERIFY2(matches(ra[0], ea[0], why), why.c_str());
        QVERIFY2(matches(ra[1], ea[1], why), why.c_str());
        QCOMPARE(fn.graphBreaks().size(), size_t(1));
        QCOMPARE(fn.graphBreaks()[0].op, std::string("aten.nonzero"));
        QVERIFY(fn.graphBreaks()[0].reason.find("depends on the input values") != std::string::npos);
        const std::vector<CompileStage> stages = fn.stages();
        QCOMPARE(stages.size(), 2 * stageNames().size());
        QCOMPARE(stages.back().segment, 1);
        // Other data, another nonzero count: the second graph recompiles.
        const TensorList rb = fn({b}), eb = f({b});
        QVERIFY2(matches(rb[0], eb[0], why), why.c_str());
        QVERIFY2(matches(rb[1], eb[1], why), why.c_str());
        QCOMPARE(rb[1].sizes(), (Shape{30, 2}));
        QVERIFY(ra[1].sizes() != rb[1].sizes());
        QCOMPARE(fn.variants(), size_t(2));
        QVERIFY2(fn.recompileReasons().back().find("segment 1 input ") == 0, fn.recompileReasons().back().c_str());
        QVERIFY_THROWS_EXCEPTION(Error, ops::nonzero(Tensor::empty({3}, DType::F32, kMeta)));
    }

    void customOpsDecomposeOrRunAsExtern()
    {
        OpRegistry &r = OpRegistry::instance();
        if (!r.find("test.twice")) {
            OpDef twice; // no decomposition: an extern kernel
            twice.custom = true;
            twice.shape = [](const Args &a) {
                return std::vector<TensorSpec>{{a[0].toTensor().sizes(), a[0].toTensor().dtype()}};
            };
            twice.cpu = [](const Args &a, std::span<Tensor> outs) { ops::copy_(outs[0], ops::mul(a[0], 2.0)); };
            r.add("test.twice(Tensor self) -> Tensor", std::move(twice));
            OpDef plusOne = r.get("test.twice");
            plusOne.decompose = [](const Args &a) { return TensorList{ops::add(a[0], 1.0)}; };
            plusOne.cpu = nullptr;
            r.add("test.plus_one(Tensor self) -> Tensor", std::move(plusOne));
        }
        const TensorFn f = [](const TensorList &in) {
            const Tensor p = callOp1("test.plus_one", {in[0]});
            return TensorList{ops::mul(callOp1("test.twice", {p}), 3.0)};
        };
        CompiledFunction fn = compile(f);
        Generator gen(12);
        const Tensor x = randn({5, 9}, gen);
        std::string why;
        QVERIFY2(matches(fn({x}).front(), f({x}).front(), why), why.c_str());
        const std::vector<CompileStage> stages = fn.stages();
        QVERIFY(stages[0].graphJson.find("\"target\":\"test.plus_one\"") != std::string::npos);
        QVERIFY(stages[1].graphJson.find("test.plus_one") == std::string::npos); // decomposed
        const Schedule &s = fn.lastExecutable()->schedule();
        QVERIFY(std::any_of(s.kernels.begin(), s.kernels.end(), [](const Kernel &k) {
            return k.kind == KernelKind::Extern && k.anchor->target == "test.twice";
        }));
    }

    void rowInvariantDivisorBecomesOneReciprocal()
    {
        // softmax's division by its row sum: a multiply by the row's
        // reciprocal; a division by a full-shape operand stays a division.
        Generator gen(5);
        const Tensor x = randn({64, 96}, gen), y = randn({64, 96}, gen);
        auto f = [](const TensorList &in) {
            return TensorList{ops::softmax(in[0], -1), ops::div(in[0], ops::add(ops::abs(in[1]), 1.0))};
        };
        CompiledFunction fn = compile(f);
        const TensorList out = fn({x, y});
        const std::string code = fn.stages()[5].code; // stages() returns a copy
        QVERIFY2(code.find("fusescope::sm::reciprocal<float>(") != std::string::npos, code.c_str());
        QVERIFY2(code.find("fusescope::sm::div<float>(") != std::string::npos, code.c_str());
        const TensorList want = f({x, y});
        for (size_t i = 0; i < want.size(); ++i) {
            std::string why;
            QVERIFY2(matches(out[i], want[i], why), why.c_str());
        }
    }

    // A reduced dim that splits into blocks of 64, 32 or 16 accumulates in
    // that many lanes combined as a tree; others keep one accumulator. Both
    // agree with eager: max/min and integer sums exactly, NaN anywhere in a
    // row (not only in lane 0) gives NaN, float sums within tolerance.
    void reductionLanesAgreeWithEager_data()
    {
        QTest::addColumn<int64_t>("width");
        QTest::addColumn<bool>("laned");
        QTest::newRow("128: 64 lanes") << int64_t(128) << true;
        QTest::newRow("96: 32 lanes") << int64_t(96) << true;
        QTest::newRow("48: 16 lanes") << int64_t(48) << true;
        QTest::newRow("50: one accumulator") << int64_t(50) << false;
    }

    void reductionLanesAgreeWithEager()
    {
        QFETCH(int64_t, width);
        QFETCH(bool, laned);
        Generator gen(9);
        std::vector<double> v = randn({5, width}, gen).toDoubleVector();
        v[1 * width + width - 3] = std::nan(""); // a late lane of row 1
        v[3 * width + 1] = -INFINITY;
        const Tensor x = fromVector(v, {5, width});
        const Tensor n = randint(-1000, 1000, {5, width}, gen);
        auto f = [](const TensorList &in) {
            const Tensor y = ops::mul(in[0], 3.0);
            return TensorList{ops::amax(y, {1}), ops::amin(y, {1}), ops::sum(y, {1}),
                              ops::prod(ops::add(ops::mul(in[0], 0.01), 1.0), {1}), ops::sum(ops::mul(in[1], 7), {1}),
                              ops::amax(in[1], {1})};
        };
        CompiledFunction fn = compile(f);
        const TensorList out = fn({x, n});
        const std::string code = fn.stages()[5].code;
        QCOMPARE(code.find("l[r0l]") != std::string::npos, laned);
        const TensorList want = f({x, n});
        for (size_t i : {0, 1, 4, 5}) {
            const std::vector<double> got = out[i].toDoubleVector(), exact = want[i].toDoubleVector();
            QCOMPARE(got.size(), exact.size());
            for (size_t j = 0; j < got.size(); ++j)
                QVERIFY2(got[j] == exact[j] || (std::isnan(got[j]) && std::isnan(exact[j])),
                         qPrintable(QString("output %1, row %2: %3 vs %4").arg(i).arg(j).arg(got[j]).arg(exact[j])));
        }
        const std::vector<double> amax = out[0].toDoubleVector();
        QVERIFY(std::isnan(amax[1]) && !std::isnan(amax[0]));
        for (size_t i : {2, 3}) {
            std::string why;
            QVERIFY2(matches(out[i], want[i], why), why.c_str());
        }
    }

    // A max feeding only sub -> exp -> row sum needs no NaN count: a NaN in
    // the row reaches every output through the sum. Where the max or a value
    // between it and the sum reaches an output another way, the count stays.
    // Either way compiled agrees with eager, NaN for NaN.
    void maxSkipsTheNaNCountOnlyWhereTheSumCarriesIt_data()
    {
        QTest::addColumn<RowFn>("f");
        QTest::addColumn<bool>("counts");
        const auto shifted = [](const Tensor &x) { return ops::sub(x, ops::amax(x, {1}, true)); };
        QTest::newRow("softmax") << RowFn([](const Tensor &x) { return TensorList{ops::softmax(x, 1)}; }) << false;
        QTest::newRow("log-sum-exp form") << RowFn([=](const Tensor &x) {
            const Tensor s = shifted(x);
            return TensorList{ops::sub(s, ops::log(ops::sum(ops::exp(s), {1}, true)))};
        }) << false;
        QTest::newRow("max returned too") << RowFn([](const Tensor &x) {
            return TensorList{ops::softmax(x, 1), ops::amax(x, {1}, true)};
        }) << true;
        QTest::newRow("exp returned")
            << RowFn([=](const Tensor &x) { return TensorList{ops::exp(shifted(x))}; }) << true;
        QTest::newRow("relu on the way") << RowFn([=](const Tensor &x) {
            const Tensor s = shifted(x);
            return TensorList{ops::div(ops::relu(s), ops::sum(ops::exp(s), {1}, true))};
        }) << true;
    }

    void maxSkipsTheNaNCountOnlyWhereTheSumCarriesIt()
    {
        QFETCH(RowFn, f);
        QFETCH(bool, counts);
        const int64_t width = 128;
        Generator gen(4);
        std::vector<double> v = randn({6, width}, gen).toDoubleVector();
        v[1 * width + width - 3] = std::nan(""); // a late lane of row 1
        v[3 * width + 5] = -INFINITY;
        v[4 * width + 7] = INFINITY;
        for (int64_t i = 0; i < width; ++i)
            v[5 * width + i] = -INFINITY;
        const Tensor x = fromVector(v, {6, width});
        CompiledFunction fn = compile([&](const TensorList &in) { return f(in[0]); });
        const TensorList out = fn({x});
        const std::vector<CompileStage> stages = fn.stages(); // a copy: hold it
        const std::string &code = stages[5].code;
        QCOMPARE(code.find("int nan") != std::string::npos, counts);
        QVERIFY(code.find("sm::exp_nonpositive<float>") != std::string::npos); // every case takes exp(x - max(x))
        const std::vector<std::string> &log = stages[5].log;
        const auto logged = [&](const char *what) {
            return std::any_of(log.begin(), log.end(), [&](const std::string &l) { return l.find(what) != l.npos; });
        };
        QCOMPARE(logged("counts no NaNs: a NaN in its row reaches every output"), !counts);
        QVERIFY(logged("of x minus its row's max, at most 0: no overflow clamp"));
        const TensorList want = f(x);
        for (size_t i = 0; i < want.size(); ++i) {
            std::string why;
            QVERIFY2(matches(out[i], want[i], why), why.c_str());
        }
        const std::vector<double> y = out[0].toDoubleVector();
        for (int64_t i = 0; i < width; ++i)
            QVERIFY2(std::isnan(y[static_cast<size_t>(width + i)]), qPrintable(QString("row 1, column %1").arg(i)));
        QVERIFY(!std::isnan(y[0]));
    }

    // exp(x - max(y)) of another y, or x - 2 max(x), may be positive: plain exp.
    void expOfAnotherRowsMaxKeepsItsClamp()
    {
        Generator gen(5);
        const Tensor x = ops::mul(randn({4, 64}, gen), 40.0), y = ops::mul(randn({4, 64}, gen), 40.0);
        const auto f = [](const TensorList &in) {
            return TensorList{ops::exp(ops::sub(in[0], ops::amax(in[1], {1}, true))),
                              ops::exp(ops::sub(in[0], ops::amax(in[0], {1}, true), 2.0))};
        };
        CompiledFunction fn = compile(f);
        const TensorList out = fn({x, y});
        QVERIFY(fn.stages()[5].code.find("sm::exp_nonpositive<") == std::string::npos);
        const TensorList want = f({x, y});
        for (size_t i = 0; i < want.size(); ++i) {
            std::string why;
            QVERIFY2(matches(out[i], want[i], why), why.c_str());
        }
    }

    // The streaming threshold is half the last-level cache, at least 12 MiB:
    // an output the cache holds is read back from it by the next op.
    void streamThresholdFollowsTheCache()
    {
        QCOMPARE(loops::streamBytesForCache(0), int64_t(12) << 20);
        QCOMPARE(loops::streamBytesForCache(int64_t(16) << 20), int64_t(12) << 20);
        QCOMPARE(loops::streamBytesForCache(int64_t(32) << 20), int64_t(16) << 20);
        QCOMPARE(loops::streamBytesForCache(int64_t(504) << 20), int64_t(252) << 20);
    }

    // A result at the streaming threshold (set to 8 MiB here) or above that
    // only the caller reads, from a kernel that computes little per byte,
    // leaves through streaming stores, also when its rows do not start on a
    // cache line (100 floats); one that a later kernel reads, or from a
    // kernel busy with transcendentals, is stored as before.
    void largeResultsStreamUnlessReadAgain_data()
    {
        QTest::addColumn<int64_t>("rows");
        QTest::addColumn<int64_t>("width");
        QTest::addColumn<bool>("readAgain");
        QTest::addColumn<bool>("heavy");
        QTest::addColumn<bool>("streamed");
        QTest::newRow("8192 x 256") << int64_t(8192) << int64_t(256) << false << false << true;
        QTest::newRow("21000 x 100") << int64_t(21000) << int64_t(100) << false << false << true;
        QTest::newRow("read by a GEMM") << int64_t(8192) << int64_t(256) << true << false << false;
        QTest::newRow("4 MiB") << int64_t(4096) << int64_t(256) << false << false << false;
        QTest::newRow("compute-bound") << int64_t(8192) << int64_t(256) << false << true << false;
    }

    void largeResultsStreamUnlessReadAgain()
    {
        QFETCH(int64_t, rows);
        QFETCH(int64_t, width);
        QFETCH(bool, readAgain);
        QFETCH(bool, heavy);
        QFETCH(bool, streamed);
        loops::setStreamBytes(int64_t(8) << 20);
        const std::shared_ptr<void> restore(nullptr, [](void *) { loops::setStreamBytes(0); });
        Generator gen(10);
        const Tensor x = randn({rows, width}, gen), w = randn({width, 8}, gen);
        auto f = [readAgain, heavy](const TensorList &in) {
            Tensor y = ops::layerNorm(ops::add(in[0], 1.0), {in[0].size(1)});
            y = heavy ? ops::erf(ops::sigmoid(ops::erf(y))) : y;
            return readAgain ? TensorList{y, ops::mm(y, in[1])} : TensorList{y};
        };
        CompiledFunction fn = compile(f);
        const TensorList out = fn({x, w});
        const std::string code = fn.stages()[5].code;
        QCOMPARE(code.find("fusescope_stream_row(p") != std::string::npos, streamed);
        const TensorList want = f({x, w});
        for (size_t i = 0; i < want.size(); ++i) {
            std::string why;
            QVERIFY2(matches(out[i], want[i], why), why.c_str());
        }
    }

    // A kernel that walks each row more than once prefetches the row after
    // next (rows of 512 B to 16 KiB that follow each other): a block at a
    // time inside its costliest laned loop, outputs for writing, or its
    // inputs all at the row's start where the row does not split into lanes.
    // A one-loop kernel prefetches in blocks when it computes a flop a byte or
    // more. Rows too short, rows that are not contiguous, a flat pointwise
    // loop and a light one do not. Results match eager mode either way (the
    // last row's prefetch must not be needed for correctness).
    void rowsPrefetchTheRowAfterNext_data()
    {
        QTest::addColumn<int64_t>("rows");
        QTest::addColumn<int64_t>("width");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QStringList>("prefetches");
        QTest::newRow("softmax 37 x 512") << int64_t(37) << int64_t(512) << QString("softmax")
                                          << QStringList{"__builtin_prefetch(p0 + b0 + 1024 + r0b + q, 0, 3)",
                                                          "__builtin_prefetch(p1 + b1 + 1024 + r0b + q, 1, 3)"};
        QTest::newRow("softmax rows of 64 B") << int64_t(300) << int64_t(16) << QString("softmax") << QStringList{};
        QTest::newRow("softmax 8 KiB rows") << int64_t(5) << int64_t(2048) << QString("softmax")
                                            << QStringList{"__builtin_prefetch(p0 + b0 + 4096 + r0b + q, 0, 3)"};
        QTest::newRow("softmax rows without lanes") << int64_t(9) << int64_t(200) << QString("softmax")
                                                    << QStringList{"__builtin_prefetch(p0 + b0 + 400 + q, 0, 3)"};
        QTest::newRow("softmax over a transpose")
            << int64_t(512) << int64_t(256) << QString("transposed softmax") << QStringList{};
        QTest::newRow("flat pointwise") << int64_t(64) << int64_t(512) << QString("flat") << QStringList{};
        QTest::newRow("heavy pointwise") << int64_t(21) << int64_t(256) << QString("heavy")
                                         << QStringList{"__builtin_prefetch(p0 + b0 + 512 + r0b + q, 0, 3)",
                                                         "__builtin_prefetch(p2 + b2 + 512 + r0b + q, 1, 3)"};
        QTest::newRow("light pointwise") << int64_t(21) << int64_t(256) << QString("light") << QStringList{};
    }

    void rowsPrefetchTheRowAfterNext()
    {
        QFETCH(int64_t, rows);
        QFETCH(int64_t, width);
        QFETCH(QString, kind);
        QFETCH(QStringList, prefetches);
        Generator gen(12);
        const Tensor x = randn({rows, width}, gen), w = randn({width}, gen);
        auto f = [kind](const TensorList &in) {
            if (kind == "flat")
                return TensorList{ops::sigmoid(ops::add(in[0], 1.0))};
            if (kind == "heavy") // 12 flops for 8 bytes an element
                return TensorList{ops::mul(ops::sigmoid(ops::mul(in[0], in[1])), in[0])};
            if (kind == "light")
                return TensorList{ops::add(ops::mul(in[0], in[1]), in[0])};
            return TensorList{ops::softmax(kind == "softmax" ? in[0] : ops::transpose(in[0], 0, 1), -1)};
        };
        CompiledFunction fn = compile(f);
        const TensorList out = fn({x, w});
        const std::string code = fn.stages()[5].code;
        if (prefetches.isEmpty())
            QVERIFY2(code.find("__builtin_prefetch") == std::string::npos, code.c_str());
        for (const QString &p : prefetches)
            QVERIFY2(code.find(p.toStdString()) != std::string::npos, code.c_str());
        std::string why;
        QVERIFY2(matches(out[0], f({x, w})[0], why), why.c_str());
    }

    // A kernel of several loops over each row holds its last loop's output
    // row in L1 and stores it during the next row's costliest laned loop;
    // each thread's range stores its last row after its loop. One-loop
    // kernels, rows that do not split into lanes, and rows under 2 KiB or
    // over 8 KiB store as they go.
    // Results match eager mode either way, whatever rows a thread gets.
    void lastLoopRowsAreHeldARow_data()
    {
        QTest::addColumn<int64_t>("rows");
        QTest::addColumn<int64_t>("width");
        QTest::addColumn<bool>("pointwise");
        QTest::addColumn<bool>("held");
        QTest::newRow("37 x 512") << int64_t(37) << int64_t(512) << false << true;
        QTest::newRow("one row of 8 KiB") << int64_t(1) << int64_t(2048) << false << true;
        QTest::newRow("rows of 1 KiB") << int64_t(40) << int64_t(256) << false << false;
        QTest::newRow("rows of 16 KiB") << int64_t(5) << int64_t(4096) << false << false;
        QTest::newRow("rows of 100, no lanes") << int64_t(40) << int64_t(100) << false << false;
        QTest::newRow("pointwise") << int64_t(64) << int64_t(512) << true << false;
    }

    void lastLoopRowsAreHeldARow()
    {
        QFETCH(int64_t, rows);
        QFETCH(int64_t, width);
        QFETCH(bool, pointwise);
        QFETCH(bool, held);
        Generator gen(13);
        const Tensor x = randn({rows, width}, gen);
        auto f = [pointwise, width](const TensorList &in) {
            return TensorList{pointwise ? ops::sigmoid(ops::add(in[0], 1.0))
                                        : ops::layerNorm(ops::softmax(in[0], -1), {width})};
        };
        CompiledFunction fn = compile(f);
        const TensorList out = fn({x});
        const std::string code = fn.stages()[5].code;
        QVERIFY2((code.find("held row goes") != std::string::npos) == held, code.c_str());
        if (held)
            QVERIFY2(code.find("std::memcpy(ht") != std::string::npos, code.c_str());
        std::string why;
        QVERIFY2(matches(out[0], f({x})[0], why), why.c_str());
    }

    // matmul, softmax, matmul with the scale and mask forms that models and
    // ONNX exports write become one fusescope.attention kernel, which agrees
    // with the decomposed ops run eagerly: a row the mask hides completely
    // is NaN in both. 128 x 128 scores take the row-chunk path that skips
    // keys a -inf mask hides (its first chunks see fewer keys). Heads merged
    // after it (transpose or permute, then reshape) are written in place by
    // the kernel: no copy merges them.
    void decomposedAttentionIsOneKernel_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<int64_t>("length");
        for (const char *form : {"plain", "query scaled", "scores divided", "masked_fill", "where fill first",
                                 "where keep finite", "weights read twice", "heads merged", "heads permuted"}) {
            QTest::newRow(form) << QString(form) << int64_t(10);
            QTest::newRow((std::string(form) + " 128").c_str()) << QString(form) << int64_t(128);
        }
    }

    void decomposedAttentionIsOneKernel()
    {
        QFETCH(QString, form);
        QFETCH(int64_t, length);
        Generator gen(11);
        const int64_t e = length > 10 ? 64 : 16;
        const Tensor q = randn({2, 3, length, e}, gen), k = randn({2, 3, length, e}, gen),
                     v = randn({2, 3, length, 8}, gen);
        std::vector<double> hidden(static_cast<size_t>(length * length)); // causal: key j hidden from query i < j
        for (int64_t i = 0; i < length; ++i) {
            for (int64_t j = 0; j < length; ++j)
                hidden[static_cast<size_t>(i * length + j)] = i == 1 || j > i; // row 1 sees nothing
        }
        const Tensor mask = fromVector(hidden, {length, length}, DType::Bool);
        const std::string f = form.toStdString();
        auto fn = [f](const TensorList &in) {
            const Tensor kt = ops::transpose(in[1], -2, -1);
            Tensor s = ops::matmul(f == "query scaled" ? ops::mul(in[0], 0.125) : in[0], kt);
            if (f == "scores divided")
                s = ops::div(s, 8.0);
            if (f == "masked_fill")
                s = ops::maskedFill(s, in[3], -INFINITY);
            if (f == "where fill first")
                s = ops::where(in[3], -INFINITY, s);
            if (f == "where keep finite")
                s = ops::where(ops::logicalNot(in[3]), s, -1e9);
            const Tensor w = ops::softmax(s, -1);
            const Tensor out = ops::matmul(w, in[2]);
            const int64_t rows = out.size(2), merged = out.size(1) * out.size(3);
            if (f == "heads merged")
                return TensorList{ops::reshape(ops::transpose(out, 1, 2), {out.size(0), rows, merged})};
            if (f == "heads permuted")
                return TensorList{ops::reshape(ops::permute(out, {0, 2, 1, 3}), {out.size(0), rows, merged})};
            return f == "weights read twice" ? TensorList{out, w} : TensorList{out};
        };
        CompiledFunction compiled = compile(fn);
        const TensorList got = compiled({q, k, v, mask});
        const Schedule &s = compiled.lastExecutable()->schedule();
        const auto attention = std::count_if(s.kernels.begin(), s.kernels.end(), [](const Kernel &kn) {
            return kn.kind == KernelKind::Extern && kn.anchor->target == "fusescope.attention";
        });
        QCOMPARE(attention, f == "weights read twice" ? 0 : 1);
        const bool merged = f == "heads merged" || f == "heads permuted";
        const auto copies = std::count_if(s.kernels.begin(), s.kernels.end(), [](const Kernel &kn) {
            return kn.kind == KernelKind::Extern && kn.anchor->target == "aten.reshape";
        });
        QCOMPARE(copies, 0);
        for (const Kernel &kn : s.kernels) {
            if (kn.kind == KernelKind::Extern && kn.anchor->target == "fusescope.attention")
                QCOMPARE(kn.anchor->args()[6].constant.toBool(), merged);
        }
        const TensorList want = fn({q, k, v, mask});
        for (size_t i = 0; i < want.size(); ++i) {
            std::string why;
            QVERIFY2(matches(got[i], want[i], why), why.c_str());
        }
        const std::vector<double> out = got[0].toDoubleVector();
        const bool masked = f == "masked_fill" || f == "where fill first";
        QCOMPARE(std::isnan(out[merged ? 24 : 8]), masked); // row 1 of block 0
        QVERIFY(!std::isnan(out[0]));
    }

    // Bool tensors are read and written as bytes in generated code: GCC has
    // no vector type for bool, and a kernel loading a bool mask (llama's
    // causal masked_fill) ran as a scalar loop.
    void boolTensorsAreBytesInGeneratedCode()
    {
        Generator gen(6);
        const Tensor x = randn({32, 80}, gen), mask = ops::gt(randn({80}, gen), 0.0);
        auto f = [](const TensorList &in) {
            const Tensor filled = ops::maskedFill(ops::mul(in[0], 2.0), in[1], -1e9);
            return TensorList{filled, ops::gt(filled, 0.5), ops::where(in[1], in[0], 0.0)};
        };
        CompiledFunction fn = compile(f);
        const TensorList out = fn({x, mask});
        const std::string code = fn.stages()[5].code;
        QVERIFY2(code.find("    const uint8_t *const p") != std::string::npos, code.c_str()); // the mask
        QVERIFY2(code.find("    uint8_t *const p") != std::string::npos, code.c_str());       // gt's output
        QVERIFY2(code.find("bool *const") == std::string::npos, code.c_str());
        const TensorList want = f({x, mask});
        QCOMPARE(out[1].dtype(), DType::Bool);
        for (size_t i = 0; i < want.size(); ++i)
            QCOMPARE(out[i].toDoubleVector(), want[i].toDoubleVector());
    }

    // Kernels over a 0-d domain (scalar inputs): no dims to index; a sum over
    // dim -1 of a 0-d quotient is left as it is by simplify.
    void zeroDimensionalKernel_data()
    {
        QTest::addColumn<int>("which");
        QTest::newRow("pointwise") << 0;
        QTest::newRow("sum of a quotient") << 1;
    }
    void zeroDimensionalKernel()
    {
        QFETCH(int, which);
        const TensorFn f = [which](const TensorList &in) {
            if (which == 1)
                return TensorList{ops::sum(ops::div(in[0], ops::add(ops::abs(in[1]), 1.0)), {-1}, true)};
            return TensorList{ops::add(ops::exp(in[0]), in[1])};
        };
        Generator gen(5);
        const TensorList in = {randn({}, gen), randn({}, gen)};
        CompiledFunction compiled = compile(f);
        std::string why;
        QVERIFY2(matches(compiled(in).front(), f(in).front(), why), why.c_str());
        QVERIFY(compiled.lastExecutable()->hasCode(0));
    }

    // A cat along the last dim joins the pointwise kernel that reads it: each
    // element is loaded from the input whose stretch holds it, or computed
    // there by the op that only the cat reads (rotary embeddings'
    // rotate_half). A cat along another dim, one of more than four inputs,
    // and a cat that nothing fuses with stay copies. Compiled and interpreted results equal eager.
    void catAlongTheLastDimJoinsItsReader_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<bool>("fused");
        QTest::newRow("rotary") << 0 << true;
        QTest::newRow("three widths, one transposed, one of width 1") << 1 << true;
        QTest::newRow("inputs from a kernel that its reader also reads") << 2 << true;
        QTest::newRow("ops only the cat reads, one with a broadcast operand") << 6 << true;
        QTest::newRow("alone") << 3 << false;
        QTest::newRow("alone with an op only it reads") << 7 << true;
        QTest::newRow("along the first dim") << 4 << false;
        QTest::newRow("five inputs") << 5 << false;
    }
    void catAlongTheLastDimJoinsItsReader()
    {
        QFETCH(int, which);
        QFETCH(bool, fused);
        const TensorFn f = [which](const TensorList &in) {
            const Tensor &x = in[0], &c = in[1];
            switch (which) {
            case 0: {
                const Tensor rotated = ops::cat({ops::neg(x.narrow(-1, 4, 4)), x.narrow(-1, 0, 4)}, -1);
                return TensorList{ops::add(ops::mul(x, c), ops::mul(rotated, ops::sigmoid(c)))};
            }
            case 1: {
                const Tensor t = x.narrow(-1, 0, 5).transpose(-1, -2).narrow(-1, 0, 3); // [2,3,5,3] strided
                return TensorList{ops::exp(ops::cat({t, x.narrow(-1, 7, 1), x.narrow(-1, 0, 4).narrow(-2, 0, 5)}, -1))};
            }
            case 2: {
                const Tensor y = ops::exp(x);
                return TensorList{ops::add(ops::cat({y.narrow(-1, 4, 4), y.narrow(-1, 0, 4)}, -1), y)};
            }
            case 3: return TensorList{ops::cat({x, x.narrow(-1, 2, 3)}, -1)};
            case 7: return TensorList{ops::cat({x, ops::neg(x)}, -1)};
            case 6: {
                const Tensor scaled = ops::mul(x.narrow(-1, 5, 3), c.narrow(-1, 0, 3)); // c: [5,8]
                return TensorList{ops::add(ops::cat({scaled, ops::exp(x.narrow(-1, 0, 5))}, -1), x)};
            }
            case 4: return TensorList{ops::add(ops::cat({x, x}, 0), 1.0)};
            case 5: return TensorList{ops::add(ops::cat({x, x, x, x, x}, -1), 1.0)};
            }
            throw Error("no such case");
        };
        Generator gen(11);
        const TensorList in = {randn({2, 3, 5, 8}, gen), randn({5, 8}, gen)};
        const TensorList want = f(in);
        CompileOptions interp;
        interp.interpret = true;
        CompiledFunction compiled = compile(f), interpreted = compile(f, {}, interp);
        for (const TensorList &got : {compiled(in), interpreted(in)}) {
            std::string why;
            QVERIFY2(matches(got.front(), want.front(), why), why.c_str());
        }
        size_t inKernels = 0, copies = 0;
        const Executable &exe = *compiled.lastExecutable();
        for (size_t k = 0; k < exe.schedule().kernels.size(); ++k) {
            const Kernel &kernel = exe.schedule().kernels[k];
            for (const Node *n : kernel.nodes) {
                if (n->target != "aten.cat")
                    continue;
                const bool generated = kernel.kind == KernelKind::Pointwise && exe.hasCode(k);
                (generated ? inKernels : copies) += 1;
            }
        }
        QCOMPARE(inKernels, fused ? size_t(1) : size_t(0));
        QCOMPARE(copies, fused ? size_t(0) : size_t(1));
    }

    // A channel concatenation at batch 1 is its inputs end to end: the
    // kernels that write them write into the output and the cat copies
    // nothing, also when the output is itself an input of the next cat
    // (pairwise chains); a cat of inputs already lying one after another in a
    // later cat's output is a view of them (a dense block). At batch 2, with
    // an input listed twice, or with an input the caller gets back, it copies
    // as before.
    void concatenationInputsAreWrittenInPlace()
    {
        const auto halves = [](const Tensor &x) {
            return std::pair{ops::relu(ops::mul(x, 2.0)), ops::sigmoid(ops::add(x, 1.0))};
        };
        struct Case {
            const char *name;
            TensorFn f;
            size_t cats; // written in place at batch 1
        };
        const std::vector<Case> cases = {
            {"halves", [&](const TensorList &in) {
                 const auto [a, b] = halves(in[0]);
                 return TensorList{ops::add(ops::cat({a, b}, 1), 1.0)};
             }, 1},
            {"chained", [&](const TensorList &in) {
                 const auto [a, b] = halves(in[0]);
                 const Tensor ab = ops::cat({a, b}, 1);
                 return TensorList{ops::add(ops::cat({ab, ops::exp(ab)}, 1), 1.0)};
             }, 2},
            {"dense block", [&](const TensorList &in) {
                 TensorList features = {ops::relu(in[0])};
                 for (int layer = 0; layer < 3; ++layer)
                     features.push_back(ops::sigmoid(ops::amax(ops::cat(features, 1), {1}, true)));
                 return TensorList{ops::add(ops::cat(features, 1), 1.0)};
             }, 3}, // the cat of one input is gone in simplify
            {"one input twice", [&](const TensorList &in) {
                 const auto [a, b] = halves(in[0]);
                 return TensorList{ops::add(ops::cat({a, b, a}, 1), 1.0)};
             }, 0},
            {"an input returned too", [&](const TensorList &in) {
                 const auto [a, b] = halves(in[0]);
                 return TensorList{ops::add(ops::cat({a, b}, 1), 1.0), b};
             }, 0},
        };
        Generator gen(7);
        for (const Shape &shape : {Shape{1, 3, 4, 5}, Shape{2, 3, 4, 5}}) {
            const Tensor x = randn(shape, gen);
            for (const Case &c : cases) {
                CompiledFunction fn = compile(c.f);
                const TensorList out = fn({x}), want = c.f({x});
                const MemoryPlan &plan = fn.lastExecutable()->plan();
                for (size_t i = 0; i < want.size(); ++i)
                    QCOMPARE(out[i].toDoubleVector(), want[i].toDoubleVector());
                QVERIFY2(plan.concatsInPlace.size() == (shape[0] == 1 ? c.cats : 0u), c.name);
                // Each output's parts lie inside it, one after another, and fill
                // it; a view lies inside its whole.
                std::map<int, int64_t> filled;
                size_t views = 0;
                for (const BufferPlan &b : plan.buffers) {
                    if (b.partOf < 0)
                        continue;
                    const BufferPlan &whole = plan.buffers[static_cast<size_t>(b.partOf)];
                    QVERIFY(whole.holdsParts);
                    QCOMPARE(b.offset, whole.offset + b.partOffset);
                    if (b.viewOfParts) {
                        QVERIFY(b.partOffset + b.bytes <= whole.bytes);
                        QVERIFY(whole.first <= b.first && b.last <= whole.last);
                        ++views;
                        continue;
                    }
                    QCOMPARE(b.partOffset, filled[b.partOf]);
                    filled[b.partOf] += b.bytes;
                }
                QCOMPARE(filled.size() + views, plan.concatsInPlace.size());
                for (const auto &[whole, bytes] : filled)
                    QCOMPARE(bytes, plan.buffers[static_cast<size_t>(whole)].bytes);
            }
        }
    }

    void stagesAreRecordedInOrder()
    {
        zoo::Instance inst = zoo::create("softmax_ln", 0);
        CompiledFunction fn = compile(inst.model);
        fn(inst.inputs);
        const auto &stages = fn.stages();
        QCOMPARE(stages.size(), stageNames().size());
        for (size_t i = 0; i < stages.size(); ++i) {
            QCOMPARE(stages[i].name, stageNames()[i]);
            QVERIFY(stages[i].durationMs >= 0);
            graphFromJsonText(stages[i].graphJson).lint();
        }
        QCOMPARE(stages[0].stats.kernels, int64_t(2)); // softmax and layer_norm before decomposition
        QVERIFY(stages[3].stats.kernels <= 2);
        QVERIFY(stages[3].stats.bytesMoved < stages[2].stats.bytesMoved);
        QVERIFY(stages[4].stats.plannedPeak >= 0 && stages[4].stats.plannedPeak <= stages[4].stats.unplannedPeak);
        QVERIFY(stages[5].code.find("extern \"C\" void fused_") != std::string::npos);
        const nlohmann::json fuse = nlohmann::json::parse(stages[3].detailsJson);
        QVERIFY(!fuse.at("kernels").empty());
    }

    void warmCompileComesFromTheCache()
    {
        zoo::Instance inst = zoo::create("pointwise", 0);
        CompiledFunction first = compile(inst.model);
        first(inst.inputs);
        CompiledFunction second = compile(inst.model);
        second(inst.inputs);
        const auto log = second.stages().back().log;
        QVERIFY(std::any_of(log.begin(), log.end(), [](const std::string &l) { return l.find("cache hit") == 0; }));
    }

    void compilerFailureNamesSourceAndError()
    {
        QTemporaryDir dir;
        const QString script = fakeCompiler(dir, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo fake-cxx 1.0; exit 0; fi\n"
                                                 "echo 'kernel.cpp:3:7: error: expected something' >&2\nexit 1\n");
        QVERIFY(!script.isEmpty());
        const std::string old = std::getenv("CXX") ? std::getenv("CXX") : "";
        setenv("CXX", script.toLocal8Bit().constData(), 1);
        Generator gen(5);
        CompiledFunction fn = compile([](const TensorList &in) { return TensorList{ops::exp(ops::mul(in[0], 3.0))}; });
        try {
            fn({randn({7, 5}, gen)});
            QFAIL("no error");
        } catch (const Error &e) {
            const std::string msg = e.what();
            QVERIFY2(msg.find("load: compiling ") == 0 && msg.find(".cpp failed: kernel.cpp:3:7: error: expected something")
                         != std::string::npos, e.what());
        }
        if (old.empty())
            unsetenv("CXX");
        else
            setenv("CXX", old.c_str(), 1);
    }

    // Two processes compiling the same kernel into a cold cache at once: each
    // compiles its own copy of the source. The compiler here fails if its
    // source file changes while it runs, which a shared path allowed.
    void concurrentProcessesCompileTheSameKernel()
    {
        QTemporaryDir dir;
        const QString script = fakeCompiler(
            dir, "#!/bin/sh\nif [ \"$1\" = --version ]; then exec c++ --version; fi\n"
                 "for a; do src=$a; done\nbefore=$(stat -c %y \"$src\")\nsleep 1\n"
                 "[ \"$before\" = \"$(stat -c %y \"$src\")\" ] || { echo \"$src:1:1: error: rewritten\" >&2; exit 1; }\n"
                 "exec c++ \"$@\"\n");
        QVERIFY(!script.isEmpty());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("CXX"), script);
        env.insert(QStringLiteral("XDG_CACHE_HOME"), dir.filePath(QStringLiteral("cache")));
        QProcess first, second;
        for (QProcess *p : {&first, &second}) {
            p->setProcessEnvironment(env);
            p->start(QStringLiteral(FUSESCOPE_BINARY), {QStringLiteral("run"), QStringLiteral("softmax_ln"),
                                                        QStringLiteral("--compile"), QStringLiteral("--repeat"),
                                                        QStringLiteral("1")});
            QVERIFY(p->waitForStarted());
            QTest::qWait(300); // the second one writes its source while the first compiles
        }
        for (QProcess *p : {&first, &second}) {
            QVERIFY(p->waitForFinished(120'000));
            QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
        }
    }

    void noCompilerEnvironmentForcesTheInterpreter()
    {
        setenv("FUSESCOPE_NO_CC", "1", 1);
        Generator gen(6);
        CompiledFunction fn = compile([](const TensorList &in) { return TensorList{ops::tanh(ops::mul(in[0], 2.0))}; });
        const Tensor x = randn({33, 7}, gen);
        const Tensor y = fn({x}).front();
        unsetenv("FUSESCOPE_NO_CC");
        QVERIFY(!fn.lastExecutable()->hasCode(0));
        const auto log = fn.stages().back().log;
        QVERIFY(std::any_of(log.begin(), log.end(), [](const std::string &l) { return l.find("FUSESCOPE_NO_CC=1") == 0; }));
        std::string why;
        QVERIFY2(matches(y, ops::tanh(ops::mul(x, 2.0)), why), why.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCompilerCompile)
#include "tst_compiler_compile.moc"
