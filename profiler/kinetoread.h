#pragma once
// Kineto trace events as the document walk reads them, and the builder that
// turns them into pending records in file order. The walk (kinetoparse.cpp)
// hands events over in batches; for a big file the builder
// (kinetoevents.cpp) runs on a second thread meanwhile.

#include "profiler/kinetoimport.h"

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fusescope::profiler::kineto {

// The fields of one trace event, as read. The views point into the file's
// buffer or the reader's arena of unescaped strings, both alive until the file
// is parsed.
struct RawEvent {
    char ph = 0;
    std::string_view cat;
    std::string_view name;
    std::string_view pid;
    std::string_view tid;
    std::string_view bp;
    std::string_view id;
    int64_t ts = 0; // ns
    int64_t dur = 0;
    bool hasTs = false;
    bool hasDur = false;
};

// What an event's "args" held: the fields EventArgs has, and what memory,
// metadata and counter events need; the builder reads them (and keeps them
// while it handles the event, not in the read event, which stays small).
struct ArgsFields {
    EventArgs args;
    bool known = false; // any EventArgs field was set
    double bytes = 0;
    int64_t memBytes = 0;
    int64_t totalAllocated = -1;
    int64_t totalReserved = -1;
    int64_t deviceId = -1;
    int64_t deviceType = -1;
    uint64_t address = 0;
    bool hasSort = false;
    int64_t sortIndex = 0;
};

// The string args the walk reads itself: their escapes need the reader.
struct StringArgs {
    std::string_view name;   // metadata: process or thread name
    std::string_view labels; // metadata: process labels
    uint64_t address = 0;    // a memory event's "Addr" written as a string
};

// One argument as written, its grammar checked by the walk; the builder reads
// what it needs of it.
struct ArgText {
    enum Kind : uint8_t { Number, OtherScalar, Nested };
    std::string_view key;
    std::string_view raw;
    Kind kind = OtherScalar;
};

// A number argument as text: only counter events convert theirs.
struct NumberArg {
    std::string_view key;
    std::string_view text;
};

struct ReadEvent {
    RawEvent ev;
    StringArgs strings;
    size_t argsBegin = 0, argsEnd = 0; // in ReadBatch::args
    const char *start = nullptr;       // where the event begins, for errors
    size_t index = 0;                  // its place in the events array
};

struct ReadBatch {
    std::vector<ReadEvent> events;
    std::vector<ArgText> args;

    void clear()
    {
        events.clear();
        args.clear();
    }
};

// "path: what in event i at byte b"; without an event, "path: what at byte b".
[[noreturn]] void failAt(const std::string &path, const std::string &what, const char *buffer, const char *at,
                         std::optional<size_t> event);

// Turns read events, in the file's order, into events, tracks, flows,
// allocations, counters and metadata of one file in ImportState. For a big
// file it runs on a thread of its own beside the walk: it keeps to cache
// lines of its own (what it reads of the walk's state, it copied when made),
// as a line the two shared went back and forth between the cores.
class alignas(64) EventBuilder
{
public:
    EventBuilder(const JsonBuffer &buffer, uint32_t file, ImportState &state);
    void add(const ReadBatch &batch);
    // Ranges whose "E" never came end with the file; the run says it is incomplete.
    void finish();

private:
    void readArgs(const ReadBatch &batch);
    void readArg(const ArgText &arg);
    void appendExtra(std::string_view key, std::string_view raw);
    bool readEventArg(std::string_view key, std::string_view raw);
    void readNumberArg(std::string_view key, std::string_view raw);
    void handleEvent();
    uint16_t track();
    uint16_t findTrack();
    StringId intern(std::string_view s);
    void addComplete();
    Event makeEvent(int64_t start, int64_t duration);
    ArgsId takeArgs();
    void markGpu(uint16_t index);
    void pushEvent(const Event &e);
    void openSlice();
    void closeSlice();
    void addInstant();
    void addMemory();
    void addCounter();
    uint32_t counterSeries(const std::string &name);
    void addFlowEnd();
    uint64_t flowId() const;
    void addMetadata();
    [[noreturn]] void failEvent(const std::string &what) const;

    const char *const m_text; // the file's JSON
    const size_t m_textSize;
    const uint32_t m_file;
    ImportState &m_state;
    const std::string m_path;
    // The event being handled.
    const ReadEvent *m_read = nullptr;
    const RawEvent *m_ev = nullptr; // in the batch
    ArgsFields m_fields; // of the event being handled
    std::string m_extra;               // the args EventArgs has no field for, as one JSON object
    std::vector<NumberArg> m_numbers;  // for counters

    int64_t m_lastTs = std::numeric_limits<int64_t>::min();
    bool m_hasLastTrack = false;
    uint16_t m_lastTrack = 0;
    std::string_view m_lastPid;
    std::string_view m_lastTid;
    std::unordered_map<std::string_view, StringId> m_names;  // views that live as long as the buffer
    std::unordered_map<uint16_t, std::vector<Event>> m_open; // B events per track, innermost last
};

} // namespace fusescope::profiler::kineto
