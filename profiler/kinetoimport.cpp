// The import entry points: Kineto JSON files (one rank each) read and parsed
// one after another into one pending state, then assembled into one Run; and
// the dispatch by content between Kineto JSON and Nsight Systems exports.

#include "profiler/kinetoimport.h"

#include "core/tensor/tensor.h"
#include "profiler/traceformat.h"

#include <filesystem>

namespace fusescope::profiler {

namespace {

uint64_t totalBytes(const std::vector<std::string> &paths)
{
    uint64_t total = 0;
    for (const std::string &path : paths) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        total += ec ? 0 : uint64_t(size);
    }
    return total;
}

constexpr size_t kCheckBesideFrom = size_t(4) << 20; // bytes of JSON; below, a thread costs more than it saves

// One file at a time, so only one decompressed document is held at once. Its
// UTF-8 is checked beside the parse for a big file: the parse reads only the
// grammar, and the check's error, like a damaged gzip's, explains whatever the
// parse found.
bool importFile(const std::string &path, uint32_t file, kineto::ImportState &state, kineto::ImportProgress &progress)
{
    kineto::FileInfo info;
    info.path = path;
    state.files.push_back(std::move(info));
    kineto::JsonBuffer buffer;
    kineto::DeferredCheck gzipCheck; // declared after the buffer they read, so joined first
    kineto::DeferredCheck utf8Check;
    if (!kineto::readJsonFile(path, buffer, progress, gzipCheck))
        return false;
    const auto checkUtf8 = [&path, &buffer] { return kineto::utf8Problem(path, buffer); };
    if (buffer.size() >= kCheckBesideFrom)
        utf8Check.start(checkUtf8);
    else if (const std::string problem = checkUtf8(); !problem.empty())
        throw Error(problem);
    bool parsed = false;
    try {
        parsed = kineto::parseDocument(buffer, file, state, progress);
    } catch (...) {
        gzipCheck.wait();
        utf8Check.wait();
        throw;
    }
    if (!parsed)
        return false;
    gzipCheck.wait();
    utf8Check.wait();
    progress.endFile();
    return true;
}

} // namespace

std::optional<Trace> importKineto(const std::vector<std::string> &paths, const ImportControl &control)
{
    if (paths.empty())
        throw Error("no trace file to import");
    kineto::ImportProgress progress(control, totalBytes(paths));
    kineto::ImportState state;
    for (uint32_t i = 0; i < paths.size(); ++i) {
        if (!importFile(paths[i], i, state, progress))
            return std::nullopt;
    }
    return kineto::assembleRun(std::move(state));
}

std::optional<Trace> importTraces(const std::vector<std::string> &paths, const ImportControl &control)
{
    if (paths.empty())
        throw Error("no trace file to import");
    for (const std::string &path : paths) {
        const FormatProbe probe = probeFileFormat(path);
        if (!probe.ok())
            throw Error(path + ": " + probe.error);
        if (probe.format == FileFormat::NsysSqlite && paths.size() == 1)
            return importNsys(path, control);
        if (probe.format != FileFormat::ChromeJson)
            throw Error(path + ": is a " + fileFormatName(probe.format)
                        + (paths.size() > 1 ? "; several files open together only as Kineto JSON ranks of one run"
                                            : ", not a trace to import"));
    }
    return importKineto(paths, control);
}

} // namespace fusescope::profiler
