// The ONNX conformance runner: ONNX's backend node tests (onnx-node) and the
// whole models (onnx-models) run eager and compiled against their reference
// outputs, one line per test and a closing count. The light zoo models have
// no stored input; they get the one ONNX's runner generates. Then single-node
// cases for attributes the node tests leave out, and fixtures built with the
// protobuf API: shape subgraphs fold away, Softmax changes at opset 13, an
// unsupported model names every bad node, inputs are checked by name.
//
// By hand: FUSESCOPE_ONNX_TEST_DIR=<folder> runs that test folder (one with
// model.onnx and test_data_set_*/) or every model under it instead, and
// FUSESCOPE_ONNX_ATOL=1e-5 loosens the absolute tolerance for whole models.
#include "core/compiler/compile.h"
#include "core/onnx/onnxprogram.h"
#include "core/ops/functional.h"
#include "core/tensor/factory.h"

#include <onnx/onnx_pb.h>

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

using namespace fusescope;
using namespace fusescope::onnx;

namespace {

// ONNX's backend test tolerances. By hand, FUSESCOPE_ONNX_ATOL loosens the
// absolute one: whole exported models sum thousands of products, and an
// output near zero then differs from PyTorch's by a few 1e-7.
constexpr double kRtol = 1e-3;
const double kAtol = qEnvironmentVariableIsSet("FUSESCOPE_ONNX_ATOL") ? qEnvironmentVariable("FUSESCOPE_ONNX_ATOL").toDouble()
                                                                     : 1e-7;

// Points the on-disk kernel cache at a folder of the build, so reruns are warm.
void useTestCache()
{
    setenv("XDG_CACHE_HOME", FUSESCOPE_TEST_CACHE_DIR, 1);
}

// --- comparison ------------------------------------------------------------------------

bool equalOrClose(double got, double want, bool exact)
{
    if (std::isnan(want) || std::isnan(got))
        return std::isnan(want) && std::isnan(got);
    if (exact || std::isinf(want))
        return got == want;
    return std::fabs(got - want) <= kAtol + kRtol * std::fabs(want);
}

// Row-major index `flat` of `shape` as "[1,2]".
std::string indexStr(int64_t flat, const Shape &shape)
{
    Shape index(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        index[d] = shape[d] == 0 ? 0 : flat % shape[d];
        flat = shape[d] == 0 ? 0 : flat / shape[d];
    }
    return shapeStr(index);
}

// "" when `got` matches `want`: same dtype and shape, values within the
// tolerances (exact for integers and bool), NaN where NaN.
std::string mismatch(const Tensor &got, const Tensor &want)
{
    if (got.dtype() != want.dtype() || got.sizes() != want.sizes())
        return "got " + shapeStr(got.sizes()) + " " + dtypeName(got.dtype()) + ", expected " + shapeStr(want.sizes())
            + " " + dtypeName(want.dtype());
    const std::vector<double> a = got.toDoubleVector(), b = want.toDoubleVector();
    const bool exact = !isFloating(want.dtype());
    int64_t worst = -1;
    double worstDiff = -1;
    for (size_t i = 0; i < b.size(); ++i) {
        const double diff = std::isnan(a[i] - b[i]) ? INFINITY : std::fabs(a[i] - b[i]);
        if (!equalOrClose(a[i], b[i], exact) && diff > worstDiff)
            worst = static_cast<int64_t>(i), worstDiff = diff;
    }
    if (worst < 0)
        return "";
    char diff[32];
    std::snprintf(diff, sizeof diff, "%.3g", worstDiff);
    return std::string("max |diff| ") + diff + " at " + indexStr(worst, want.sizes());
}

// "" or "<mode> output N: <what>" for the first output that differs.
std::string compareOutputs(const char *mode, const TensorList &got, const TensorList &want)
{
    if (got.size() != want.size())
        return std::string(mode) + ": " + std::to_string(got.size()) + " outputs, expected "
            + std::to_string(want.size());
    for (size_t i = 0; i < want.size(); ++i)
        if (std::string why = mismatch(got[i], want[i]); !why.empty())
            return std::string(mode) + " output " + std::to_string(i) + ": " + why;
    return "";
}

// --- test folders ----------------------------------------------------------------------

struct DataSet {
    TensorList inputs, outputs;
};

// `prefix`_0.pb, `prefix`_1.pb … of one data set folder, in order.
TensorList readTensors(const QDir &dir, const QString &prefix)
{
    TensorList tensors;
    for (int i = 0;; ++i) {
        const QString path = dir.filePath(prefix + QStringLiteral("_%1.pb").arg(i));
        if (!QFile::exists(path))
            return tensors;
        tensors.push_back(readTensorFile(path.toStdString()).tensor);
    }
}

std::vector<DataSet> dataSets(const QString &folder)
{
    std::vector<DataSet> sets;
    const QStringList names = QDir(folder).entryList({QStringLiteral("test_data_set_*")}, QDir::Dirs, QDir::Name);
    for (const QString &name : names) {
        const QDir dir(QDir(folder).filePath(name));
        sets.push_back({readTensors(dir, QStringLiteral("input")), readTensors(dir, QStringLiteral("output"))});
    }
    return sets;
}

// Models stored without inputs (onnx-models/light): ONNX's runner feeds the
// single graph input i / N in row-major order (N elements) and compares with
// <name>_output_0.pb beside the model.
std::vector<DataSet> generatedDataSet(const OnnxModel &model, const QString &file)
{
    const QString reference = file.chopped(int(qstrlen(".onnx"))) + QStringLiteral("_output_0.pb");
    if (!QFile::exists(reference) || model.inputs.size() != 1 || !model.inputs[0].hasShape)
        return {};
    const Shape shape = model.inputs[0].dims;
    std::vector<double> values(static_cast<size_t>(numelOf(shape)));
    for (size_t i = 0; i < values.size(); ++i)
        values[i] = double(i) / double(values.size());
    const Tensor x = fromVector(values, shape, model.inputs[0].dtype);
    return {{{x}, {readTensorFile(reference.toStdString()).tensor}}};
}

// Every folder holding a model.onnx under `root` (root itself included), sorted.
QStringList modelFolders(const QString &root)
{
    QStringList folders;
    QDirIterator it(root, {QStringLiteral("model.onnx")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        folders << QFileInfo(it.next()).absolutePath();
    folders.sort();
    return folders;
}

// Model files other than model.onnx (onnx-models/light/<name>.onnx).
QStringList looseModels(const QString &root)
{
    QStringList files;
    QDirIterator it(root, {QStringLiteral("*.onnx")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        if (QString path = it.next(); !path.endsWith(QLatin1String("/model.onnx")))
            files << path;
    files.sort();
    return files;
}

// Why a model cannot run here by design, or "": sequence, map and optional
// values (as inputs, outputs or between Sequence* nodes) are not supported.
std::string nonTensorValue(const OnnxModel &model)
{
    for (const std::vector<OnnxValueInfo> *values : {&model.inputs, &model.outputs})
        for (const OnnxValueInfo &v : *values)
            if (!v.tensor)
                return std::string(values == &model.inputs ? "input" : "output") + " '" + v.name
                    + "' is not a tensor (sequence, map or optional)";
    for (const OnnxNode &node : model.nodes)
        if (node.opType.find("Sequence") != std::string::npos)
            return "sequence values ('" + node.label() + "' is a " + node.opType + ")";
    return "";
}

// --- the runner --------------------------------------------------------------------------

struct Outcome {
    enum Kind { Pass, Fail, Skip } kind = Pass;
    std::string detail;
};

// ONNX's node tests feed shapes and axes (Reshape's shape, Slice's starts,
// ReduceSum's axes) as graph inputs, which a capture on meta tensors cannot
// read. Such a model compiles with its integer inputs bound to the data
// set's values as initializers, as torch.compile specializes on integers.
struct Bound {
    OnnxModel model;
    TensorList inputs; // the inputs left
};

Bound bindIntegerInputs(OnnxModel model, const TensorList &values)
{
    Bound b;
    std::vector<OnnxValueInfo> kept;
    for (size_t i = 0; i < model.inputs.size(); ++i) {
        if (isIntegral(model.inputs[i].dtype))
            model.initializers.emplace_back(model.inputs[i].name, values[i]);
        else
            kept.push_back(model.inputs[i]), b.inputs.push_back(values[i]);
    }
    model.inputs = std::move(kept);
    b.model = std::move(model);
    return b;
}

TensorList runCompiled(const OnnxModel &model, const TensorList &inputs)
{
    try {
        const OnnxProgram program = makeProgram(model);
        return compiler::compile(program.fn, program.parameters)(inputs);
    } catch (const Error &e) {
        throw Error(std::string("compiled: ") + e.what());
    }
}

// The compiled outputs; `bound` tells whether integer inputs had to be bound.
TensorList compiledOutputs(const OnnxModel &model, const TensorList &inputs, bool &bound)
{
    bound = false;
    try {
        return runCompiled(model, inputs);
    } catch (const Error &) {
        if (std::none_of(model.inputs.begin(), model.inputs.end(),
                         [](const OnnxValueInfo &v) { return isIntegral(v.dtype); }))
            throw;
    }
    bound = true;
    const Bound b = bindIntegerInputs(model, inputs);
    return runCompiled(b.model, b.inputs);
}

// --- softmax outputs compared through their logits -------------------------------------
// A softmax of large logits turns a rounding difference of its inputs into
// any difference of its outputs. ONNX's light models (constant weights) end
// in a softmax of 1000 equal logits near 1e10; a BLAS whose rounding depends
// on an element's position in its tiles (OpenBLAS 0.3.21's Haswell sgemm
// gives half the rows of a product with equal rows a different last bit)
// makes them differ by 2 ulp, and one class's probability 0.06 instead of
// 0.001. Where such an output differs, the check moves before the softmax:
// the logits must lie within the tolerances of logits whose softmax is the
// reference, log(p) plus a constant per softmax row.

const OnnxNode *softmaxProducing(const OnnxModel &model, const std::string &output)
{
    for (const OnnxNode &node : model.nodes)
        if (node.opType == "Softmax" && node.outputs.size() == 1 && node.outputs[0] == output && node.inputs.size() == 1)
            return &node;
    return nullptr;
}

// Softmax rows of a tensor of `shape`: `outer` x `length` x `inner`, the
// row running over the middle dim. Before opset 13 the softmax runs over the
// dims from `axis` on, flattened (inner = 1); from 13 over `axis` alone.
struct SoftmaxRows {
    int64_t outer = 1, length = 1, inner = 1;
};

SoftmaxRows softmaxRows(const OnnxNode &node, int64_t opset, const Shape &shape)
{
    const auto it = node.attributes.find("axis");
    const int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis = it != node.attributes.end() ? it->second.i : (opset < 13 ? 1 : -1);
    axis = axis < 0 ? axis + rank : axis;
    SoftmaxRows r;
    for (int64_t d = 0; d < rank; ++d)
        (d < axis ? r.outer : (d == axis || opset < 13) ? r.length : r.inner) *= shape[size_t(d)];
    return r;
}

// "" when `logits` are within the tolerances of log(want) + c for one c per row.
std::string logitsMismatch(const Tensor &logits, const Tensor &want, const SoftmaxRows &rows)
{
    const std::vector<double> z = logits.toDoubleVector(), p = want.toDoubleVector();
    if (z.size() != p.size())
        return "logits have " + std::to_string(z.size()) + " values, the output " + std::to_string(p.size());
    for (int64_t o = 0; o < rows.outer; ++o) {
        for (int64_t i = 0; i < rows.inner; ++i) {
            auto at = [&](int64_t j) { return size_t((o * rows.length + j) * rows.inner + i); };
            double lo = INFINITY, hi = -INFINITY;
            for (int64_t j = 0; j < rows.length; ++j) {
                if (!(p[at(j)] > 0) || !std::isfinite(z[at(j)]))
                    return "the reference has a zero probability or the logits are not finite";
                lo = std::min(lo, z[at(j)] - std::log(p[at(j)]));
                hi = std::max(hi, z[at(j)] - std::log(p[at(j)]));
            }
            const double c = (lo + hi) / 2;
            for (int64_t j = 0; j < rows.length; ++j)
                if (!equalOrClose(z[at(j)], std::log(p[at(j)]) + c, false))
                    return "logits differ from the reference's by " + std::to_string(hi - lo);
        }
    }
    return "";
}

// The model with one output: the logits under `softmax`.
OnnxModel logitsModel(const OnnxModel &model, const OnnxNode &softmax)
{
    OnnxModel m = model;
    OnnxValueInfo logits;
    logits.name = softmax.inputs[0];
    m.outputs = {logits};
    return m;
}

using RunFn = std::function<TensorList(const OnnxModel &)>;

// "" or "<mode> output N: <what>" for the first output that differs both
// directly and, for a softmax output, through its logits.
std::string compareOrLogits(const char *mode, const OnnxModel &model, const TensorList &got, const TensorList &want,
                            const RunFn &run, std::string *note = nullptr)
{
    if (got.size() != want.size())
        return compareOutputs(mode, got, want);
    for (size_t i = 0; i < want.size(); ++i) {
        std::string why = mismatch(got[i], want[i]);
        if (why.empty())
            continue;
        const std::string output = std::string(mode) + " output " + std::to_string(i);
        const OnnxNode *softmax = softmaxProducing(model, model.outputs[i].name);
        if (!softmax)
            return output + ": " + why;
        const Tensor logits = run(logitsModel(model, *softmax)).at(0);
        if (std::string logitsWhy = logitsMismatch(logits, want[i], softmaxRows(*softmax, model.opset, logits.sizes()));
            !logitsWhy.empty())
            return output + ": " + why + "; through its softmax's logits: " + logitsWhy;
        if (note)
            *note += "; " + output + " matched through its softmax's logits";
    }
    return "";
}

// Runs every data set of one model eager and compiled; "" when all match.
std::string runModel(const OnnxModel &model, const std::vector<DataSet> &sets, bool &bound, std::string &note)
{
    const OnnxProgram program = makeProgram(model);
    for (const DataSet &set : sets) {
        checkInputs(model, set.inputs);
        const RunFn eager = [&](const OnnxModel &m) { return makeProgram(m).fn(set.inputs); };
        if (std::string why = compareOrLogits("eager", model, program.fn(set.inputs), set.outputs, eager, &note);
            !why.empty())
            return why;
        const RunFn compiled = [&](const OnnxModel &m) {
            bool logitsBound = false;
            return compiledOutputs(m, set.inputs, logitsBound);
        };
        const TensorList out = compiledOutputs(model, set.inputs, bound);
        if (std::string why = compareOrLogits("compiled", model, out, set.outputs, compiled, &note); !why.empty())
            return why;
    }
    return "";
}

using DataSetsFn = std::function<std::vector<DataSet>(const OnnxModel &)>;

Outcome runCase(const QString &modelPath, const DataSetsFn &dataSetsOf)
{
    try {
        const OnnxModel model = loadOnnxModel(modelPath.toStdString());
        if (std::string why = nonTensorValue(model); !why.empty())
            return {Outcome::Skip, why};
        const std::vector<DataSet> sets = dataSetsOf(model);
        if (sets.empty())
            return {Outcome::Skip, "no test data (test_data_set_* or <model>_output_0.pb)"};
        bool bound = false;
        std::string note;
        std::string why = runModel(model, sets, bound, note);
        if (why.empty())
            return {Outcome::Pass, (bound ? "eager, compiled with integer inputs bound" : "eager, compiled") + note};
        return {Outcome::Fail, why};
    } catch (const Error &e) {
        return {Outcome::Fail, e.what()};
    }
}

struct Tally {
    int passed = 0, failed = 0, skipped = 0;
    QStringList failures;

    void report(const QString &name, const Outcome &o)
    {
        static const char *const kWords[] = {"PASS", "FAIL", "SKIP"};
        const std::string detail = o.kind == Outcome::Pass ? " (" + o.detail + ")" : ": " + o.detail;
        std::printf("%s %s%s\n", kWords[o.kind], qPrintable(name), detail.c_str());
        std::fflush(stdout);
        (o.kind == Outcome::Pass ? passed : o.kind == Outcome::Fail ? failed : skipped) += 1;
        if (o.kind == Outcome::Fail)
            failures << name;
    }
    void close() const { std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped); }
};

// Runs every test folder under `root`, naming each by its path below `base`.
void runAll(const QString &root, const QString &base, Tally &tally)
{
    for (const QString &folder : modelFolders(root))
        tally.report(QDir(base).relativeFilePath(folder),
                     runCase(QDir(folder).filePath(QStringLiteral("model.onnx")),
                             [&](const OnnxModel &) { return dataSets(folder); }));
    for (const QString &file : looseModels(root))
        tally.report(QDir(base).relativeFilePath(file),
                     runCase(file, [&](const OnnxModel &model) { return generatedDataSet(model, file); }));
}

// --- fixtures built with protobuf ----------------------------------------------------------

int elemTypeOf(DType dtype)
{
    switch (dtype) {
    case DType::Bool:
        return ::onnx::TensorProto::BOOL;
    case DType::I32:
        return ::onnx::TensorProto::INT32;
    case DType::I64:
        return ::onnx::TensorProto::INT64;
    case DType::F16:
        return ::onnx::TensorProto::FLOAT16;
    case DType::F64:
        return ::onnx::TensorProto::DOUBLE;
    default:
        return ::onnx::TensorProto::FLOAT;
    }
}

// A model written piece by piece; dims as text: digits for fixed, names for symbolic.
class ModelBuilder
{
public:
    explicit ModelBuilder(int64_t opset)
    {
        m_model.set_ir_version(8);
        m_model.set_producer_name("tst_onnx_conformance");
        ::onnx::OperatorSetIdProto *op = m_model.add_opset_import();
        op->set_domain("");
        op->set_version(opset);
    }
    void input(const std::string &name, const std::vector<std::string> &dims, DType dtype = DType::F32)
    {
        valueInfo(m_model.mutable_graph()->add_input(), name, dims, dtype);
    }
    // An input shaped and typed like `example`.
    void input(const std::string &name, const Tensor &example)
    {
        std::vector<std::string> dims;
        for (int64_t d : example.sizes())
            dims.push_back(std::to_string(d));
        input(name, dims, example.dtype());
    }
    void output(const std::string &name, const std::vector<std::string> &dims, DType dtype = DType::F32)
    {
        valueInfo(m_model.mutable_graph()->add_output(), name, dims, dtype);
    }
    void int64Initializer(const std::string &name, const std::vector<int64_t> &values)
    {
        ::onnx::TensorProto *t = m_model.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::INT64);
        t->add_dims(static_cast<int64_t>(values.size()));
        for (int64_t v : values)
            t->add_int64_data(v);
    }
    ::onnx::NodeProto *node(const std::string &opType, const std::string &name, const std::vector<std::string> &inputs,
                            const std::vector<std::string> &outputs)
    {
        ::onnx::NodeProto *n = m_model.mutable_graph()->add_node();
        n->set_op_type(opType);
        n->set_name(name);
        for (const std::string &in : inputs)
            n->add_input(in);
        for (const std::string &out : outputs)
            n->add_output(out);
        return n;
    }
    static void intAttribute(::onnx::NodeProto *node, const std::string &name, int64_t value)
    {
        ::onnx::AttributeProto *a = attribute(node, name, ::onnx::AttributeProto::INT);
        a->set_i(value);
    }
    static void floatAttribute(::onnx::NodeProto *node, const std::string &name, float value)
    {
        attribute(node, name, ::onnx::AttributeProto::FLOAT)->set_f(value);
    }
    static void intsAttribute(::onnx::NodeProto *node, const std::string &name, const std::vector<int64_t> &values)
    {
        ::onnx::AttributeProto *a = attribute(node, name, ::onnx::AttributeProto::INTS);
        for (int64_t v : values)
            a->add_ints(v);
    }
    static void stringAttribute(::onnx::NodeProto *node, const std::string &name, const std::string &value)
    {
        attribute(node, name, ::onnx::AttributeProto::STRING)->set_s(value);
    }
    OnnxModel load(const QTemporaryDir &dir, const QString &fileName) const
    {
        const QString path = dir.filePath(fileName);
        QFile f(path);
        const std::string bytes = m_model.SerializeAsString();
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes.data(), qint64(bytes.size())) != qint64(bytes.size()))
            qFatal("cannot write %s", qPrintable(path));
        f.close();
        return loadOnnxModel(path.toStdString());
    }

private:
    static ::onnx::AttributeProto *attribute(::onnx::NodeProto *node, const std::string &name,
                                             ::onnx::AttributeProto::AttributeType type)
    {
        ::onnx::AttributeProto *a = node->add_attribute();
        a->set_name(name);
        a->set_type(type);
        return a;
    }
    static void valueInfo(::onnx::ValueInfoProto *v, const std::string &name, const std::vector<std::string> &dims,
                          DType dtype)
    {
        v->set_name(name);
        ::onnx::TypeProto_Tensor *type = v->mutable_type()->mutable_tensor_type();
        type->set_elem_type(elemTypeOf(dtype));
        ::onnx::TensorShapeProto *shape = type->mutable_shape();
        for (const std::string &d : dims) {
            if (std::isdigit(static_cast<unsigned char>(d[0])))
                shape->add_dim()->set_dim_value(std::stoll(d));
            else
                shape->add_dim()->set_dim_param(d);
        }
    }

    ::onnx::ModelProto m_model;
};

// x[batch,3,4] -> Reshape(x, [Shape(x)[0], -1]) -> Relu, named as torch.onnx names nodes.
ModelBuilder shapeSubgraphModel()
{
    ModelBuilder b(17);
    b.input("x", {"batch", "3", "4"});
    b.output("y", {"batch", "12"});
    b.int64Initializer("zero", {0});
    b.int64Initializer("rest", {-1});
    b.node("Shape", "/layer1/Shape", {"x"}, {"shape"});
    ModelBuilder::intAttribute(b.node("Gather", "/layer1/Gather", {"shape", "zero"}, {"batch"}), "axis", 0);
    ModelBuilder::intAttribute(b.node("Concat", "/layer1/Concat", {"batch", "rest"}, {"target"}), "axis", 0);
    b.node("Reshape", "/layer1/Reshape", {"x", "target"}, {"flat"});
    b.node("Relu", "/layer1/layer1.0/relu/Relu", {"flat"}, {"y"});
    return b;
}

ModelBuilder softmaxModel(int64_t opset)
{
    ModelBuilder b(opset);
    b.input("x", {"2", "3", "4"});
    b.output("y", {"2", "3", "4"});
    ModelBuilder::intAttribute(b.node("Softmax", "softmax", {"x"}, {"y"}), "axis", 1);
    return b;
}

// --- single-node cases outside the node tests -----------------------------------------

struct OpCase {
    std::string name;
    ModelBuilder model;
    TensorList inputs;
    Tensor expected;
};

using Attributes = std::function<void(::onnx::NodeProto *)>;
using B = ModelBuilder;

// One node named `name` over inputs x0, x1 … (typed like `inputs`) giving y.
OpCase opCase(const std::string &name, int64_t opset, const std::string &opType, const TensorList &inputs,
              const Tensor &expected, const Attributes &attributes = {})
{
    ModelBuilder b(opset);
    std::vector<std::string> names, dims;
    for (size_t i = 0; i < inputs.size(); ++i) {
        names.push_back("x" + std::to_string(i));
        b.input(names.back(), inputs[i]);
    }
    for (int64_t d : expected.sizes())
        dims.push_back(std::to_string(d));
    b.output("y", dims, expected.dtype());
    ::onnx::NodeProto *node = b.node(opType, name, names, {"y"});
    if (attributes)
        attributes(node);
    return {name, b, inputs, expected};
}

Tensor f32(std::vector<double> values, const Shape &shape)
{
    return fromVector(values, shape);
}
Tensor i64(std::vector<double> values, const Shape &shape)
{
    return fromVector(values, shape, DType::I64);
}

// Windows that need explicit padding: asymmetric pads [top 1, left 1, bottom 0, right 0].
const Tensor kPool = f32({9, 1, 8, 2, 7, 3, 6, 4, 5}, {1, 1, 3, 3});
void asymmetricWindow(::onnx::NodeProto *n)
{
    B::intsAttribute(n, "kernel_shape", {2, 2});
    B::intsAttribute(n, "pads", {1, 1, 0, 0});
}

std::vector<OpCase> convAndPoolCases()
{
    return {
        opCase("conv1d_asymmetric_pads", 13, "Conv", {f32({1, 2, 3, 4, 5}, {1, 1, 5}), f32({1, 0, -1}, {1, 1, 3})},
               f32({-1, -2, -2, -2, -2}, {1, 1, 5}),
               [](auto *n) {
                   B::intsAttribute(n, "pads", {2, 0});
               }),
        opCase("conv1d_same_lower", 13, "Conv", {f32({1, 2, 3, 4}, {1, 1, 4}), f32({1, 10}, {1, 1, 2})},
               f32({10, 21, 32, 43}, {1, 1, 4}), [](auto *n) { B::stringAttribute(n, "auto_pad", "SAME_LOWER"); }),
        opCase("maxpool_asymmetric_pads", 12, "MaxPool", {kPool}, f32({9, 9, 8, 9, 9, 8, 6, 7, 7}, {1, 1, 3, 3}),
               asymmetricWindow),
        opCase("averagepool_asymmetric_pads", 11, "AveragePool", {kPool},
               f32({9, 5, 4.5, 5.5, 4.75, 4.75, 4, 4.75, 4.75}, {1, 1, 3, 3}), asymmetricWindow),
        opCase("averagepool_asymmetric_pads_count_include_pad", 11, "AveragePool", {kPool},
               f32({2.25, 2.5, 2.25, 2.75, 4.75, 4.75, 2, 4.75, 4.75}, {1, 1, 3, 3}),
               [](auto *n) { asymmetricWindow(n), B::intAttribute(n, "count_include_pad", 1); }),
        opCase("maxpool_1d", 12, "MaxPool", {f32({1, 5, 2, 4, 3}, {1, 1, 5})}, f32({5, 4}, {1, 1, 2}),
               [](auto *n) { B::intsAttribute(n, "kernel_shape", {2}), B::intsAttribute(n, "strides", {2}); }),
        opCase("globalmaxpool", 13, "GlobalMaxPool", {kPool}, f32({9}, {1, 1, 1, 1})),
    };
}

// Clip of int64 by constant int64 bounds stays int64: aten.clamp lifts an
// integer tensor to float when a bound is a float, as in PyTorch.
OpCase clipInt64Case()
{
    ModelBuilder b(13);
    const Tensor x = i64({-7, 2, 9}, {3});
    b.input("x0", x);
    b.int64Initializer("low", {0});
    b.int64Initializer("high", {5});
    b.output("y", {"3"}, DType::I64);
    b.node("Clip", "clip_int64_constant_bounds", {"x0", "low", "high"}, {"y"});
    return {"clip_int64_constant_bounds", b, {x}, i64({0, 2, 5}, {3})};
}

std::vector<OpCase> elementwiseCases()
{
    const double invStd = 1 / std::sqrt(2.0 / 3 + 1e-5);
    return {
        clipInt64Case(),
        opCase("hardsigmoid", 13, "HardSigmoid", {f32({-3, -0.5, 0, 1}, {4})}, f32({0, 0.35, 0.6, 1}, {4}),
               [](auto *n) { B::floatAttribute(n, "alpha", 0.5f), B::floatAttribute(n, "beta", 0.6f); }),
        opCase("hardswish", 14, "HardSwish", {f32({-4, 0, 1, 4}, {4})}, f32({0, 0, 4.0 / 6, 4}, {4})),
        opCase("softplus", 13, "Softplus", {f32({-100, 0, 1, 100}, {4})},
               f32({0, std::log(2.0), std::log1p(std::exp(1.0)), 100}, {4})),
        opCase("elu", 6, "Elu", {f32({-1, 2}, {2})}, f32({std::exp(-1.0) - 1, 2}, {2})),
        opCase("prelu", 16, "PRelu", {f32({-2, 3}, {2}), f32({0.5}, {1})}, f32({-1, 3}, {2})),
        opCase("div_int64_truncates", 14, "Div", {i64({-7, 7, -8}, {3}), i64({2, 2, 3}, {3})}, i64({-3, 3, -2}, {3})),
        opCase("mod_fmod", 13, "Mod", {f32({5.5, -5.5}, {2}), f32({2, 2}, {2})}, f32({1.5, -1.5}, {2}),
               [](auto *n) { B::intAttribute(n, "fmod", 1); }),
        opCase("mod_int64_sign_of_divisor", 13, "Mod", {i64({-7, 7}, {2}), i64({3, -3}, {2})}, i64({2, -2}, {2})),
        opCase("pow_int64_exponent", 15, "Pow", {f32({2, 3}, {2}), i64({2, 3}, {2})}, f32({4, 27}, {2})),
        opCase("mean_of_three", 13, "Mean", {f32({1, 2}, {2}), f32({3, 4}, {2}), f32({5, 9}, {2})}, f32({3, 5}, {2})),
        opCase("gemm_transA_alpha_without_c", 13, "Gemm", {f32({1, 2, 3, 4}, {2, 2}), f32({1, 0, 0, 1}, {2, 2})},
               f32({2, 6, 4, 8}, {2, 2}),
               [](auto *n) { B::intAttribute(n, "transA", 1), B::floatAttribute(n, "alpha", 2); }),
        opCase("lrn_even_size", 13, "LRN", {f32({1, 2, 3}, {1, 3, 1, 1})},
               f32({1 / 8.5, 2 / 20.5, 3 / 14.5}, {1, 3, 1, 1}),
               [](auto *n) {
                   B::intAttribute(n, "size", 2), B::floatAttribute(n, "alpha", 3);
                   B::floatAttribute(n, "beta", 1), B::floatAttribute(n, "bias", 1);
               }),
        opCase("instancenorm", 6, "InstanceNormalization",
               {f32({1, 2, 3, 4, 4, 4}, {1, 2, 3}), f32({1, 2}, {2}), f32({0, 1}, {2})},
               f32({-invStd, 0, invStd, 1, 1, 1}, {1, 2, 3})),
    };
}

std::vector<OpCase> reductionCases()
{
    return {
        opCase("reduce_l2_axes_attribute", 13, "ReduceL2", {f32({3, 4, 6, 8}, {2, 2})}, f32({5, 10}, {2}),
               [](auto *n) { B::intsAttribute(n, "axes", {1}), B::intAttribute(n, "keepdims", 0); }),
        opCase("reduce_max_noop_with_empty_axes", 18, "ReduceMax", {f32({1, 2}, {2})}, f32({1, 2}, {2}),
               [](auto *n) { B::intAttribute(n, "noop_with_empty_axes", 1); }),
        opCase("reduce_logsumexp_all", 18, "ReduceLogSumExp", {f32({0, std::log(3.0)}, {2})},
               f32({std::log(4.0)}, {1})),
        opCase("cumsum_exclusive_reverse", 14, "CumSum", {f32({1, 2, 3}, {3}), i64({0}, {})}, f32({5, 3, 0}, {3}),
               [](auto *n) { B::intAttribute(n, "exclusive", 1), B::intAttribute(n, "reverse", 1); }),
        opCase("argmax_select_last_index", 13, "ArgMax", {f32({1, 3, 3, 2, 2, 1}, {2, 3})}, i64({2, 1}, {2}),
               [](auto *n) {
                   B::intAttribute(n, "axis", 1), B::intAttribute(n, "keepdims", 0);
                   B::intAttribute(n, "select_last_index", 1);
               }),
    };
}

// "" when the case's node computes `expected` eager and compiled.
std::string runOpCase(const OpCase &c, const QTemporaryDir &dir)
{
    try {
        const OnnxModel model = c.model.load(dir, QString::fromStdString(c.name + ".onnx"));
        std::string why = compareOutputs("eager", makeProgram(model).fn(c.inputs), {c.expected});
        bool bound = false;
        return why.empty() ? compareOutputs("compiled", compiledOutputs(model, c.inputs, bound), {c.expected}) : why;
    } catch (const Error &e) {
        return e.what();
    }
}

// Sums of y over the given dims (keepdim false), as doubles.
std::vector<double> sumsOver(const Tensor &y, const IntList &dims)
{
    return ops::sum(y, dims).toDoubleVector();
}

const compiler::Node *nodeWithTarget(const compiler::Graph &graph, const std::string &target)
{
    for (const compiler::Node *n : graph.nodes())
        if (n->target == target)
            return n;
    return nullptr;
}

} // namespace

class TestOnnxConformance : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { useTestCache(); }

    // Every onnx-node and onnx-models folder (or FUSESCOPE_ONNX_TEST_DIR's).
    void conformance()
    {
        const QString own = qEnvironmentVariable("FUSESCOPE_ONNX_TEST_DIR");
        const QString data = QStringLiteral(FUSESCOPE_TESTDATA_DIR);
        if (own.isEmpty() && !QDir(data + QStringLiteral("/onnx-node")).exists())
            QSKIP(qPrintable(
                QStringLiteral("no ONNX test data at %1/onnx-node (see shared/testdata/README.md)").arg(data)));
        QElapsedTimer timer;
        timer.start();
        Tally tally;
        if (!own.isEmpty()) {
            runAll(own, QFileInfo(own).absolutePath(), tally);
        } else {
            runAll(data + QStringLiteral("/onnx-node"), data + QStringLiteral("/onnx-node"), tally);
            runAll(data + QStringLiteral("/onnx-models"), data + QStringLiteral("/onnx-models"), tally);
        }
        tally.close();
        std::printf("(%.1f s)\n", double(timer.elapsed()) / 1000);
        QVERIFY2(tally.passed + tally.failed > 0, "no ONNX models found");
        QVERIFY2(tally.failures.isEmpty(), qPrintable(QStringLiteral("failed: ") + tally.failures.join(u", ")));
    }

    // Attribute values and geometries the node tests leave out.
    void opsOutsideTheNodeTests()
    {
        QTemporaryDir dir;
        QStringList failures;
        for (const auto &cases : {convAndPoolCases(), elementwiseCases(), reductionCases()})
            for (const OpCase &c : cases)
                if (std::string why = runOpCase(c, dir); !why.empty())
                    failures << QString::fromStdString(c.name + ": " + why);
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u"; ")));
    }

    // Shape -> Gather -> Concat runs at import on known sizes: the captured
    // graph holds the Reshape and Relu only, in the modules the names give.
    void shapeSubgraphFolds()
    {
        QTemporaryDir dir;
        const OnnxModel model = shapeSubgraphModel().load(dir, QStringLiteral("shape.onnx"));
        const OnnxProgram program = makeProgram(model);
        const compiler::Graph graph
            = compiler::capture(program.fn, {{"x", {2, 3, 4}, {}, DType::F32}}, program.parameters);
        for (const compiler::Node *n : graph.nodes()) {
            QVERIFY2(n->kind != compiler::NodeKind::CallFunction || n->target == "aten.reshape"
                         || n->target == "aten.view" || n->target == "aten.relu",
                     n->target.c_str());
            QVERIFY2(n->kind != compiler::NodeKind::GetAttr, n->target.c_str());
        }
        const compiler::Node *relu = nodeWithTarget(graph, "aten.relu");
        QVERIFY(relu);
        QCOMPARE(QString::fromStdString(relu->modulePath), QStringLiteral("layer1.0.relu"));
        const compiler::Node *reshape = relu->args()[0].ref().node;
        QCOMPARE(QString::fromStdString(reshape->modulePath), QStringLiteral("layer1"));
        const Tensor x = fromVector({-1, 2, -3, 4, 5, -6, 7, 8, -9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12},
                                    {2, 3, 4});
        const Tensor y = program.fn({x})[0];
        QCOMPARE(QString::fromStdString(shapeStr(y.sizes())), QStringLiteral("[2,12]"));
        QCOMPARE(y.toDoubleVector(), ops::relu(x).toDoubleVector());
    }

    // Opset 11 normalizes x[2,3,4] as [2,12] (axis 1 and all after); opset 13 along axis 1 alone.
    void softmaxAxisFollowsOpset()
    {
        QTemporaryDir dir;
        Generator gen(7);
        const Tensor x = randn({2, 3, 4}, gen);
        const Tensor old = makeProgram(softmaxModel(11).load(dir, QStringLiteral("s11.onnx"))).fn({x})[0];
        const Tensor now = makeProgram(softmaxModel(13).load(dir, QStringLiteral("s13.onnx"))).fn({x})[0];
        for (double s : sumsOver(old, {1, 2}))
            QVERIFY(std::fabs(s - 1) < 1e-5);
        for (double s : sumsOver(now, {1}))
            QVERIFY(std::fabs(s - 1) < 1e-5);
        QVERIFY(std::fabs(sumsOver(old, {1})[0] - 1) > 1e-3);
    }

    // Equal logits near 1e10 that differ in their last bits give a softmax
    // far from the uniform reference; compared through the logits they pass,
    // logits 1% apart do not.
    void softmaxOutputsAreComparedThroughTheirLogits()
    {
        QTemporaryDir dir;
        for (int64_t opset : {11, 13}) {
            const OnnxModel model = softmaxModel(opset).load(dir, QStringLiteral("s%1.onnx").arg(opset));
            const int64_t length = opset < 13 ? 12 : 3;
            const Tensor uniform = full({2, 3, 4}, 1.0 / double(length));
            for (double spread : {2e-7, 1e-2}) {
                std::vector<double> v(24);
                for (size_t i = 0; i < v.size(); ++i)
                    v[i] = 1e10 * (1 + spread * double(i % 5));
                const Tensor x = fromVector(v, {2, 3, 4}, DType::F32);
                const RunFn eager = [&](const OnnxModel &m) { return makeProgram(m).fn({x}); };
                const TensorList got = eager(model);
                QVERIFY(!compareOutputs("eager", got, {uniform}).empty());
                const std::string why = compareOrLogits("eager", model, got, {uniform}, eager);
                QVERIFY2(why.empty() == (spread < 1e-3), why.c_str());
            }
        }
    }

    void unsupportedNodesAreListedTogether()
    {
        QTemporaryDir dir;
        ModelBuilder b(13);
        b.input("x", {"1", "1", "4", "4"});
        b.output("y", {"1", "1", "2", "2"});
        b.node("ConvInteger", "Conv_12", {"x", "x"}, {"c"});
        ModelBuilder::intsAttribute(b.node("MaxPool", "n2", {"x"}, {"y", "indices"}), "kernel_shape", {2, 2});
        const OnnxModel model = b.load(dir, QStringLiteral("bad.onnx"));
        try {
            makeProgram(model);
            QFAIL("makeProgram accepted unsupported nodes");
        } catch (const Error &e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(QLatin1String("bad.onnx: 2 unsupported nodes: 'Conv_12' (ConvInteger, opset 13), "
                                                "'n2' (MaxPool: the Indices output is not supported)")),
                     e.what());
        }
    }

    void inputsAreCheckedAgainstTheModel()
    {
        QTemporaryDir dir;
        ModelBuilder b(13);
        b.input("x", {"1", "3"});
        b.output("y", {"1", "3"});
        b.node("Relu", "relu", {"x"}, {"y"});
        const OnnxModel model = b.load(dir, QStringLiteral("relu.onnx"));
        try {
            checkInputs(model, {zeros({2, 3})});
            QFAIL("checkInputs accepted a wrong shape");
        } catch (const Error &e) {
            QCOMPARE(QString::fromUtf8(e.what()),
                     QStringLiteral("input 'x': shape [2,3] does not match the model's [1,3]"));
        }
        const TensorList random = randomInputs(model, 1);
        checkInputs(model, random);
        QCOMPARE(random[0].toDoubleVector(), randomInputs(model, 1)[0].toDoubleVector());
    }
};

QTEST_GUILESS_MAIN(TestOnnxConformance)
#include "tst_onnx_conformance.moc"
