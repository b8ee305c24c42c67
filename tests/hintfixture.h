#pragma once
// Small synthetic traces written as text, one event a line, times in µs:
//
//   source kineto                         kineto (default) | nsys | fusescope: whose trace the run claims to be
//   step 0 1000                           a Step ("ProfilerStep#0", then #1 …; name= to choose)
//   op aten::add 10 5 shapes=[[2,3]]      a framework op; nesting (depth) follows from the times
//   range "## forward ##" 5 400           a user range
//   runtime cudaLaunchKernel 18 2 corr=3  a runtime / driver call (also cudaDeviceSynchronize …)
//   kernel k1 20 4 grid=1,1,1 block=128,1,1 corr=3 occupancy=19 regs=32 smem=0
//   memcpy HtoD 100 50 pageable bytes=1048576   HtoD | DtoH | DtoD | HtoH | PtoP, pageable | pinned
//   memset 120 3 bytes=4096
//   instant recompile 300 text="guard failed"
//   flow 3                                a launch flow: the runtime call with corr=3 → the GPU work with corr=3
//   alloc 50 4096 device=0                an allocation (negative bytes free); totals follow
//   counter "GPU util" 10 75              a counter sample
//   repeat 25 every 20 kernel k{i} 0 4    the line 25 times, shifted by 20 µs each, {i} = 0, 1 …
//
// Placement: CPU kinds go on CPU thread 1, GPU kinds on GPU 0's stream 7;
// thread=N, stream=S and device=D choose others, and a kernel with thread= is
// a CPU kernel (what our own recordings hold). Other keys: ext= (external
// id), detail= (a kernel's graph-node origins "3,5,9"), flops=, bytes=,
// extra= (raw JSON kept in EventArgs::extra). "quoted words" hold spaces,
// `#` starts a comment. Kernel keys occupancy/regs/smem land in extra under
// the names the run's source uses (Kineto's, or Nsight's: no occupancy there). Compile stages and
// anything else are added to the returned Trace with ordinary C++.
//
// Malformed lines throw std::runtime_error naming the line.

#include "profiler/trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace fusescope::profiler::fixture {

class TraceFixture
{
public:
    explicit TraceFixture(const std::string &text)
    {
        m_run = &m_trace.runs.emplace_back();
        source("kineto");
        std::istringstream lines(text);
        std::string line;
        for (int number = 1; std::getline(lines, line); ++number)
            parseLine(line, number);
        finish();
    }
    Trace take() { return std::move(m_trace); }

private:
    struct Line {
        std::vector<std::string> words;           // positional
        std::map<std::string, std::string> keys; // key=value
        int number = 0;
    };

    [[noreturn]] static void fail(const Line &line, const std::string &why)
    {
        throw std::runtime_error("fixture line " + std::to_string(line.number) + ": " + why);
    }

    static std::vector<std::string> tokens(const std::string &text)
    {
        std::vector<std::string> out;
        std::string current;
        bool quoted = false, any = false;
        for (char c : text) {
            if (c == '"') {
                quoted = !quoted;
                any = true;
            } else if (!quoted && c == '#') {
                break;
            } else if (!quoted && (c == ' ' || c == '\t')) {
                if (any)
                    out.push_back(current);
                current.clear();
                any = false;
            } else {
                current += c;
                any = true;
            }
        }
        if (any)
            out.push_back(current);
        return out;
    }

    static Line split(const std::string &text, int number)
    {
        Line line;
        line.number = number;
        for (const std::string &t : tokens(text)) {
            const size_t eq = t.find('=');
            if (eq != std::string::npos && eq > 0 && !line.words.empty())
                line.keys[t.substr(0, eq)] = t.substr(eq + 1);
            else
                line.words.push_back(t);
        }
        return line;
    }

    static int64_t ns(const Line &line, const std::string &us)
    {
        try {
            size_t used = 0;
            const double value = std::stod(us, &used);
            if (used == us.size())
                return std::llround(value * 1000.0);
        } catch (const std::exception &) {
        }
        fail(line, "\"" + us + "\" is not a time in µs");
    }

    static int64_t integer(const Line &line, const std::string &key, int64_t fallback)
    {
        auto it = line.keys.find(key);
        if (it == line.keys.end())
            return fallback;
        try {
            return std::stoll(it->second);
        } catch (const std::exception &) {
            fail(line, key + "=" + it->second + " is not an integer");
        }
    }

    static int64_t wordInteger(const Line &line, size_t i)
    {
        const std::string &w = word(line, i);
        try {
            size_t used = 0;
            const int64_t value = std::stoll(w, &used);
            if (used == w.size())
                return value;
        } catch (const std::exception &) {
        }
        fail(line, "\"" + w + "\" is not an integer");
    }

    static std::string text(const Line &line, const std::string &key)
    {
        auto it = line.keys.find(key);
        return it == line.keys.end() ? std::string() : it->second;
    }

    static bool flag(const Line &line, const std::string &word)
    {
        return std::find(line.words.begin(), line.words.end(), word) != line.words.end();
    }

    void parseLine(const std::string &text, int number)
    {
        static const std::regex repeat(R"(^\s*repeat\s+(\d+)\s+every\s+(\S+)\s+(.*)$)");
        std::smatch m;
        if (std::regex_match(text, m, repeat)) {
            repeatLine(m[3].str(), std::stoi(m[1].str()), ns(Line{{}, {}, number}, m[2].str()), number);
            return;
        }
        const Line line = split(text, number);
        if (line.words.empty())
            return;
        const std::string &kind = line.words[0];
        if (kind == "source")
            source(word(line, 1));
        else if (kind == "step")
            step(line);
        else if (kind == "op" || kind == "range" || kind == "runtime")
            cpuRange(line, kind == "op" ? EventKind::Op : kind == "range" ? EventKind::UserRange : EventKind::Runtime);
        else if (kind == "kernel")
            kernel(line);
        else if (kind == "memcpy")
            memcpy(line);
        else if (kind == "memset")
            memset(line);
        else if (kind == "instant")
            instant(line);
        else if (kind == "flow")
            m_flows.push_back(wordInteger(line, 1));
        else if (kind == "alloc")
            allocation(line);
        else if (kind == "counter")
            counter(line);
        else
            fail(line, "unknown kind \"" + kind + "\"");
    }

    void repeatLine(const std::string &text, int times, int64_t everyNs, int number)
    {
        for (int i = 0; i < times; ++i) {
            std::string line = text;
            for (size_t at; (at = line.find("{i}")) != std::string::npos;)
                line.replace(at, 3, std::to_string(i));
            m_offsetNs = everyNs * i;
            parseLine(line, number);
        }
        m_offsetNs = 0;
    }

    static const std::string &word(const Line &line, size_t i)
    {
        if (i >= line.words.size())
            fail(line, "expects at least " + std::to_string(i + 1) + " words");
        return line.words[i];
    }

    void source(const std::string &name)
    {
        RunInfo &info = m_run->info;
        info.mode = name == "fusescope" ? "eager" : "imported";
        info.name = name;
        info.options = name == "nsys" ? "nsys export schema 3.13.2" : "";
        m_trace.meta.producer = name == "kineto" ? "Kineto / Chrome trace JSON (imported)"
            : name == "nsys"                     ? "NVIDIA Nsight Systems 2024.5.1"
                                                 : "fusescope test";
    }

    // ---- tracks ----

    TrackId track(TrackKind kind, int64_t device, int64_t tid, const std::string &counterName = {})
    {
        const auto key = std::make_tuple(int(kind), device, tid);
        auto [it, added] = m_tracks.try_emplace(key, TrackId(uint16_t(m_run->tracks.size())));
        if (added) {
            const std::string name = kind == TrackKind::GpuStream
                ? "GPU " + std::to_string(device) + " · stream " + std::to_string(tid)
                : kind == TrackKind::Counter ? counterName : "thread " + std::to_string(tid);
            m_run->tracks.push_back(Track{it->second, kind, m_trace.strings.intern(name), 1, tid,
                                          int32_t(kind == TrackKind::GpuStream ? device : -1),
                                          int32_t(m_run->tracks.size())});
        }
        return it->second;
    }

    TrackId cpuTrack(const Line &line) { return track(TrackKind::CpuThread, -1, integer(line, "thread", 1)); }
    TrackId gpuTrack(const Line &line)
    {
        return track(TrackKind::GpuStream, integer(line, "device", 0), integer(line, "stream", 7));
    }

    // ---- events ----

    Event &add(const Line &line, EventKind kind, const std::string &name, size_t timeWord, TrackId where)
    {
        Event e;
        e.kind = kind;
        e.name = m_trace.strings.intern(name);
        e.start = ns(line, word(line, timeWord)) + m_offsetNs;
        e.duration = kind == EventKind::Instant ? 0 : ns(line, word(line, timeWord + 1));
        e.track = where;
        e.flops = float(integer(line, "flops", 0));
        e.bytes = float(integer(line, "bytes", 0));
        const std::string detail = line.keys.count("shapes") ? text(line, "shapes") : text(line, "detail");
        e.detail = m_trace.strings.intern(line.keys.count("text") ? text(line, "text") : detail);
        m_run->events.push_back(e);
        return m_run->events.back();
    }

    EventArgs baseArgs(const Line &line, bool gpu)
    {
        EventArgs a;
        a.correlation = integer(line, "corr", -1);
        a.externalId = integer(line, "ext", -1);
        if (gpu) {
            a.device = int32_t(integer(line, "device", 0));
            a.stream = int32_t(integer(line, "stream", 7));
        }
        if (line.keys.count("extra"))
            a.extra = m_trace.strings.intern(text(line, "extra"));
        return a;
    }

    void attach(Event &e, const EventArgs &a)
    {
        m_run->args.push_back(a);
        e.args = ArgsId(uint32_t(m_run->args.size() - 1));
    }

    static void dims(const Line &line, const std::string &key, int32_t (&out)[3])
    {
        std::istringstream in(text(line, key));
        std::string part;
        for (int i = 0; i < 3 && std::getline(in, part, ','); ++i)
            out[i] = int32_t(std::stol(part));
    }

    void step(const Line &line)
    {
        const std::string name = line.keys.count("name") ? text(line, "name")
                                                         : "ProfilerStep#" + std::to_string(m_steps);
        ++m_steps;
        add(line, EventKind::Step, name, 1, cpuTrack(line));
    }

    void cpuRange(const Line &line, EventKind kind)
    {
        Event &e = add(line, kind, word(line, 1), 2, cpuTrack(line));
        if (line.keys.count("corr") || line.keys.count("ext") || line.keys.count("extra"))
            attach(e, baseArgs(line, false));
    }

    // Kineto writes occupancy as "est. achieved occupancy %", registers and
    // shared memory as "registers per thread" / "shared memory"; Nsight as
    // registersPerThread / sharedMemory.
    std::string kernelExtra(const Line &line) const
    {
        const bool nsys = m_run->info.options.starts_with("nsys");
        std::string json;
        auto put = [&](const char *kineto, const char *nsight, const std::string &key) {
            if (line.keys.count(key) && (nsys ? nsight : kineto))
                json += (json.empty() ? "{" : ",") + std::string("\"") + (nsys ? nsight : kineto) + "\":"
                    + text(line, key);
        };
        put("est. achieved occupancy %", nullptr, "occupancy"); // Nsight exports have none
        put("registers per thread", "registersPerThread", "regs");
        put("shared memory", "sharedMemory", "smem");
        return json.empty() ? json : json + "}";
    }

    void kernel(const Line &line)
    {
        const bool cpu = line.keys.count("thread") > 0;
        Event &e = add(line, EventKind::Kernel, word(line, 1), 2, cpu ? cpuTrack(line) : gpuTrack(line));
        if (cpu)
            return;
        EventArgs a = baseArgs(line, true);
        dims(line, "grid", a.grid);
        dims(line, "block", a.block);
        if (const std::string extra = kernelExtra(line); !extra.empty() && !a.extra.valid())
            a.extra = m_trace.strings.intern(extra);
        attach(e, a);
    }

    void memcpy(const Line &line)
    {
        static const std::map<std::string, std::pair<CopyKind, const char *>> kinds = {
            {"HtoD", {CopyKind::HostToDevice, "(%s -> Device)"}}, {"DtoH", {CopyKind::DeviceToHost, "(Device -> %s)"}},
            {"DtoD", {CopyKind::DeviceToDevice, "(Device -> Device)"}}, {"HtoH", {CopyKind::HostToHost, "(%s -> %s)"}},
            {"PtoP", {CopyKind::PeerToPeer, "(Device -> Device)"}}};
        auto it = kinds.find(word(line, 1));
        if (it == kinds.end())
            fail(line, "unknown copy kind \"" + word(line, 1) + "\"");
        const bool pinned = flag(line, "pinned");
        std::string memory = it->second.second;
        for (size_t at; (at = memory.find("%s")) != std::string::npos;)
            memory.replace(at, 2, pinned ? "Pinned" : "Pageable");
        Event &e = add(line, EventKind::Memcpy, "Memcpy " + word(line, 1) + " " + memory, 2, gpuTrack(line));
        EventArgs a = baseArgs(line, true);
        a.copyKind = it->second.first;
        a.pinned = pinned;
        attach(e, a);
    }

    void memset(const Line &line)
    {
        Event &e = add(line, EventKind::Memset, "Memset (Device)", 1, gpuTrack(line));
        attach(e, baseArgs(line, true));
    }

    void instant(const Line &line) { add(line, EventKind::Instant, word(line, 1), 2, cpuTrack(line)); }

    void allocation(const Line &line)
    {
        Allocation a;
        a.time = ns(line, word(line, 1)) + m_offsetNs;
        a.bytes = wordInteger(line, 2);
        a.device = int16_t(integer(line, "device", -1));
        a.address = uint64_t(integer(line, "address", int64_t(m_run->allocations.size() + 1) * 4096));
        int64_t &allocated = m_allocated[a.device];
        allocated += a.bytes;
        int64_t &reserved = m_reserved[a.device];
        reserved = std::max(reserved, allocated);
        a.allocatedAfter = allocated;
        a.reservedAfter = reserved;
        a.track = cpuTrack(line);
        m_run->allocations.push_back(a);
    }

    void counter(const Line &line)
    {
        const std::string &name = word(line, 1);
        const int64_t series = m_counterIds.try_emplace(name, int64_t(m_counterIds.size())).first->second;
        const TrackId where = track(TrackKind::Counter, -1, series, name);
        m_run->counters.push_back({ns(line, word(line, 2)) + m_offsetNs, double(ns(line, word(line, 3))) / 1000.0, where});
    }

    // ---- the run as a recorder leaves it ----

    void finish()
    {
        sortEvents();
        nestDepths();
        linkFlows();
        std::stable_sort(m_run->allocations.begin(), m_run->allocations.end(),
                         [](const Allocation &a, const Allocation &b) { return a.time < b.time; });
        RunSummary &s = m_run->summary;
        s.events = int64_t(m_run->events.size());
        for (const Event &e : m_run->events) {
            s.durationNs = std::max(s.durationNs, e.end());
            s.steps += e.kind == EventKind::Step;
        }
    }

    // By (track, start), outer ranges before the ranges they hold.
    void sortEvents()
    {
        std::vector<Event> &events = m_run->events;
        std::stable_sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
            return std::tuple(a.track, a.start, -a.duration) < std::tuple(b.track, b.start, -b.duration);
        });
    }

    void nestDepths()
    {
        std::vector<const Event *> open;
        for (Event &e : m_run->events) {
            while (!open.empty() && (open.back()->track != e.track || open.back()->end() <= e.start))
                open.pop_back();
            e.depth = uint8_t(open.size());
            if (e.duration > 0)
                open.push_back(&e);
        }
    }

    void linkFlows()
    {
        for (int64_t corr : m_flows) {
            Flow flow{uint64_t(corr), {}, {}, FlowKind::Launch};
            for (uint32_t i = 0; i < m_run->events.size(); ++i) {
                const Event &e = m_run->events[i];
                if (!e.args.valid() || m_run->args[e.args.value].correlation != corr)
                    continue;
                (e.kind == EventKind::Runtime ? flow.from : flow.to) = EventId(i);
            }
            m_run->flows.push_back(flow);
        }
    }

    Trace m_trace;
    Run *m_run = nullptr;
    std::map<std::tuple<int, int64_t, int64_t>, TrackId> m_tracks;
    std::map<std::string, int64_t> m_counterIds;
    std::map<int, int64_t> m_allocated;
    std::map<int, int64_t> m_reserved;
    std::vector<int64_t> m_flows;
    int m_steps = 0;
    int64_t m_offsetNs = 0; // of the current repetition
};

// The trace a fixture text describes.
inline Trace fixtureTrace(const std::string &text)
{
    return TraceFixture(text).take();
}

// "k1,k2": the names of `ids` in `run`, in their order (for comparing evidence).
inline std::string eventNames(const Trace &trace, const Run &run, const std::vector<EventId> &ids)
{
    std::string names;
    for (EventId id : ids)
        names += (names.empty() ? "" : ",") + trace.strings[run.event(id).name];
    return names;
}

} // namespace fusescope::profiler::fixture
