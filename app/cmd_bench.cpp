// `fusescope bench`: the standard workloads of DESIGN.md, timed side by side.
#include "app/cmdline.h"
#include "app/commands.h"

#include "core/compiler/compile.h"
#include "core/ops/amx_gemm.h"
#include "core/runtime/machine.h"
#include "core/zoo/zoo.h"

#include <QJsonArray>
#include <QJsonObject>

#include <tuple>

namespace fusescope {
namespace {

QJsonObject machineJson()
{
    const MachineInfo m = machineInfo();
    return {{QStringLiteral("cpu"), QString::fromStdString(m.cpuModel)},
            {QStringLiteral("logical_cores"), m.logicalCores},
            {QStringLiteral("threads"), m.threads},
            {QStringLiteral("blas"), QString::fromStdString(m.blas)},
            // Whether compiled products by weights ran on the AMX tiles (core/ops/amx_gemm.h) or on BLAS.
            {QStringLiteral("amx_tiles"), amx::available()}};
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

double maxAbsDiff(const Tensor &a, const Tensor &b)
{
    const std::vector<double> x = a.toDoubleVector(), y = b.toDoubleVector();
    double m = 0;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
        m = std::max(m, std::abs(x[i] - y[i]));
    return m;
}

struct Timing {
    std::optional<double> eagerMs, compiledMs, compileMs, maxDiff;
};

// With both modes, eager and compiled calls alternate, so both see the same machine load.
Timing timeWorkload(const std::string &name, int repeat, bool eager, bool compiled)
{
    zoo::Instance instance = zoo::create(name, 0);
    Timing t;
    Tensor eagerOut, compiledOut;
    const auto runEager = [&] { eagerOut = (*instance.model)(instance.inputs); };
    if (!compiled) {
        t.eagerMs = medianMilliseconds(repeat, runEager);
        return t;
    }
    compiler::CompiledFunction fn = compiler::compile(instance.model);
    fn(instance.inputs);
    t.compileMs = fn.lastCompileMs();
    const auto runCompiled = [&] { compiledOut = fn(instance.inputs).front(); };
    if (!eager) {
        t.compiledMs = medianMilliseconds(repeat, runCompiled);
        return t;
    }
    std::tie(t.eagerMs, t.compiledMs) = alternatedMedianMilliseconds(repeat, runEager, runCompiled);
    t.maxDiff = maxAbsDiff(eagerOut, compiledOut);
    return t;
}

QJsonValue orNull(const std::optional<double> &v)
{
    return v ? QJsonValue(*v) : QJsonValue();
}

QString describe(const QString &name, const Timing &t)
{
    QString line = QStringLiteral("%1").arg(name, -12);
    if (t.eagerMs)
        line += QStringLiteral(" eager %1 ms").arg(*t.eagerMs, 9, 'f', 3);
    if (t.compiledMs)
        line += QStringLiteral("  compiled %1 ms").arg(*t.compiledMs, 9, 'f', 3);
    if (t.eagerMs && t.compiledMs)
        line += QStringLiteral("  speedup %1x  max|diff| %2").arg(*t.eagerMs / *t.compiledMs, 0, 'f', 2).arg(*t.maxDiff, 0, 'g', 3);
    return line;
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
    if (mode != QLatin1String("eager") && mode != QLatin1String("compiled") && mode != QLatin1String("both"))
        return cmd.usageError(QStringLiteral("--mode must be eager, compiled or both, got '%1'").arg(mode));
    const auto repeat = cmd.intOption(QStringLiteral("repeat"), 5, 1);
    const auto workloads = selectedWorkloads(cmd);
    if (!repeat)
        return ExitUsage;
    if (!workloads)
        return ExitBadInput;

    const bool eager = mode != QLatin1String("compiled"), compiled = mode != QLatin1String("eager");
    QJsonArray results;
    for (const QString &name : *workloads) {
        Timing t;
        try {
            t = timeWorkload(name.toStdString(), *repeat, eager, compiled);
        } catch (const Error &e) {
            return cmd.badInput(QStringLiteral("%1: %2").arg(name, QString::fromUtf8(e.what())));
        }
        results.append(QJsonObject{{QStringLiteral("name"), name},
                                   {QStringLiteral("eager_ms"), orNull(t.eagerMs)},
                                   {QStringLiteral("compiled_ms"), orNull(t.compiledMs)},
                                   {QStringLiteral("compile_ms"), orNull(t.compileMs)},
                                   {QStringLiteral("max_abs_diff"), orNull(t.maxDiff)}});
        if (!p.isSet(QStringLiteral("json")))
            printLine(describe(name, t));
    }
    if (p.isSet(QStringLiteral("json")))
        printJson(QJsonDocument(QJsonObject{{QStringLiteral("workloads"), results}, {QStringLiteral("machine"), machineJson()}}));
    return ExitOk;
}

} // namespace fusescope
