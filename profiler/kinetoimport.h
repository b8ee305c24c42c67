#pragma once
// Internals of the Kineto / Chrome trace-event JSON importer, shared by its
// three parts: kinetoinput.cpp (file → padded buffer, gzip streamed),
// kinetoparse.cpp (one document → pending records) and kinetobuild.cpp
// (pending records of every file → one sorted Run). The public entry points
// are in importer.h.

#include "profiler/importer.h"

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace fusescope::profiler::kineto {

// Frees what JsonBuffer::reserve took: munmap for a mapping of `mapped`
// bytes, else delete[].
struct BufferRelease {
    size_t mapped = 0;
    void operator()(char *p) const;
};

// The decompressed document, with the zeroed tail the JSON reader reads past the end.
class JsonBuffer
{
public:
    const char *data() const { return m_data.get(); }
    size_t size() const { return m_size; }
    size_t capacity() const { return m_capacity; }
    void reserve(size_t bytes);       // keeps the content
    char *appendSpace(size_t &bytes); // room for at least `bytes` more; returns where to write
    void commit(size_t bytes) { m_size += bytes; }
    void clear() { m_size = 0; }      // forgets the content, keeps the memory
    void finish();                    // zeroes the padding

private:
    std::unique_ptr<char[], BufferRelease> m_data;
    size_t m_size = 0;
    size_t m_capacity = 0; // usable bytes; the padding comes on top
};

// Reports bytes of the input files on one scale: reading a file covers the
// first half of its size, parsing it the second half, so the bar moves
// through both phases and still ends at the files' total.
class ImportProgress
{
public:
    ImportProgress(const ImportControl &control, uint64_t total) : m_control(control), m_total(total) {}
    void beginFile(uint64_t fileBytes);
    void reading(uint64_t bytesRead) { report(m_fileStart + bytesRead / 2); }
    void parsing(double fraction) { report(m_fileStart + m_fileBytes / 2 + uint64_t(fraction * double(m_fileBytes / 2))); }
    void endFile();
    bool cancelled() const { return m_control.cancel && m_control.cancel->load(std::memory_order_relaxed); }

private:
    void report(uint64_t done);

    const ImportControl &m_control;
    uint64_t m_total = 0;
    uint64_t m_fileStart = 0;
    uint64_t m_fileBytes = 0;
    uint64_t m_lastReported = 0;
};

// A check of the read bytes that runs on another thread while they are
// parsed: the CRC-32 of a big gzip file's members, which on the inflating
// thread took a third of inflating (zlib's crc32 runs at about 3.7 GB/s).
// wait() joins it and throws Error when the check failed; the destructor
// joins it too, so it must go before the buffer it reads.
class DeferredCheck
{
public:
    DeferredCheck() = default;
    ~DeferredCheck();
    DeferredCheck(const DeferredCheck &) = delete;
    DeferredCheck &operator=(const DeferredCheck &) = delete;
    void start(std::function<std::string()> check); // returns "" or the error message
    void wait();

private:
    std::thread m_thread;
    std::string m_error;
};

// Reads `path` (plain or gzip JSON) into a padded buffer. Throws Error naming
// the file and the byte offset; returns false when cancelled. A big gzip
// file's CRC check may still be running in `check` on return.
bool readJsonFile(const std::string &path, JsonBuffer &buffer, ImportProgress &progress, DeferredCheck &check);

// A pid/tid pair of one file, as written ("7" and 7 are the same thread).
struct PendingTrack {
    uint32_t file = 0;
    std::string pid;
    std::string tid;
    bool gpu = false;    // carries kernels, copies or GPU annotations
    int32_t device = -1; // from the events' "device" argument
};

struct ProcessMeta {
    std::string name;
    std::string labels;
    bool hasSort = false;
    int64_t sortIndex = 0;
};

struct ThreadMeta {
    std::string name;
    bool hasSort = false;
    int64_t sortIndex = 0;
};

// One s/t/f event; consecutive ends of one flow id become one Flow each.
struct PendingFlowEnd {
    uint64_t id = 0;
    int64_t ts = 0; // ns in the file's clock
    uint32_t order = 0;
    uint16_t track = 0;
    FlowKind kind = FlowKind::User;
    bool enclosing = true; // bind to the slice around ts, not the next one
    char phase = 's';
    uint32_t file = 0;
};

// One "[memory]" instant.
struct PendingMemory {
    int64_t ts = 0;
    uint64_t address = 0;
    int64_t bytes = 0;
    int64_t totalAllocated = -1; // -1: not in the file
    int64_t totalReserved = -1;
    uint16_t track = 0;
    int16_t device = -1;
};

// One counter line: a "C" event's name and one of its argument keys.
struct CounterSeries {
    uint32_t file = 0;
    std::string pid;
    std::string name;
};

struct PendingCounter {
    int64_t ts = 0;
    double value = 0;
    uint32_t series = 0; // index into ImportState::counterSeries
};

struct FileInfo {
    std::string path;
    int64_t baseNs = 0;   // baseTimeNanoseconds: unix time of ts 0, when given
    bool hasBase = false;
    int64_t rank = -1;    // distributedInfo.rank
    int64_t worldSize = 0;
    std::string gpu;      // deviceProperties[0].name
};

// Everything read from the files, before origin, order and binding.
// Event::start holds ns in its file's clock until the run is assembled.
struct ImportState {
    Trace trace;
    std::vector<FileInfo> files;
    std::vector<PendingTrack> tracks;
    std::unordered_map<std::string, uint16_t> trackIndex; // file|pid|tid
    std::unordered_map<std::string, ProcessMeta> processes; // file|pid
    std::unordered_map<std::string, ThreadMeta> threads;    // file|pid|tid
    std::vector<Event> events;
    std::vector<EventArgs> args;
    std::vector<PendingFlowEnd> flowEnds;
    std::vector<PendingMemory> memory;
    std::vector<CounterSeries> counterSeries;
    std::unordered_map<std::string, uint32_t> counterIndex; // file|pid|name
    std::vector<PendingCounter> counters;
    bool unfinishedRanges = false; // a B without its E: the run is marked incomplete
};

std::string trackKey(uint32_t file, std::string_view pid, std::string_view tid);
std::string processKey(uint32_t file, std::string_view pid);

// "" when the buffer is valid UTF-8, else the error naming the file and the
// byte. The parse checks the grammar only; this runs beside it.
std::string utf8Problem(const std::string &path, const JsonBuffer &buffer);

// How a gzip file inflated whole ended (readJsonFile's way for files up to
// 128 MB): read, cancelled, or left to the streaming reader.
enum class WholeGzip { Read, Cancelled, Streaming };
// The gzip file `in` (fileBytes long, read from its start) inflated into `out`
// by libdeflate a member at a time. Streaming when the streaming reader must
// read it instead: damaged or cut data (its messages say where), or a
// zlib-wrapped member; `out` may then hold part of the file.
WholeGzip inflateWhole(std::ifstream &in, uint64_t fileBytes, JsonBuffer &out, ImportProgress &progress);

// Parses one file's document into `state`. Throws Error naming the file and
// the byte offset or event index; returns false when cancelled.
bool parseDocument(const JsonBuffer &buffer, uint32_t file, ImportState &state, ImportProgress &progress);

// "1234567.891" (µs) → 1234567891 ns, from the decimal text; false when the
// text is not a number or overflows.
bool microsTextToNs(std::string_view text, int64_t &ns);
// The same for the number that starts at p: where it ends, or null when it
// is not a number (in JSON's grammar) or overflows.
const char *microsPrefixToNs(const char *p, const char *end, int64_t &ns);

// Assembles the one Run of the import from everything parsed. Throws Error
// naming the files when they hold no events at all.
Trace assembleRun(ImportState &&state);

} // namespace fusescope::profiler::kineto
