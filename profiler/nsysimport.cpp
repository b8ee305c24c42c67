// Nsight Systems SQLite export -> one imported Run. What each table becomes:
//   CUPTI_ACTIVITY_KIND_KERNEL   Kernel on the GpuStream track of (process, device, stream)
//   CUPTI_ACTIVITY_KIND_MEMCPY   Memcpy there, "Memcpy HtoD (Pageable -> Device)", copy kind, pinned, bytes
//   CUPTI_ACTIVITY_KIND_MEMSET   Memset there, "Memset (Device)", bytes
//   CUPTI_ACTIVITY_KIND_RUNTIME  Runtime on the CPU thread of globalTid, "_vNNNN" dropped from the name
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION  Runtime nested in the API call with its correlation id ("Event sync")
//   NVTX_EVENTS                  UserRange on the thread: push/pop and start/end ranges that have an end
//   CUDA_GPU_MEMORY_USAGE_EVENTS Allocation records and a per-device "memory allocated" counter
//   StringIds, ThreadNames, PROCESSES, TARGET_INFO_GPU, ENUM_*, *META_DATA*, TARGET_INFO_* names and metadata
// Runtime calls join kernels, copies and sets on correlationId (Flow kind Launch).

#include "profiler/nsysimport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <limits>
#include <numeric>
#include <tuple>

namespace fusescope::profiler {
namespace nsys {
namespace {

// globalTid = vm << 48 | pid << 24 | tid; globalPid is the same with tid = 0.
constexpr int64_t kIdMask = 0xFFFFFF;
int64_t pidOf(int64_t globalTid)
{
    return (globalTid >> 24) & kIdMask;
}
int64_t globalPidOf(int64_t globalTid)
{
    return globalTid & ~kIdMask;
}

// TRACE_PROCESS_EVENT_CUDABACKTRACE: with backtraces on, nsys 2022 writes a
// second row around an API call (same correlation id, slightly longer) that
// only carries the call chain; counted twice it would double the API time.
constexpr int64_t kBacktraceClass = 67;

// NvtxPushPopRange, NvtxStartEndRange and their NVTXT-file forms (ENUM_NSYS_EVENT_TYPE).
constexpr const char *kNvtxRangeTypes = "59, 60, 70, 71";
constexpr int64_t kNvtxDomainCreate = 75;

// CUpti_ActivityMemcpyKind, by value: used when the export has no ENUM_CUDA_MEMCPY_OPER.
struct CopyKindInfo {
    const char *enumName;
    const char *shortName;
    CopyKind kind;
};
constexpr CopyKindInfo kCopyKinds[] = {
    {"CUDA_MEMCPY_KIND_UNKNOWN", "unknown", CopyKind::Unknown},
    {"CUDA_MEMCPY_KIND_HTOD", "HtoD", CopyKind::HostToDevice},
    {"CUDA_MEMCPY_KIND_DTOH", "DtoH", CopyKind::DeviceToHost},
    {"CUDA_MEMCPY_KIND_HTOA", "HtoA", CopyKind::HostToDevice},
    {"CUDA_MEMCPY_KIND_ATOH", "AtoH", CopyKind::DeviceToHost},
    {"CUDA_MEMCPY_KIND_ATOA", "AtoA", CopyKind::DeviceToDevice},
    {"CUDA_MEMCPY_KIND_ATOD", "AtoD", CopyKind::DeviceToDevice},
    {"CUDA_MEMCPY_KIND_DTOA", "DtoA", CopyKind::DeviceToDevice},
    {"CUDA_MEMCPY_KIND_DTOD", "DtoD", CopyKind::DeviceToDevice},
    {"CUDA_MEMCPY_KIND_HTOH", "HtoH", CopyKind::HostToHost},
    {"CUDA_MEMCPY_KIND_PTOP", "PtoP", CopyKind::PeerToPeer},
    {"CUDA_MEMCPY_KIND_UVM_HTOD", "UVM HtoD", CopyKind::HostToDevice},
    {"CUDA_MEMCPY_KIND_UVM_DTOH", "UVM DtoH", CopyKind::DeviceToHost},
    {"CUDA_MEMCPY_KIND_UVM_DTOD", "UVM DtoD", CopyKind::DeviceToDevice},
};

// CUpti_ActivityMemoryKind as nsys numbers it, for exports without ENUM_CUDA_MEM_KIND.
constexpr const char *kMemKinds[]
    = {"Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown"};
constexpr const char *kSyncTypes[] = {"Unknown", "Event sync", "Stream wait sync", "Stream sync", "Context sync"};
constexpr int64_t kDeallocation = 1; // ENUM_CUDA_DEV_MEM_EVENT_OPER

// Read for progress, in this order.
const std::vector<std::string> kTables = {"StringIds",
                                          "ThreadNames",
                                          "PROCESSES",
                                          "TARGET_INFO_GPU",
                                          "CUPTI_ACTIVITY_KIND_RUNTIME",
                                          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                                          "CUPTI_ACTIVITY_KIND_KERNEL",
                                          "CUPTI_ACTIVITY_KIND_MEMCPY",
                                          "CUPTI_ACTIVITY_KIND_MEMSET",
                                          "NVTX_EVENTS",
                                          "CUDA_GPU_MEMORY_USAGE_EVENTS"};

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", the name CUDA's headers and Kineto use.
std::string apiName(std::string name)
{
    const size_t v = name.rfind("_v");
    if (v != std::string::npos && v + 2 < name.size()
        && std::all_of(name.begin() + std::ptrdiff_t(v) + 2, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        name.resize(v);
    return name;
}

template <size_t N>
std::string labelOf(const std::map<int64_t, std::string> &fromEnum, const char *const (&builtIn)[N], int64_t value)
{
    if (auto it = fromEnum.find(value); it != fromEnum.end())
        return it->second;
    return value >= 0 && size_t(value) < N ? builtIn[value] : "kind " + std::to_string(value);
}

struct RuntimeRow {
    int64_t start = 0;
    int64_t end = 0;
    int64_t globalTid = 0;
    int64_t correlation = -1;
    int64_t eventClass = 0;
    StringId name;
};

// The columns every GPU activity table starts with.
struct GpuRow {
    int64_t start, end, device, stream, correlation, globalPid;
};
constexpr const char *kGpuColumns = R"(start, "end", deviceId, streamId, correlationId, globalPid)";

GpuRow gpuRow(const Row &row)
{
    return {row.integer(0), row.integer(1), row.integer(2), row.integer(3), row.isNull(4) ? -1 : row.integer(4),
            row.integer(5)};
}

class Importer
{
public:
    Importer(const std::string &path, const ImportControl &control)
        : m_file(path, control)
    { }

    Trace import()
    {
        m_file.countRows(kTables);
        m_strings.read(m_file);
        readMeta();
        readNames();
        readRuntime();
        readSync();
        readKernels();
        readCopies();
        readMemsets();
        readNvtx();
        readMemory();
        finish();
        m_file.reportDone();
        return std::move(m_trace);
    }

private:
    // ---- names and metadata ----

    std::map<std::string, std::string> keyValues(const std::string &table, const std::string &where = {})
    {
        std::map<std::string, std::string> values;
        if (m_file.hasColumn(table, "name") && m_file.hasColumn(table, "value"))
            m_file.forEachRow(table, "SELECT name, value FROM " + table + where,
                              [&](const Row &row) { values[row.text(0)] = row.text(1); });
        return values;
    }

    void readMeta()
    {
        auto exported = keyValues(m_file.hasTable("META_DATA_EXPORT") ? "META_DATA_EXPORT" : "EXPORT_META_DATA");
        TraceMeta &meta = m_trace.meta;
        meta.producer = exported["EXPORT_PRODUCT_NAME"] + " " + exported["EXPORT_PRODUCT_VERSION"];
        m_schema = exported["EXPORT_SCHEMA_VERSION"];
        auto system = keyValues("TARGET_INFO_SYSTEM_ENV", " WHERE name IN ('Hostname', 'CpuDescription')");
        meta.host = system["Hostname"];
        meta.cpuModel = system["CpuDescription"];
        meta.commandLine = commandLine(keyValues("META_DATA_CAPTURE", " WHERE name LIKE 'PROCESS_0:%'"));
        readSessionStart();
    }

    static std::string commandLine(std::map<std::string, std::string> capture)
    {
        std::string line = capture["PROCESS_0:COMMAND"];
        for (int i = 0; capture.count("PROCESS_0:ARGUMENT_" + std::to_string(i)); ++i)
            line += " " + capture["PROCESS_0:ARGUMENT_" + std::to_string(i)];
        return line;
    }

    void readSessionStart()
    {
        const std::string table = "TARGET_INFO_SESSION_START_TIME";
        if (!m_file.hasColumn(table, "utcEpochNs"))
            return;
        m_file.forEachRow(table,
                          "SELECT utcEpochNs, " + m_file.columnOr(table, "utcTime") + " FROM " + table + " LIMIT 1",
                          [&](const Row &row) {
                              m_sessionStartUnixNs = row.integer(0);
                              m_trace.meta.createdUtc = row.isNull(1) ? "" : row.text(1) + "Z";
                          });
    }

    void readNames()
    {
        readGpus();
        readProcesses();
        const std::string table = m_file.hasTable("ThreadNames") ? "ThreadNames" : "THREAD_NAMES";
        if (m_file.hasColumn(table, "nameId") && m_file.hasColumn(table, "globalTid"))
            m_file.forEachRow(table, "SELECT globalTid, nameId FROM " + table,
                              [&](const Row &row) { m_threadNames[row.integer(0)] = m_strings.text(row.integer(1)); });
        m_copyEnum = m_file.enumValues("ENUM_CUDA_MEMCPY_OPER", "name");
        m_memKindEnum = m_file.enumValues("ENUM_CUDA_MEM_KIND", "label");
        m_syncEnum = m_file.enumValues("ENUM_CUPTI_SYNC_TYPE", "label");
    }

    void readGpus()
    {
        const std::string table = "TARGET_INFO_GPU";
        if (!m_file.hasColumn(table, "id"))
            return;
        m_file.forEachRow(table, "SELECT id, " + m_file.columnOr(table, "name") + " FROM " + table + " ORDER BY id",
                          [&](const Row &row) { m_gpuNames[row.integer(0)] = row.text(1); });
        std::map<std::string, int> count;
        for (const auto &[id, name] : m_gpuNames)
            ++count[name];
        for (const auto &[name, n] : count)
            m_trace.meta.gpu += (m_trace.meta.gpu.empty() ? "" : ", ") + (n > 1 ? std::to_string(n) + "x " : "") + name;
    }

    void readProcesses()
    {
        const std::string table = "PROCESSES";
        if (m_file.hasColumn(table, "globalPid") && m_file.hasColumn(table, "pid"))
            m_file.forEachRow(table, "SELECT globalPid, pid, " + m_file.columnOr(table, "name") + " FROM " + table,
                              [&](const Row &row) {
                                  m_processes[row.integer(0)] = {row.integer(1), row.text(2)};
                              });
    }

    // ---- CPU side ----

    void readRuntime()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_RUNTIME";
        if (!m_file.hasTable(table))
            return;
        const std::string sql = R"(SELECT start, "end", globalTid, correlationId, )" + m_file.columnOr(table, "nameId")
            + ", " + m_file.columnOr(table, "name") + ", " + m_file.columnOr(table, "eventClass", "0") + " FROM "
            + table;
        std::vector<RuntimeRow> rows;
        m_file.forEachRow(table, sql, [&](const Row &row) { rows.push_back(runtimeRow(row)); });
        emitRuntime(rows);
    }

    RuntimeRow runtimeRow(const Row &row)
    {
        RuntimeRow r {
            row.integer(0), row.integer(1), row.integer(2), row.isNull(3) ? -1 : row.integer(3), row.integer(6), {}};
        if (!row.isNull(4)) {
            auto [it, added] = m_apiNames.try_emplace(row.integer(4));
            if (added)
                it->second = m_trace.strings.intern(apiName(m_strings.text(row.integer(4))));
            r.name = it->second;
        } else {
            r.name = m_trace.strings.intern(apiName(row.text(5)));
        }
        return r;
    }

    void emitRuntime(const std::vector<RuntimeRow> &rows)
    {
        std::unordered_map<int64_t, size_t> preferred; // correlation -> the row that is not a backtrace
        for (size_t i = 0; i < rows.size(); ++i) {
            auto [it, added] = preferred.try_emplace(rows[i].correlation, i);
            if (!added && rows[it->second].eventClass == kBacktraceClass && rows[i].eventClass != kBacktraceClass)
                it->second = i;
        }
        for (size_t i = 0; i < rows.size(); ++i) {
            const RuntimeRow &r = rows[i];
            if (r.correlation >= 0 && r.eventClass == kBacktraceClass
                && rows[preferred[r.correlation]].eventClass != kBacktraceClass)
                continue;
            EventArgs args;
            args.correlation = r.correlation;
            const uint32_t index
                = addEvent(EventKind::Runtime, r.name, r.start, r.end, threadTrack(r.globalTid), &args);
            if (r.correlation >= 0)
                m_launchers.try_emplace(r.correlation, index);
        }
    }

    // Synchronization has no thread: it goes inside the API call that waited.
    void readSync()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
        if (!m_file.hasTable(table))
            return;
        m_file.forEachRow(table,
                          std::string("SELECT ") + kGpuColumns + ", " + m_file.columnOr(table, "syncType", "0")
                              + " FROM " + table,
                          [&](const Row &row) {
                              const GpuRow g = gpuRow(row);
                              auto launcher = m_launchers.find(g.correlation);
                              const TrackId track = launcher != m_launchers.end() ? m_run.events[launcher->second].track
                                                                                  : syncTrack(g.globalPid);
                              const EventArgs args = gpuArgs(g);
                              addEvent(EventKind::Runtime, syncName(row.integer(6)), g.start, g.end, track, &args);
                          });
    }

    StringId syncName(int64_t type) { return m_trace.strings.intern(labelOf(m_syncEnum, kSyncTypes, type)); }

    void readNvtx()
    {
        const std::string table = "NVTX_EVENTS";
        if (!m_file.hasColumn(table, "eventType"))
            return;
        readNvtxDomains();
        const std::string sql = R"(SELECT start, "end", globalTid, )" + m_file.columnOr(table, "text") + ", "
            + m_file.columnOr(table, "textId") + ", " + m_file.columnOr(table, "domainId", "0") + " FROM " + table
            + " WHERE eventType IN (" + kNvtxRangeTypes + R"() AND "end" IS NOT NULL)";
        m_file.forEachRow(table, sql, [&](const Row &row) {
            const StringId name = m_trace.strings.intern(!row.isNull(3)       ? row.text(3)
                                                             : !row.isNull(4) ? m_strings.text(row.integer(4))
                                                                              : "NVTX range");
            EventArgs args;
            args.extra = domainExtra(row.integer(5));
            addEvent(EventKind::UserRange, name, row.integer(0), row.integer(1), threadTrack(row.integer(2)),
                     args.extra.valid() ? &args : nullptr);
        });
    }

    void readNvtxDomains()
    {
        const std::string table = "NVTX_EVENTS";
        if (!m_file.hasColumn(table, "domainId") || !m_file.hasColumn(table, "text"))
            return;
        m_file.forEachRow(
            table, "SELECT domainId, text FROM " + table + " WHERE eventType = " + std::to_string(kNvtxDomainCreate),
            [&](const Row &row) { m_domains[row.integer(0)] = row.text(1); });
    }

    // {"domain":"MPI"}, or nothing for the default domain.
    StringId domainExtra(int64_t domain)
    {
        auto it = m_domains.find(domain);
        if (domain == 0 || it == m_domains.end())
            return {};
        return m_trace.strings.intern(nlohmann::json {{"domain", it->second}}.dump());
    }

    // ---- GPU side ----

    void readKernels()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_KERNEL";
        if (!m_file.hasTable(table))
            return;
        std::string names;
        for (const char *column : {"demangledName", "shortName", "mangledName"})
            names += m_file.hasColumn(table, column) ? std::string(", ") + column : "";
        const std::string sql = std::string("SELECT ") + kGpuColumns + ", coalesce(NULL" + names + "), "
            + m_file.columnOr(table, "shortName") + ", gridX, gridY, gridZ, blockX, blockY, blockZ, "
            + m_file.columnOr(table, "registersPerThread") + ", " + m_file.columnOr(table, "staticSharedMemory", "0")
            + " + " + m_file.columnOr(table, "dynamicSharedMemory", "0") + " FROM " + table;
        m_file.forEachRow(table, sql, [&](const Row &row) { addKernel(row); });
    }

    void addKernel(const Row &row)
    {
        const GpuRow g = gpuRow(row);
        EventArgs args = gpuArgs(g);
        for (int i = 0; i < 3; ++i) {
            args.grid[i] = static_cast<int32_t>(row.integer(8 + i));
            args.block[i] = static_cast<int32_t>(row.integer(11 + i));
        }
        args.extra = kernelExtra(row);
        const StringId name = row.isNull(6) ? m_trace.strings.intern("(unnamed kernel)")
                                            : m_strings.intern(row.integer(6), m_trace.strings);
        launched(g, addEvent(EventKind::Kernel, name, g.start, g.end, streamTrack(g), &args));
    }

    // {"shortName":…,"registersPerThread":…,"sharedMemory":…}: few distinct values, so built once each.
    StringId kernelExtra(const Row &row)
    {
        const auto key = std::make_tuple(row.isNull(7) ? -1 : row.integer(7), row.integer(14), row.integer(15));
        auto [it, added] = m_kernelExtras.try_emplace(key);
        if (added) {
            nlohmann::json extra = nlohmann::json::object();
            if (!row.isNull(7))
                extra["shortName"] = m_strings.text(row.integer(7));
            if (!row.isNull(14))
                extra["registersPerThread"] = row.integer(14);
            extra["sharedMemory"] = row.integer(15);
            it->second = m_trace.strings.intern(extra.dump());
        }
        return it->second;
    }

    void readCopies()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_MEMCPY";
        if (!m_file.hasTable(table))
            return;
        const std::string sql = std::string("SELECT ") + kGpuColumns + ", bytes, copyKind, "
            + m_file.columnOr(table, "srcKind", "-1") + ", " + m_file.columnOr(table, "dstKind", "-1") + " FROM "
            + table;
        m_file.forEachRow(table, sql, [&](const Row &row) {
            const GpuRow g = gpuRow(row);
            const CopyKindInfo &info = copyKindInfo(row.integer(7));
            EventArgs args = gpuArgs(g);
            args.copyKind = info.kind;
            args.pinned = memKind(row.integer(8)) == "Pinned" || memKind(row.integer(9)) == "Pinned";
            const std::string name = std::string("Memcpy ") + info.shortName + " (" + memKind(row.integer(8)) + " -> "
                + memKind(row.integer(9)) + ")";
            launched(g,
                     addEvent(EventKind::Memcpy, m_trace.strings.intern(name), g.start, g.end, streamTrack(g), &args,
                              float(row.integer(6))));
        });
    }

    const CopyKindInfo &copyKindInfo(int64_t value) const
    {
        if (auto it = m_copyEnum.find(value); it != m_copyEnum.end()) {
            for (const CopyKindInfo &info : kCopyKinds) {
                if (it->second == info.enumName)
                    return info;
            }
            return kCopyKinds[0];
        }
        return value >= 0 && size_t(value) < std::size(kCopyKinds) ? kCopyKinds[value] : kCopyKinds[0];
    }

    std::string memKind(int64_t value) const { return value < 0 ? "?" : labelOf(m_memKindEnum, kMemKinds, value); }

    void readMemsets()
    {
        const std::string table = "CUPTI_ACTIVITY_KIND_MEMSET";
        if (!m_file.hasTable(table))
            return;
        const std::string sql = std::string("SELECT ") + kGpuColumns + ", bytes, "
            + m_file.columnOr(table, "memKind", "-1") + " FROM " + table;
        m_file.forEachRow(table, sql, [&](const Row &row) {
            const GpuRow g = gpuRow(row);
            const EventArgs args = gpuArgs(g);
            const StringId name = m_trace.strings.intern("Memset (" + memKind(row.integer(7)) + ")");
            launched(g,
                     addEvent(EventKind::Memset, name, g.start, g.end, streamTrack(g), &args, float(row.integer(6))));
        });
    }

    static EventArgs gpuArgs(const GpuRow &g)
    {
        EventArgs args;
        args.correlation = g.correlation;
        args.device = static_cast<int32_t>(g.device);
        args.stream = static_cast<int32_t>(g.stream);
        return args;
    }

    void launched(const GpuRow &g, uint32_t index)
    {
        if (g.correlation >= 0)
            m_launched.emplace_back(g.correlation, index);
    }

    // ---- memory ----

    void readMemory()
    {
        const std::string table = "CUDA_GPU_MEMORY_USAGE_EVENTS";
        if (!m_file.hasColumn(table, "memoryOperationType"))
            return;
        const std::string sql = "SELECT start, deviceId, address, bytes, memoryOperationType, "
            + m_file.columnOr(table, "correlationId") + " FROM " + table + " ORDER BY start";
        const auto operations = m_file.enumValues("ENUM_CUDA_DEV_MEM_EVENT_OPER", "name");
        m_file.forEachRow(table, sql, [&](const Row &row) {
            auto op = operations.find(row.integer(4));
            const bool free = op != operations.end() ? op->second.find("DEALLOC") != std::string::npos
                                                     : row.integer(4) == kDeallocation;
            addAllocation(row, free);
        });
    }

    void addAllocation(const Row &row, bool free)
    {
        Allocation a;
        a.time = row.integer(0);
        a.device = static_cast<int16_t>(row.integer(1));
        a.address = static_cast<uint64_t>(row.integer(2));
        a.bytes = allocationBytes(a, row.integer(3), free);
        int64_t &total = m_allocated[a.device];
        total = std::max<int64_t>(0, total + a.bytes);
        a.allocatedAfter = a.reservedAfter = total; // CUDA's allocator reserves what it hands out
        if (auto launcher = m_launchers.find(row.isNull(5) ? -1 : row.integer(5)); launcher != m_launchers.end()) {
            a.op = EventId(launcher->second);
            a.track = m_run.events[launcher->second].track;
        }
        m_run.allocations.push_back(a);
        m_run.counters.push_back({a.time, double(total), counterTrack(a.device)});
    }

    // A free's size is the allocation's at that address when the row does not say.
    int64_t allocationBytes(const Allocation &a, int64_t rowBytes, bool free)
    {
        const uint64_t key = a.address ^ (uint64_t(uint16_t(a.device)) << 48);
        if (!free) {
            m_liveBytes[key] = rowBytes;
            return rowBytes;
        }
        auto it = m_liveBytes.find(key);
        const int64_t bytes = rowBytes > 0 ? rowBytes : it != m_liveBytes.end() ? it->second : 0;
        if (it != m_liveBytes.end())
            m_liveBytes.erase(it);
        return -bytes;
    }

    // ---- tracks and events ----

    TrackId addTrack(Track track)
    {
        if (m_run.tracks.size() >= TrackId::kInvalid)
            throw Error(m_file.path() + ": has more threads and streams than Fusescope's "
                        + std::to_string(TrackId::kInvalid) + " tracks");
        track.id = TrackId(static_cast<uint16_t>(m_run.tracks.size()));
        m_run.tracks.push_back(track);
        return track.id;
    }

    int64_t pidOfProcess(int64_t globalPid) const
    {
        auto it = m_processes.find(globalPid);
        return it != m_processes.end() ? it->second.first : pidOf(globalPid);
    }

    TrackId threadTrack(int64_t globalTid)
    {
        auto [it, added] = m_threadTracks.try_emplace(globalTid);
        if (!added)
            return it->second;
        Track track;
        track.pid = pidOfProcess(globalPidOf(globalTid));
        track.tid = globalTid & kIdMask;
        std::string name = m_threadNames.count(globalTid) ? m_threadNames[globalTid] : "";
        if (name.empty() && track.tid == track.pid && m_processes.count(globalPidOf(globalTid)))
            name = m_processes[globalPidOf(globalTid)].second;
        track.name
            = m_trace.strings.intern("thread " + std::to_string(track.tid) + (name.empty() ? "" : " (" + name + ")"));
        return it->second = addTrack(track);
    }

    TrackId syncTrack(int64_t globalPid)
    {
        auto [it, added] = m_syncTracks.try_emplace(globalPid);
        if (!added)
            return it->second;
        Track track;
        track.pid = pidOfProcess(globalPid);
        track.tid = -1;
        track.name = m_trace.strings.intern("process " + std::to_string(track.pid) + " CUDA synchronization");
        return it->second = addTrack(track);
    }

    TrackId streamTrack(const GpuRow &g)
    {
        auto [it, added] = m_streamTracks.try_emplace(std::make_tuple(g.globalPid, g.device, g.stream));
        if (!added)
            return it->second;
        Track track;
        track.kind = TrackKind::GpuStream;
        track.pid = pidOfProcess(g.globalPid);
        track.tid = g.stream;
        track.device = static_cast<int32_t>(g.device);
        const std::string gpu = m_gpuNames.count(g.device) ? " (" + m_gpuNames[g.device] + ")" : "";
        track.name
            = m_trace.strings.intern("GPU " + std::to_string(g.device) + " stream " + std::to_string(g.stream) + gpu);
        return it->second = addTrack(track);
    }

    TrackId counterTrack(int16_t device)
    {
        auto [it, added] = m_counterTracks.try_emplace(device);
        if (!added)
            return it->second;
        Track track;
        track.kind = TrackKind::Counter;
        track.device = device;
        track.name = m_trace.strings.intern("GPU " + std::to_string(device) + " memory allocated (bytes)");
        return it->second = addTrack(track);
    }

    // Times stay absolute until finish() knows the origin.
    uint32_t addEvent(EventKind kind, StringId name, int64_t start, int64_t end, TrackId track, const EventArgs *args,
                      float bytes = 0)
    {
        Event e;
        e.start = start;
        e.duration = std::max<int64_t>(0, end - start);
        e.name = name;
        e.kind = kind;
        e.track = track;
        e.bytes = bytes;
        if (args) {
            e.args = ArgsId(static_cast<uint32_t>(m_run.args.size()));
            m_run.args.push_back(*args);
        }
        m_run.events.push_back(e);
        return static_cast<uint32_t>(m_run.events.size() - 1);
    }

    void finish();
    void shiftToOrigin();
    void assignDepths();
    std::vector<uint32_t> sortEvents();
    void linkFlows(const std::vector<uint32_t> &finalOf);
    void assignSortIndices();
    void fillInfo();

    ExportFile m_file;
    ExportStrings m_strings;
    Trace m_trace;
    Run &m_run = m_trace.runs.emplace_back();
    std::string m_schema;
    int64_t m_sessionStartUnixNs = 0;
    std::map<int64_t, std::string> m_gpuNames;
    std::unordered_map<int64_t, std::pair<int64_t, std::string>> m_processes; // globalPid -> pid, name
    std::unordered_map<int64_t, std::string> m_threadNames; // by globalTid
    std::map<int64_t, std::string> m_copyEnum, m_memKindEnum, m_syncEnum;
    std::unordered_map<int64_t, StringId> m_apiNames; // by nameId
    std::unordered_map<int64_t, std::string> m_domains; // NVTX domain id -> name
    std::map<std::tuple<int64_t, int64_t, int64_t>, StringId> m_kernelExtras;
    std::unordered_map<int64_t, TrackId> m_threadTracks, m_syncTracks;
    std::map<std::tuple<int64_t, int64_t, int64_t>, TrackId> m_streamTracks; // (globalPid, device, stream)
    std::map<int16_t, TrackId> m_counterTracks;
    std::unordered_map<int64_t, uint32_t> m_launchers; // correlation -> API call
    std::vector<std::pair<int64_t, uint32_t>> m_launched; // correlation, GPU activity
    std::unordered_map<uint64_t, int64_t> m_liveBytes; // device|address -> bytes
    std::map<int16_t, int64_t> m_allocated; // device -> bytes
};

void Importer::finish()
{
    shiftToOrigin();
    assignDepths();
    linkFlows(sortEvents());
    std::stable_sort(m_run.allocations.begin(), m_run.allocations.end(),
                     [](const Allocation &a, const Allocation &b) { return a.time < b.time; });
    assignSortIndices();
    fillInfo();
}

// The earliest imported timestamp becomes 0; RunInfo::originNs keeps it.
void Importer::shiftToOrigin()
{
    int64_t origin = std::numeric_limits<int64_t>::max();
    for (const Event &e : m_run.events)
        origin = std::min(origin, e.start);
    for (const Allocation &a : m_run.allocations)
        origin = std::min(origin, a.time);
    if (origin == std::numeric_limits<int64_t>::max())
        origin = 0;
    for (Event &e : m_run.events)
        e.start -= origin;
    for (Allocation &a : m_run.allocations)
        a.time -= origin;
    for (CounterSample &c : m_run.counters)
        c.time -= origin;
    m_run.info.originNs = origin;
}

// Per track, like the recorder's stack: a range that starts before the open
// ones end sits one level deeper (runtime calls inside NVTX ranges, a sync
// inside its API call). Longer first at equal starts, so parents lead.
void Importer::assignDepths()
{
    std::vector<std::vector<uint32_t>> byTrack(m_run.tracks.size());
    for (uint32_t i = 0; i < m_run.events.size(); ++i)
        byTrack[m_run.events[i].track.value].push_back(i);
    for (std::vector<uint32_t> &indices : byTrack) {
        std::stable_sort(indices.begin(), indices.end(), [&](uint32_t a, uint32_t b) {
            const Event &x = m_run.events[a], &y = m_run.events[b];
            return x.start != y.start ? x.start < y.start : x.duration > y.duration;
        });
        std::vector<int64_t> openEnds;
        for (uint32_t index : indices) {
            Event &e = m_run.events[index];
            while (!openEnds.empty() && openEnds.back() <= e.start)
                openEnds.pop_back();
            e.depth = static_cast<uint8_t>(std::min<size_t>(openEnds.size(), 255));
            openEnds.push_back(e.end());
        }
    }
}

// One batch, sorted by (track, start, depth) as a recorded run's batches are.
// Returns the new index of each old one.
std::vector<uint32_t> Importer::sortEvents()
{
    const std::vector<Event> &ev = m_run.events;
    std::vector<uint32_t> order(ev.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return std::tie(ev[a].track, ev[a].start, ev[a].depth) < std::tie(ev[b].track, ev[b].start, ev[b].depth);
    });
    std::vector<uint32_t> finalOf(order.size());
    std::vector<Event> sorted(order.size());
    for (uint32_t rank = 0; rank < order.size(); ++rank) {
        finalOf[order[rank]] = rank;
        sorted[rank] = ev[order[rank]];
    }
    m_run.events = std::move(sorted);
    for (Allocation &a : m_run.allocations) {
        if (a.op.valid())
            a.op = EventId(finalOf[a.op.value]);
    }
    return finalOf;
}

void Importer::linkFlows(const std::vector<uint32_t> &finalOf)
{
    for (const auto &[correlation, index] : m_launched) {
        auto launcher = m_launchers.find(correlation);
        if (launcher != m_launchers.end())
            m_run.flows.push_back(
                {uint64_t(correlation), EventId(finalOf[launcher->second]), EventId(finalOf[index]), FlowKind::Launch});
    }
}

// Threads first (by process and thread id), then GPU streams, then counters.
void Importer::assignSortIndices()
{
    std::vector<Track *> tracks;
    for (Track &t : m_run.tracks)
        tracks.push_back(&t);
    auto group = [](const Track &t) {
        return t.kind == TrackKind::CpuThread ? 0 : t.kind == TrackKind::GpuStream ? 1 : 2;
    };
    std::stable_sort(tracks.begin(), tracks.end(), [&](const Track *a, const Track *b) {
        return std::make_tuple(group(*a), a->pid, a->device, a->tid)
            < std::make_tuple(group(*b), b->pid, b->device, b->tid);
    });
    for (size_t i = 0; i < tracks.size(); ++i)
        tracks[i]->sortIndex = static_cast<int32_t>(i);
}

void Importer::fillInfo()
{
    const std::filesystem::path file(m_file.path());
    RunInfo &info = m_run.info;
    info.name = file.stem().string();
    info.model = file.filename().string();
    info.mode = "imported";
    info.wallStartUnixNs = m_sessionStartUnixNs ? m_sessionStartUnixNs + info.originNs : 0;
    info.options = m_schema.empty() ? "nsys export" : "nsys export schema " + m_schema;
    int64_t end = 0;
    for (const Event &e : m_run.events)
        end = std::max(end, e.end());
    m_run.summary.durationNs = end;
    m_run.summary.events = static_cast<int64_t>(m_run.events.size());
}

} // namespace
} // namespace nsys

std::optional<Trace> importNsys(const std::string &path, const ImportControl &control)
{
    try {
        return nsys::Importer(path, control).import();
    } catch (const nsys::Cancelled &) {
        return std::nullopt;
    } catch (const std::bad_alloc &) {
        throw Error(path + ": not enough memory to import this Nsight Systems export");
    }
}

} // namespace fusescope::profiler
