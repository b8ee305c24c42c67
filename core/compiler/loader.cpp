#include "core/compiler/loader.h"

#include "core/tensor/tensor.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char **environ;

namespace fusescope::compiler {
namespace {

namespace fs = std::filesystem;

// Runs argv with stdout and stderr into `logPath`; returns the exit status (-1: could not start).
int runProcess(const std::vector<std::string> &argv, const std::string &logPath)
{
    std::vector<char *> args;
    for (const std::string &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
        return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string readFile(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string firstError(const std::string &log)
{
    std::istringstream in(log);
    std::string line, first;
    while (std::getline(in, line)) {
        if (first.empty() && !line.empty())
            first = line;
        if (line.find("error") != std::string::npos)
            return line;
    }
    return first.empty() ? "no diagnostic" : first;
}

// FNV-1a: stable across runs and builds, unlike std::hash.
std::string hashHex(const std::string &text)
{
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::string tempDir()
{
    const char *t = std::getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

} // namespace

std::string cacheDirectory()
{
    const char *xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg && *xdg)
        return std::string(xdg) + "/fusescope";
    const char *home = std::getenv("HOME");
    if (home && *home)
        return std::string(home) + "/.cache/fusescope";
    return tempDir() + "/fusescope-cache";
}

std::optional<Toolchain> findToolchain(std::string &why)
{
    const char *noCc = std::getenv("FUSESCOPE_NO_CC");
    if (noCc && std::string(noCc) == "1") {
        why = "FUSESCOPE_NO_CC=1: kernels run in the interpreter";
        return std::nullopt;
    }
    Toolchain tc;
    const char *cxx = std::getenv("CXX");
    tc.compiler = cxx && *cxx ? cxx : "c++";
    const std::string log = tempDir() + "/fusescope-cc-version-" + std::to_string(getpid()) + ".txt";
    const int rc = runProcess({tc.compiler, "--version"}, log);
    const std::string out = readFile(log);
    std::remove(log.c_str());
    if (rc != 0) {
        why = "no C++ compiler ('" + tc.compiler + " --version' failed): kernels run in the interpreter";
        return std::nullopt;
    }
    tc.version = out.substr(0, out.find('\n'));
    // GCC tunes Intel server cores for 256-bit vectors even where AVX-512
    // is there; the fused loops of transcendentals run about a quarter
    // faster with 512 (docs/performance.md). No effect without AVX-512.
    tc.flags = {"-O3", "-march=native", "-mprefer-vector-width=512", "-fPIC", "-shared", "-std=c++17",
                "-fno-math-errno", "-fno-trapping-math", "-fopenmp-simd", "-w"};
#ifdef FUSESCOPE_LIBMVEC
    // The embedded scalarmath.h declares glibc's vector sin, cos and pow, as the eager kernels' build does.
    tc.flags.push_back("-DFUSESCOPE_LIBMVEC=1");
    tc.libraries.push_back("-lmvec");
#endif
    return tc;
}

LoadedModule loadModule(const Toolchain &tc, const std::string &source, const std::vector<std::string> &symbols,
                        PassLog &log)
{
    std::string flags;
    for (const std::string &f : tc.flags)
        flags += f + " ";
    for (const std::string &l : tc.libraries)
        flags += l + " ";
    const std::string key = hashHex(source + "\n" + flags + "\n" + tc.version);
    std::string dir = cacheDirectory();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || access(dir.c_str(), W_OK) != 0)
        dir = tempDir();
    const std::string base = dir + "/fusescope_" + key;
    LoadedModule m;
    m.objectPath = base + ".so";
    m.fromCache = fs::exists(m.objectPath);
    if (!m.fromCache) {
        // Per-process source and log: a process compiling the same kernel at
        // the same time would otherwise rewrite the source under this one's compiler.
        const std::string pid = std::to_string(getpid());
        const std::string src = base + "." + pid + ".cpp", logPath = base + "." + pid + ".log";
        const std::string tmp = base + ".so.tmp" + pid;
        std::ofstream(src) << source;
        std::vector<std::string> argv{tc.compiler};
        argv.insert(argv.end(), tc.flags.begin(), tc.flags.end());
        argv.insert(argv.end(), {"-o", tmp, src});
        argv.insert(argv.end(), tc.libraries.begin(), tc.libraries.end());
        if (runProcess(argv, logPath) != 0)
            throw Error("load: compiling " + src + " failed: " + firstError(readFile(logPath)));
        fs::rename(tmp, m.objectPath, ec); // atomic: a concurrent process sees all or nothing
        if (ec)
            throw Error("load: cannot write " + m.objectPath + ": " + ec.message());
        // The source stays next to the object for whoever reads the generated code.
        fs::rename(src, base + ".cpp", ec);
        fs::rename(logPath, base + ".log", ec);
        log.push_back("compiled " + base + ".cpp with " + tc.compiler + " " + flags);
    } else {
        log.push_back("cache hit: " + m.objectPath);
    }
    void *h = dlopen(m.objectPath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        throw Error("load: dlopen " + m.objectPath + " failed: " + dlerror());
    m.handle = std::shared_ptr<void>(h, [](void *p) { dlclose(p); });
    for (const std::string &s : symbols) {
        void *sym = s.empty() ? nullptr : dlsym(h, s.c_str());
        if (!s.empty() && !sym)
            throw Error("load: " + m.objectPath + " has no symbol " + s);
        m.symbols.push_back(sym);
    }
    return m;
}

} // namespace fusescope::compiler
