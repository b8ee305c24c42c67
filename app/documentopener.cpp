#include "app/documentopener.h"

#include "core/compiler/graph_json.h"
#include "app/runnable.h"
#include "core/compiler/compile.h"
#include "core/compiler/graph_json.h"
#include "profiler/importer.h"
#include "profiler/statistics.h"
#include "profiler/traceformat.h"
#include "profiler/tracereader.h"

#include <QCoreApplication>
#include <QFileInfo>

#include <algorithm>
#include <chrono>
#include <thread>

namespace fusescope {
namespace {

using profiler::RunListing;

// Thrown between steps when the caller set the cancel flag; loadDocument
// turns it into a null result, so it never escapes.
struct Cancelled {};

QString tr(const char *text)
{
    return QCoreApplication::translate("fusescope", text);
}

std::string runLabel(int index, const std::string &name)
{
    return "run " + std::to_string(index) + " '" + name + "'";
}

// One load: the file's name for messages, progress and the cancel flag.
class Load
{
public:
    Load(const QStringList &paths, const LoadProgress &control)
        : path(paths.value(0))
        , file(path.toStdString())
        , name(QFileInfo(path).fileName().isEmpty() ? file : QFileInfo(path).fileName().toStdString())
        , m_control(control)
    {
        for (const QString &p : paths)
            files.push_back(p.toStdString());
    }

    // Never throws: the trace reader calls it too.
    void report(double fraction, const char *what) const
    {
        if (m_control.progress)
            m_control.progress(std::clamp(fraction, 0.0, 1.0), tr(what));
    }
    bool cancelRequested() const { return m_control.cancel && m_control.cancel->load(std::memory_order_relaxed); }
    void checkCancel() const
    {
        if (cancelRequested())
            throw Cancelled{};
    }
    const std::atomic<bool> *cancelFlag() const { return m_control.cancel; }
    // Shows the capture stage before the rest is parsed (or compiled); its
    // graph is kept in `doc` so parseGraphs does not parse it again.
    void preview(Document &doc, const std::string &where) const
    {
        const int capture = doc.stageIndex("capture");
        if (!m_control.preview || capture < 0)
            return;
        std::shared_ptr<const StageGraph> graph;
        try {
            graph = StageGraph::fromStage(doc.stages[size_t(capture)]);
        } catch (const std::exception &e) {
            throw Error(name + ": " + where + "stage " + std::to_string(capture) + ", " + e.what());
        }
        doc.graphs.assign(doc.stages.size(), nullptr);
        doc.graphs[size_t(capture)] = graph;
        auto first = std::make_shared<Document>(doc);
        first->stages = {doc.stages[size_t(capture)]};
        first->graphs = {graph};
        first->path = file;
        first->complete = false;
        m_control.preview(std::move(first));
    }

    const QString path;
    const std::string file; // the first of `files`
    const std::string name; // the first file's name, for messages
    std::vector<std::string> files; // several: the per-rank traces of one run

private:
    const LoadProgress &m_control;
};

// Every stage's graph, parsed in parallel: the stages are independent and
// parsing is most of what opening a large model costs once it is compiled.
// The loading thread takes part and reports progress from `from` to `to`.
void parseGraphs(const Load &load, Document &doc, const std::string &where, double from, double to)
{
    const size_t n = doc.stages.size();
    // A graph the preview parsed already is kept, so the views showing it stay.
    std::vector<std::shared_ptr<const StageGraph>> graphs = doc.graphs;
    graphs.resize(n);
    std::vector<std::string> errors(n);
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::atomic<bool> stop{false};
    auto work = [&](bool reporting) {
        for (size_t i = next++; i < n && !stop; i = next++) {
            try {
                if (!graphs[i])
                    graphs[i] = StageGraph::fromStage(doc.stages[i]);
            } catch (const std::exception &e) {
                errors[i] = e.what();
                stop = true;
            }
            ++done;
            if (reporting) {
                load.report(from + (to - from) * double(done) / double(n), QT_TRANSLATE_NOOP("fusescope", "parsing graphs"));
                stop = stop || load.cancelRequested();
            }
        }
    };
    load.report(from, QT_TRANSLATE_NOOP("fusescope", "parsing graphs"));
    const size_t helpers = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency())) - (n > 0 ? 1 : 0);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < helpers; ++t)
        threads.emplace_back(work, false);
    work(true);
    for (std::thread &t : threads)
        t.join();
    load.checkCancel();
    for (size_t i = 0; i < n; ++i) {
        if (!errors[i].empty())
            throw Error(load.name + ": " + where + "stage " + std::to_string(i) + " (segment " +
                        std::to_string(doc.stages[i].segment) + "), " + errors[i]);
    }
    doc.graphs = std::move(graphs);
}

// --- Fusescope traces -----------------------------------------------------------------

// The first run that holds compile stages, with them; else the first run,
// which the timeline shows on its own.
int pickRun(const Load &load, profiler::TraceReader &reader, profiler::CompileStages &stages)
{
    if (reader.runs().empty())
        throw Error(load.name + ": holds no run");
    for (size_t i = 0; i < reader.runs().size(); ++i) {
        load.checkCancel();
        stages = reader.compileStages(int(i));
        if (!stages.empty())
            return int(i);
    }
    return 0;
}

void addRunNotes(Document &doc, const std::vector<RunListing> &runs, int chosen)
{
    const RunListing &run = runs[size_t(chosen)];
    if (runs.size() > 1) {
        std::string others;
        for (size_t i = 0; i < runs.size(); ++i) {
            if (int(i) != chosen)
                others += (others.empty() ? "" : ", ") + runLabel(int(i), runs[i].info.name);
        }
        doc.notes.push_back("showing " + runLabel(chosen, run.info.name) +
                            (doc.hasGraphs() ? ", the first run with compile stages" : "") + "; the file also holds " + others);
    }
    if (!run.summary.complete)
        doc.notes.push_back(runLabel(chosen, run.info.name) +
                            " was cut short (its writer stopped before the run ended); its times cover what was recorded");
    if (run.summary.droppedEvents > 0)
        doc.notes.push_back(runLabel(chosen, run.info.name) + " lost " + std::to_string(run.summary.droppedEvents) +
                            " events to a full buffer; its times are too low");
}

// The run's events (for the timeline) and its measured times per captured
// node and per fused kernel.
void loadRunEvents(const Load &load, Document &doc, profiler::TraceReader &reader, int run)
{
    auto trace = std::make_shared<profiler::Trace>();
    const profiler::LoadControl control{
        [&](double f) { load.report(0.05 + 0.3 * f, QT_TRANSLATE_NOOP("fusescope", "reading events")); }, load.cancelFlag()};
    if (!reader.loadRun(run, *trace, control))
        throw Cancelled{};
    load.checkCancel();
    load.report(0.35, QT_TRANSLATE_NOOP("fusescope", "computing statistics"));
    doc.profiled = trace->runs.back().summary.events > 0 || !trace->runs.back().events.empty();
    setRecordedRun(doc, std::move(trace));
    for (const profiler::NodeStats &n : doc.stats->nodes)
        doc.nodeTimeNs[n.id] += n.timeNs;
    for (const profiler::KernelStats &k : doc.stats->kernels)
        doc.kernelTimeNs[k.name] += double(k.time.totalNs);
    for (const std::string &w : doc.stats->warnings)
        doc.notes.push_back(w);
}

// The eager run a compiled run is compared with: the nearest one before it, else after it; -1 when none.
int eagerCounterpart(const std::vector<RunListing> &runs, int compiled)
{
    if (runs[size_t(compiled)].info.mode != "compiled")
        return -1;
    int best = -1;
    for (int i = 0; i < int(runs.size()); ++i) {
        if (runs[size_t(i)].info.mode == "eager" && (best < 0 || i < compiled))
            best = i;
    }
    return best;
}

// The eager run of a `--compare` file, for the Compare view: events and statistics.
void loadBaseline(const Load &load, Document &doc, profiler::TraceReader &reader, int run)
{
    const int eager = eagerCounterpart(reader.runs(), run);
    if (eager < 0)
        return;
    load.report(0.35, QT_TRANSLATE_NOOP("fusescope", "reading the eager run"));
    auto trace = std::make_shared<profiler::Trace>();
    if (!reader.loadRun(eager, *trace, {{}, load.cancelFlag()}))
        throw Cancelled{};
    auto baseline = std::make_shared<Document>();
    baseline->path = load.file;
    baseline->title = runLabel(eager, reader.runs()[size_t(eager)].info.name);
    baseline->run = eager;
    setRecordedRun(*baseline, std::move(trace), /*withHints=*/false);
    doc.baseline = std::move(baseline);
}

std::shared_ptr<Document> loadTrace(const Load &load)
{
    load.report(0, QT_TRANSLATE_NOOP("fusescope", "reading trace"));
    profiler::TraceReader reader(load.file); // its errors name the file
    auto doc = std::make_shared<Document>();
    const int run = pickRun(load, reader, doc->stages);
    doc->run = run;
    const RunListing &listing = reader.runs()[size_t(run)];
    doc->title = (listing.info.model.empty() ? load.name : listing.info.model) + ", " + runLabel(run, listing.info.name);
    addRunNotes(*doc, reader.runs(), run);
    loadRunEvents(load, *doc, reader, run);
    loadBaseline(load, *doc, reader, run);
    load.preview(*doc, runLabel(run, listing.info.name) + ", ");
    parseGraphs(load, *doc, runLabel(run, listing.info.name) + ", ", 0.4, 1.0);
    return doc;
}

// --- ONNX models ----------------------------------------------------------------------

double msSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The captured graph as its own stage, shown while the model compiles.
void previewCapture(const Load &load, Document &doc, const compiler::Graph &graph, double captureMs)
{
    compiler::CompileStage capture;
    capture.name = "capture";
    capture.graphJson = compiler::graphToJsonText(graph);
    capture.durationMs = captureMs;
    doc.stages = {std::move(capture)};
    load.preview(doc, std::string());
}

// The compiler's own capture snapshot replaces the preview's; the parsed
// graph carries over when the snapshot is the same graph, as it should be.
void keepPreviewGraph(Document &doc, const std::vector<compiler::CompileStage> &stages)
{
    std::shared_ptr<const StageGraph> parsed = doc.graphs.empty() ? nullptr : doc.graphs.front();
    const bool same = parsed && !stages.empty() && stages.front().graphJson == doc.stages.front().graphJson;
    doc.graphs.assign(stages.size(), nullptr);
    if (same)
        doc.graphs.front() = std::move(parsed);
}

// Captured on meta tensors and compiled in interpret mode: the load stage
// then leaves every kernel to the interpreter, so no C++ compiler runs, and
// the compiled function is never called, so none of the model's maths does.
std::shared_ptr<Document> loadOnnx(const Load &load)
{
    load.report(0, QT_TRANSLATE_NOOP("fusescope", "reading model"));
    const Runnable runnable = loadRunnable(load.path); // its errors name the file
    load.checkCancel();
    load.report(0.15, QT_TRANSLATE_NOOP("fusescope", "capturing"));
    // The placeholder names compile() gives, so the graphs read as in a trace.
    std::vector<compiler::CaptureInput> inputs;
    for (size_t i = 0; i < runnable.inputs.size(); ++i) {
        const Tensor &t = runnable.inputs[i];
        inputs.push_back({runnable.inputs.size() == 1 ? "x" : "x" + std::to_string(i), t.sizes(), t.strides(), t.dtype()});
    }
    auto doc = std::make_shared<Document>();
    doc->title = load.name;
    try {
        const auto start = std::chrono::steady_clock::now();
        compiler::Graph graph = compiler::capture(runnable.fn, inputs, runnable.parameters);
        const double captureMs = msSince(start);
        load.checkCancel();
        previewCapture(load, *doc, graph, captureMs);
        load.report(0.3, QT_TRANSLATE_NOOP("fusescope", "compiling"));
        std::vector<compiler::CompileStage> stages = compiler::compileGraph(std::move(graph), captureMs, {.interpret = true}).stages;
        keepPreviewGraph(*doc, stages);
        doc->stages = std::move(stages);
    } catch (const Error &e) {
        throw Error(load.name + ": " + e.what());
    }
    parseGraphs(load, *doc, std::string(), 0.7, 1.0);
    return doc;
}

// --- other tools' traces ---------------------------------------------------------------

// A PyTorch profiler / Kineto trace or an Nsight Systems export: events only,
// so the timeline shows it and the graph views say why they are empty.
std::shared_ptr<Document> loadImported(const Load &load)
{
    load.report(0, QT_TRANSLATE_NOOP("fusescope", "importing trace"));
    profiler::ImportControl control;
    control.progress = [&](uint64_t done, uint64_t total) {
        load.report(total ? 0.9 * double(done) / double(total) : 0.0, QT_TRANSLATE_NOOP("fusescope", "importing trace"));
    };
    control.cancel = load.cancelFlag();
    std::optional<profiler::Trace> trace = profiler::importTraces(load.files, control);
    if (!trace)
        throw Cancelled{};
    auto doc = std::make_shared<Document>();
    doc->title = (load.files.size() > 1 ? std::to_string(load.files.size()) + " files" : load.name) + ", " +
                 trace->runs.front().info.name;
    if (!trace->runs.front().summary.complete)
        doc->notes.push_back(load.name + " is incomplete: its times cover what the file holds");
    load.report(0.9, QT_TRANSLATE_NOOP("fusescope", "computing statistics"));
    setRecordedRun(*doc, std::make_shared<const profiler::Trace>(std::move(*trace)));
    return doc;
}

std::shared_ptr<Document> loadByFormat(const Load &load)
{
    const FormatProbe probe = probeFileFormat(load.file);
    if (!probe.ok())
        throw Error(load.name + " " + probe.error);
    if (load.files.size() > 1 && probe.format != FileFormat::ChromeJson)
        throw Error(load.name + ": several files open together only as the per-rank traces of one PyTorch profiler "
                                "run (Kineto JSON); this one is a " + std::string(fileFormatName(probe.format)));
    std::shared_ptr<Document> doc;
    switch (probe.format) {
    case FileFormat::FsTrace:
        doc = loadTrace(load);
        break;
    case FileFormat::Onnx:
        doc = loadOnnx(load);
        break;
    case FileFormat::ChromeJson:
    case FileFormat::NsysSqlite:
        doc = loadImported(load);
        break;
    default:
        throw Error(load.name + " is a " + fileFormatName(probe.format) + ", which Fusescope does not open");
    }
    doc->path = load.file;
    doc->format = fileFormatName(probe.format);
    return doc;
}

} // namespace

std::shared_ptr<const Document> loadDocument(const QString &path, const LoadProgress &control)
{
    return loadDocument(QStringList{path}, control);
}

std::shared_ptr<const Document> loadDocument(const QStringList &paths, const LoadProgress &control)
{
    if (paths.isEmpty())
        throw Error("no file to open");
    const Load load(paths, control);
    try {
        load.checkCancel();
        std::shared_ptr<const Document> doc = loadByFormat(load);
        load.checkCancel();
        load.report(1, QT_TRANSLATE_NOOP("fusescope", "done"));
        return doc;
    } catch (const Cancelled &) {
        return nullptr;
    } catch (const Error &) {
        throw;
    } catch (const std::exception &e) {
        // Bad input must not crash the window: whatever a reader let slip
        // becomes a message that names the file.
        throw Error(load.name + ": " + e.what());
    }
}

OpenOutcome openDocument(const QString &path)
{
    try {
        return {true, QString(), loadDocument(path)};
    } catch (const Error &e) {
        return {false, QString::fromUtf8(e.what()), nullptr};
    }
}

} // namespace fusescope
