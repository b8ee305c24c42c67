#include "app/tracefile.h"

#include "core/tensor/tensor.h"
#include "profiler/traceformat.h"
#include "profiler/tracereader.h"

namespace fusescope {

profiler::Trace readTraceFile(const QString &path)
{
    const std::string file = path.toStdString();
    const FormatProbe probe = probeFileFormat(file);
    if (!probe.ok())
        throw Error(file + ": " + probe.error);
    if (probe.format != FileFormat::FsTrace)
        throw Error(file + ": reading a " + fileFormatName(probe.format) +
                    " is not built yet in this version; only Fusescope traces (.fstrace) are read");
    profiler::TraceReader reader(file);
    std::optional<profiler::Trace> trace = reader.load();
    if (!trace)
        throw Error(file + ": loading was cancelled");
    return std::move(*trace);
}

} // namespace fusescope
