#include "app/commands.h"

namespace fusescope {
namespace {

constexpr Command kCommands[] = {
    {"ops", "list the op registry", nullptr},
    {"run", "run a zoo model or an ONNX file, eager or compiled", nullptr},
    {"bench", "time the standard workloads, eager and compiled", nullptr},
    {"profile", "run a model and record it into an .fstrace file", nullptr},
    {"report", "statistics and hints of a trace", nullptr},
    {"export", "convert a trace to Chrome trace JSON", nullptr},
    {"stages", "list compile stages and print their graphs or code", nullptr},
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
