// Drives the real `fusescope` executable: the command-line contract of
// shared/CLI.md is what scripts depend on, so it is tested from outside.
#include "core/ops/amx_gemm.h"
#include "core/runtime/blascore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Result {
    int exitCode = -1;
    QString out;
    QString err;
};

Result runFusescope(const QStringList &args, const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FUSESCOPE_BINARY), args);
    if (!p.waitForFinished(120000))
        qFatal("fusescope %s did not finish", qPrintable(args.join(' ')));
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// Generated kernels go to a cache in the build tree, so reruns are warm.
QProcessEnvironment cacheEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral(FUSESCOPE_TEST_CACHE_DIR));
    return env;
}

// What `fusescope --version` says this build has ("onnx", "cuda" …).
bool buildHas(const char *feature)
{
    return runFusescope({QStringLiteral("--version")}).out.contains(QStringLiteral("%1=on").arg(QLatin1String(feature)));
}

// ONNX's Gemm node test, or "" with the reason it cannot run here.
QString onnxGemmTest(QString &why)
{
    const QString folder = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/onnx-node/test_gemm_default_matrix_bias");
    why = !QFileInfo::exists(folder) ? QStringLiteral("../shared/testdata/onnx-node is absent")
        : !buildHas("onnx")          ? QStringLiteral("this build has no ONNX support")
                                     : QString();
    return why.isEmpty() ? folder : QString();
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT
private slots:
    void version()
    {
        const Result r = runFusescope({QStringLiteral("--version")});
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        QVERIFY2(QRegularExpression(QStringLiteral("^fusescope \\d+\\.\\d+\\.\\d+$")).match(lines[0]).hasMatch(),
                 qPrintable(lines[0]));
        QVERIFY2(QRegularExpression(QStringLiteral("^features: cuda=(on|off) cupti=(on|off) nvrtc=(on|off) "
                                                   "onnx=(on|off)$"))
                     .match(lines[1])
                     .hasMatch(),
                 qPrintable(lines[1]));
        QVERIFY(r.err.isEmpty());
    }

    // The feature line says what runs: cuda=off exactly when `--device cuda`
    // refuses as not built (a found CUDA Toolkit alone no longer turns it on).
    void featureLineMatchesTheCudaDevice()
    {
        const Result r = runFusescope({QStringLiteral("run"), QStringLiteral("encoder"), QStringLiteral("--device"),
                                       QStringLiteral("cuda"), QStringLiteral("--json")});
        const bool refused = r.exitCode == 2 && r.err.contains(QLatin1String("not built yet"));
        const bool cuda = buildHas("cuda");
        QVERIFY2(cuda != refused, qPrintable(r.err));
        if (!cuda) {
            QVERIFY(!buildHas("cupti"));
            QVERIFY(!buildHas("nvrtc"));
        }
    }

    void help()
    {
        const Result r = runFusescope({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith(QLatin1String("Usage: fusescope")));
        for (const char *command : {"ops", "run", "bench", "profile", "report", "export", "stages", "demo"})
            QVERIFY2(r.out.contains(QStringLiteral("\n  %1 ").arg(QLatin1String(command))), command);
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown option") << QStringList {"--bogus"} << "unknown option --bogus";
        QTest::newRow("screenshot without folder") << QStringList {"--screenshot"} << "needs a folder";
        QTest::newRow("two files to screenshot") << QStringList {"--screenshot", "d", "a", "b"} << "at most one FILE";
    }
    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Result r = runFusescope(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void opsListsTheRegistry()
    {
        const Result r = runFusescope({QStringLiteral("ops"), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonArray ops = QJsonDocument::fromJson(r.out.toUtf8()).object().value(QLatin1String("ops")).toArray();
        QVERIFY(ops.size() > 60);
        QJsonObject gelu;
        for (const QJsonValue &v : ops) {
            if (v.toObject().value(QLatin1String("name")).toString() == QLatin1String("aten.gelu"))
                gelu = v.toObject();
        }
        QCOMPARE(gelu.value(QLatin1String("kind")).toString(), QStringLiteral("pointwise"));
        QVERIFY(gelu.value(QLatin1String("fuses")).toBool());
        QVERIFY(gelu.value(QLatin1String("schema")).toString().startsWith(QLatin1String("aten.gelu(Tensor self")));
        QCOMPARE(gelu.value(QLatin1String("backends")).toArray().first().toString(), QStringLiteral("cpu"));
        const Result table = runFusescope({QStringLiteral("ops")});
        QCOMPARE(table.exitCode, 0);
        QVERIFY(table.out.contains(QLatin1String("aten.matmul")));
    }

    void runZooModel()
    {
        const Result r = runFusescope({QStringLiteral("run"), QStringLiteral("mlp"), QStringLiteral("--repeat"),
                                       QStringLiteral("3"), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(doc.value(QLatin1String("model")).toString(), QStringLiteral("mlp"));
        QCOMPARE(doc.value(QLatin1String("mode")).toString(), QStringLiteral("eager"));
        QVERIFY(doc.value(QLatin1String("median_ms")).toDouble() > 0);
        const QJsonObject out = doc.value(QLatin1String("outputs")).toArray().first().toObject();
        QCOMPARE(out.value(QLatin1String("shape")).toArray(), (QJsonArray{256, 512}));
        QCOMPARE(out.value(QLatin1String("dtype")).toString(), QStringLiteral("f32"));
        const Result list = runFusescope({QStringLiteral("run"), QStringLiteral("--list")});
        QCOMPARE(list.exitCode, 0);
        for (const char *name : {"pointwise", "softmax_ln", "mlp", "encoder", "resnet18", "llama_block"})
            QVERIFY2(list.out.contains(QLatin1String(name)), name);
    }

    void runRefusals_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown model") << QStringList{"run", "nope"} << 1 << "unknown model 'nope'";
        QTest::newRow("no model") << QStringList{"run"} << 2 << "missing MODEL";
        QTest::newRow("bad repeat") << QStringList{"run", "mlp", "--repeat", "0"} << 2 << "--repeat needs an integer >= 1";
        QTest::newRow("bad device") << QStringList{"run", "mlp", "--device", "tpu"} << 2 << "--device must be cpu or cuda";
        QTest::newRow("bench unknown workload") << QStringList{"bench", "--workload", "x"} << 1 << "unknown workload 'x'";
        QTest::newRow("bench bad mode") << QStringList{"bench", "--mode", "fast"} << 2 << "--mode must be eager";
        QTest::newRow("ops extra argument") << QStringList{"ops", "x"} << 2 << "unexpected argument 'x'";
    }
    void runRefusals()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const Result r = runFusescope(args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void benchJson()
    {
        const Result r = runFusescope({QStringLiteral("bench"), QStringLiteral("--workload"), QStringLiteral("softmax_ln"),
                                       QStringLiteral("--repeat"), QStringLiteral("1"), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray w = doc.value(QLatin1String("workloads")).toArray();
        QCOMPARE(w.size(), 1);
        QCOMPARE(w.first().toObject().value(QLatin1String("name")).toString(), QStringLiteral("softmax_ln"));
        QVERIFY(w.first().toObject().value(QLatin1String("eager_ms")).toDouble() > 0);
        const QJsonObject machine = doc.value(QLatin1String("machine")).toObject();
        QVERIFY(machine.value(QLatin1String("threads")).toInt() >= 1);
        // Figures of compiled products depend on whether the tiles ran them.
        QVERIFY(machine.value(QLatin1String("amx_tiles")).isBool());
        QCOMPARE(machine.value(QLatin1String("amx_tiles")).toBool(), fusescope::amx::available());
        // The app re-executes itself when OpenBLAS fell back to SSE3 kernels on
        // a CPU that has AVX2 (this test itself is built for AVX2).
        const QString blas = machine.value(QLatin1String("blas")).toString();
        QVERIFY2(!blas.contains(QLatin1String("kernels Prescott")), qPrintable(blas));
        // Where this CPU wants other kernels than OpenBLAS picks (a fallback,
        // or Zen 4's AVX2 ones), the app runs with them.
        const QString want = QString::fromStdString(fusescope::blasCoreOverride());
        if (!want.isEmpty() && !qEnvironmentVariableIsSet("OPENBLAS_CORETYPE"))
            QVERIFY2(blas.contains(QLatin1String("kernels ") + want), qPrintable(blas + QLatin1String(" wants ") + want));
        // ... and with OpenBLAS's idle threads told to stop spinning soon.
        QVERIFY2(blas.contains(QLatin1String("idle threads spin 2^")), qPrintable(blas));
    }

    void demoRefusesStrayArguments()
    {
        const Result r = runFusescope({QStringLiteral("demo"), QStringLiteral("extra")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("demo")), qPrintable(r.err));
    }

    void runCompiledJson()
    {
        const Result r = runFusescope({QStringLiteral("run"), QStringLiteral("softmax_ln"), QStringLiteral("--compile"),
                                       QStringLiteral("--json")}, cacheEnvironment());
        QCOMPARE(r.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(doc.value(QLatin1String("mode")).toString(), QStringLiteral("compiled"));
        QVERIFY(doc.value(QLatin1String("compile_ms")).toDouble() > 0);
        QCOMPARE(doc.value(QLatin1String("outputs")).toArray().first().toObject().value(QLatin1String("shape")).toArray(),
                 (QJsonArray{8192, 512}));
    }

    void benchBothModes()
    {
        const Result r = runFusescope({QStringLiteral("bench"), QStringLiteral("--workload"), QStringLiteral("pointwise"),
                                       QStringLiteral("--mode"), QStringLiteral("both"), QStringLiteral("--repeat"),
                                       QStringLiteral("1"), QStringLiteral("--json")}, cacheEnvironment());
        QCOMPARE(r.exitCode, 0);
        const QJsonObject w = QJsonDocument::fromJson(r.out.toUtf8()).object().value(QLatin1String("workloads")).toArray().first().toObject();
        QVERIFY(w.value(QLatin1String("eager_ms")).toDouble() > 0);
        QVERIFY(w.value(QLatin1String("compiled_ms")).toDouble() > 0);
        QVERIFY(w.value(QLatin1String("max_abs_diff")).toDouble() < 1e-4);
    }

    void stagesListsAllSeven()
    {
        const Result r = runFusescope({QStringLiteral("stages"), QStringLiteral("encoder")}, cacheEnvironment());
        QCOMPARE(r.exitCode, 0);
        for (const char *stage : {"capture", "decompose", "simplify", "fuse", "plan-memory", "codegen", "load"})
            QVERIFY2(r.out.contains(QRegularExpression(QStringLiteral("\\d  %1 ").arg(QLatin1String(stage)))), qPrintable(r.out));
        const Result json = runFusescope({QStringLiteral("stages"), QStringLiteral("pointwise"), QStringLiteral("--format"),
                                          QStringLiteral("json")}, cacheEnvironment());
        const QJsonArray stages = QJsonDocument::fromJson(json.out.toUtf8()).object().value(QLatin1String("stages")).toArray();
        QCOMPARE(stages.size(), 7);
        QCOMPARE(stages.at(3).toObject().value(QLatin1String("stats")).toObject().value(QLatin1String("kernels")).toInt(), 1);
    }

    void stagesPrintsGraphsAndCode_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("codegen source") << QStringList{"--stage", "codegen"} << "extern \"C\" void fusescope_call(";
        QTest::newRow("capture code") << QStringList{"--stage", "0"} << "def forward(self, x):";
        QTest::newRow("fuse dot") << QStringList{"--stage", "fuse", "--format", "dot"} << "subgraph cluster_0";
        QTest::newRow("simplify json") << QStringList{"--stage", "simplify", "--format", "json"} << "\"format\":\"fusescope.graph\"";
    }
    void stagesPrintsGraphsAndCode()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        const Result r = runFusescope(QStringList{QStringLiteral("stages"), QStringLiteral("pointwise")} + args, cacheEnvironment());
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains(expected), qPrintable(r.out.left(2000)));
    }

    void commandRefusals_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown model") << QStringList{"stages", "nope"} << 1 << "unknown model 'nope'";
        QTest::newRow("unknown stage") << QStringList{"stages", "pointwise", "--stage", "lower"} << 2 << "no stage 'lower'";
        QTest::newRow("bad format") << QStringList{"stages", "pointwise", "--format", "svg"} << 2 << "--format must be";
        QTest::newRow("dot without stage") << QStringList{"stages", "pointwise", "--format", "dot"} << 2 << "needs --stage";
        QTest::newRow("profile without -o") << QStringList{"profile", "mlp"} << 2 << "missing -o";
        QTest::newRow("bad schedule") << QStringList{"profile", "mlp", "--schedule", "wait=x", "-o", "x.fstrace"} << 2
                                      << "schedule: 'wait=x'";
        QTest::newRow("unknown model") << QStringList{"profile", "nope", "-o", "x.fstrace"} << 1 << "unknown model 'nope'";
        QTest::newRow("unwritable output") << QStringList{"profile", "mlp", "--steps", "1", "-o", "/nonexistent/dir/x.fstrace"}
                                           << 1 << "/nonexistent/dir/x.fstrace";
        QTest::newRow("report missing file") << QStringList{"report", "/nonexistent.fstrace"} << 1 << "/nonexistent.fstrace";
        QTest::newRow("export without --chrome") << QStringList{"export", "x.fstrace"} << 2 << "missing --chrome";
        QTest::newRow("stages of a missing file") << QStringList{"stages", "/nonexistent.fstrace"} << 1 << "no such file";
    }
    void commandRefusals()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const Result r = runFusescope(args, cacheEnvironment());
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    // The "done when": one file holds ops, kernels, memory and compile
    // stages, and report, stages and export read it.
    void profileCompiledThenReportStagesExport()
    {
        QTemporaryDir dir;
        const QString trace = dir.filePath(QStringLiteral("enc.fstrace"));
        Result r = runFusescope({"profile", "encoder", "--compile", "--record-shapes", "--profile-memory", "--steps", "3",
                                 "-o", trace}, cacheEnvironment());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = runFusescope({"report", trace, "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(doc.value("source").toString(), trace);
        const QJsonObject run = doc.value("runs").toArray().at(0).toObject();
        QCOMPARE(run.value("name").toString(), QStringLiteral("compiled"));
        QCOMPARE(run.value("incomplete").toBool(), false);
        QVERIFY(run.value("memory").toObject().value("peak_bytes").toDouble() > 1e6);
        bool fused = false;
        for (const QJsonValue &k : run.value("kernels").toArray())
            fused = fused || k.toObject().value("name").toString().startsWith(QLatin1String("fused_"));
        QVERIFY(fused);
        QVERIFY(run.value("hints").isArray());
        r = runFusescope({"report", trace});
        // The encoder's GEMMs run on BLAS, or on the AMX tiles where the CPU has them.
        const bool gemm
            = r.out.contains(QLatin1String("cblas_sgemm")) || r.out.contains(QLatin1String("amx_gemm_bf16x6"));
        QVERIFY2(r.out.contains(QLatin1String("compile stages:")) && gemm, qPrintable(r.out));
        r = runFusescope({"stages", trace});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out.count(QRegularExpression(QStringLiteral("(?m)^\\d  "))), 7);
        r = runFusescope({"stages", trace, "--stage", "codegen"});
        QVERIFY2(r.out.contains(QLatin1String("extern \"C\" void fusescope_call(")), qPrintable(r.out.left(500)));
        const QString json = dir.filePath(QStringLiteral("enc.json"));
        r = runFusescope({"export", trace, "--chrome", json});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray events = QJsonDocument::fromJson(f.readAll()).object().value("traceEvents").toArray();
        QStringList cats;
        for (const QJsonValue &e : events)
            cats << e.toObject().value("cat").toString();
        QVERIFY(cats.contains(QLatin1String("kernel")) && cats.contains(QLatin1String("compile_stage")) &&
                cats.contains(QLatin1String("op")));
    }

    void profileCompareRecordsTwoRuns()
    {
        QTemporaryDir dir;
        const QString trace = dir.filePath(QStringLiteral("mlp.fstrace"));
        Result r = runFusescope({"profile", "mlp", "--compare", "--steps", "2", "-o", trace}, cacheEnvironment());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = runFusescope({"report", trace, "--json"});
        const QJsonArray runs = QJsonDocument::fromJson(r.out.toUtf8()).object().value("runs").toArray();
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs.at(0).toObject().value("name").toString(), QStringLiteral("eager"));
        QCOMPARE(runs.at(1).toObject().value("name").toString(), QStringLiteral("compiled"));
        QVERIFY(!runs.at(0).toObject().value("ops").toArray().isEmpty());
        r = runFusescope({"report", trace, "--json", "--run", "1"});
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object().value("runs").toArray().size(), 1);
    }

    void reportOfGarbageFails()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.fstrace"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("SQLite format 3\0") + QByteArray(5000, 'x'));
        f.close();
        for (const QStringList &args : {QStringList{"report", path}, QStringList{"stages", path},
                                        QStringList{"export", path, "--chrome", dir.filePath("o.json")}}) {
            const Result r = runFusescope(args);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(path), qPrintable(r.err));
        }
    }

    // ONNX's own test folder layout in and out, eager and compiled, as CLI.md says.
    void runOnnxWithInputAndOutputDirs()
    {
        QString why;
        const QString folder = onnxGemmTest(why);
        if (folder.isEmpty())
            QSKIP(qPrintable(why));
        QTemporaryDir dir;
        for (const char *mode : {"eager", "compiled"}) {
            const QString out = dir.filePath(QString::fromLatin1(mode));
            QStringList args{"run", folder + "/model.onnx", "--input-dir", folder + "/test_data_set_0", "--output-dir",
                             out, "--repeat", "2", "--json"};
            if (QLatin1String(mode) == QLatin1String("compiled"))
                args << "--compile";
            const Result r = runFusescope(args, cacheEnvironment());
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
            QCOMPARE(doc.value("mode").toString(), QString::fromLatin1(mode));
            const QJsonObject output = doc.value("outputs").toArray().at(0).toObject();
            QCOMPARE(output.value("shape").toArray(), (QJsonArray{3, 4}));
            QCOMPARE(output.value("dtype").toString(), QStringLiteral("f32"));
            // A TensorProto of 12 floats: the raw data alone is 48 bytes.
            QVERIFY(QFileInfo(out + "/output_0.pb").size() > 48);
        }
        const Result stages = runFusescope({"stages", folder + "/model.onnx"}, cacheEnvironment());
        QCOMPARE(stages.exitCode, 0);
        QCOMPARE(stages.out.count(QRegularExpression(QStringLiteral("(?m)^\\d  "))), 7);
    }

    void onnxRefusals()
    {
        QString why;
        const QString folder = onnxGemmTest(why);
        if (folder.isEmpty())
            QSKIP(qPrintable(why));
        QTemporaryDir dir;
        const QString garbage = dir.filePath(QStringLiteral("garbage.onnx"));
        QFile f(garbage);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(300, '\x55'));
        f.close();
        Result r = runFusescope({"run", garbage});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(garbage), qPrintable(r.err));
        // test_add's inputs do not fit Gemm's model.
        r = runFusescope({"run", folder + "/model.onnx", "--input-dir",
                          QStringLiteral(FUSESCOPE_TESTDATA_DIR "/onnx-node/test_add/test_data_set_0")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QLatin1String("input")), qPrintable(r.err));
        r = runFusescope({"run", folder + "/model.onnx", "--input-dir", dir.filePath("none")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QLatin1String("no such folder")), qPrintable(r.err));
    }

    // Imported traces through the CLI: report reads them (several Kineto files
    // are the ranks of one run) and export writes them back as Chrome JSON,
    // which imports again to the same kernels.
    void reportReadsImportedTraces_data()
    {
        QTest::addColumn<QStringList>("files");
        QTest::addColumn<int>("kernelNames");
        const QString k = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/kineto/");
        QTest::newRow("kineto gz") << QStringList{k + "hta/triton_example/triton_example.json.gz"} << 1;
        QTest::newRow("two ranks") << QStringList{k + "param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
                                                  k + "param/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json"}
                                   << -1;
        QTest::newRow("nsight") << QStringList{QStringLiteral(FUSESCOPE_TESTDATA_DIR
                                                              "/nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite")}
                                << 1;
    }
    void reportReadsImportedTraces()
    {
        QFETCH(QStringList, files);
        QFETCH(int, kernelNames);
        if (!QFileInfo::exists(files.front()))
            QSKIP("../shared/testdata is absent");
        const Result r = runFusescope(QStringList{QStringLiteral("report")} + files + QStringList{QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray runs = doc.value(QLatin1String("runs")).toArray();
        QCOMPARE(runs.size(), 1); // ranks of one run are one run
        const QJsonArray kernels = runs.first().toObject().value(QLatin1String("kernels")).toArray();
        if (kernelNames >= 0)
            QCOMPARE(kernels.size(), kernelNames);
        else
            QVERIFY(kernels.size() > 1);
        QVERIFY(kernels.first().toObject().value(QLatin1String("total_us")).toDouble() > 0);
    }

    // GPU memsets are reported beside the copies: count, bytes and time, as
    // the trace's gpu_memset events say (the V100 trace's 145).
    void reportCountsMemsets()
    {
        const QString source = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/kineto/hta/ns_resolution_trace/"
                                              "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
        if (!QFileInfo::exists(source))
            QSKIP("../shared/testdata is absent");
        Result r = runFusescope({QStringLiteral("report"), source, QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject run = QJsonDocument::fromJson(r.out.toUtf8()).object().value(QLatin1String("runs")).toArray()
                                    .first().toObject();
        const QJsonObject memset = run.value(QLatin1String("memset")).toObject();
        QCOMPARE(memset.value(QLatin1String("calls")).toInt(), 145);
        QVERIFY(memset.value(QLatin1String("bytes")).toDouble() > 0);
        QVERIFY(memset.value(QLatin1String("total_us")).toDouble() > 0);
        r = runFusescope({QStringLiteral("report"), source});
        QVERIFY2(r.out.contains(QLatin1String("memsets: 145 calls")), qPrintable(r.out));
    }

    // Hints travel in report --json as the command-line contract says.
    void reportCarriesHints()
    {
        const QString source = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/kineto/hta/critical_path/alexnet/"
                                              "benchmark_result_2869224_1695835535_trace.json.gz");
        if (!QFileInfo::exists(source))
            QSKIP("../shared/testdata is absent");
        const Result r = runFusescope({QStringLiteral("report"), source, QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonArray hints = QJsonDocument::fromJson(r.out.toUtf8()).object().value(QLatin1String("runs")).toArray()
                                     .first().toObject().value(QLatin1String("hints")).toArray();
        QVERIFY(!hints.isEmpty());
        QStringList rules;
        double previous = 1e300;
        for (const QJsonValue &h : hints) {
            const QJsonObject o = h.toObject();
            rules << o.value(QLatin1String("rule")).toString();
            QVERIFY(!o.value(QLatin1String("message")).toString().isEmpty());
            QVERIFY(o.value(QLatin1String("evidence")).toObject().contains(QLatin1String("events")));
            QVERIFY(o.value(QLatin1String("saving_us")).toDouble() <= previous); // ranked by saving
            previous = o.value(QLatin1String("saving_us")).toDouble();
        }
        QVERIFY2(rules.contains(QLatin1String("pageable-memcpy")), qPrintable(rules.join(QLatin1Char(','))));
        const Result text = runFusescope({QStringLiteral("report"), source});
        QVERIFY(text.out.contains(QLatin1String("hints, by estimated saving:")));
    }

    void exportOfAnImportImportsAgain()
    {
        const QString source = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/kineto/hta/critical_path/alexnet/"
                                              "benchmark_result_2869224_1695835535_trace.json.gz");
        if (!QFileInfo::exists(source))
            QSKIP("../shared/testdata is absent");
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("alexnet.json"));
        QCOMPARE(runFusescope({QStringLiteral("export"), source, QStringLiteral("--chrome"), out}).exitCode, 0);
        const Result before = runFusescope({QStringLiteral("report"), source, QStringLiteral("--json")});
        const Result after = runFusescope({QStringLiteral("report"), out, QStringLiteral("--json")});
        QCOMPARE(after.exitCode, 0);
        auto kernels = [](const Result &r) {
            return QJsonDocument::fromJson(r.out.toUtf8()).object().value(QLatin1String("runs")).toArray().first()
                .toObject().value(QLatin1String("kernels")).toArray();
        };
        QCOMPARE(kernels(after).size(), kernels(before).size());
        QCOMPARE(kernels(after).first().toObject().value(QLatin1String("name")),
                 kernels(before).first().toObject().value(QLatin1String("name")));
        QCOMPARE(kernels(after).first().toObject().value(QLatin1String("calls")),
                 kernels(before).first().toObject().value(QLatin1String("calls")));
    }

    void importErrorsNameTheFile()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("cut.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        // Plain literals: moc does not read raw strings that hold quotes.
        f.write("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": 2, \"pid\": 1, "
                "\"tid\": 1}, {\"ph\": \"X\", \"na");
        f.close();
        const Result r = runFusescope({QStringLiteral("report"), file});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QLatin1String("cut.json")), qPrintable(r.err));
        const Result mixed = runFusescope({QStringLiteral("report"), file, QStringLiteral(FUSESCOPE_TESTDATA_DIR
                                                                                          "/nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite")});
        QCOMPARE(mixed.exitCode, 1);
    }

    void noDisplayIsAnError()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            env.remove(QLatin1String(var));
        const Result r = runFusescope({}, env);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("no display")), qPrintable(r.err));
    }

    void screenshotOfEmptyWindow()
    {
        QTemporaryDir dir;
        const Result r = runFusescope({QStringLiteral("--screenshot"), dir.path()});
        QCOMPARE(r.exitCode, 0);
        const QImage image(dir.filePath(QStringLiteral("mainwindow.png")));
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 640 && image.height() >= 400);
        QCOMPARE(r.out.trimmed(), dir.filePath(QStringLiteral("mainwindow.png")));
    }

    void screenshotOfBadFileFails_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("reason");
        QTest::newRow("missing") << QByteArray() << "no such file";
        QTest::newRow("junk") << QByteArray("not a trace at all") << "is not a format Fusescope opens";
    }
    void screenshotOfBadFileFails()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("bad.fstrace"));
        if (!content.isEmpty()) {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        }
        const Result r = runFusescope({QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("shots")), file});
        QCOMPARE(r.exitCode, 1);
        // One line of ours; Qt itself may warn about the platform above it.
        const QStringList ours
            = r.err.split(QLatin1Char('\n')).filter(QRegularExpression(QStringLiteral("^fusescope:")));
        QCOMPARE(ours.size(), 1);
        QVERIFY2(ours.front().contains(QLatin1String("bad.fstrace")) && ours.front().contains(reason),
                 qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_app_cli.moc"
