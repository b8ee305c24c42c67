// Opening a file into a Document: traces recorded by the real binary, ONNX
// models, bad files, the asynchronous DocumentLoader and `fusescope demo`.
#include "app/documentloader.h"
#include "app/documentopener.h"
#include "core/compiler/compile.h"
#include "fusescope_config.h"
#include "profiler/tracereader.h"
#include "profiler/tracewriter.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace fusescope;

namespace {

const QString kSqueezenet = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/onnx-models/light/light_squeezenet.onnx");
const QString kDensenet = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/onnx-models/light/light_densenet121.onnx");

// Generated kernels go to a cache in the build tree, so reruns are warm.
QProcessEnvironment cacheEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_CACHE_HOME"), QStringLiteral(FUSESCOPE_TEST_CACHE_DIR));
    return env;
}

// Runs the fusescope binary; returns its exit code, or -1 when it crashed.
int runFusescope(const QStringList &args, QString *err = nullptr, int timeoutMs = 240000)
{
    QProcess p;
    p.setProcessEnvironment(cacheEnvironment());
    p.start(QStringLiteral(FUSESCOPE_BINARY), args);
    if (!p.waitForFinished(timeoutMs))
        qFatal("fusescope %s did not finish", qPrintable(args.join(QLatin1Char(' '))));
    if (err)
        *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

// The message loadDocument throws, or "" when it loads.
QString loadError(const QString &path)
{
    try {
        loadDocument(path);
    } catch (const Error &e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

std::vector<std::string> stageNamesOf(const Document &doc)
{
    std::vector<std::string> names;
    for (const compiler::CompileStage &s : doc.stages)
        names.push_back(s.name);
    return names;
}

bool anyNote(const Document &doc, const char *text)
{
    return std::any_of(doc.notes.begin(), doc.notes.end(),
                       [&](const std::string &n) { return QString::fromStdString(n).contains(QLatin1String(text)); });
}

QString onnxSkipReason(const QString &model)
{
    if (!FUSESCOPE_HAVE_ONNX)
        return QStringLiteral("this build has no ONNX support");
    if (!QFileInfo::exists(model))
        return model + QStringLiteral(" is absent (../shared/testdata/onnx-models)");
    return {};
}

} // namespace

class TestDocument : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_compiled; // profile encoder --compile
    QString m_compare;  // profile encoder --compare
    QString m_eager;    // profile encoder

    QString record(const QString &name, const QStringList &modeArgs)
    {
        const QString path = m_dir.filePath(name);
        QString err;
        const int rc = runFusescope(QStringList{QStringLiteral("profile"), QStringLiteral("encoder"), QStringLiteral("--steps"),
                                                QStringLiteral("2"), QStringLiteral("-o"), path} + modeArgs, &err);
        if (rc != 0)
            qFatal("profile %s failed (%d): %s", qPrintable(name), rc, qPrintable(err));
        return path;
    }

    QString writeFile(const QString &name, const QByteArray &content)
    {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_compiled = record(QStringLiteral("compiled.fstrace"), {QStringLiteral("--compile")});
        m_compare = record(QStringLiteral("compare.fstrace"), {QStringLiteral("--compare")});
        m_eager = record(QStringLiteral("eager.fstrace"), {});
    }

    void compiledTraceHasStagesGraphsAndTimes()
    {
        const std::shared_ptr<const Document> doc = loadDocument(m_compiled);
        QVERIFY(doc);
        QCOMPARE(doc->path, m_compiled.toStdString());
        QCOMPARE(doc->format, std::string("Fusescope trace"));
        QVERIFY2(QString::fromStdString(doc->title).contains(QLatin1String("encoder")), doc->title.c_str());
        QCOMPARE(stageNamesOf(*doc), compiler::stageNames());
        QCOMPARE(doc->graphs.size(), doc->stages.size());
        for (const auto &g : doc->graphs) {
            QVERIFY(g);
            QVERIFY2(!g->nodes.empty(), g->stageName.c_str());
        }
        const StageGraph *fuse = doc->graph("fuse");
        QVERIFY(fuse && !fuse->kernels.empty());

        QVERIFY(doc->profiled);
        QVERIFY(!doc->nodeTimeNs.empty());
        QVERIFY(std::all_of(doc->nodeTimeNs.begin(), doc->nodeTimeNs.end(), [](const auto &e) { return e.second >= 0; }));
        QVERIFY(std::any_of(doc->nodeTimeNs.begin(), doc->nodeTimeNs.end(), [](const auto &e) { return e.second > 0; }));
        // Measured node ids are ids of the captured graph.
        const StageGraph *capture = doc->graph("capture");
        QVERIFY(capture);
        for (const auto &[id, ns] : doc->nodeTimeNs)
            QVERIFY2(capture->find(id), qPrintable(QStringLiteral("node %1").arg(id)));
        QVERIFY(!doc->kernelTimeNs.empty());
        // Every fused kernel that ran was measured under its name.
        int measured = 0;
        for (const GraphKernel &k : fuse->kernels) {
            const auto it = doc->kernelTimeNs.find(k.name);
            if (it != doc->kernelTimeNs.end() && it->second > 0)
                ++measured;
        }
        QVERIFY2(measured > 0, "no fused kernel of the fuse stage has a measured time");
        QVERIFY(doc->notes.empty()); // one complete run
        QVERIFY(!doc->baseline);       // and nothing to compare it with
    }

    void compareTracePicksTheCompiledRun()
    {
        const std::shared_ptr<const Document> doc = loadDocument(m_compare);
        QVERIFY(doc);
        QVERIFY2(QString::fromStdString(doc->title).contains(QLatin1String("run 1 'compiled'")), doc->title.c_str());
        QVERIFY(anyNote(*doc, "run 0 'eager'"));
        QVERIFY(doc->profiled);
        QCOMPARE(stageNamesOf(*doc), compiler::stageNames());
        // The eager run comes along for the Compare view, with its own statistics.
        QVERIFY(doc->baseline && doc->baseline->trace && doc->baseline->stats);
        QCOMPARE(doc->baseline->trace->runs.size(), size_t(1));
        QCOMPARE(doc->baseline->trace->runs.front().info.mode, std::string("eager"));
        QVERIFY(!doc->baseline->stats->ops.empty());
        QVERIFY(doc->baseline->title.find("run 0 'eager'") != std::string::npos);
    }

    // No compile stages: no graphs, but the run's events for the timeline.
    void eagerOnlyTraceOpensForTheTimeline()
    {
        const std::shared_ptr<const Document> doc = loadDocument(m_eager);
        QVERIFY(doc && !doc->hasGraphs());
        QVERIFY(doc->graphs.empty());
        QVERIFY(doc->trace && doc->trace->runs.size() == 1);
        QVERIFY(!doc->trace->runs.front().events.empty());
        QCOMPARE(doc->trace->runs.front().info.name, std::string("eager"));
    }

    void importedTraceOpensForTheTimeline_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("kineto") << QStringLiteral(FUSESCOPE_TESTDATA_DIR "/kineto/hta/triton_example/triton_example.json.gz");
        QTest::newRow("nsight") << QStringLiteral(FUSESCOPE_TESTDATA_DIR "/nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite");
    }
    void importedTraceOpensForTheTimeline()
    {
        QFETCH(QString, file);
        if (!QFileInfo::exists(file))
            QSKIP("../shared/testdata is absent");
        const std::shared_ptr<const Document> doc = loadDocument(file);
        QVERIFY(doc && !doc->hasGraphs());
        QVERIFY(doc->trace && !doc->trace->runs.front().events.empty());
        QCOMPARE(doc->trace->runs.front().info.mode, std::string("imported"));
    }

    // A compiled run whose capture was cut short, written with the stages of
    // the real compiled trace; `breakStage` >= 0 corrupts that stage's graph.
    QString writeCutShortTrace(const QString &name, int breakStage)
    {
        profiler::CompileStages stages = profiler::TraceReader(m_compiled.toStdString()).compileStages(0);
        if (breakStage >= 0)
            stages[size_t(breakStage)].graphJson = "{\"version\": 1, \"nodes\": [";
        const QString path = m_dir.filePath(name);
        profiler::TraceWriter writer(path.toStdString());
        writer.beginRun({"compiled", "encoder", "compiled", 0, 0, ""});
        writer.endRun({1000, 0, 0, 0, false});
        writer.writeCompileStages(0, stages);
        writer.close();
        return path;
    }

    void cutShortRunIsNoted()
    {
        const std::shared_ptr<const Document> doc = loadDocument(writeCutShortTrace(QStringLiteral("cut.fstrace"), -1));
        QVERIFY(doc);
        QVERIFY(anyNote(*doc, "run 0 'compiled' was cut short"));
        QVERIFY(!doc->profiled); // no events were recorded
        QCOMPARE(doc->graphs.size(), doc->stages.size());
    }

    void corruptStageNamesFileAndStage()
    {
        const QString e = loadError(writeCutShortTrace(QStringLiteral("corrupt-stage.fstrace"), 3));
        QVERIFY2(e.startsWith(QLatin1String("corrupt-stage.fstrace: run 0 'compiled', stage 3")), qPrintable(e));
        QVERIFY2(e.contains(QLatin1String("'fuse'")), qPrintable(e));
    }

    void badFileNamesTheFile_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("content"); // null: no such file
        QTest::addColumn<QString>("reason");
        QTest::newRow("missing") << "missing.fstrace" << QByteArray() << "no such file";
        QTest::newRow("empty") << "empty.fstrace" << QByteArray("") << "is empty";
        QTest::newRow("garbage") << "garbage.fstrace" << QByteArray("not a trace at all\x01\x02", 20)
                                 << "is not a format Fusescope opens";
        QTest::newRow("chrome json") << "kineto.json" << QByteArray(R"({"traceEvents": []})")
                                     << "holds no trace events";
    }
    void badFileNamesTheFile()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, content);
        QFETCH(QString, reason);
        const QString path = content.isNull() ? m_dir.filePath(name) : writeFile(name, content);
        const QString e = loadError(path);
        QVERIFY2(e.contains(name) && e.contains(reason), qPrintable(e));
        const OpenOutcome outcome = openDocument(path);
        QVERIFY(!outcome.ok && !outcome.document);
        QCOMPARE(outcome.reason, e);
    }

    void truncatedTraceNamesTheFile_data()
    {
        QTest::addColumn<double>("keep");
        QTest::newRow("first 4 KiB") << 0.0;
        QTest::newRow("half") << 0.5;
        QTest::newRow("90 %") << 0.9;
    }
    void truncatedTraceNamesTheFile()
    {
        QFETCH(double, keep);
        QFile f(m_compiled);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray all = f.readAll();
        const qsizetype bytes = keep > 0 ? qsizetype(double(all.size()) * keep) : 4096;
        const QString path = writeFile(QStringLiteral("truncated.fstrace"), all.left(bytes));
        // Either refused with the file named, or loaded with nothing claimed
        // that the file no longer holds; never a crash.
        try {
            const std::shared_ptr<const Document> doc = loadDocument(path);
            QVERIFY(doc);
            QCOMPARE(doc->graphs.size(), doc->stages.size());
        } catch (const Error &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String("truncated.fstrace")), e.what());
        }
    }

    void onnxModelIsCapturedAndFused()
    {
        if (const QString why = onnxSkipReason(kSqueezenet); !why.isEmpty())
            QSKIP(qPrintable(why));
        const std::shared_ptr<const Document> doc = loadDocument(kSqueezenet);
        QVERIFY(doc);
        QCOMPARE(doc->title, std::string("light_squeezenet.onnx"));
        QCOMPARE(doc->format, std::string("ONNX model"));
        QVERIFY(!doc->profiled);
        QVERIFY(doc->nodeTimeNs.empty() && doc->kernelTimeNs.empty());
        QVERIFY(doc->stageIndex("capture") == 0);
        const StageGraph *fuse = doc->graph("fuse");
        QVERIFY(fuse && !fuse->kernels.empty());
        // Interpret mode: the load stage says no compiler ran.
        const compiler::CompileStage &load = doc->stages[size_t(doc->stageIndex("load"))];
        QVERIFY(std::any_of(load.log.begin(), load.log.end(),
                            [](const std::string &l) { return l.find("interpreter") != std::string::npos; }));
        // torch.onnx names nodes by module scope: "/features/features.3/squeeze/Conv".
        const StageGraph *capture = doc->graph("capture");
        QVERIFY(capture);
        const auto withModule = std::count_if(capture->nodes.begin(), capture->nodes.end(),
                                              [](const GraphNode &n) { return n.isOp() && !n.module.empty(); });
        QVERIFY2(withModule > 0, "no captured op carries a module path from the ONNX node names");
    }

    void loaderDeliversTheDocumentWithMonotonicProgress()
    {
        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        QSignalSpy progress(&loader, &DocumentLoader::progress);
        QSignalSpy failed(&loader, &DocumentLoader::failed);
        const int id = loader.start(m_compiled);
        QVERIFY(id > 0);
        QVERIFY(loader.isLoading());
        QCOMPARE(loader.path(), m_compiled);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        QCOMPARE(failed.count(), 0);
        QVERIFY(!loader.isLoading());
        const auto doc = loaded.at(0).at(0).value<std::shared_ptr<const Document>>();
        QVERIFY(doc);
        QCOMPARE(doc->path, m_compiled.toStdString());
        QVERIFY(progress.count() >= 2);
        int last = -1;
        for (const QList<QVariant> &p : progress) {
            const int percent = p.at(0).toInt();
            QVERIFY2(percent >= last, qPrintable(QStringLiteral("%1 after %2").arg(percent).arg(last)));
            QVERIFY(percent >= 0 && percent <= 100);
            QVERIFY(!p.at(1).toString().isEmpty());
            last = percent;
        }
        QCOMPARE(last, 100);
        // Throttled: never the same report twice in a row.
        for (qsizetype i = 1; i < progress.size(); ++i)
            QVERIFY(progress.at(i) != progress.at(i - 1));
    }

    void loaderReportsFailure()
    {
        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        QSignalSpy failed(&loader, &DocumentLoader::failed);
        const QString missing = m_dir.filePath(QStringLiteral("nowhere.fstrace"));
        loader.start(missing);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QCOMPARE(failed.at(0).at(0).toString(), missing);
        QVERIFY(failed.at(0).at(1).toString().contains(QLatin1String("nowhere.fstrace no such file")));
        QCOMPARE(loaded.count(), 0);
    }

    void cancelYieldsCancelledAndNoDocument()
    {
        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        QSignalSpy cancelled(&loader, &DocumentLoader::cancelled);
        QSignalSpy failed(&loader, &DocumentLoader::failed);
        loader.start(m_compare);
        loader.cancel();
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!loader.isLoading());
        loader.cancel(); // nothing in flight: nothing happens
        QCOMPARE(cancelled.count(), 1);
        // A later job is delivered; the cancelled one never is.
        loader.start(m_compiled);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        QTest::qWait(200);
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.at(0).at(0).value<std::shared_ptr<const Document>>()->path, m_compiled.toStdString());
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(failed.count(), 0);
    }

    void cancelFlagStopsTheSynchronousLoad()
    {
        std::atomic<bool> cancel{true};
        QVERIFY(!loadDocument(m_compiled, {{}, &cancel, {}}));
        // Set during the load: null, never a partial document.
        std::atomic<bool> later{false};
        const LoadProgress control{[&](double f, const QString &) {
                                       if (f > 0.05)
                                           later = true;
                                   },
                                   &later, {}};
        QVERIFY(!loadDocument(m_compiled, control));
    }

    void secondStartDropsTheFirstResult()
    {
        DocumentLoader loader;
        QSignalSpy loaded(&loader, &DocumentLoader::loaded);
        QSignalSpy failed(&loader, &DocumentLoader::failed);
        QSignalSpy cancelled(&loader, &DocumentLoader::cancelled);
        const int first = loader.start(m_eager); // superseded at once: its document must never arrive
        const int second = loader.start(m_compare);
        QVERIFY(second != first);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        QTest::qWait(200);
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.at(0).at(0).value<std::shared_ptr<const Document>>()->path, m_compare.toStdString());
        QCOMPARE(failed.count(), 0);
        QCOMPARE(cancelled.count(), 0);
    }

    void destroyingTheLoaderWhileItRunsIsSafe()
    {
        auto loader = std::make_unique<DocumentLoader>();
        QSignalSpy loaded(loader.get(), &DocumentLoader::loaded);
        loader->start(m_compare);
        loader->start(m_compiled);
        loader.reset(); // cancels, waits for both workers
        QCoreApplication::processEvents();
        QCOMPARE(loaded.count(), 0);
    }

    void demoHeadlessWritesTheTrace()
    {
        QTemporaryDir out;
        QString err;
        const int rc = runFusescope({QStringLiteral("demo"), QStringLiteral("--headless"), QStringLiteral("--out"), out.path()},
                                    &err, 300000);
        QVERIFY2(rc == 0, qPrintable(err));
        const QString trace = out.filePath(QStringLiteral("demo.fstrace"));
        QVERIFY(QFileInfo::exists(trace));
        const std::shared_ptr<const Document> doc = loadDocument(trace);
        QVERIFY(doc && doc->profiled);
        QVERIFY2(QString::fromStdString(doc->title).contains(QLatin1String("encoder, run 1 'compiled'")), doc->title.c_str());
        // Every view has something to show: memory was recorded, and there are two runs to compare.
        QVERIFY(doc->stats && !doc->stats->memory.empty() && doc->stats->memory.front().peakAllocated > 0);
        QVERIFY(doc->baseline);
        for (const char *view : {"graph-captured.png", "timeline.png", "memory.png", "compare.png", "stats.png"})
            QVERIFY2(QFileInfo::exists(out.filePath(QString::fromLatin1(view))), view);
    }

    void demoUsageErrors()
    {
        QCOMPARE(runFusescope({QStringLiteral("demo"), QStringLiteral("extra")}), 2);
        QCOMPARE(runFusescope({QStringLiteral("demo"), QStringLiteral("--bogus")}), 2);
        QCOMPARE(runFusescope({QStringLiteral("demo"), QStringLiteral("--help")}), 0);
    }

    // A model shows its captured graph while it compiles: the preview comes
    // first, holds only the capture stage, and the full document shares its
    // parsed graph, so the view drawing it is kept.
    void previewComesFirstAndIsShared_data()
    {
        QTest::addColumn<bool>("onnx");
        QTest::newRow("trace") << false;
        QTest::newRow("onnx") << true;
    }

    void previewComesFirstAndIsShared()
    {
        QFETCH(bool, onnx);
        if (onnx) {
            if (const QString why = onnxSkipReason(kSqueezenet); !why.isEmpty())
                QSKIP(qPrintable(why));
        }
        std::vector<std::shared_ptr<const Document>> previews;
        LoadProgress control;
        control.preview = [&](std::shared_ptr<const Document> p) { previews.push_back(std::move(p)); };
        const std::shared_ptr<const Document> doc = loadDocument(onnx ? kSqueezenet : m_compiled, control);
        QVERIFY(doc && doc->complete);
        QCOMPARE(previews.size(), size_t(1));
        const Document &preview = *previews.front();
        QVERIFY(!preview.complete);
        QCOMPARE(preview.stages.size(), size_t(1));
        QCOMPARE(preview.stages.front().name, std::string("capture"));
        QCOMPARE(preview.graphs.front(), doc->graphs.at(size_t(doc->stageIndex("capture"))));
        QCOMPARE(preview.profiled, doc->profiled);
        QVERIFY(doc->stages.size() > 1);
    }
};

QTEST_GUILESS_MAIN(TestDocument)
#include "tst_app_document.moc"
