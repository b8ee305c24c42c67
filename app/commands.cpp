#include "app/commands.h"

namespace fusescope {

namespace {

constexpr Command kCommands[] = {
    {"ops", "list the op registry", runOpsCommand},
    {"run", "run a zoo model or an ONNX file, eager or compiled", runRunCommand},
    {"bench", "time the standard workloads, eager and compiled", runBenchCommand},
    {"profile", "run a model and record it into an .fstrace file", runProfileCommand},
    {"report", "statistics and optimization hints of a trace", runReportCommand},
    {"export", "convert a trace to Chrome trace JSON", runExportCommand},
    {"stages", "list compile stages and print their graphs or code", runStagesCommand},
    {"demo", "profile a zoo model eager and compiled and show it", runDemoCommand},
};

} // namespace

std::span<const Command> commands()
{
    return kCommands;
}

const Command *findCommand(const QString &name)
{
    for (const Command &c : kCommands) {
        if (name == QLatin1String(c.name))
            return &c;
    }
    return nullptr;
}

} // namespace fusescope
