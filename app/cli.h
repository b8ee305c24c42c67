#pragma once

namespace fusescope {

// Exit codes of the command-line contract (shared/CLI.md).
enum ExitCode : int { ExitOk = 0, ExitBadInput = 1, ExitUsage = 2 };

// Decides between the GUI, a headless sub-command, --version/--help and
// --screenshot, and runs it. Returns the process exit code.
int runFusescope(int argc, char **argv);

} // namespace fusescope
