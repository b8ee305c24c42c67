// `fusescope run MODEL`: runs a zoo model eagerly or compiled and reports the
// median time and the outputs.
#include "app/cmdline.h"
#include "app/commands.h"
#include "app/runnable.h"

#include "core/compiler/compile.h"
#include "core/runtime/machine.h"
#include "core/zoo/zoo.h"

#include <QJsonArray>
#include <QJsonObject>

namespace fusescope {
namespace {

QJsonArray shapeJson(const Shape &shape)
{
    QJsonArray a;
    for (int64_t s : shape)
        a.append(qint64(s));
    return a;
}

void listModels()
{
    for (const std::string &name : zoo::modelNames()) {
        const zoo::ModelInfo info = zoo::info(name);
        printLine(QStringLiteral("%1 %2").arg(QString::fromStdString(name), -12).arg(QString::fromStdString(info.description)));
    }
}

QJsonArray outputsJson(const Runnable &r, const TensorList &outputs)
{
    QJsonArray list;
    for (size_t i = 0; i < outputs.size(); ++i)
        list.append(QJsonObject{{QStringLiteral("name"), QString::fromStdString(r.outputNames.at(i))},
                                {QStringLiteral("dtype"), QString::fromUtf8(dtypeName(outputs[i].dtype()))},
                                {QStringLiteral("shape"), shapeJson(outputs[i].sizes())}});
    return list;
}

void printOutputs(const Runnable &r, const TensorList &outputs)
{
    for (size_t i = 0; i < outputs.size(); ++i)
        printLine(QStringLiteral("%1: %2 %3").arg(QString::fromStdString(r.outputNames.at(i)),
                                                  QString::fromUtf8(dtypeName(outputs[i].dtype())),
                                                  QString::fromStdString(shapeStr(outputs[i].sizes()))));
}

} // namespace

int runRunCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("run"),
                    QStringLiteral("MODEL [--compile] [--device cpu|cuda] [--input-dir D] [--output-dir D] [--repeat N] [--json]"),
                    QStringLiteral("Runs a zoo model (see --list) or an .onnx file once, or N times reporting the median.\n"
                                   "Inputs are random with a fixed seed unless --input-dir holds input_0.pb ..."));
    QCommandLineParser &p = cmd.parser();
    p.addOptions({{QStringLiteral("list"), QStringLiteral("List the zoo's models.")},
                  {QStringLiteral("compile"), QStringLiteral("Run through the compiler.")},
                  {QStringLiteral("device"), QStringLiteral("cpu or cuda."), QStringLiteral("DEVICE"), QStringLiteral("cpu")},
                  {QStringLiteral("input-dir"), QStringLiteral("Folder of input_0.pb ..."), QStringLiteral("D")},
                  {QStringLiteral("output-dir"), QStringLiteral("Folder for output_0.pb ..."), QStringLiteral("D")},
                  {QStringLiteral("repeat"), QStringLiteral("Timed runs (median reported)."), QStringLiteral("N"), QStringLiteral("1")},
                  {QStringLiteral("json"), QStringLiteral("One JSON document on stdout.")}});
    if (auto exit = cmd.parse(args, 0, 1))
        return *exit;
    if (p.isSet(QStringLiteral("list"))) {
        listModels();
        return ExitOk;
    }
    if (p.positionalArguments().isEmpty())
        return cmd.usageError(QStringLiteral("missing MODEL (fusescope run --list shows the zoo)"));
    const QString model = p.positionalArguments().front();
    if (auto exit = cmd.refuseDevice())
        return *exit;
    const auto repeat = cmd.intOption(QStringLiteral("repeat"), 1, 1);
    if (!repeat)
        return ExitUsage;
    const bool compiled = p.isSet(QStringLiteral("compile"));
    TensorList outputs;
    double medianMs = 0, compileMs = 0;
    Runnable r;
    try {
        r = loadRunnable(model, p.value(QStringLiteral("input-dir")));
        std::function<TensorList()> call = [&] { return r.fn(r.inputs); };
        std::optional<compiler::CompiledFunction> fn;
        if (compiled) {
            fn.emplace(compiler::compile(r.fn, r.parameters));
            (*fn)(r.inputs); // captures and compiles
            compileMs = fn->lastCompileMs();
            call = [&] { return (*fn)(r.inputs); };
        }
        // One run means one call; more are timed after a warm-up.
        if (*repeat == 1)
            medianMs = medianMilliseconds(1, [&] { outputs = call(); }, false);
        else
            medianMs = medianMilliseconds(*repeat, [&] { outputs = call(); });
        if (p.isSet(QStringLiteral("output-dir")))
            writeOutputs(p.value(QStringLiteral("output-dir")), r, outputs);
    } catch (const Error &e) {
        const QString what = QString::fromUtf8(e.what());
        return cmd.badInput(what.startsWith(model) ? what : QStringLiteral("%1: %2").arg(model, what));
    }
    const QString mode = compiled ? QStringLiteral("compiled") : QStringLiteral("eager");
    if (p.isSet(QStringLiteral("json"))) {
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("model"), model},
                                            {QStringLiteral("mode"), mode},
                                            {QStringLiteral("device"), QStringLiteral("cpu")},
                                            {QStringLiteral("median_ms"), medianMs},
                                            {QStringLiteral("compile_ms"), compiled ? QJsonValue(compileMs) : QJsonValue()},
                                            {QStringLiteral("outputs"), outputsJson(r, outputs)}}));
        return ExitOk;
    }
    printLine(QStringLiteral("%1 (%2, cpu): median %3 ms over %4 run(s)").arg(model, mode).arg(medianMs, 0, 'f', 3).arg(*repeat));
    if (compiled)
        printLine(QStringLiteral("compile: %1 ms").arg(compileMs, 0, 'f', 1));
    printOutputs(r, outputs);
    return ExitOk;
}

} // namespace fusescope
