#pragma once

#include <QStringList>

#include <span>

namespace fusescope {

// One headless sub-command of `fusescope` (shared/CLI.md). A command whose
// `run` is null is part of the contract but not built yet: it is listed as
// planned and refuses to run with a usage error instead of pretending.
struct Command {
    const char *name;
    const char *summary;
    int (*run)(const QStringList &args); // args exclude the command name
};

std::span<const Command> commands();
const Command *findCommand(const QString &name);

} // namespace fusescope
