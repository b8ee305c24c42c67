// The Kineto JSON importer (profiler/importer.h) on the two largest real
// traces of the shared test data: import rate in MB/s of uncompressed JSON
// (from a plain .json, so inflate is not measured; then from the .json.gz),
// the first import and the peak resident memory it adds in a fresh process
// (this one, run again: a process that imported before keeps freed memory
// resident and its page faults already paid), and Python's json.load of the
// same file, timed in the same run the same two ways. A first import is one
// sample of a noisy machine, so both firsts are the median of kFreshRuns
// fresh processes.
//
// bench_import [repeats [TRACE.json.gz ...]]   (default 3; the best time of the repeats counts;
//                                               other .json.gz traces instead of the shared two)
// bench_import --first PATH   (one import; prints its seconds and peak MB)

#include "profiler/importer.h"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace fusescope::profiler;
using Clock = std::chrono::steady_clock;

namespace {

const char *const kTraces[] = {
    "kineto/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "kineto/kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
};

double seconds(Clock::time_point since)
{
    return std::chrono::duration<double>(Clock::now() - since).count();
}

// kB from /proc/self/status ("VmRSS", "VmHWM").
long statusKb(const char *key)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with(key))
            return std::atol(line.c_str() + std::strlen(key) + 1);
    }
    return 0;
}

// Writing 5 to clear_refs restarts VmHWM from the current resident size.
void resetPeak()
{
    std::ofstream("/proc/self/clear_refs") << "5";
}

std::string gunzipTo(const std::string &gz, const std::string &json)
{
    gzFile in = gzopen(gz.c_str(), "rb");
    std::ofstream out(json, std::ios::binary);
    char block[1 << 16];
    int n = 0;
    while (in && (n = gzread(in, block, sizeof block)) > 0)
        out.write(block, n);
    if (in)
        gzclose(in);
    return json;
}

double bestImportSeconds(const std::string &path, int repeats, size_t &events)
{
    double best = 1e30;
    for (int i = 0; i < repeats; ++i) {
        const auto start = Clock::now();
        const std::optional<Trace> trace = importKineto({path});
        best = std::min(best, seconds(start));
        events = trace ? trace->runs[0].events.size() : 0;
    }
    return best;
}

// One import in this process: its seconds and the peak resident memory it
// adds, with the trace still held.
int firstImport(const std::string &path)
{
    const long before = statusKb("VmRSS:");
    resetPeak();
    const auto start = Clock::now();
    const std::optional<Trace> trace = importKineto({path});
    const double s = seconds(start);
    std::printf("%.6f %.3f\n", s, double(statusKb("VmHWM:") - before) / 1024.0);
    return trace ? 0 : 1;
}

// firstImport in a fresh process of this benchmark.
bool firstImportFresh(const std::string &path, double &s, double &peakMb)
{
    const std::string command = "'" + std::filesystem::read_symlink("/proc/self/exe").string() + "' --first '" + path + "'";
    std::FILE *pipe = popen(command.c_str(), "r");
    const bool ok = pipe && std::fscanf(pipe, "%lf %lf", &s, &peakMb) == 2;
    if (pipe)
        pclose(pipe);
    return ok;
}

// Python's json.load measured as the import is: its first load in a fresh
// process, then the best of `repeats` loads in that process (the allocator
// warm, as for the import's best). 0 and 0 when python3 is missing.
struct PythonTimes {
    double first = 0, best = 0;
};

PythonTimes pythonSeconds(const std::string &path, int repeats)
{
    const std::string command = "python3 -c \"import json,time,sys\n"
                                "def load():\n t=time.perf_counter(); json.load(open(sys.argv[1])); return time.perf_counter()-t\n"
                                "first=load(); print(first, min([first]+[load() for _ in range(int(sys.argv[2]))]))\" '"
        + path + "' " + std::to_string(repeats) + " 2>/dev/null";
    std::FILE *pipe = popen(command.c_str(), "r");
    PythonTimes t;
    if (!pipe || std::fscanf(pipe, "%lf %lf", &t.first, &t.best) != 2)
        t = {};
    if (pipe)
        pclose(pipe);
    return t;
}

constexpr int kFreshRuns = 5;

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// The median first import of kFreshRuns fresh processes, and the largest
// peak memory any of them added; false when one failed.
bool medianFirstImport(const std::string &path, double &s, double &peakMb)
{
    std::vector<double> times;
    peakMb = 0;
    for (int i = 0; i < kFreshRuns; ++i) {
        double t = 0, peak = 0;
        if (!firstImportFresh(path, t, peak))
            return false;
        times.push_back(t);
        peakMb = std::max(peakMb, peak);
    }
    s = median(times);
    return true;
}

// Python's best load as pythonSeconds measures it; its first load as the
// median of kFreshRuns fresh processes.
PythonTimes pythonMedianFirst(const std::string &path, int repeats)
{
    PythonTimes t = pythonSeconds(path, repeats);
    std::vector<double> firsts{t.first};
    for (int i = 1; i < kFreshRuns && t.best > 0; ++i)
        firsts.push_back(pythonSeconds(path, 0).first);
    t.first = median(firsts);
    return t;
}

void benchTrace(const std::string &gz, const std::string &tmpDir, int repeats)
{
    const std::string json = gunzipTo(gz, tmpDir + "/" + std::filesystem::path(gz).stem().string());
    const double mb = double(std::filesystem::file_size(json)) / 1e6;
    size_t events = 0;
    const double plain = bestImportSeconds(json, repeats, events);
    const double packed = bestImportSeconds(gz, repeats, events);
    double first = 0;
    double peak = 0;
    const bool fresh = medianFirstImport(json, first, peak);
    const PythonTimes python = pythonMedianFirst(json, repeats);
    std::printf("%s\n", std::filesystem::path(gz).filename().c_str());
    std::printf("  %.1f MB JSON, %zu events\n", mb, events);
    std::printf("  import .json     %7.3f s  %7.1f MB/s\n", plain, mb / plain);
    std::printf("  import .json.gz  %7.3f s  %7.1f MB/s of JSON\n", packed, mb / packed);
    if (fresh) {
        std::printf("  first import     %7.3f s  %7.1f MB/s (median of %d fresh processes)\n", first, mb / first,
                    kFreshRuns);
        std::printf("  peak RSS added   %7.1f MB  = %.2f x the JSON\n", peak, peak / mb);
    } else {
        std::printf("  first import and peak RSS: the fresh process failed\n");
    }
    if (python.best > 0) {
        std::printf("  python json.load %7.3f s best, %.3f s first (median) -> import is %.1f x faster "
                    "(best against best)\n",
                    python.best, python.first, python.best / plain);
        if (fresh)
            std::printf("                                       first import %.1f x faster (first against first)\n",
                        python.first / first);
    }
    else
        std::printf("  python json.load: python3 not available\n");
    std::filesystem::remove(json);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc == 3 && std::string(argv[1]) == "--first")
        return firstImport(argv[2]);
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    const std::string tmpDir = std::filesystem::temp_directory_path().string();
    std::vector<std::string> traces(argv + std::min(argc, 2), argv + argc);
    if (traces.empty()) {
        for (const char *trace : kTraces)
            traces.push_back(std::string(FUSESCOPE_TESTDATA_DIR) + "/" + trace);
    }
    for (const std::string &path : traces) {
        if (!std::filesystem::exists(path)) {
            std::printf("%s: not found, skipped\n", path.c_str());
            continue;
        }
        benchTrace(path, tmpDir, repeats);
    }
    return 0;
}
