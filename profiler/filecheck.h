#pragma once
// What SQLite (or a parser) would only say vaguely or late about a file —
// missing, a directory, empty — said up front with the path.

#include <string>

namespace fusescope::profiler {

// Throws Error: "PATH: no such file", "PATH: is a directory, not WHAT",
// "PATH: is empty, not WHAT". `what` is "a Fusescope trace", "an Nsight Systems export" …
void checkFileIsThere(const std::string &path, const std::string &what);

} // namespace fusescope::profiler
