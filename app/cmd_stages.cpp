// `fusescope stages FILE|MODEL`: lists the compile stages of a trace file, or
// of a zoo model or an ONNX file compiled now, or prints one stage's graph
// (text, dot, json) or generated code.
#include "app/cmdline.h"
#include "app/commands.h"
#include "app/runnable.h"
#include "app/tracefile.h"

#include "core/compiler/compile.h"
#include "core/compiler/graph_format.h"
#include "core/compiler/graph_json.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>

#include <nlohmann/json.hpp>

namespace fusescope {
namespace {

using compiler::CompileStage;

std::optional<size_t> findStage(const std::vector<CompileStage> &stages, const QString &which)
{
    bool isNumber = false;
    const int n = which.toInt(&isNumber);
    if (isNumber)
        return n >= 0 && static_cast<size_t>(n) < stages.size() ? std::optional<size_t>(n) : std::nullopt;
    for (size_t i = 0; i < stages.size(); ++i) {
        if (which == QString::fromStdString(stages[i].name))
            return i;
    }
    return std::nullopt;
}

QString stageNameList()
{
    QStringList names;
    for (const std::string &s : compiler::stageNames())
        names << QString::fromStdString(s);
    return names.join(QStringLiteral(", "));
}

QJsonObject statsJson(const compiler::StageStats &s)
{
    return {{QStringLiteral("nodes"), qint64(s.nodes)},
            {QStringLiteral("kernels"), qint64(s.kernels)},
            {QStringLiteral("bytes_moved"), s.bytesMoved},
            {QStringLiteral("planned_peak_bytes"), s.plannedPeak >= 0 ? QJsonValue(qint64(s.plannedPeak)) : QJsonValue()},
            {QStringLiteral("unplanned_peak_bytes"), s.unplannedPeak >= 0 ? QJsonValue(qint64(s.unplannedPeak)) : QJsonValue()}};
}

void printListing(const std::vector<CompileStage> &stages, const QString &format)
{
    if (format == QLatin1String("json")) {
        QJsonArray list;
        for (size_t i = 0; i < stages.size(); ++i)
            list.append(QJsonObject{{QStringLiteral("index"), int(i)},
                                    {QStringLiteral("name"), QString::fromStdString(stages[i].name)},
                                    {QStringLiteral("segment"), stages[i].segment},
                                    {QStringLiteral("duration_ms"), stages[i].durationMs},
                                    {QStringLiteral("stats"), statsJson(stages[i].stats)}});
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("stages"), list}}));
        return;
    }
    printLine(QStringLiteral("#  %1 %2 %3 %4 %5").arg(QStringLiteral("stage"), -12).arg(QStringLiteral("ms"), 10)
                  .arg(QStringLiteral("nodes"), 6).arg(QStringLiteral("kernels"), 8).arg(QStringLiteral("bytes moved"), 14));
    for (size_t i = 0; i < stages.size(); ++i) {
        const CompileStage &s = stages[i];
        if (s.segment > 0 && s.name == "capture")
            printLine(QStringLiteral("-- graph break: segment %1 --").arg(s.segment));
        printLine(QStringLiteral("%1  %2 %3 %4 %5 %6").arg(i).arg(QString::fromStdString(s.name), -12)
                      .arg(s.durationMs, 10, 'f', 2).arg(s.stats.nodes, 6).arg(s.stats.kernels, 8)
                      .arg(s.stats.bytesMoved, 14, 'f', 0));
    }
}

void printStage(const CompileStage &s, const QString &format)
{
    if (format == QLatin1String("json")) {
        nlohmann::json j{{"name", s.name}, {"duration_ms", s.durationMs}, {"log", s.log},
                         {"graph", nlohmann::json::parse(s.graphJson)}};
        if (!s.detailsJson.empty())
            j["details"] = nlohmann::json::parse(s.detailsJson);
        if (!s.code.empty())
            j["code"] = s.code;
        printLine(QString::fromStdString(j.dump()));
        return;
    }
    const compiler::Graph g = compiler::graphFromJsonText(s.graphJson);
    if (format == QLatin1String("dot")) {
        printText(QString::fromStdString(compiler::formatDot(g)));
        return;
    }
    if (s.name == "codegen") {
        printText(QString::fromStdString(s.code));
        return;
    }
    for (const std::string &line : s.log)
        printLine(QStringLiteral("# ") + QString::fromStdString(line));
    printText(QString::fromStdString(compiler::formatCode(g)));
}

// The compile stages of the first run in the file that holds any.
std::vector<CompileStage> stagesOfFile(const QString &path)
{
    profiler::Trace trace = readTraceFile(path);
    for (profiler::Run &run : trace.runs) {
        if (!run.stages.empty())
            return std::move(run.stages);
    }
    throw Error(path.toStdString() + ": no run in this trace holds compile stages (record one with profile --compile)");
}

std::vector<CompileStage> stagesOfModel(const QString &model)
{
    const Runnable r = loadRunnable(model);
    compiler::CompiledFunction fn = compiler::compile(r.fn, r.parameters);
    fn(r.inputs);
    return fn.stages();
}

} // namespace

int runStagesCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("stages"), QStringLiteral("FILE|MODEL [--stage NAME|N] [--format text|dot|json]"),
                    QStringLiteral("Lists the compile stages (name, duration, nodes, kernels) of a trace file recorded with\n"
                                   "profile --compile, or of a zoo model or .onnx file compiled now;\n"
                                   "or prints one stage's graph; --stage codegen prints the generated source."));
    QCommandLineParser &p = cmd.parser();
    p.addOptions({{QStringLiteral("stage"), QStringLiteral("A stage by name or index: ") + stageNameList(), QStringLiteral("NAME|N")},
                  {QStringLiteral("format"), QStringLiteral("text, dot or json."), QStringLiteral("FORMAT"), QStringLiteral("text")}});
    if (auto exit = cmd.parse(args, 1, 1))
        return *exit;
    const QString format = p.value(QStringLiteral("format"));
    if (format != QLatin1String("text") && format != QLatin1String("dot") && format != QLatin1String("json"))
        return cmd.usageError(QStringLiteral("--format must be text, dot or json, got '%1'").arg(format));
    const QString target = p.positionalArguments().front();
    std::vector<CompileStage> stages;
    try {
        // Zoo names have neither dots nor slashes: anything else is a file, present or not.
        const bool isTrace = !isOnnxPath(target) && (QFileInfo::exists(target) || target.contains(QLatin1Char('/')) ||
                                                     target.contains(QLatin1Char('.')));
        stages = isTrace ? stagesOfFile(target) : stagesOfModel(target);
    } catch (const Error &e) {
        return cmd.badInput(QString::fromUtf8(e.what()));
    }
    if (!p.isSet(QStringLiteral("stage"))) {
        if (format == QLatin1String("dot"))
            return cmd.usageError(QStringLiteral("--format dot needs --stage"));
        printListing(stages, format);
        return ExitOk;
    }
    const auto index = findStage(stages, p.value(QStringLiteral("stage")));
    if (!index)
        return cmd.usageError(QStringLiteral("no stage '%1' (stages: %2, or 0-%3)")
                                  .arg(p.value(QStringLiteral("stage")), stageNameList()).arg(stages.size() - 1));
    printStage(stages[*index], format);
    return ExitOk;
}

} // namespace fusescope
