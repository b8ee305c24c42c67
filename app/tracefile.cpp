#include "app/tracefile.h"

#include "core/tensor/tensor.h"
#include "profiler/importer.h"
#include "profiler/traceformat.h"
#include "profiler/tracereader.h"

namespace fusescope {
namespace {

profiler::Trace readOwnTrace(const std::string &file)
{
    profiler::TraceReader reader(file);
    std::optional<profiler::Trace> trace = reader.load();
    if (!trace)
        throw Error(file + ": loading was cancelled");
    return std::move(*trace);
}

} // namespace

profiler::Trace readTraceFile(const QString &path)
{
    return readTraceFiles({path});
}

profiler::Trace readTraceFiles(const QStringList &paths)
{
    std::vector<std::string> files;
    for (const QString &p : paths)
        files.push_back(p.toStdString());
    if (files.empty())
        throw Error("no trace file given");
    const FormatProbe probe = probeFileFormat(files.front());
    if (!probe.ok())
        throw Error(files.front() + ": " + probe.error);
    if (probe.format == FileFormat::FsTrace) {
        if (files.size() > 1)
            throw Error(files[1] + ": several files are read together only as the ranks of one Kineto trace; "
                                   "open Fusescope traces one at a time");
        return readOwnTrace(files.front());
    }
    if (probe.format != FileFormat::ChromeJson && probe.format != FileFormat::NsysSqlite)
        throw Error(files.front() + ": a " + fileFormatName(probe.format) + " is not a trace");
    std::optional<profiler::Trace> trace = profiler::importTraces(files);
    if (!trace)
        throw Error(files.front() + ": import was cancelled");
    return std::move(*trace);
}

} // namespace fusescope
