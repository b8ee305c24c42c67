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

// The commands' entry points (cmd_<name>.cpp); the demo and the window reuse
// profile and report through them.
int runOpsCommand(const QStringList &args);
int runRunCommand(const QStringList &args);
int runBenchCommand(const QStringList &args);
int runStagesCommand(const QStringList &args);
int runProfileCommand(const QStringList &args);
int runReportCommand(const QStringList &args);
int runExportCommand(const QStringList &args);
int runDemoCommand(const QStringList &args);
const Command *findCommand(const QString &name);
// Records the demo into `trace` (fusescope demo and the window's "Run demo"):
// the zoo encoder eager and compiled, with shapes and memory, so every view has something to show.
int recordDemo(const QString &trace);

} // namespace fusescope
