// One Kineto / Chrome trace-event document → read events, walked once by the
// JSON reader (jsonscan.h), so no tree or index of the file is ever built. Fields are read in
// the order the file has them; what an event makes is decided after its last
// field, by the builder (kinetoevents.cpp), which for big files runs on a
// second thread while the walk goes on.

#include "profiler/jsonscan.h"
#include "profiler/kinetoread.h"
#include "profiler/kinetotext.h"

#include "core/tensor/tensor.h"

#include <simdjson.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace fusescope::profiler::kineto {

namespace {

constexpr size_t kPollEvery = 4096; // events between cancel polls and progress reports

struct Cancelled {};

// Hands batches of read events to the builder, in order. For a big file the
// builder runs on a second thread, so its work (a third of parsing) overlaps
// the walk; otherwise it builds each batch as it is handed over.
class BuilderPipe
{
public:
    BuilderPipe(EventBuilder &builder, bool threaded) : m_builder(builder), m_filling(std::make_unique<ReadBatch>())
    {
        if (threaded)
            m_thread = std::thread([this] { work(); });
    }
    ~BuilderPipe() { stop(); }
    BuilderPipe(const BuilderPipe &) = delete;
    BuilderPipe &operator=(const BuilderPipe &) = delete;

    ReadBatch &batch() { return *m_filling; }

    // The batch being filled goes to the builder. Rethrows the builder's
    // error, which is about an event before any still being read.
    void submit()
    {
        if (!m_thread.joinable()) {
            m_builder.add(*m_filling);
            m_filling->clear();
            return;
        }
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return m_full.size() < kMaxQueued || m_error; });
        if (m_error)
            std::rethrow_exception(m_error);
        m_full.push_back(std::move(m_filling));
        if (m_free.empty()) {
            m_filling = std::make_unique<ReadBatch>();
        } else {
            m_filling = std::move(m_free.back());
            m_free.pop_back();
        }
        m_changed.notify_all();
    }

    // Builds everything handed over and what is in the batch being filled.
    void finish()
    {
        if (!m_filling->events.empty())
            submit();
        if (m_thread.joinable()) {
            {
                const std::lock_guard lock(m_mutex);
                m_closed = true;
            }
            m_changed.notify_all();
            m_thread.join();
        }
        if (m_error)
            std::rethrow_exception(m_error);
    }

    // Stops the builder where it is (the import was cancelled, or failed).
    void stop()
    {
        if (!m_thread.joinable())
            return;
        {
            const std::lock_guard lock(m_mutex);
            m_stopped = true;
        }
        m_changed.notify_all();
        m_thread.join();
    }

private:
    void work()
    {
        for (;;) {
            std::unique_ptr<ReadBatch> batch;
            {
                std::unique_lock lock(m_mutex);
                m_changed.wait(lock, [&] { return !m_full.empty() || m_closed || m_stopped; });
                if (m_stopped || m_full.empty())
                    return;
                batch = std::move(m_full.front());
                m_full.pop_front();
            }
            try {
                m_builder.add(*batch);
            } catch (...) {
                const std::lock_guard lock(m_mutex);
                m_error = std::current_exception();
                m_changed.notify_all();
                return;
            }
            batch->clear();
            const std::lock_guard lock(m_mutex);
            m_free.push_back(std::move(batch));
            m_changed.notify_all();
        }
    }

    static constexpr size_t kMaxQueued = 4;
    EventBuilder &m_builder;
    std::unique_ptr<ReadBatch> m_filling;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<std::unique_ptr<ReadBatch>> m_full;
    std::vector<std::unique_ptr<ReadBatch>> m_free;
    bool m_closed = false;
    bool m_stopped = false;
    std::exception_ptr m_error;
    std::thread m_thread;
};

constexpr size_t kBatchEvents = 1024;
// Events start as copies of this: a new event value-initialized in place was
// zeroed with `rep stos`, whose start-up cost 8 % of the walk's samples; the
// copy is a few vector stores (V100 import 13.2 -> 12.4 ms).
constexpr ReadEvent kBlankEvent{};
constexpr size_t kThreadedFrom = size_t(4) << 20; // bytes of JSON; below, a thread costs more than it saves
class DocumentParser
{
public:
    DocumentParser(const JsonBuffer &buffer, uint32_t file, ImportState &state, ImportProgress &progress)
        : m_buffer(buffer), m_file(file), m_state(state), m_progress(progress), m_path(state.files[file].path),
          m_json(buffer.data(), buffer.data() + buffer.size(), m_arena), m_builder(buffer, file, state)
    {
    }

    bool run()
    {
        try {
            return parseRoot();
        } catch (const JsonError &e) {
            fail(e.what, e.at);
        } catch (const Cancelled &) {
            return false;
        }
    }

private:
    // ---- errors: the file, then the event and the byte they are at ----

    [[noreturn]] void fail(const std::string &what, const char *at) const
    {
        failAt(m_path, what, m_buffer.data(), at, m_inEvents ? std::optional<size_t>(m_eventIndex) : std::nullopt);
    }
    [[noreturn]] void failEvent(const std::string &what) const { fail(what, m_eventStart); }

    // ---- the document ----

    bool parseRoot()
    {
        switch (m_json.type()) {
        case JsonType::Array: parseEvents(); break;
        case JsonType::Object: parseTopObject(); break;
        default: fail("is not a trace: a JSON trace is an object with \"traceEvents\" or an array of events", m_buffer.data());
        }
        if (!m_json.atEnd())
            fail("has content after the trace's JSON value", m_json.position());
        return true;
    }

    void parseTopObject()
    {
        bool sawEvents = false;
        m_json.object([&](std::string_view key) {
            if (key == "traceEvents") {
                sawEvents = true;
                if (m_json.type() != JsonType::Array)
                    fail("is not a trace: \"traceEvents\" is not an array", m_json.position());
                parseEvents();
            } else if (key == "distributedInfo") {
                readDistributedInfo();
            } else if (key == "baseTimeNanoseconds") {
                readBaseTime();
            } else if (key == "deviceProperties") {
                readDeviceProperties();
            } else {
                m_json.skip();
            }
        });
        if (!sawEvents)
            fail("is not a trace: the JSON object has no \"traceEvents\" array", m_buffer.data());
    }

    void readDistributedInfo()
    {
        if (m_json.type() != JsonType::Object) {
            m_json.skip();
            return;
        }
        FileInfo &info = m_state.files[m_file];
        m_json.object([&](std::string_view key) {
            if ((key == "rank" || key == "world_size") && m_json.type() == JsonType::Number)
                readInt(key, key == "rank" ? info.rank : info.worldSize);
            else
                m_json.skip();
        });
    }

    void readInt(std::string_view key, int64_t &out)
    {
        const char *at = m_json.position();
        if (!parseInt(m_json.number(), out))
            fail("\"" + std::string(key) + "\" is not an integer in range", at);
    }

    void readBaseTime()
    {
        if (m_json.type() != JsonType::Number) {
            m_json.skip();
            return;
        }
        readInt("baseTimeNanoseconds", m_state.files[m_file].baseNs);
        m_state.files[m_file].hasBase = true;
    }

    void readDeviceProperties()
    {
        if (m_json.type() != JsonType::Array) {
            m_json.skip();
            return;
        }
        std::string &gpu = m_state.files[m_file].gpu;
        m_json.array([&] {
            if (m_json.type() != JsonType::Object) {
                m_json.skip();
                return;
            }
            m_json.object([&](std::string_view key) {
                if (key == "name" && gpu.empty() && m_json.type() == JsonType::String)
                    gpu = std::string(m_json.string());
                else
                    m_json.skip();
            });
        });
    }

    // ---- events ----

    // Throws Cancelled when cancelled.
    void parseEvents()
    {
        m_inEvents = true;
        BuilderPipe pipe(m_builder, m_buffer.size() >= kThreadedFrom);
        try {
            walkEvents(pipe);
        } catch (const Cancelled &) {
            throw; // the pipe's destructor stops the builder
        } catch (...) {
            // The events before the one that failed are built first: an error
            // of theirs is earlier in the file, and so the one to report.
            pipe.finish();
            throw;
        }
        pipe.finish();
        m_builder.finish();
        m_inEvents = false;
    }

    void walkEvents(BuilderPipe &pipe)
    {
        m_json.array([&] {
            m_eventStart = m_json.position();
            if (m_json.type() != JsonType::Object)
                failEvent("a trace event is not a JSON object");
            ReadBatch &batch = pipe.batch();
            m_cur = &batch.events.emplace_back(kBlankEvent);
            try {
                readEvent(batch);
            } catch (...) {
                batch.events.pop_back(); // read in part: the events before it are built, not it
                throw;
            }
            if (batch.events.size() == kBatchEvents)
                pipe.submit();
            if (++m_eventIndex % kPollEvery == 0 && !poll())
                throw Cancelled();
        });
    }

    bool poll()
    {
        m_progress.parsing(double(m_eventStart - m_buffer.data()) / double(std::max<size_t>(1, m_buffer.size())));
        return !m_progress.cancelled();
    }

    // Into m_cur, the batch's last event, read in place: clearing an event
    // aside and copying it in held a sixth of the walk's profile samples (the
    // copy reads what small stores have just written). Args go to the batch.
    void readEvent(ReadBatch &batch)
    {
        m_batch = &batch;
        m_cur->argsBegin = m_cur->argsEnd = batch.args.size();
        m_cur->start = m_eventStart;
        m_cur->index = m_eventIndex;
        m_json.object([this](std::string_view key) { readField(key); });
    }

    void readField(std::string_view key)
    {
        if (equals(key, "ph")) {
            const std::string_view ph = readString("ph");
            m_cur->ev.ph = ph.empty() ? 0 : ph.front();
        } else if (equals(key, "cat"))
            m_cur->ev.cat = readString("cat");
        else if (equals(key, "name"))
            m_cur->ev.name = readString("name");
        else if (equals(key, "pid"))
            m_cur->ev.pid = readIdText("pid");
        else if (equals(key, "tid"))
            m_cur->ev.tid = readIdText("tid");
        else if (equals(key, "ts"))
            m_cur->ev.hasTs = readTime("ts", m_cur->ev.ts);
        else if (equals(key, "dur"))
            m_cur->ev.hasDur = readTime("dur", m_cur->ev.dur);
        else if (equals(key, "id"))
            m_cur->ev.id = readIdText("id");
        else if (equals(key, "bp"))
            m_cur->ev.bp = readString("bp");
        else if (equals(key, "args"))
            readArgs();
        else
            m_json.skip();
    }

    std::string_view readString(const char *key)
    {
        if (m_json.type() != JsonType::String)
            failEvent(std::string("\"") + key + "\" is not a string");
        return m_json.string();
    }

    // pid, tid and flow ids: a number or a string, compared as text.
    std::string_view readIdText(const char *key)
    {
        const JsonType type = m_json.type();
        if (type == JsonType::Number)
            return m_json.number();
        if (type != JsonType::String)
            failEvent(std::string("\"") + key + "\" is neither a number nor a string");
        return m_json.string();
    }

    // µs as written, to ns. Here rather than in the builder: with the walk's
    // copies gone, the builder had become the slower of the two threads.
    bool readTime(const char *key, int64_t &ns)
    {
        if (m_json.type() != JsonType::Number)
            failEvent(std::string("\"") + key + "\" is not a number");
        if (!m_json.number([&ns](const char *p, const char *end) { return microsPrefixToNs(p, end, ns); })) {
            m_json.number(); // throws when the grammar is what is wrong
            failEvent(std::string("\"") + key + "\" is out of range");
        }
        return true;
    }

    // ---- args ----
    // Each argument's key and text go to the batch; the builder reads them
    // (kinetoevents.cpp). Only strings it needs unescaped are read here.

    void readArgs()
    {
        if (m_json.type() != JsonType::Object)
            failEvent("\"args\" is not a JSON object");
        m_json.object([this](std::string_view key) { readArg(key); });
    }

    void readArg(std::string_view key)
    {
        const JsonType type = m_json.type();
        ArgText::Kind kind = ArgText::OtherScalar;
        const char *const first = m_json.position();
        if (type == JsonType::Object || type == JsonType::Array)
            kind = ArgText::Nested;
        else if (type == JsonType::Number)
            kind = ArgText::Number;
        if (type == JsonType::String && (equals(key, "name") || equals(key, "labels") || equals(key, "Addr")))
            readStringArg(key, m_json.string());
        else
            m_json.skip();
        // Stored field by field, as with the event: no copy of a struct just written.
        ArgText &arg = m_batch->args.emplace_back();
        arg.key = key;
        arg.raw = m_json.textFrom(first);
        arg.kind = kind;
        m_cur->argsEnd = m_batch->args.size();
    }

    void readStringArg(std::string_view key, std::string_view text)
    {
        if (equals(key, "name"))
            m_cur->strings.name = text;
        else if (equals(key, "labels"))
            m_cur->strings.labels = text;
        else
            parseAddress(text, m_cur->strings.address);
    }

    const JsonBuffer &m_buffer;
    const uint32_t m_file;
    ImportState &m_state;
    ImportProgress &m_progress;
    const std::string m_path;
    StringArena m_arena;
    JsonCursor m_json;
    bool m_inEvents = false;
    size_t m_eventIndex = 0;
    const char *m_eventStart = nullptr;
    ReadEvent *m_cur = nullptr;   // the event being read, in m_batch
    ReadBatch *m_batch = nullptr; // where its args go
    EventBuilder m_builder;
};

} // namespace

std::string utf8Problem(const std::string &path, const JsonBuffer &buffer)
{
    const char *p = buffer.data();
    if (simdjson::validate_utf8(p, buffer.size()))
        return {};
    size_t lo = 0;
    size_t hi = buffer.size();
    // The shortest invalid prefix, to a few bytes (a sequence cut at the
    // prefix's end also fails, so the answer may sit up to 3 bytes early).
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        (simdjson::validate_utf8(p, mid) ? lo : hi) = mid;
    }
    return path + ": is not valid JSON (the text is not valid UTF-8) at byte " + std::to_string(lo);
}

std::string trackKey(uint32_t file, std::string_view pid, std::string_view tid)
{
    std::string key = processKey(file, pid);
    key.push_back('\x1f');
    key.append(tid);
    return key;
}

std::string processKey(uint32_t file, std::string_view pid)
{
    std::string key = std::to_string(file);
    key.push_back('\x1f');
    key.append(pid);
    return key;
}

bool parseDocument(const JsonBuffer &buffer, uint32_t file, ImportState &state, ImportProgress &progress)
{
    DocumentParser parser(buffer, file, state, progress);
    return parser.run();
}

} // namespace fusescope::profiler::kineto
