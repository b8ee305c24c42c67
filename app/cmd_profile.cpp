// `fusescope profile MODEL`: runs a zoo model under the profiler and writes
// one .fstrace file; with --compile it also holds the compile stages, their
// graphs and code; --compare records an eager and a compiled run side by side.
#include "app/cmdline.h"
#include "app/commands.h"
#include "app/runnable.h"

#include "core/compiler/compile.h"
#include "profiler/profiler.h"
#include "profiler/tracewriter.h"

#include <QCoreApplication>

namespace fusescope {
namespace {

using profiler::Profiler;
using profiler::ProfilerOptions;
using profiler::Schedule;

struct ProfileRequest {
    std::string model;
    std::vector<std::string> modes; // "eager", "compiled"
    int steps = 5;
    std::optional<Schedule> schedule;
    bool recordShapes = false;
    bool profileMemory = false;
};

// Records `steps` calls of the model in one mode; returns the runs it wrote.
int recordMode(const ProfileRequest &req, const std::string &mode, const Runnable &runnable,
               profiler::TraceWriter &writer, int firstRun)
{
    std::optional<compiler::CompiledFunction> fn;
    if (mode == "compiled")
        fn.emplace(compiler::compile(runnable.fn, runnable.parameters));
    int windows = 0;
    ProfilerOptions options{.schedule = req.schedule,
                            .recordShapes = req.recordShapes,
                            .profileMemory = req.profileMemory,
                            .withFlops = true,
                            .sink = &writer,
                            .onTraceReady = [&](int) { ++windows; },
                            .runName = mode,
                            .model = req.model,
                            .mode = mode};
    Profiler prof(options);
    prof.start();
    for (int step = 0; step < req.steps; ++step) {
        if (fn)
            (*fn)(runnable.inputs);
        else
            runnable.fn(runnable.inputs);
        prof.step();
    }
    prof.stop();
    if (fn && windows > 0) {
        writer.writeCompileStages(firstRun, fn->stages());
        writer.setRunValue(firstRun, "compile_ms", std::to_string(fn->lastCompileMs()));
        writer.setRunValue(firstRun, "recompiles", std::to_string(fn->recompileReasons().size()));
    }
    return windows;
}

std::optional<int> readRequest(CommandLine &cmd, ProfileRequest &req)
{
    QCommandLineParser &p = cmd.parser();
    if (auto exit = cmd.refuseDevice())
        return exit;
    if (!p.isSet(QStringLiteral("o")))
        return cmd.usageError(QStringLiteral("missing -o FILE.fstrace"));
    if (p.isSet(QStringLiteral("compare")))
        req.modes = {"eager", "compiled"};
    else
        req.modes = {p.isSet(QStringLiteral("compile")) ? "compiled" : "eager"};
    if (p.isSet(QStringLiteral("schedule"))) {
        try {
            req.schedule = Schedule::parse(p.value(QStringLiteral("schedule")).toStdString());
        } catch (const Error &e) {
            return cmd.usageError(QString::fromUtf8(e.what()));
        }
    }
    const Schedule &s = req.schedule ? *req.schedule : Schedule{};
    const int scheduled = s.repeat > 0 ? s.skipFirst + (s.wait + s.warmup + s.active) * s.repeat : 5;
    const auto steps = cmd.intOption(QStringLiteral("steps"), req.schedule ? scheduled : 5, 1);
    if (!steps)
        return ExitUsage;
    req.steps = *steps;
    req.recordShapes = p.isSet(QStringLiteral("record-shapes"));
    req.profileMemory = p.isSet(QStringLiteral("profile-memory"));
    req.model = p.positionalArguments().front().toStdString();
    return std::nullopt;
}

} // namespace

int runProfileCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("profile"),
                    QStringLiteral("MODEL [--compile | --compare] [--device cpu|cuda] [--steps N] "
                                   "[--schedule wait=W,warmup=U,active=A,repeat=R] [--record-shapes] "
                                   "[--profile-memory] -o FILE.fstrace"),
                    QStringLiteral("Runs a zoo model or an .onnx file N steps under the profiler and records ops, kernels, allocations,\n"
                                   "compile stages and steps into one .fstrace file (see docs/trace-format.md)."));
    QCommandLineParser &p = cmd.parser();
    p.addOptions({{QStringLiteral("compile"), QStringLiteral("Run through the compiler; the file holds every compile stage.")},
                  {QStringLiteral("compare"), QStringLiteral("Record an eager and a compiled run, named eager and compiled.")},
                  {QStringLiteral("device"), QStringLiteral("cpu or cuda."), QStringLiteral("DEVICE"), QStringLiteral("cpu")},
                  {QStringLiteral("steps"), QStringLiteral("Steps to run (default 5, or what the schedule records)."), QStringLiteral("N")},
                  {QStringLiteral("schedule"), QStringLiteral("As torch.profiler.schedule."), QStringLiteral("SPEC")},
                  {QStringLiteral("record-shapes"), QStringLiteral("Record input shapes and dtypes of every op.")},
                  {QStringLiteral("profile-memory"), QStringLiteral("Record every allocation and free.")},
                  {QStringLiteral("o"), QStringLiteral("The trace file to write."), QStringLiteral("FILE")}});
    if (auto exit = cmd.parse(args, 1, 1))
        return *exit;
    ProfileRequest req;
    if (auto exit = readRequest(cmd, req))
        return *exit;
    const QString out = p.value(QStringLiteral("o"));
    try {
        const Runnable runnable = loadRunnable(QString::fromStdString(req.model));
        profiler::TraceMeta meta;
        meta.commandLine = QCoreApplication::arguments().join(QLatin1Char(' ')).toStdString();
        profiler::TraceWriter writer(out.toStdString(), meta);
        int runs = 0;
        for (const std::string &mode : req.modes)
            runs += recordMode(req, mode, runnable, writer, runs);
        writer.close();
        printLine(QStringLiteral("%1: %2 run(s) of %3, %4 step(s) each").arg(out).arg(runs)
                      .arg(QString::fromStdString(req.model)).arg(req.steps));
    } catch (const Error &e) {
        return cmd.badInput(QString::fromUtf8(e.what()));
    }
    return ExitOk;
}

} // namespace fusescope
