// `fusescope report FILE`: the statistics of every run of a trace — top ops,
// kernels, copies, memory peak, compile stages — as aligned tables or JSON.
#include "app/cmdline.h"
#include "app/commands.h"
#include "app/tracefile.h"

#include "profiler/hints.h"
#include "profiler/statistics.h"

#include <QJsonArray>
#include <QJsonObject>

#include <iostream>
#include <limits>

namespace fusescope {
namespace {

using profiler::Run;
using profiler::RunStatistics;
using profiler::Trace;

constexpr size_t kTopRows = 15;

QString ms(double ns) { return QString::number(ns / 1e6, 'f', 3); }
QString us(double ns) { return QString::number(ns / 1e3, 'f', 1); }
QString mib(double bytes) { return QString::number(bytes / (1024.0 * 1024.0), 'f', 2); }
QString qs(const std::string &s) { return QString::fromStdString(s); }

QString cell(const QString &s, int width) { return width < 0 ? s.leftJustified(-width) : s.rightJustified(width); }

void printRow(const QStringList &cells, const std::vector<int> &widths)
{
    QString line = QStringLiteral("  ");
    for (qsizetype i = 0; i < cells.size(); ++i)
        line += cell(cells[i], widths[static_cast<size_t>(i)]) + QStringLiteral(" ");
    printLine(line.trimmed().isEmpty() ? QString() : line.chopped(1));
}

void printOps(const RunStatistics &s)
{
    const std::vector<int> w{-40, 7, 11, 11, 10, 6};
    printRow({QStringLiteral("op"), QStringLiteral("calls"), QStringLiteral("total ms"), QStringLiteral("self ms"),
              QStringLiteral("avg us"), QStringLiteral("%")}, w);
    for (size_t i = 0; i < std::min(kTopRows, s.ops.size()); ++i) {
        const profiler::RangeStats &o = s.ops[i];
        printRow({qs(o.name), QString::number(o.time.calls), ms(double(o.time.totalNs)), ms(double(o.selfNs)),
                  us(o.time.avgNs()), QString::number(o.percent, 'f', 1)}, w);
    }
}

void printKernels(const RunStatistics &s)
{
    const std::vector<int> w{-40, 7, 11, 11, 10, 9, 8};
    printRow({QStringLiteral("kernel"), QStringLiteral("calls"), QStringLiteral("total ms"), QStringLiteral("self ms"),
              QStringLiteral("avg us"), QStringLiteral("GFLOP/s"), QStringLiteral("GB/s")}, w);
    for (size_t i = 0; i < std::min(kTopRows, s.kernels.size()); ++i) {
        const profiler::KernelStats &k = s.kernels[i];
        printRow({qs(k.name), QString::number(k.time.calls), ms(double(k.time.totalNs)), ms(double(k.selfNs)), us(k.time.avgNs()),
                  QString::number(k.gflopsPerSecond(), 'f', 1), QString::number(k.gigabytesPerSecond(), 'f', 1)}, w);
    }
}

void printCopiesAndMemory(const RunStatistics &s)
{
    if (s.copies.empty())
        printLine(QStringLiteral("  copies: none recorded"));
    for (const profiler::CopyStats &c : s.copies)
        printLine(QStringLiteral("  copies %1: %2 calls, %3 MiB, %4 ms").arg(QString::fromUtf8(profiler::copyKindName(c.kind)))
                      .arg(c.transfer.calls).arg(mib(c.transfer.bytes), ms(double(c.transfer.totalNs))));
    if (s.memsets.calls)
        printLine(QStringLiteral("  memsets: %1 calls, %2 MiB, %3 ms")
                      .arg(s.memsets.calls).arg(mib(s.memsets.bytes), ms(double(s.memsets.totalNs))));
    if (s.memory.empty())
        printLine(QStringLiteral("  memory: not recorded (profile with --profile-memory)"));
    for (const profiler::MemoryStats &m : s.memory)
        printLine(QStringLiteral("  memory %1: peak allocated %2 MiB at %3 ms, peak reserved %4 MiB")
                      .arg(m.device < 0 ? QStringLiteral("cpu") : QStringLiteral("cuda:%1").arg(m.device))
                      .arg(mib(double(m.peakAllocated)), ms(double(m.peakAllocatedTime)), mib(double(m.peakReserved))));
}

void printStages(const Run &run)
{
    if (run.stages.empty())
        return;
    printLine(QStringLiteral("  compile stages:"));
    for (const compiler::CompileStage &st : run.stages)
        printLine(QStringLiteral("    %1 %2 ms  %3 nodes  %4 kernels").arg(qs(st.name), -12)
                      .arg(st.durationMs, 9, 'f', 2).arg(st.stats.nodes, 5).arg(st.stats.kernels, 5));
}

void printHints(const std::vector<profiler::Hint> &hints)
{
    if (hints.empty()) {
        printLine(QStringLiteral("  hints: none (no rule's threshold was crossed)"));
        return;
    }
    printLine(QStringLiteral("  hints, by estimated saving:"));
    for (size_t i = 0; i < hints.size(); ++i) {
        const profiler::Hint &h = hints[i];
        printLine(QStringLiteral("    %1. [%2] %3: %4 (saves ~%5 ms)").arg(i + 1)
                      .arg(QString::fromUtf8(profiler::hintSeverityName(h.severity)), qs(h.rule), qs(h.message))
                      .arg(h.savingUs / 1e3, 0, 'f', 3));
        printLine(QStringLiteral("       fix: ") + qs(h.fix));
    }
}

QJsonArray hintsJson(const std::vector<profiler::Hint> &hints)
{
    QJsonArray out;
    for (const profiler::Hint &h : hints) {
        QJsonArray events, nodes;
        for (profiler::EventId e : h.events)
            events.append(qint64(e.value));
        for (int n : h.nodes)
            nodes.append(n);
        out.append(QJsonObject{{QStringLiteral("rule"), qs(h.rule)},
                               {QStringLiteral("severity"), QString::fromUtf8(profiler::hintSeverityName(h.severity))},
                               {QStringLiteral("message"), qs(h.message)},
                               {QStringLiteral("fix"), qs(h.fix)},
                               {QStringLiteral("saving_us"), h.savingUs},
                               {QStringLiteral("evidence"), QJsonObject{{QStringLiteral("events"), events},
                                                                        {QStringLiteral("nodes"), nodes}}}});
    }
    return out;
}

void printRun(size_t index, const Run &run, const RunStatistics &s, const std::vector<profiler::Hint> &hints)
{
    printLine(QStringLiteral("run %1 '%2' (%3, %4): %5 step(s), %6 ms, %7 events%8").arg(index)
                  .arg(qs(run.info.name), qs(run.info.mode), qs(run.info.model)).arg(run.summary.steps)
                  .arg(ms(double(run.summary.durationNs))).arg(run.events.size())
                  .arg(run.summary.complete ? QString() : QStringLiteral(" — INCOMPLETE")));
    printOps(s);
    printLine(QString());
    printKernels(s);
    printLine(QString());
    printCopiesAndMemory(s);
    printStages(run);
    for (const std::string &w : s.warnings)
        printLine(QStringLiteral("  warning: ") + qs(w));
    printHints(hints);
}

QJsonObject runJson(const Run &run, const RunStatistics &s, const std::vector<profiler::Hint> &hints)
{
    QJsonArray ops, kernels, copies;
    for (const profiler::RangeStats &o : s.ops)
        ops.append(QJsonObject{{QStringLiteral("name"), qs(o.name)}, {QStringLiteral("calls"), qint64(o.time.calls)},
                               {QStringLiteral("total_us"), double(o.time.totalNs) / 1e3},
                               {QStringLiteral("self_us"), double(o.selfNs) / 1e3}});
    for (const profiler::KernelStats &k : s.kernels)
        kernels.append(QJsonObject{{QStringLiteral("name"), qs(k.name)}, {QStringLiteral("calls"), qint64(k.time.calls)},
                                   {QStringLiteral("total_us"), double(k.time.totalNs) / 1e3},
                                   {QStringLiteral("self_us"), double(k.selfNs) / 1e3},
                                   {QStringLiteral("device"), k.device < 0 ? QStringLiteral("cpu") : QStringLiteral("cuda:%1").arg(k.device)}});
    for (const profiler::CopyStats &c : s.copies)
        copies.append(QJsonObject{{QStringLiteral("kind"), QString::fromUtf8(profiler::copyKindName(c.kind))},
                                  {QStringLiteral("calls"), qint64(c.transfer.calls)}, {QStringLiteral("bytes"), c.transfer.bytes},
                                  {QStringLiteral("total_us"), double(c.transfer.totalNs) / 1e3}});
    qint64 peak = 0;
    for (const profiler::MemoryStats &m : s.memory)
        peak = std::max<qint64>(peak, m.peakAllocated);
    return {{QStringLiteral("name"), qs(run.info.name)}, {QStringLiteral("incomplete"), !run.summary.complete},
            {QStringLiteral("ops"), ops}, {QStringLiteral("kernels"), kernels}, {QStringLiteral("memcpy"), copies},
            {QStringLiteral("memset"), QJsonObject{{QStringLiteral("calls"), qint64(s.memsets.calls)},
                                                   {QStringLiteral("bytes"), s.memsets.bytes},
                                                   {QStringLiteral("total_us"), double(s.memsets.totalNs) / 1e3}}},
            {QStringLiteral("memory"), QJsonObject{{QStringLiteral("peak_bytes"), s.memory.empty() ? QJsonValue() : QJsonValue(peak)}}},
            {QStringLiteral("hints"), hintsJson(hints)}};
}

} // namespace

int runReportCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("report"), QStringLiteral("FILE [FILE…] [--json] [--run N]"),
                    QStringLiteral("Statistics and optimization hints of a trace: top ops, kernels, copies, memory peak,\n"
                                   "compile stages and the hints ranked by estimated saving, per run.\n"
                                   "FILE: a Fusescope trace, a PyTorch profiler / Kineto JSON (.json, .json.gz) or an\n"
                                   "Nsight Systems SQLite export. Several Kineto files are the ranks of one run."));
    QCommandLineParser &p = cmd.parser();
    p.addOptions({{QStringLiteral("json"), QStringLiteral("One JSON document on stdout.")},
                  {QStringLiteral("run"), QStringLiteral("Only run N (0 = the first)."), QStringLiteral("N")}});
    if (auto exit = cmd.parse(args, 1, std::numeric_limits<int>::max()))
        return *exit;
    const auto only = cmd.intOption(QStringLiteral("run"), -1, 0);
    if (!only)
        return ExitUsage;
    const QString file = p.positionalArguments().join(QStringLiteral(", "));
    Trace trace;
    try {
        trace = readTraceFiles(p.positionalArguments());
    } catch (const Error &e) {
        return cmd.badInput(QString::fromUtf8(e.what()));
    }
    if (*only >= 0 && static_cast<size_t>(*only) >= trace.runs.size())
        return cmd.usageError(QStringLiteral("%1 has %2 run(s); --run %3 does not exist").arg(file).arg(trace.runs.size()).arg(*only));
    QJsonArray runs;
    for (size_t i = 0; i < trace.runs.size(); ++i) {
        if (*only >= 0 && static_cast<size_t>(*only) != i)
            continue;
        const Run &run = trace.runs[i];
        if (!run.summary.complete)
            std::cerr << "fusescope report: warning: " << file.toStdString() << ": run " << i << " '" << run.info.name
                      << "' is incomplete (its capture was cut short); the figures cover what was recorded\n";
        const RunStatistics s = profiler::computeStatistics(trace, run);
        const std::vector<profiler::Hint> hints = profiler::computeHints(trace, run, s);
        if (p.isSet(QStringLiteral("json")))
            runs.append(runJson(run, s, hints));
        else
            printRun(i, run, s, hints);
    }
    if (p.isSet(QStringLiteral("json")))
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("source"), file}, {QStringLiteral("runs"), runs}}));
    return ExitOk;
}

} // namespace fusescope
