// `fusescope bench`: the standard workloads of DESIGN.md, timed side by side.
#include "app/cmdline.h"
#include "app/commands.h"

#include "core/runtime/machine.h"
#include "core/zoo/zoo.h"

#include <QJsonArray>
#include <QJsonObject>

namespace fusescope {
namespace {

QJsonObject machineJson()
{
    const MachineInfo m = machineInfo();
    return {{QStringLiteral("cpu"), QString::fromStdString(m.cpuModel)},
            {QStringLiteral("logical_cores"), m.logicalCores},
            {QStringLiteral("threads"), m.threads},
            {QStringLiteral("blas"), QString::fromStdString(m.blas)}};
}

std::optional<QStringList> selectedWorkloads(CommandLine &cmd)
{
    QStringList known;
    for (const std::string &n : zoo::modelNames())
        known << QString::fromStdString(n);
    const QStringList asked = cmd.parser().values(QStringLiteral("workload"));
    for (const QString &w : asked) {
        if (!known.contains(w)) {
            cmd.badInput(QStringLiteral("unknown workload '%1' (known: %2)").arg(w, known.join(QStringLiteral(", "))));
            return std::nullopt;
        }
    }
    return asked.isEmpty() ? known : asked;
}

} // namespace

int runBenchCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("bench"), QStringLiteral("[--workload NAME]... [--mode eager|compiled|both] [--repeat N] [--json]"),
                    QStringLiteral("Times the standard workloads (median of N runs after a warm-up)."));
    QCommandLineParser &p = cmd.parser();
    p.addOptions({{QStringLiteral("workload"), QStringLiteral("A workload to run (repeatable); default all."), QStringLiteral("NAME")},
                  {QStringLiteral("mode"), QStringLiteral("eager, compiled or both."), QStringLiteral("MODE"), QStringLiteral("eager")},
                  {QStringLiteral("repeat"), QStringLiteral("Timed runs per workload."), QStringLiteral("N"), QStringLiteral("5")},
                  {QStringLiteral("json"), QStringLiteral("One JSON document on stdout.")}});
    if (auto exit = cmd.parse(args, 0, 0))
        return *exit;
    const QString mode = p.value(QStringLiteral("mode"));
    if (mode == QLatin1String("compiled") || mode == QLatin1String("both"))
        return cmd.usageError(QStringLiteral("--mode %1: the compiler is not built yet in this version").arg(mode));
    if (mode != QLatin1String("eager"))
        return cmd.usageError(QStringLiteral("--mode must be eager, compiled or both, got '%1'").arg(mode));
    const auto repeat = cmd.intOption(QStringLiteral("repeat"), 5, 1);
    const auto workloads = selectedWorkloads(cmd);
    if (!repeat)
        return ExitUsage;
    if (!workloads)
        return ExitBadInput;

    QJsonArray results;
    for (const QString &name : *workloads) {
        zoo::Instance instance = zoo::create(name.toStdString(), 0);
        const double ms = medianMilliseconds(*repeat, [&] { (*instance.model)(instance.inputs); });
        results.append(QJsonObject{{QStringLiteral("name"), name},
                                   {QStringLiteral("eager_ms"), ms},
                                   {QStringLiteral("compiled_ms"), QJsonValue::Null},
                                   {QStringLiteral("max_abs_diff"), QJsonValue::Null}});
        if (!p.isSet(QStringLiteral("json")))
            printLine(QStringLiteral("%1 eager %2 ms").arg(name, -12).arg(ms, 9, 'f', 3));
    }
    if (p.isSet(QStringLiteral("json")))
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("workloads"), results}, {QStringLiteral("machine"), machineJson()}}));
    return ExitOk;
}

} // namespace fusescope
