#include "core/onnx/onnxmodel.h"

#include <onnx/onnx_pb.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cctype>
#include <cstring>

using namespace fusescope;
using namespace fusescope::onnx;
using ::onnx::TensorProto;

namespace {

QString writeFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

QByteArray serialized(const google::protobuf::MessageLite &message)
{
    return QByteArray::fromStdString(message.SerializeAsString());
}

template <typename T>
QByteArray bytesOf(std::initializer_list<T> values)
{
    return QByteArray(reinterpret_cast<const char *>(values.begin()), qsizetype(values.size() * sizeof(T)));
}

TensorProto tensorProto(const std::string &name, int elemType, std::initializer_list<int64_t> dims)
{
    TensorProto t;
    t.set_name(name);
    t.set_data_type(elemType);
    for (int64_t d : dims)
        t.add_dims(d);
    return t;
}

TensorProto rawProto(const std::string &name, int elemType, std::initializer_list<int64_t> dims,
                     const QByteArray &raw)
{
    TensorProto t = tensorProto(name, elemType, dims);
    t.set_raw_data(raw.toStdString());
    return t;
}

// Dims written as text: digits give dim_value, "?" neither, anything else dim_param.
void setTensorType(::onnx::ValueInfoProto *value, const std::string &name, int elemType,
                   std::initializer_list<std::string> dims)
{
    value->set_name(name);
    auto *tensorType = value->mutable_type()->mutable_tensor_type();
    tensorType->set_elem_type(elemType);
    auto *shape = tensorType->mutable_shape();
    for (const std::string &d : dims) {
        auto *dim = shape->add_dim();
        if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
            dim->set_dim_value(std::stoll(d));
        else if (d != "?")
            dim->set_dim_param(d);
    }
}

// x[batch,3] -> z[batch,3], IR 8, default opset 13, no nodes yet.
::onnx::ModelProto baseModel()
{
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("pytorch");
    m.set_producer_version("2.1");
    m.add_opset_import()->set_version(13);
    setTensorType(m.mutable_graph()->add_input(), "x", TensorProto::FLOAT, {"batch", "3"});
    setTensorType(m.mutable_graph()->add_output(), "z", TensorProto::FLOAT, {"batch", "3"});
    return m;
}

::onnx::AttributeProto *addAttribute(::onnx::NodeProto *node, const std::string &name,
                                     ::onnx::AttributeProto::AttributeType type)
{
    auto *a = node->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
}

// One attribute of every kind the loader distinguishes.
void addEveryAttribute(::onnx::NodeProto *node)
{
    using A = ::onnx::AttributeProto;
    addAttribute(node, "alpha", A::FLOAT)->set_f(0.25f);
    addAttribute(node, "axis", A::INT)->set_i(-1);
    addAttribute(node, "mode", A::STRING)->set_s("linear");
    TensorProto value = tensorProto("", TensorProto::INT64, {2});
    value.add_int64_data(7);
    value.add_int64_data(-8);
    *addAttribute(node, "value", A::TENSOR)->mutable_t() = value;
    auto *scales = addAttribute(node, "scales", A::FLOATS);
    scales->add_floats(1.5f);
    scales->add_floats(2.5f);
    auto *pads = addAttribute(node, "pads", A::INTS);
    for (int64_t p : {0, 1, 2})
        pads->add_ints(p);
    auto *names = addAttribute(node, "names", A::STRINGS);
    names->add_strings("a");
    names->add_strings("b");
    addAttribute(node, "body", A::GRAPH)->mutable_g()->set_name("sub");
    addAttribute(node, "sparse", A::SPARSE_TENSOR);
}

// Two nodes (the second unnamed, in a custom domain), two initializers (one
// also listed as an input, as older exporters do), the default opset as
// "ai.onnx" after a custom domain's.
::onnx::ModelProto everyFieldModel()
{
    ::onnx::ModelProto m = baseModel();
    m.clear_opset_import();
    m.add_opset_import()->set_domain("com.example");
    m.mutable_opset_import(0)->set_version(1);
    m.add_opset_import()->set_domain("ai.onnx");
    m.mutable_opset_import(1)->set_version(17);
    auto *g = m.mutable_graph();
    setTensorType(g->add_input(), "w", TensorProto::FLOAT, {"3"});
    *g->add_initializer() = rawProto("w", TensorProto::FLOAT, {3}, bytesOf<float>({0.5f, -1.f, 2.f}));
    TensorProto b = tensorProto("b", TensorProto::FLOAT16, {3});
    for (float v : {1.f, -2.f, 0.5f})
        b.add_int32_data(Half(v).bits);
    *g->add_initializer() = b;
    auto *scale = g->add_node();
    scale->set_name("scale");
    scale->set_op_type("Mul");
    scale->add_input("x");
    scale->add_input("w");
    scale->add_output("y");
    addEveryAttribute(scale);
    auto *fancy = g->add_node();
    fancy->set_op_type("FancyOp");
    fancy->set_domain("com.example");
    for (const char *input : {"y", "", "b"})
        fancy->add_input(input);
    fancy->add_output("z");
    return m;
}

QList<double> valuesOf(const Tensor &t)
{
    const std::vector<double> v = t.toDoubleVector();
    return QList<double>(v.begin(), v.end());
}

// Checks that `fn` throws an Error whose message contains every part.
template <typename Fn>
bool throwsWith(Fn &&fn, const QStringList &parts)
{
    try {
        fn();
    } catch (const Error &e) {
        const QString message = QString::fromUtf8(e.what());
        for (const QString &part : parts) {
            if (!message.contains(part)) {
                qWarning("message '%s' lacks '%s'", e.what(), qPrintable(part));
                return false;
            }
        }
        return true;
    }
    qWarning("no Error thrown");
    return false;
}

std::string testdata(const char *relative)
{
    const QDir folder(QStringLiteral(FUSESCOPE_TESTDATA_DIR "/onnx-node"));
    return folder.filePath(QString::fromUtf8(relative)).toStdString();
}

void fillCounting(Tensor &t)
{
    visitDType(t.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < t.numel(); ++i)
            t.data<T>()[i] = T(static_cast<float>(i) - 2.5f);
    });
}

} // namespace

class TestOnnxModel : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    OnnxModel m_model; // everyFieldModel(), loaded once

    QString path(const QString &relative) const { return m_dir.filePath(relative); }

    // The model with one initializer replaced, for the tensor checks.
    std::string modelWithInitializer(const TensorProto &tensor, const QString &relative)
    {
        ::onnx::ModelProto m = baseModel();
        *m.mutable_graph()->add_initializer() = tensor;
        return writeFile(path(relative), serialized(m)).toStdString();
    }

    // ext/model/ holds m.onnx's data; ext/outside.bin and links lead out of it.
    void writeExternalFixture()
    {
        const QByteArray floats = bytesOf<float>({1.f, 2.f, 3.f});
        writeFile(path("ext/outside.bin"), floats);
        writeFile(path("ext/model/w.bin"), QByteArray("head") + floats);
        writeFile(path("ext/model/sub/w.bin"), floats);
        QFile::link(path("ext/outside.bin"), path("ext/model/link.bin"));
        QFile::link(path("ext/model/w.bin"), path("ext/model/inlink.bin"));
    }

    std::string externalModel(const QString &location, const QString &offset, const QString &length)
    {
        TensorProto w = tensorProto("w", TensorProto::FLOAT, {3});
        w.set_data_location(TensorProto::EXTERNAL);
        const std::pair<const char *, QString> entries[]
            = {{"location", location}, {"offset", offset}, {"length", length}};
        for (const auto &[key, value] : entries) {
            if (value.isNull())
                continue;
            auto *entry = w.add_external_data();
            entry->set_key(key);
            entry->set_value(value.toStdString());
        }
        return modelWithInitializer(w, "ext/model/m.onnx");
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeExternalFixture();
        m_model = loadOnnxModel(writeFile(path("every.onnx"), serialized(everyFieldModel())).toStdString());
    }

    void readsHeader()
    {
        QCOMPARE(m_model.path, path("every.onnx").toStdString());
        QCOMPARE(m_model.irVersion, int64_t(8));
        QCOMPARE(m_model.opset, int64_t(17));
        QCOMPARE(m_model.producer, std::string("pytorch 2.1"));
    }

    void inputsExcludeInitializers()
    {
        QCOMPARE(m_model.inputs.size(), size_t(1));
        const OnnxValueInfo &x = m_model.inputs[0];
        QCOMPARE(x.name, std::string("x"));
        QVERIFY(x.tensor && x.dtypeSupported && x.hasShape);
        QCOMPARE(x.dtype, DType::F32);
        QCOMPARE(x.dtypeName, std::string("FLOAT"));
        QCOMPARE(x.dims, (std::vector<int64_t>{-1, 3}));
        QCOMPARE(x.dimNames, (std::vector<std::string>{"batch", ""}));
        QCOMPARE(m_model.outputs.size(), size_t(1));
        QCOMPARE(m_model.outputs[0].name, std::string("z"));
    }

    void readsInitializers()
    {
        QCOMPARE(m_model.initializers.size(), size_t(2));
        const auto &[wName, w] = m_model.initializers[0];
        QCOMPARE(wName, std::string("w"));
        QCOMPARE(w.dtype(), DType::F32);
        QCOMPARE(w.sizes(), (Shape{3}));
        QCOMPARE(valuesOf(w), (QList<double>{0.5, -1, 2}));
        const auto &[bName, b] = m_model.initializers[1];
        QCOMPARE(bName, std::string("b"));
        QCOMPARE(b.dtype(), DType::F16);
        QCOMPARE(valuesOf(b), (QList<double>{1, -2, 0.5}));
    }

    void readsNodes()
    {
        QCOMPARE(m_model.nodes.size(), size_t(2));
        const OnnxNode &scale = m_model.nodes[0];
        QCOMPARE(scale.name, std::string("scale"));
        QCOMPARE(scale.label(), std::string("scale"));
        QCOMPARE(scale.opType, std::string("Mul"));
        QCOMPARE(scale.domain, std::string(""));
        QCOMPARE(scale.inputs, (std::vector<std::string>{"x", "w"}));
        QCOMPARE(scale.outputs, (std::vector<std::string>{"y"}));
        QCOMPARE(scale.index, size_t(0));
        const OnnxNode &fancy = m_model.nodes[1];
        QCOMPARE(fancy.label(), std::string("node #1"));
        QCOMPARE(fancy.index, size_t(1));
        QCOMPARE(fancy.domain, std::string("com.example"));
        QCOMPARE(fancy.inputs, (std::vector<std::string>{"y", "", "b"}));
        QVERIFY(fancy.attributes.empty());
    }

    void readsAttributes()
    {
        using K = OnnxAttribute::Kind;
        const auto &a = m_model.nodes.at(0).attributes;
        QCOMPARE(a.size(), size_t(9));
        QCOMPARE(a.at("alpha").kind, K::Float);
        QCOMPARE(a.at("alpha").f, 0.25);
        QCOMPARE(a.at("axis").kind, K::Int);
        QCOMPARE(a.at("axis").i, int64_t(-1));
        QCOMPARE(a.at("mode").kind, K::String);
        QCOMPARE(a.at("mode").s, std::string("linear"));
        QCOMPARE(a.at("value").kind, K::Tensor);
        QCOMPARE(a.at("value").t.dtype(), DType::I64);
        QCOMPARE(valuesOf(a.at("value").t), (QList<double>{7, -8}));
        QCOMPARE(a.at("scales").kind, K::Floats);
        QCOMPARE(a.at("scales").floats, (std::vector<double>{1.5, 2.5}));
        QCOMPARE(a.at("pads").kind, K::Ints);
        QCOMPARE(a.at("pads").ints, (std::vector<int64_t>{0, 1, 2}));
        QCOMPARE(a.at("names").kind, K::Strings);
        QCOMPARE(a.at("names").strings, (std::vector<std::string>{"a", "b"}));
        QCOMPARE(a.at("body").kind, K::Graph);
        QCOMPARE(a.at("sparse").kind, K::Other);
    }

    void valueTypes()
    {
        ::onnx::ModelProto m = baseModel();
        auto *g = m.mutable_graph();
        setTensorType(g->add_input(), "text", TensorProto::STRING, {});
        setTensorType(g->add_input(), "bytes", TensorProto::UINT8, {"?", "seq"});
        auto *list = g->add_input();
        list->set_name("list");
        list->mutable_type()->mutable_sequence_type();
        const OnnxModel model = loadOnnxModel(writeFile(path("types.onnx"), serialized(m)).toStdString());
        QCOMPARE(model.inputs.size(), size_t(4));
        QVERIFY(model.inputs[1].tensor && !model.inputs[1].dtypeSupported);
        QCOMPARE(model.inputs[1].dtypeName, std::string("STRING"));
        QCOMPARE(model.inputs[2].dtypeName, std::string("UINT8"));
        QVERIFY(!model.inputs[2].dtypeSupported);
        QCOMPARE(model.inputs[2].dims, (std::vector<int64_t>{-1, -1}));
        QCOMPARE(model.inputs[2].dimNames, (std::vector<std::string>{"", "seq"}));
        QVERIFY(!model.inputs[3].tensor);
        QCOMPARE(model.inputs[3].dtypeName, std::string("sequence"));
    }

    void tensorEncodings_data()
    {
        QTest::addColumn<QByteArray>("proto");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QList<double>>("values");
        const auto row = [](const char *name, const TensorProto &t, DType dtype, QList<double> values) {
            QTest::newRow(name) << serialized(t) << int(dtype) << values;
        };
        const QList<double> v{1, -2, 0.5};
        row("f32 raw", rawProto("t", TensorProto::FLOAT, {3}, bytesOf<float>({1, -2, 0.5})), DType::F32, v);
        TensorProto f32 = tensorProto("t", TensorProto::FLOAT, {3});
        for (float x : {1.f, -2.f, 0.5f})
            f32.add_float_data(x);
        row("f32 float_data", f32, DType::F32, v);
        TensorProto f64 = tensorProto("t", TensorProto::DOUBLE, {3});
        for (double x : {1., -2., 0.5})
            f64.add_double_data(x);
        row("f64 double_data", f64, DType::F64, v);
        row("f64 raw", rawProto("t", TensorProto::DOUBLE, {3}, bytesOf<double>({1, -2, 0.5})), DType::F64, v);
        TensorProto f16 = tensorProto("t", TensorProto::FLOAT16, {3});
        TensorProto bf16 = tensorProto("t", TensorProto::BFLOAT16, {3});
        for (float x : {1.f, -2.f, 0.5f}) {
            f16.add_int32_data(Half(x).bits);
            bf16.add_int32_data(BFloat16(x).bits);
        }
        row("f16 int32_data", f16, DType::F16, v);
        row("bf16 int32_data", bf16, DType::BF16, v);
        const QByteArray halfBits = bytesOf<uint16_t>({Half(1.f).bits, Half(-2.f).bits, Half(0.5f).bits});
        row("f16 raw", rawProto("t", TensorProto::FLOAT16, {3}, halfBits), DType::F16, v);
        const QByteArray bfBits = bytesOf<uint16_t>({BFloat16(1.f).bits, BFloat16(-2.f).bits, BFloat16(0.5f).bits});
        row("bf16 raw", rawProto("t", TensorProto::BFLOAT16, {3}, bfBits), DType::BF16, v);
        TensorProto i32 = tensorProto("t", TensorProto::INT32, {2});
        i32.add_int32_data(-7);
        i32.add_int32_data(1 << 30);
        row("i32 int32_data", i32, DType::I32, {-7, double(1 << 30)});
        TensorProto i64 = tensorProto("t", TensorProto::INT64, {2});
        i64.add_int64_data(-7);
        i64.add_int64_data(int64_t(1) << 40);
        row("i64 int64_data", i64, DType::I64, {-7, double(int64_t(1) << 40)});
        row("i64 raw", rawProto("t", TensorProto::INT64, {2}, bytesOf<int64_t>({-7, int64_t(1) << 40})), DType::I64,
            {-7, double(int64_t(1) << 40)});
        // Bool bytes other than 0/1 read as true.
        row("bool raw", rawProto("t", TensorProto::BOOL, {3}, bytesOf<uint8_t>({1, 0, 2})), DType::Bool, {1, 0, 1});
        TensorProto flags = tensorProto("t", TensorProto::BOOL, {3});
        for (int x : {1, 0, 7})
            flags.add_int32_data(x);
        row("bool int32_data", flags, DType::Bool, {1, 0, 1});
        row("scalar", rawProto("t", TensorProto::FLOAT, {}, bytesOf<float>({4})), DType::F32, {4});
        row("empty", tensorProto("t", TensorProto::FLOAT, {0, 3}), DType::F32, {});
    }
    void tensorEncodings()
    {
        QFETCH(QByteArray, proto);
        QFETCH(int, dtype);
        QFETCH(QList<double>, values);
        const NamedTensor t = readTensorFile(writeFile(path("enc/t.pb"), proto).toStdString());
        QCOMPARE(t.name, std::string("t"));
        QCOMPARE(int(t.tensor.dtype()), dtype);
        QCOMPARE(valuesOf(t.tensor), values);
    }

    void externalData_data()
    {
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("offset");
        QTest::addColumn<QString>("length");
        QTest::newRow("same folder") << "w.bin" << "4" << "12";
        QTest::newRow("to the end") << "w.bin" << "4" << QString();
        QTest::newRow("subfolder, no offset") << "sub/w.bin" << QString() << QString();
        QTest::newRow("dot segments inside") << "sub/../w.bin" << "4" << "12";
        QTest::newRow("symlink inside") << "inlink.bin" << "4" << "12";
    }
    void externalData()
    {
        QFETCH(QString, location);
        QFETCH(QString, offset);
        QFETCH(QString, length);
        const OnnxModel model = loadOnnxModel(externalModel(location, offset, length));
        QCOMPARE(model.initializers.size(), size_t(1));
        QCOMPARE(valuesOf(model.initializers[0].second), (QList<double>{1, 2, 3}));
    }

    void externalDataRefused_data()
    {
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("offset");
        QTest::addColumn<QString>("length");
        QTest::addColumn<QString>("reason");
        QTest::newRow("parent folder") << "../outside.bin" << "0" << "12" << "leads outside the model's folder";
        QTest::newRow("escape via subfolder") << "sub/../../outside.bin" << "0" << "12" << "leads outside";
        QTest::newRow("absolute") << path("ext/outside.bin") << "0" << "12" << "must be a relative path";
        QTest::newRow("symlink out") << "link.bin" << "0" << "12" << "leads outside the model's folder";
        QTest::newRow("empty location") << "" << "0" << "12" << "must be a relative path";
        QTest::newRow("range past the end") << "w.bin" << "8" << "12" << "lies beyond the end of 'w.bin' (16 bytes)";
        QTest::newRow("offset past the end") << "w.bin" << "100" << QString() << "offset 100 lies beyond the end";
        QTest::newRow("missing file") << "nope.bin" << "0" << "12" << "'nope.bin' does not exist";
        QTest::newRow("a folder") << "sub" << "0" << "12" << "is a directory";
        QTest::newRow("wrong length") << "w.bin" << "0" << "16" << "claims 3 elements but holds 16 bytes";
        QTest::newRow("negative offset") << "w.bin" << "-4" << "12" << "'-4' is not a byte count";
    }
    void externalDataRefused()
    {
        QFETCH(QString, location);
        QFETCH(QString, offset);
        QFETCH(QString, length);
        QFETCH(QString, reason);
        const std::string file = externalModel(location, offset, length);
        QVERIFY(throwsWith([&] { loadOnnxModel(file); }, {QString::fromStdString(file), "tensor 'w'", reason}));
    }

    void corruptModels_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        const QByteArray model = serialized(everyFieldModel());
        QTest::newRow("last bytes cut") << model.left(model.size() - 3) << "truncated or corrupt";
        QTest::newRow("cut in half") << model.left(model.size() / 2) << "truncated or corrupt";
        QTest::newRow("text") << QByteArray("this is not an ONNX model at all") << "not an ONNX model";
        QTest::newRow("zeros") << QByteArray(16, '\0') << "not an ONNX model";
        QTest::newRow("elf") << QByteArray("\x7f" "ELF\x02\x01\x01\x00", 8) << "not an ONNX model";
        QTest::newRow("empty") << QByteArray() << "the file is empty";
        ::onnx::ModelProto headerOnly;
        headerOnly.set_ir_version(8);
        QTest::newRow("no graph") << serialized(headerOnly) << "it has no graph";
        ::onnx::ModelProto old = baseModel();
        old.set_ir_version(2);
        QTest::newRow("IR 2") << serialized(old) << "IR version 2 is older than Fusescope reads (3 to 10)";
        ::onnx::ModelProto future = baseModel();
        future.set_ir_version(11);
        QTest::newRow("IR 11") << serialized(future) << "IR version 11 is newer than Fusescope reads (3 to 10)";
        ::onnx::ModelProto customOnly = baseModel();
        customOnly.mutable_opset_import(0)->set_domain("com.example");
        QTest::newRow("no default opset") << serialized(customOnly) << "imports no opset of the default domain";
    }
    void corruptModels()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        const std::string file = writeFile(path("bad/m.onnx"), bytes).toStdString();
        QVERIFY(throwsWith([&] { loadOnnxModel(file); }, {QString::fromStdString(file) + ": ", reason}));
    }

    void unreadablePaths()
    {
        const std::string missing = path("missing.onnx").toStdString();
        QVERIFY(throwsWith([&] { loadOnnxModel(missing); }, {"missing.onnx: the file does not exist"}));
        QVERIFY(throwsWith([&] { readTensorFile(missing); }, {"missing.onnx: the file does not exist"}));
        QVERIFY(throwsWith([&] { loadOnnxModel(path("ext").toStdString()); }, {"ext: the file is a directory"}));
    }

    // A sparse 3 GiB file: refused from its size, before anything is read.
    void oversizedFile()
    {
        QFile f(path("huge.onnx"));
        QVERIFY(f.open(QIODevice::WriteOnly) && f.resize(qint64(3) << 30));
        f.close();
        QVERIFY(throwsWith([&] { loadOnnxModel(f.fileName().toStdString()); }, {"limited to 2 GiB"}));
        f.remove();
    }

    void badTensors_data()
    {
        QTest::addColumn<QByteArray>("tensor");
        QTest::addColumn<QString>("reason");
        const auto row = [](const char *name, const TensorProto &t, const char *reason) {
            QTest::newRow(name) << serialized(t) << reason;
        };
        row("claims more than it holds", rawProto("w", TensorProto::FLOAT, {1000000}, QByteArray(400, '\0')),
            "tensor 'w' claims 1000000 elements but holds 400 bytes");
        row("holds more than it claims", rawProto("w", TensorProto::FLOAT, {2}, QByteArray(12, '\0')),
            "tensor 'w' claims 2 elements but holds 12 bytes");
        TensorProto short3 = tensorProto("w", TensorProto::FLOAT, {4});
        for (float x : {1.f, 2.f, 3.f})
            short3.add_float_data(x);
        row("typed count", short3, "tensor 'w' claims 4 elements but holds 3 values in float_data");
        row("no data", tensorProto("w", TensorProto::INT64, {2}), "claims 2 elements but holds 0 values in int64_data");
        row("negative dim", rawProto("w", TensorProto::FLOAT, {-1, 3}, {}), "tensor 'w' has a negative dimension");
        const int64_t big = int64_t(1) << 40;
        row("overflowing dims", rawProto("w", TensorProto::FLOAT, {big, big, big}, {}), "impossibly large shape");
        // Zero elements, but the strides of the other dims would still overflow.
        row("overflow beside a zero", rawProto("w", TensorProto::FLOAT, {0, big, big}, {}), "impossibly large shape");
        row("strings", tensorProto("w", TensorProto::STRING, {1}), "element type STRING, which Fusescope does not");
        row("uint8", rawProto("w", TensorProto::UINT8, {1}, QByteArray("x")), "element type UINT8");
        row("unknown type", tensorProto("w", 99, {1}), "element type unknown (99)");
        TensorProto segmented = rawProto("w", TensorProto::FLOAT, {1}, bytesOf<float>({1}));
        segmented.mutable_segment()->set_begin(0);
        row("segmented", segmented, "tensor 'w' is segmented");
    }
    void badTensors()
    {
        QFETCH(QByteArray, tensor);
        QFETCH(QString, reason);
        TensorProto proto;
        QVERIFY(proto.ParseFromString(tensor.toStdString()));
        const std::string model = modelWithInitializer(proto, "badtensor/m.onnx");
        QVERIFY(throwsWith([&] { loadOnnxModel(model); }, {QString::fromStdString(model) + ": ", reason}));
        const std::string file = writeFile(path("badtensor/t.pb"), tensor).toStdString();
        QVERIFY(throwsWith([&] { readTensorFile(file); }, {QString::fromStdString(file) + ": ", reason}));
    }

    void tensorAttributeErrorNamesNode()
    {
        ::onnx::ModelProto m = baseModel();
        auto *node = m.mutable_graph()->add_node();
        node->set_op_type("Constant");
        *addAttribute(node, "value", ::onnx::AttributeProto::TENSOR)->mutable_t() =
            rawProto("", TensorProto::FLOAT, {4}, QByteArray(8, '\0'));
        const std::string file = writeFile(path("attr.onnx"), serialized(m)).toStdString();
        QVERIFY(throwsWith([&] { loadOnnxModel(file); },
                           {"attribute 'value' of 'node #0' claims 4 elements but holds 8 bytes"}));
    }

    void tensorFileRoundTrip_data()
    {
        QTest::addColumn<int>("dtype");
        for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::Bool})
            QTest::newRow(dtypeName(t)) << int(t);
    }
    void tensorFileRoundTrip()
    {
        QFETCH(int, dtype);
        Tensor t = Tensor::empty({2, 3}, DType(dtype));
        fillCounting(t);
        const std::string file = path("round/t.pb").toStdString();
        QDir().mkpath(path("round"));
        writeTensorFile(file, "input", t);
        const NamedTensor back = readTensorFile(file);
        QCOMPARE(back.name, std::string("input"));
        QCOMPARE(int(back.tensor.dtype()), dtype);
        QCOMPARE(back.tensor.sizes(), (Shape{2, 3}));
        QCOMPARE(std::memcmp(back.tensor.rawData(), t.rawData(), t.nbytes()), 0);
    }

    // The file holds raw_data, dims, data_type and name, as ONNX's tools write them.
    void writtenTensorFields()
    {
        Tensor t = Tensor::empty({3, 2}, DType::F16);
        fillCounting(t);
        const QString file = path("fields.pb");
        writeTensorFile(file.toStdString(), "x", t);
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        TensorProto proto;
        QVERIFY(proto.ParseFromString(f.readAll().toStdString()));
        QCOMPARE(proto.name(), std::string("x"));
        QCOMPARE(proto.data_type(), int(TensorProto::FLOAT16));
        QCOMPARE(std::vector<int64_t>(proto.dims().begin(), proto.dims().end()), (std::vector<int64_t>{3, 2}));
        QCOMPARE(proto.raw_data().size(), size_t(12));
        QCOMPARE(std::memcmp(proto.raw_data().data(), t.rawData(), 12), 0);
    }

    void writesNonContiguousInRowMajorOrder()
    {
        Tensor t = Tensor::empty({2, 3}, DType::F32);
        fillCounting(t);
        const Tensor transposed = t.t();
        QVERIFY(!transposed.isContiguous());
        const std::string file = path("transposed.pb").toStdString();
        writeTensorFile(file, "t", transposed);
        const NamedTensor back = readTensorFile(file);
        QCOMPARE(back.tensor.sizes(), (Shape{3, 2}));
        QCOMPARE(valuesOf(back.tensor), valuesOf(transposed));
    }

    void realConvModel()
    {
        const std::string file = testdata("test_conv_with_strides_padding/model.onnx");
        if (!QFile::exists(QString::fromStdString(file)))
            QSKIP("ONNX node testdata absent");
        const OnnxModel model = loadOnnxModel(file);
        QCOMPARE(model.opset, int64_t(11));
        QCOMPARE(model.producer, std::string("backend-test"));
        QCOMPARE(model.inputs.size(), size_t(2));
        QCOMPARE(model.inputs[0].dims, (std::vector<int64_t>{1, 1, 7, 5}));
        QCOMPARE(model.inputs[1].dims, (std::vector<int64_t>{1, 1, 3, 3}));
        QCOMPARE(model.outputs.at(0).dims, (std::vector<int64_t>{1, 1, 4, 3}));
        QCOMPARE(model.nodes.size(), size_t(1));
        QCOMPARE(model.nodes[0].opType, std::string("Conv"));
        QCOMPARE(model.nodes[0].attributes.at("strides").ints, (std::vector<int64_t>{2, 2}));
        QCOMPARE(model.nodes[0].attributes.at("pads").ints, (std::vector<int64_t>{1, 1, 1, 1}));
    }

    void realLayerNormModel()
    {
        const std::string file = testdata("test_layer_normalization_2d_axis1/model.onnx");
        if (!QFile::exists(QString::fromStdString(file)))
            QSKIP("ONNX node testdata absent");
        const OnnxModel model = loadOnnxModel(file);
        QCOMPARE(model.opset, int64_t(17));
        QCOMPARE(model.inputs.size(), size_t(3));
        QCOMPARE(model.outputs.size(), size_t(3));
        QCOMPARE(model.outputs[1].dims, (std::vector<int64_t>{3, 1}));
        QCOMPARE(model.nodes.at(0).opType, std::string("LayerNormalization"));
        QCOMPARE(model.nodes[0].outputs, (std::vector<std::string>{"Y", "Mean", "InvStdDev"}));
        QCOMPARE(model.nodes[0].attributes.at("axis").i, int64_t(1));
    }

    // The f16 input, widened, must equal the f32 output ONNX computed from it.
    void realHalfTensorFiles()
    {
        const std::string input = testdata("test_cast_FLOAT16_to_FLOAT/test_data_set_0/input_0.pb");
        if (!QFile::exists(QString::fromStdString(input)))
            QSKIP("ONNX node testdata absent");
        const NamedTensor in = readTensorFile(input);
        const NamedTensor out = readTensorFile(testdata("test_cast_FLOAT16_to_FLOAT/test_data_set_0/output_0.pb"));
        QCOMPARE(in.name, std::string("input"));
        QCOMPARE(in.tensor.dtype(), DType::F16);
        QCOMPARE(out.tensor.dtype(), DType::F32);
        QCOMPARE(in.tensor.sizes(), (Shape{3, 4}));
        QCOMPARE(valuesOf(in.tensor), valuesOf(out.tensor));
    }
};

QTEST_GUILESS_MAIN(TestOnnxModel)
#include "tst_onnx_model.moc"
