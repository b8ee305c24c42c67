#include "app/commands.h"

namespace fusescope {

int runOpsCommand(const QStringList &args);
int runRunCommand(const QStringList &args);
int runBenchCommand(const QStringList &args);
int runStagesCommand(const QStringList &args);
int runProfileCommand(const QStringList &args);
int runReportCommand(const QStringList &args);
int runExportCommand(const QStringList &args);

namespace {

constexpr Command kCommands[] = {
    {"ops", "list the op registry", runOpsCommand},
    {"run", "run a zoo model or an ONNX file, eager or compiled", runRunCommand},
    {"bench", "time the standard workloads, eager and compiled", runBenchCommand},
    {"profile", "run a model and record it into an .fstrace file", runProfileCommand},
    {"report", "statistics of a trace (hints come with the hints engine)", runReportCommand},
    {"export", "convert a trace to Chrome trace JSON", runExportCommand},
    {"stages", "list compile stages and print their graphs or code", runStagesCommand},
    {"demo", "profile a zoo model eager and compiled and show it", nullptr},
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
