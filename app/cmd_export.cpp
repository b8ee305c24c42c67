// `fusescope export FILE --chrome OUT.json`: a trace as Chrome trace-event
// JSON, which Perfetto and chrome://tracing open.
#include "app/cmdline.h"
#include "app/commands.h"
#include "app/tracefile.h"

#include "profiler/chromeexport.h"

#include <limits>

namespace fusescope {

int runExportCommand(const QStringList &args)
{
    CommandLine cmd(QStringLiteral("export"), QStringLiteral("FILE [FILE…] --chrome OUT.json"),
                    QStringLiteral("Writes a trace as Chrome trace-event JSON: slices, flows, counters,\n"
                                   "process and thread names (opens in Perfetto). FILE: any trace report reads;\n"
                                   "several Kineto files are the ranks of one run."));
    QCommandLineParser &p = cmd.parser();
    p.addOptions({{QStringLiteral("chrome"), QStringLiteral("The JSON file to write."), QStringLiteral("OUT.json")}});
    if (auto exit = cmd.parse(args, 1, std::numeric_limits<int>::max()))
        return *exit;
    if (!p.isSet(QStringLiteral("chrome")))
        return cmd.usageError(QStringLiteral("missing --chrome OUT.json"));
    try {
        const profiler::Trace trace = readTraceFiles(p.positionalArguments());
        profiler::exportChromeTrace(trace, p.value(QStringLiteral("chrome")).toStdString());
    } catch (const Error &e) {
        return cmd.badInput(QString::fromUtf8(e.what()));
    }
    return ExitOk;
}

} // namespace fusescope
