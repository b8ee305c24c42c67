// `fusescope run MODEL`: runs a zoo model eagerly or compiled and reports the
// median time and the outputs.
#include "app/cmdline.h"
#include "app/commands.h"

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

// Options that belong to later parts of the contract refuse with a reason.
std::optional<int> refusePlanned(CommandLine &cmd, const QString &model)
{
    QCommandLineParser &p = cmd.parser();
    if (p.isSet(QStringLiteral("input-dir")) || p.isSet(QStringLiteral("output-dir")))
        return cmd.usageError(QStringLiteral("--input-dir/--output-dir: ONNX tensor files are not supported yet in this version"));
    if (model.endsWith(QLatin1String(".onnx"), Qt::CaseInsensitive))
        return cmd.usageError(QStringLiteral("%1: ONNX import is not built yet in this version").arg(model));
    const QString device = p.value(QStringLiteral("device"));
    if (device == QLatin1String("cuda"))
        return cmd.usageError(QStringLiteral("--device cuda: the CUDA backend is not built yet in this version"));
    if (device != QLatin1String("cpu"))
        return cmd.usageError(QStringLiteral("--device must be cpu or cuda, got '%1'").arg(device));
    return std::nullopt;
}

} // namespace

int runRunCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("run"),
                    QStringLiteral("MODEL [--compile] [--device cpu|cuda] [--input-dir D] [--output-dir D] [--repeat N] [--json]"),
                    QStringLiteral("Runs a zoo model (see --list) or an .onnx file once, or N times reporting the median."));
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
    if (auto exit = refusePlanned(cmd, model))
        return *exit;
    const auto repeat = cmd.intOption(QStringLiteral("repeat"), 1, 1);
    if (!repeat)
        return ExitUsage;

    zoo::Instance instance;
    try {
        instance = zoo::create(model.toStdString(), 0);
    } catch (const Error &e) {
        return cmd.badInput(QString::fromUtf8(e.what()));
    }
    const bool compiled = p.isSet(QStringLiteral("compile"));
    Tensor output;
    double medianMs = 0, compileMs = 0;
    try {
        std::function<Tensor()> call = [&] { return (*instance.model)(instance.inputs); };
        std::optional<compiler::CompiledFunction> fn;
        if (compiled) {
            fn.emplace(compiler::compile(instance.model));
            (*fn)(instance.inputs); // captures and compiles
            compileMs = fn->lastCompileMs();
            call = [&] { return (*fn)(instance.inputs).front(); };
        }
        medianMs = medianMilliseconds(*repeat, [&] { output = call(); });
    } catch (const Error &e) {
        return cmd.badInput(QStringLiteral("%1: %2").arg(model, QString::fromUtf8(e.what())));
    }
    const QString mode = compiled ? QStringLiteral("compiled") : QStringLiteral("eager");
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject out{{QStringLiteral("name"), QStringLiteral("output_0")},
                              {QStringLiteral("dtype"), QString::fromUtf8(dtypeName(output.dtype()))},
                              {QStringLiteral("shape"), shapeJson(output.sizes())}};
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("model"), model},
                                            {QStringLiteral("mode"), mode},
                                            {QStringLiteral("device"), QStringLiteral("cpu")},
                                            {QStringLiteral("median_ms"), medianMs},
                                            {QStringLiteral("compile_ms"), compiled ? QJsonValue(compileMs) : QJsonValue()},
                                            {QStringLiteral("outputs"), QJsonArray{out}}}));
        return ExitOk;
    }
    printLine(QStringLiteral("%1 (%2, cpu): median %3 ms over %4 run(s)").arg(model, mode).arg(medianMs, 0, 'f', 3).arg(*repeat));
    if (compiled)
        printLine(QStringLiteral("compile: %1 ms").arg(compileMs, 0, 'f', 1));
    printLine(QStringLiteral("output_0: %1 %2").arg(QString::fromUtf8(dtypeName(output.dtype())),
                                                    QString::fromStdString(shapeStr(output.sizes()))));
    return ExitOk;
}

} // namespace fusescope
