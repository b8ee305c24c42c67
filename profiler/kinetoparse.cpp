// One Kineto / Chrome trace-event document → read events, walked once with
// simdjson On Demand, so no tree of the file is ever built. Fields are read in
// the order the file has them; what an event makes is decided after its last
// field, by the builder (kinetoevents.cpp), which for big files runs on a
// second thread while the walk goes on.

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

namespace od = simdjson::ondemand;

constexpr size_t kPollEvery = 4096; // events between cancel polls and progress reports

// The value of a result, or simdjson's exception. (simdjson_result<field>
// has its own value(): the field's value, not the result's.)
template <typename T>
T take(simdjson::simdjson_result<T> &&result)
{
    T out;
    if (const simdjson::error_code ec = std::move(result).get(out))
        throw simdjson::simdjson_error(ec);
    return out;
}

// The field in place. Copying it out, as take() does, held a third of the
// walk's profile samples: the copy reads 16 bytes that two smaller stores had
// just written, which the store buffer cannot forward.
od::field &fieldOf(simdjson::simdjson_result<od::field> &result)
{
    if (result.error())
        throw simdjson::simdjson_error(result.error());
    return result.value_unsafe();
}

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
constexpr size_t kThreadedFrom = size_t(4) << 20; // bytes of JSON; below, a thread costs more than it saves
class DocumentParser
{
public:
    DocumentParser(const JsonBuffer &buffer, uint32_t file, ImportState &state, ImportProgress &progress)
        : m_buffer(buffer), m_file(file), m_state(state), m_progress(progress), m_path(state.files[file].path),
          m_builder(buffer, file, state)
    {
    }

    bool run()
    {
        try {
            return parseRoot();
        } catch (const simdjson::simdjson_error &e) {
            // A document cut short is incomplete where it ends, whatever was being read then.
            if (e.error() == simdjson::INCOMPLETE_ARRAY_OR_OBJECT)
                fail("invalid JSON: the file ends inside an array or object (is it cut short?)",
                     m_buffer.data() + m_buffer.size());
            fail(std::string("invalid JSON (") + simdjson::error_message(e.error()) + ")", errorLocation());
        }
    }

private:
    // ---- errors: the file, then the event and the byte they are at ----

    [[noreturn]] void fail(const std::string &what, const char *at) const
    {
        failAt(m_path, what, m_buffer.data(), at, m_inEvents ? std::optional<size_t>(m_eventIndex) : std::nullopt);
    }
    [[noreturn]] void failEvent(const std::string &what) const { fail(what, m_eventStart); }

    const char *errorLocation()
    {
        const auto at = m_doc.current_location();
        return at.error() ? m_eventStart : at.value_unsafe();
    }

    // ---- the document ----

    bool parseRoot()
    {
        const simdjson::error_code ec =
            m_parser.iterate(m_buffer.data(), m_buffer.size(), m_buffer.size() + simdjson::SIMDJSON_PADDING).get(m_doc);
        if (ec)
            fail(std::string("is not valid JSON (") + simdjson::error_message(ec) + ")", stage1ErrorAt(ec));
        bool done = true;
        switch (m_doc.type().value()) {
        case od::json_type::array: done = parseEvents(m_doc.get_array()); break;
        case od::json_type::object: done = parseTopObject(); break;
        default: fail("is not a trace: a JSON trace is an object with \"traceEvents\" or an array of events", m_buffer.data());
        }
        // current_location() fails with OUT_OF_BOUNDS exactly at the end.
        if (done && !m_doc.current_location().error())
            fail("has content after the trace's JSON value", errorLocation());
        return done;
    }

    // Stage 1 does not say where it stopped; only a bad byte can be located.
    const char *stage1ErrorAt(simdjson::error_code ec) const
    {
        if (ec != simdjson::UTF8_ERROR)
            return m_buffer.data() + m_buffer.size();
        const char *p = m_buffer.data();
        size_t lo = 0;
        size_t hi = m_buffer.size();
        // The shortest invalid prefix, to a few bytes (a sequence cut at the
        // prefix's end also fails, so the answer may sit up to 3 bytes early).
        while (hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            (simdjson::validate_utf8(p, mid) ? lo : hi) = mid;
        }
        return p + lo;
    }

    bool parseTopObject()
    {
        bool sawEvents = false;
        for (auto result : m_doc.get_object()) {
            od::field field = take(std::move(result));
            const std::string_view key = field.unescaped_key().value();
            if (key == "traceEvents") {
                sawEvents = true;
                if (take(field.value().type()) != od::json_type::array)
                    fail("is not a trace: \"traceEvents\" is not an array", take(field.value().current_location()));
                if (!parseEvents(field.value().get_array()))
                    return false;
            } else if (key == "distributedInfo") {
                readDistributedInfo(field.value());
            } else if (key == "baseTimeNanoseconds") {
                readBaseTime(field.value());
            } else if (key == "deviceProperties") {
                readDeviceProperties(field.value());
            } else {
                validate(field.value());
            }
        }
        if (!sawEvents)
            fail("is not a trace: the JSON object has no \"traceEvents\" array", m_buffer.data());
        return true;
    }

    void readDistributedInfo(od::value v)
    {
        if (take(v.type()) != od::json_type::object)
            return validate(v);
        for (auto result : take(v.get_object())) {
            od::field field = take(std::move(result));
            const std::string_view key = take(field.unescaped_key());
            if ((key == "rank" || key == "world_size") && take(field.value().type()) == od::json_type::number)
                (key == "rank" ? m_state.files[m_file].rank : m_state.files[m_file].worldSize) =
                    take(field.value().get_int64());
            else
                validate(field.value());
        }
    }

    void readBaseTime(od::value v)
    {
        if (take(v.type()) != od::json_type::number)
            return validate(v);
        m_state.files[m_file].baseNs = take(v.get_int64());
        m_state.files[m_file].hasBase = true;
    }

    void readDeviceProperties(od::value v)
    {
        if (take(v.type()) != od::json_type::array)
            return validate(v);
        for (auto result : take(v.get_array())) {
            od::value device = take(std::move(result));
            if (take(device.type()) != od::json_type::object) {
                validate(device);
                continue;
            }
            for (auto fieldResult : take(device.get_object())) {
                od::field field = take(std::move(fieldResult));
                if (take(field.unescaped_key()) == "name" && m_state.files[m_file].gpu.empty())
                    m_state.files[m_file].gpu = std::string(take(field.value().get_string()));
                else
                    validate(field.value());
            }
        }
    }

    // Walks a value that is not used, so its syntax is checked all the same.
    void validate(od::value &v)
    {
        switch (take(v.type())) {
        case od::json_type::array:
            for (auto item : take(v.get_array())) {
                od::value x = take(std::move(item));
                validate(x);
            }
            break;
        case od::json_type::object:
            for (auto result : take(v.get_object())) {
                od::field &field = fieldOf(result);
                take(field.unescaped_key());
                validate(field.value());
            }
            break;
        default:
            checkScalar(trimRight(v.raw_json_token()));
        }
    }
    void validate(od::value &&v) { validate(v); }

    void checkScalar(std::string_view raw)
    {
        if (!validScalar(raw))
            fail("invalid JSON value", raw.data());
    }

    // The text of an array or object value, checked on the way.
    std::string_view walkRaw(od::value &v)
    {
        const char *begin = take(v.current_location());
        validate(v);
        const char *end = take(m_doc.current_location());
        return trimRight(std::string_view(begin, size_t(end - begin)));
    }

    // ---- events ----

    bool parseEvents(od::array events)
    {
        m_inEvents = true;
        BuilderPipe pipe(m_builder, m_buffer.size() >= kThreadedFrom);
        try {
            if (!walkEvents(events, pipe))
                return false; // the pipe stops the builder
        } catch (...) {
            // The events before the one that failed are built first: an error
            // of theirs is earlier in the file, and so the one to report.
            pipe.finish();
            throw;
        }
        pipe.finish();
        m_builder.finish();
        m_inEvents = false;
        return true;
    }

    bool walkEvents(od::array events, BuilderPipe &pipe)
    {
        for (auto element : events) {
            od::value value = element.value();
            m_eventStart = value.current_location().value();
            if (value.type().value() != od::json_type::object)
                failEvent("a trace event is not a JSON object");
            ReadBatch &batch = pipe.batch();
            m_cur = &batch.events.emplace_back();
            try {
                readEvent(value.get_object().value(), batch);
            } catch (...) {
                batch.events.pop_back(); // read in part: the events before it are built, not it
                throw;
            }
            if (batch.events.size() == kBatchEvents)
                pipe.submit();
            if (++m_eventIndex % kPollEvery == 0 && !poll())
                return false;
        }
        return true;
    }

    bool poll()
    {
        m_progress.parsing(double(m_eventStart - m_buffer.data()) / double(std::max<size_t>(1, m_buffer.size())));
        return !m_progress.cancelled();
    }

    // Into m_cur, the batch's last event, read in place: clearing an event
    // aside and copying it in held a sixth of the walk's profile samples (the
    // copy reads what small stores have just written). Args go to the batch.
    void readEvent(od::object object, ReadBatch &batch)
    {
        m_batch = &batch;
        m_cur->argsBegin = m_cur->argsEnd = batch.args.size();
        m_cur->start = m_eventStart;
        m_cur->index = m_eventIndex;
        for (auto result : object) {
            od::field &field = fieldOf(result);
            readField(readKey(field), field.value());
        }
    }

    // A key as the file has it when it has no escape (nearly always): a view
    // into the buffer, where unescaped_key() would copy every key of the file
    // into simdjson's string buffer. Stage 1 has checked the string is closed.
    static std::string_view readKey(od::field &field)
    {
        const char *begin = field.key().raw();
        const char *p = begin;
        while (*p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20)
            ++p;
        if (*p == '"')
            return {begin, size_t(p - begin)};
        return take(field.unescaped_key());
    }

    void readField(std::string_view key, od::value &v)
    {
        if (equals(key, "ph")) {
            const std::string_view ph = readString(v, "ph");
            m_cur->ev.ph = ph.empty() ? 0 : ph.front();
        } else if (equals(key, "cat"))
            m_cur->ev.cat = readString(v, "cat");
        else if (equals(key, "name"))
            m_cur->ev.name = readString(v, "name");
        else if (equals(key, "pid"))
            m_cur->ev.pid = readIdText(v, "pid");
        else if (equals(key, "tid"))
            m_cur->ev.tid = readIdText(v, "tid");
        else if (equals(key, "ts"))
            m_cur->ev.hasTs = readTime(v, "ts", m_cur->ev.ts);
        else if (equals(key, "dur"))
            m_cur->ev.hasDur = readTime(v, "dur", m_cur->ev.dur);
        else if (equals(key, "id"))
            m_cur->ev.id = readIdText(v, "id");
        else if (equals(key, "bp"))
            m_cur->ev.bp = readString(v, "bp");
        else if (equals(key, "args"))
            readArgs(v);
        else
            validate(v);
    }

    std::string_view readString(od::value &v, const char *key)
    {
        std::string_view s;
        if (!stringValue(v, s))
            failEvent(trimRight(v.raw_json_token()).starts_with('"')
                          ? std::string("invalid JSON: the string of \"") + key + "\" has a bad escape"
                          : std::string("\"") + key + "\" is not a string");
        return s;
    }

    // A string without escapes is a view into the buffer: stage 1 has checked
    // its UTF-8 and control characters, and nothing needs copying. Others are
    // unescaped by simdjson, which checks the escapes.
    static bool stringValue(od::value &v, std::string_view &out)
    {
        const std::string_view raw = trimRight(v.raw_json_token());
        if (raw.size() < 2 || raw.front() != '"')
            return false;
        const std::string_view inner = raw.substr(1, raw.size() - 2);
        if (raw.back() == '"' && inner.find('\\') == std::string_view::npos) {
            out = inner;
            return true;
        }
        return !v.get_string().get(out);
    }

    // pid, tid and flow ids: a number or a string, compared as text.
    std::string_view readIdText(od::value &v, const char *key)
    {
        const od::json_type type = v.type().value();
        if (type == od::json_type::number) {
            const std::string_view raw = trimRight(v.raw_json_token());
            checkScalar(raw);
            return raw;
        }
        if (type != od::json_type::string)
            failEvent(std::string("\"") + key + "\" is neither a number nor a string");
        return readString(v, key);
    }

    // µs as written, to ns. Here rather than in the builder: with the walk's
    // copies gone, the builder had become the slower of the two threads.
    bool readTime(od::value &v, const char *key, int64_t &ns)
    {
        if (v.type().value() != od::json_type::number)
            failEvent(std::string("\"") + key + "\" is not a number");
        const std::string_view text = trimRight(v.raw_json_token());
        if (!microsTextToNs(text, ns)) { // it checks the number's grammar too
            checkScalar(text);
            failEvent(std::string("\"") + key + "\" is out of range");
        }
        return true;
    }

    // ---- args ----
    // Each argument's key and text go to the batch; the builder checks and
    // reads them (kinetoevents.cpp). Only strings it needs unescaped are read here.

    void readArgs(od::value &v)
    {
        if (v.type().value() != od::json_type::object)
            failEvent("\"args\" is not a JSON object");
        for (auto result : v.get_object()) {
            od::field &field = fieldOf(result);
            const std::string_view key = readKey(field);
            readArg(key, field.value());
        }
    }

    void readArg(std::string_view key, od::value &v)
    {
        const od::json_type type = v.type().value();
        std::string_view raw;
        ArgText::Kind kind = ArgText::OtherScalar;
        if (type == od::json_type::array || type == od::json_type::object) {
            raw = walkRaw(v);
            kind = ArgText::Nested;
        } else {
            // The token is taken first: reading a string consumes the value.
            raw = trimRight(v.raw_json_token());
            if (type == od::json_type::number)
                kind = ArgText::Number;
            else if (type == od::json_type::string && (equals(key, "name") || equals(key, "labels") || equals(key, "Addr")))
                readStringArg(key, v);
        }
        // Stored field by field, as with the event: no copy of a struct just written.
        ArgText &arg = m_batch->args.emplace_back();
        arg.key = key;
        arg.raw = raw;
        arg.kind = kind;
        m_cur->argsEnd = m_batch->args.size();
    }

    void readStringArg(std::string_view key, od::value &v)
    {
        std::string_view text;
        if (!stringValue(v, text))
            return; // a bad escape: the builder's check of the token reports it
        if (equals(key, "name"))
            m_cur->args.name = text;
        else if (equals(key, "labels"))
            m_cur->args.labels = text;
        else
            parseAddress(text, m_cur->args.address);
    }

    const JsonBuffer &m_buffer;
    const uint32_t m_file;
    ImportState &m_state;
    ImportProgress &m_progress;
    const std::string m_path;
    od::parser m_parser;
    od::document m_doc;
    bool m_inEvents = false;
    size_t m_eventIndex = 0;
    const char *m_eventStart = nullptr;
    ReadEvent *m_cur = nullptr;   // the event being read, in m_batch
    ReadBatch *m_batch = nullptr; // where its args go
    EventBuilder m_builder;
};

} // namespace

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
