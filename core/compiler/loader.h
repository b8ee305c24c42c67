#pragma once
// The `load` stage: compiles generated C++ with the system compiler into a
// shared object and opens it. Objects are cached on disk under
// $XDG_CACHE_HOME/fusescope (else ~/.cache/fusescope), keyed by the source,
// the flags and the compiler's version, so a warm compile costs a dlopen.

#include "core/compiler/passes.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fusescope::compiler {

struct LoadedModule {
    std::shared_ptr<void> handle;      // dlclose'd with the last owner
    std::vector<void *> symbols;       // per requested name; null for ""
    std::string objectPath;
    bool fromCache = false;
};

struct Toolchain {
    std::string compiler; // $CXX, else c++
    std::string version;  // first line of `compiler --version`
    std::vector<std::string> flags;
    std::vector<std::string> libraries; // after the source, as linkers read them in order
};

// The system compiler, or nothing when there is none or FUSESCOPE_NO_CC=1
// (the reason goes to `why`).
std::optional<Toolchain> findToolchain(std::string &why);
std::string cacheDirectory();

// Throws Error naming the source path and the compiler's first error.
LoadedModule loadModule(const Toolchain &tc, const std::string &source, const std::vector<std::string> &symbols,
                        PassLog &log);

} // namespace fusescope::compiler
