// The Kineto / Chrome trace-event importer: every real trace in the shared
// test data gives the per-name totals and counts an independent reading of
// the same file gives; several ranks make one run; damaged files are refused
// with the file's name, never a crash or a hang; a cancel stops the import.

#include "profiler/importer.h"

#include "core/tensor/tensor.h"
#include "profiler/jsonscan.h"
#include "profiler/kinetoimport.h"
#include "profiler/kinetotext.h"
#include "profiler/statistics.h"
#include "tests/qteststring.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>

using namespace fusescope;
using namespace fusescope::profiler;

namespace {

const QString kKinetoDir = QStringLiteral(FUSESCOPE_TESTDATA_DIR "/kineto/");

std::string kinetoPath(const char *relative)
{
    const std::string_view own = "own:";
    if (std::string_view(relative).starts_with(own))
        return std::string(FUSESCOPE_FIXTURE_DIR "/kineto/") + (relative + own.size());
    return (kKinetoDir + QLatin1String(relative)).toStdString();
}

// gzread passes plain files through unchanged.
std::string readText(const std::string &path)
{
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz)
        return {};
    std::string text;
    char block[1 << 16];
    int n = 0;
    while ((n = gzread(gz, block, sizeof block)) > 0)
        text.append(block, size_t(n));
    gzclose(gz);
    return text;
}

std::string readBytes(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const std::string &path, std::string_view bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

// What the README counts for each trace (section 1).
struct Expected {
    const char *file;
    int64_t kernels;
    int64_t memcpys;
    int64_t memsets;
    int64_t flowEvents;
    int64_t memoryEvents;
};

// The shared traces (../shared/testdata/kineto), then the project's own
// (tests/data/kineto, recorded with PyTorch 2.11 on an H200 by the scripts
// there, for what newer PyTorch writes: cuda_driver, gpu_user_annotation,
// fwdbwd flows, memory instants, distributedInfo with process groups): a
// training step, and two ranks of a data-parallel one.
constexpr Expected kTraces[] = {
    {"hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 0, 0, 0, 0, 0},
    {"hta/triton_example/triton_example.json.gz", 1, 0, 0, 3, 0},
    {"hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 14, 2, 0, 45, 0},
    {"hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 79, 16, 3, 500, 0},
    {"hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 4350, 1600, 145, 23234, 0},
    {"param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json", 245, 16, 0, 786, 0},
    {"param/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json", 310, 16, 0, 853, 0},
    {"kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", 8772, 12, 312, 18192, 12838},
    {"own:h200_pytorch2.11_train.pt.trace.json.gz", 237, 9, 18, 913, 552},
    {"own:h200_pytorch2.11_ddp_rank0.pt.trace.json.gz", 60, 24, 0, 376, 0},
    {"own:h200_pytorch2.11_ddp_rank1.pt.trace.json.gz", 60, 24, 0, 376, 0},
};

// The same file read with nlohmann::json, summed the plain way.
struct Reference {
    std::map<std::string, int64_t> opNs;
    std::map<std::string, int64_t> kernelNs;
    int64_t kernels = 0;
    int64_t memcpys = 0;
    int64_t memsets = 0;
    int64_t flowEvents = 0;
    int64_t flowPairs = 0; // ids with both a start and a finish
    int64_t memoryEvents = 0;
};

int64_t durationNs(const nlohmann::json &e)
{
    return std::llround(e.value("dur", 0.0) * 1000.0); // exact: at most 3 decimals, far below 2^53
}

void countFlow(const nlohmann::json &e, std::map<std::string, std::set<char>> &flows)
{
    const std::string cat = e.value("cat", "");
    const std::string kind = cat == "ac2g" || cat == "async" ? "launch" : cat;
    flows[kind + "/" + e["id"].dump()].insert(e["ph"].get<std::string>()[0]);
}

Reference referenceOf(const std::string &text)
{
    const nlohmann::json doc = nlohmann::json::parse(text);
    const nlohmann::json &events = doc.is_array() ? doc : doc["traceEvents"];
    Reference r;
    std::map<std::string, std::set<char>> flows;
    for (const nlohmann::json &e : events) {
        const std::string ph = e.value("ph", "");
        const std::string cat = e.value("cat", "");
        const std::string name = e.value("name", "");
        if (ph == "s" || ph == "t" || ph == "f") {
            ++r.flowEvents;
            countFlow(e, flows);
        }
        r.memoryEvents += name == "[memory]";
        if (ph != "X")
            continue;
        if ((cat == "cpu_op" || cat == "Operator") && !name.starts_with("ProfilerStep#"))
            r.opNs[name] += durationNs(e);
        if (cat == "kernel" || cat == "Kernel") {
            r.kernelNs[name] += durationNs(e);
            ++r.kernels;
        }
        r.memcpys += cat == "gpu_memcpy" || cat == "Memcpy";
        r.memsets += cat == "gpu_memset" || cat == "Memset";
    }
    for (const auto &[id, phases] : flows)
        r.flowPairs += phases.count('s') && phases.count('f');
    return r;
}

Trace importOne(const std::string &path)
{
    std::optional<Trace> trace = importKineto({path});
    if (!trace)
        throw Error("import returned nothing");
    return std::move(*trace);
}

// Either a clean refusal naming the file, or a trace that is marked
// incomplete or was read from a file that is still valid JSON.
void expectSafeOutcome(const std::string &path, const std::string *json)
{
    try {
        const std::optional<Trace> trace = importKineto({path});
        QVERIFY(trace.has_value());
        const bool complete = trace->runs.at(0).summary.complete;
        QVERIFY2(!complete || (json && nlohmann::json::accept(*json)), "a damaged file was imported as complete");
    } catch (const Error &e) {
        QVERIFY2(std::string(e.what()).find(path) != std::string::npos, e.what());
    }
}

std::map<std::string, int64_t> kernelTotals(const RunStatistics &stats)
{
    std::map<std::string, int64_t> totals;
    for (const KernelStats &k : stats.kernels)
        totals[k.name] += k.time.totalNs;
    return totals;
}

std::map<std::string, int64_t> opTotals(const RunStatistics &stats)
{
    std::map<std::string, int64_t> totals;
    for (const RangeStats &op : stats.ops)
        totals[op.name] = op.time.totalNs;
    return totals;
}

int64_t copyCalls(const RunStatistics &stats)
{
    int64_t calls = 0;
    for (const CopyStats &c : stats.copies)
        calls += c.transfer.calls;
    return calls;
}

// Events of every kind on one synthetic trace, written as a bare array.
const char *kSmallTrace = R"json([
{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"trainer"}},
{"ph":"M","name":"thread_name","pid":7,"tid":8,"args":{"name":"main thread"}},
{"ph":"M","name":"thread_sort_index","pid":7,"tid":8,"args":{"sort_index":3}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":7,"tid":8,"ts":1000.5,"dur":1234567.891,
 "args":{"External id":4,"Input Dims":[[2,3],[3,4]],"Input type":["float","float"]}},
{"ph":"B","cat":"user_annotation","name":"outer","pid":7,"tid":8,"ts":1100},
{"ph":"B","cat":"user_annotation","name":"inner","pid":7,"tid":8,"ts":1200.25},
{"ph":"E","pid":7,"tid":8,"ts":1300.75},
{"ph":"E","pid":7,"tid":8,"ts":1400},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":7,"tid":8,"ts":2000,"dur":5,"args":{"correlation":99}},
{"ph":"s","cat":"ac2g","name":"ac2g","id":99,"pid":7,"tid":8,"ts":2000},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":"stream 7","ts":2010,"dur":20.001,
 "args":{"device":0,"stream":7,"correlation":99,"grid":[4,2,1],"block":[128,1,1],"registers per thread":32}},
{"ph":"f","cat":"ac2g","name":"ac2g","id":99,"pid":0,"tid":"stream 7","ts":2010,"bp":"e"},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":"stream 7","ts":2040,"dur":3,
 "args":{"device":0,"bytes":4096}},
{"ph":"i","s":"t","name":"[memory]","pid":7,"tid":8,"ts":1001,"args":{"Device Type":1,"Device Id":0,"Bytes":512,"Addr":"0x10"}},
{"ph":"i","s":"t","name":"[memory]","pid":7,"tid":8,"ts":1002,"args":{"Device Type":1,"Device Id":0,"Bytes":-512,"Addr":"0x10"}},
{"ph":"C","name":"queue","pid":7,"ts":1500,"args":{"depth":3,"bytes":10}},
{"ph":"C","name":"queue","pid":7,"ts":1600,"args":{"depth":5,"bytes":20}},
{"ph":"i","name":"marker","pid":7,"tid":8,"ts":1700,"s":"t"}
])json";

const Event *findEvent(const Trace &trace, const Run &run, std::string_view name)
{
    for (const Event &e : run.events) {
        if (trace.strings[e.name] == name)
            return &e;
    }
    return nullptr;
}

// JSON's number grammar one character at a time, and the ns a µs text means
// (the first three fraction digits; a fourth of 5 or more rounds up): the
// reference for the importer's eight-bytes-at-a-time digit runs.
struct ReferenceNumber {
    bool valid = false;
    bool exponent = false;
    bool fits = false; // the ns fit in int64_t
    int64_t ns = 0;
};

ReferenceNumber referenceNumber(const std::string &s)
{
    ReferenceNumber r;
    const auto digit = [&](size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
    size_t i = s.starts_with('-') ? 1 : 0;
    const size_t whole = i;
    int64_t us = 0;
    bool overflow = false;
    for (; digit(i); ++i)
        overflow |= __builtin_mul_overflow(us, int64_t(10), &us) || __builtin_add_overflow(us, int64_t(s[i] - '0'), &us);
    if (i == whole || (s[whole] == '0' && i - whole > 1))
        return r;
    int64_t sub = 0;
    if (i < s.size() && s[i] == '.') {
        const size_t fraction = ++i;
        while (digit(i))
            ++i;
        if (i == fraction)
            return r;
        for (size_t k = 0; k < 3; ++k)
            sub = sub * 10 + (fraction + k < i ? s[fraction + k] - '0' : 0);
        sub += i - fraction > 3 && s[fraction + 3] >= '5';
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        r.exponent = true;
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            ++i;
        const size_t from = i;
        while (digit(i))
            ++i;
        if (i == from)
            return r;
    }
    r.valid = i == s.size();
    int64_t ns = 0;
    r.fits = !overflow && !__builtin_mul_overflow(us, int64_t(1000), &ns) && !__builtin_add_overflow(ns, sub, &ns);
    r.ns = r.fits ? (s.starts_with('-') ? -ns : ns) : 0;
    return r;
}

// Whether the importer's JSON reader takes `text`, all of it, as one JSON
// value: with whitespace around it (a document) or without (a scalar's text).
bool readerAccepts(const std::string &text, bool spaceAround)
{
    std::string padded = text;
    padded.append(kineto::kJsonPadding, '\0');
    kineto::StringArena arena;
    kineto::JsonCursor json(padded.data(), padded.data() + text.size(), arena);
    try {
        const std::string_view value = json.skip();
        return spaceAround ? json.atEnd() : value.size() == text.size();
    } catch (const kineto::JsonError &) {
        return false;
    }
}

bool readerAcceptsDocument(const std::string &text)
{
    return readerAccepts(text, true);
}

// Control characters as \xNN, for messages.
std::string printable(const std::string &text)
{
    std::string out;
    for (const char c : text) {
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
            out.push_back(c);
            continue;
        }
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
        out += hex;
    }
    return out;
}

std::string pick(std::mt19937 &rng, const std::vector<std::string> &choices)
{
    return choices[rng() % choices.size()];
}

// A random JSON value of ASCII text: escapes of every kind (surrogate pairs
// too), numbers in each of the grammar's forms, whitespace between tokens.
std::string randomJson(std::mt19937 &rng, int depth)
{
    const auto space = [&] { return pick(rng, {"", "", " ", "\n  ", "\t", "\r\n"}); };
    const int kind = int(rng() % (depth < 4 ? 6 : 3));
    if (kind == 0) {
        std::string s = "\"";
        for (int n = int(rng() % 6); n > 0; --n)
            s += pick(rng, {"a", "Z", " ", "/", "~", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\ud83d\\ude00",
                            "\\u0000", "\\udc00", "\\ud800x", "\\b", "\\t", "\x7f"});
        return s + "\"";
    }
    if (kind == 1)
        return pick(rng, {"0", "-0", "12", "-3.25", "1e5", "2E-3", "6.02e+23", "1712195495522624.816", "99999999999999999999"});
    if (kind == 2)
        return pick(rng, {"true", "false", "null"});
    const bool object = kind == 3;
    std::string s = object ? "{" : "[";
    for (int n = int(rng() % 4), i = 0; i < n; ++i) {
        s += (i ? "," : "") + space();
        if (object)
            s += "\"k" + std::to_string(i) + "\"" + space() + ":" + space();
        s += randomJson(rng, depth + 1) + space();
    }
    return s + (object ? "}" : "]");
}

// Up to two bytes of `text` changed to, or inserted from, `bytes`, or deleted.
void editRandomly(std::mt19937 &rng, std::string &text, std::string_view bytes)
{
    for (int edits = int(rng() % 3); edits > 0 && !text.empty(); --edits) {
        const size_t at = rng() % text.size();
        const char c = bytes[rng() % bytes.size()];
        switch (rng() % 3) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + ptrdiff_t(at), c); break;
        default: text.erase(at, 1);
        }
    }
}

// The keys of a document in the order the importer's reader hands them out
// (objects depth first), or nothing when it refuses the document.
std::optional<std::vector<std::string>> readerKeys(const std::string &text)
{
    std::string padded = text;
    padded.append(kineto::kJsonPadding, '\0');
    kineto::StringArena arena;
    kineto::JsonCursor json(padded.data(), padded.data() + text.size(), arena);
    std::vector<std::string> keys;
    const std::function<void()> value = [&] {
        if (json.type() == kineto::JsonType::Object)
            json.object([&](std::string_view key) {
                keys.emplace_back(key);
                value();
            });
        else if (json.type() == kineto::JsonType::Array)
            json.array(value);
        else
            json.skip();
    };
    try {
        value();
        if (!json.atEnd())
            return std::nullopt;
    } catch (const kineto::JsonError &) {
        return std::nullopt;
    }
    return keys;
}

// The same from nlohmann::json's SAX reader.
std::optional<std::vector<std::string>> nlohmannKeys(const std::string &text)
{
    struct Keys : nlohmann::json::json_sax_t {
        std::vector<std::string> keys;
        bool null() override { return true; }
        bool boolean(bool) override { return true; }
        bool number_integer(number_integer_t) override { return true; }
        bool number_unsigned(number_unsigned_t) override { return true; }
        bool number_float(number_float_t, const string_t &) override { return true; }
        bool string(string_t &) override { return true; }
        bool binary(binary_t &) override { return true; }
        bool start_object(std::size_t) override { return true; }
        bool key(string_t &key) override
        {
            keys.push_back(key);
            return true;
        }
        bool end_object() override { return true; }
        bool start_array(std::size_t) override { return true; }
        bool end_array() override { return true; }
        bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &) override
        {
            return false;
        }
    } sax;
    if (!nlohmann::json::sax_parse(text, &sax))
        return std::nullopt;
    return sax.keys;
}

// Arrays of objects whose keys mostly come in a few orders and layouts, as
// a trace's events do, so that the reader's key guesses are made and used:
// keys that differ from a guess by a byte, extend it, are written with an
// escape, other whitespace around them or a space before the colon, and keys
// about the longest a guess holds (32 bytes from the comma to the value).
std::string repeatedKeysDocument(std::mt19937 &rng)
{
    static const std::vector<std::string> kKeys = {
        "ph", "cat", "name", "pid", "tid", "ts", "dur", "args", "id", "bp", "External id", "p", "phx", "Ph",
        "p\\u0068", "c\\\"t", "", std::string(26, 'k'), std::string(27, 'k'), std::string(28, 'k'),
        std::string(29, 'k')};
    const std::vector<std::vector<int>> orders
        = {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 8, 3, 4, 5, 1, 2, 9}, {10, 17, 18, 19, 20}};
    const auto value = [&]() -> std::string {
        if (rng() % 4 == 0) {
            std::string args = "{";
            for (const int k : orders[2])
                args += (args.size() > 1 ? ", \"" : "\"") + kKeys[size_t(k)] + "\": 1";
            return args + "}";
        }
        return pick(rng, {"1", "\"X\"", "[1, {\"ph\": 2}]", "-2.5", "null"});
    };
    const auto space = [&] { return rng() % 8 ? std::string(" ") : pick(rng, {"", "\n    ", "\t", "  "}); };
    std::string text = "[";
    for (int n = 1 + int(rng() % 40), i = 0; i < n; ++i) {
        text += i ? ",\n  {" : "{";
        const std::vector<int> &order = orders[rng() % 2];
        for (size_t f = 0; f < order.size(); ++f) {
            const size_t k = rng() % 8 == 0 ? rng() % kKeys.size() : size_t(order[f]);
            text += (f ? "," + space() : std::string()) + "\"" + kKeys[k] + (rng() % 16 == 0 ? "\" :" : "\":")
                + space() + value();
        }
        text += "}";
    }
    return text + "]";
}

// Numbers as writers make them, and byte soup around digits: '/' and ':'
// neighbour the digits, and bytes from 0xfa carry when six is added.
std::string randomNumberText(std::mt19937 &rng)
{
    const auto pick = [&](int n) { return int(rng() % unsigned(n)); };
    std::string s;
    if (pick(2)) {
        static const char kSoup[] = "0123456789012345678901234567890123456789.-eE+/:x \xfa\xff";
        for (int n = pick(25); n > 0; --n)
            s.push_back(kSoup[pick(sizeof kSoup - 1)]);
        return s;
    }
    if (pick(4) == 0)
        s.push_back('-');
    for (int n = 1 + pick(20); n > 0; --n)
        s.push_back(char('0' + pick(10)));
    if (pick(2)) {
        s.push_back('.');
        for (int n = 1 + pick(9); n > 0; --n)
            s.push_back(char('0' + pick(10)));
    }
    if (pick(10) == 0)
        s += pick(2) ? "e-3" : "E+2";
    return s;
}


// `text` deflated by zlib as one gzip member, or as a zlib stream.
std::string deflated(std::string_view text, bool gzip)
{
    z_stream z{};
    if (deflateInit2(&z, 6, Z_DEFLATED, gzip ? 16 + MAX_WBITS : MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return {};
    std::string out(deflateBound(&z, uLong(text.size())), '\0');
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(text.data()));
    z.avail_in = uInt(text.size());
    z.next_out = reinterpret_cast<Bytef *>(out.data());
    z.avail_out = uInt(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return rc == Z_STREAM_END ? out : std::string();
}

// A trace of `events` complete events, as JSON text.
std::string traceOfEvents(int events)
{
    std::string json = R"({"traceEvents":[)";
    for (int i = 0; i < events; ++i)
        json += std::string(i ? "," : "") + R"({"ph":"X","cat":"cpu_op","name":"op)" + std::to_string(i % 7)
              + R"(","pid":1,"tid":1,"ts":)" + std::to_string(10 * i) + R"(,"dur":5})";
    return json + "]}";
}

void expectImportError(const std::string &path, const std::string &message)
{
    try {
        importKineto({path});
        QFAIL("no error");
    } catch (const Error &e) {
        QVERIFY2(std::string(e.what()).starts_with(path + ": "), e.what());
        QVERIFY2(std::string(e.what()).find(message) != std::string::npos, e.what());
    }
}
} // namespace

class TestProfilerImport : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void realTraces_data();
    void realTraces();
    void twoRanksMakeOneRun_data();
    void twoRanksMakeOneRun();
    void damagedFiles_data();
    void damagedFiles();
    void badInputNamesFileAndOffset_data();
    void badInputNamesFileAndOffset();
    void cancelFromProgress_data();
    void cancelFromProgress();
    void plainAndGzipImportAlike();
    void errorsOfBigFilesInFileOrder_data();
    void errorsOfBigFilesInFileOrder();
    void escapedKeysAndStrings();
    void bareArrayOfEveryPhase();
    void fractionalMicrosAreExact();
    void numberTextsAgainstReference();
    void readerAcceptsWhatNlohmannAccepts();
    void guessedKeysReadAsNlohmannReadsThem();
    void gzipInflatedWhole();
    void gzipMembersAndChecks();
    void unfinishedRangeMarksRunIncomplete();
    void importTracesDispatches();

private:
    QTemporaryDir m_tmp;
    std::string tmpPath(const char *name) const { return m_tmp.filePath(QLatin1String(name)).toStdString(); }
};

void TestProfilerImport::initTestCase()
{
    QVERIFY(m_tmp.isValid());
}

void TestProfilerImport::realTraces_data()
{
    QTest::addColumn<int>("row");
    for (int i = 0; i < int(std::size(kTraces)); ++i)
        QTest::newRow(kTraces[i].file) << i;
}

void TestProfilerImport::realTraces()
{
    QFETCH(int, row);
    const Expected &x = kTraces[row];
    const std::string path = kinetoPath(x.file);
    if (!QFile::exists(QString::fromStdString(path)))
        QSKIP("the shared test data is not here");
    const Reference ref = referenceOf(readText(path));
    QCOMPARE(ref.kernels, x.kernels);
    QCOMPARE(ref.flowEvents, x.flowEvents);
    QCOMPARE(ref.memoryEvents, x.memoryEvents);

    const Trace trace = importOne(path);
    QCOMPARE(trace.runs.size(), size_t(1));
    const Run &run = trace.runs[0];
    QCOMPARE(run.info.mode, std::string("imported"));
    QVERIFY(run.summary.complete);
    const RunStatistics stats = computeStatistics(trace, run);
    QCOMPARE(opTotals(stats), ref.opNs);
    QCOMPARE(kernelTotals(stats), ref.kernelNs);
    int64_t kernelCalls = 0;
    for (const KernelStats &k : stats.kernels)
        kernelCalls += k.time.calls;
    QCOMPARE(kernelCalls, x.kernels);
    QCOMPARE(copyCalls(stats), x.memcpys);
    QCOMPARE(stats.memsets.calls, x.memsets);
    QCOMPARE(int64_t(run.flows.size()), ref.flowPairs);
    QCOMPARE(int64_t(run.allocations.size()), x.memoryEvents);
    for (const Event &e : run.events)
        QVERIFY(e.start >= 0);
}

void TestProfilerImport::twoRanksMakeOneRun_data()
{
    QTest::addColumn<int>("first"); // rows of kTraces: rank 0, then rank 1
    QTest::newRow("DLRM, shared") << 5;
    QTest::newRow("DDP, PyTorch 2.11") << 9;
}

void TestProfilerImport::twoRanksMakeOneRun()
{
    QFETCH(int, first);
    const std::string rank0 = kinetoPath(kTraces[first].file);
    const std::string rank1 = kinetoPath(kTraces[first + 1].file);
    if (!QFile::exists(QString::fromStdString(rank0)))
        QSKIP("the shared test data is not here");
    const Trace one = importOne(rank0);
    const Trace other = importOne(rank1);
    const std::optional<Trace> both = importKineto({rank0, rank1});
    QVERIFY(both.has_value());
    QCOMPARE(both->runs.size(), size_t(1));
    const Run &run = both->runs[0];
    QCOMPARE(run.events.size(), one.runs[0].events.size() + other.runs[0].events.size());
    QCOMPARE(run.flows.size(), one.runs[0].flows.size() + other.runs[0].flows.size());
    QCOMPARE(run.info.name, std::string("ranks 0, 1"));
    std::set<int64_t> groups;
    for (const Track &t : run.tracks) {
        groups.insert(t.pid);
        QVERIFY2(both->strings[t.name].starts_with("rank "), both->strings[t.name].c_str());
    }
    QCOMPARE(groups, (std::set<int64_t>{0, 1}));
    int64_t kernels = 0;
    for (const KernelStats &k : computeStatistics(*both, run).kernels)
        kernels += k.time.calls;
    QCOMPARE(kernels, kTraces[first].kernels + kTraces[first + 1].kernels);
}

void TestProfilerImport::damagedFiles_data()
{
    QTest::addColumn<int>("row");
    for (int i : {0, 1, 2, 3, 5, 8})
        QTest::newRow(kTraces[i].file) << i;
}

// Cuts at 50 places, 200 seeded byte flips, and for gzip files 20 cuts of the
// compressed bytes.
void TestProfilerImport::damagedFiles()
{
    QFETCH(int, row);
    const std::string source = kinetoPath(kTraces[row].file);
    if (!QFile::exists(QString::fromStdString(source)))
        QSKIP("the shared test data is not here");
    const std::string json = readText(source);
    const std::string path = tmpPath("damaged.json");
    for (int i = 1; i <= 50; ++i) {
        const std::string cut = json.substr(0, json.size() * size_t(i) / 51);
        writeBytes(path, cut);
        expectSafeOutcome(path, &cut);
    }
    std::mt19937 random(uint32_t(row) * 7919u + 1u);
    for (int i = 0; i < 200; ++i) {
        std::string flipped = json;
        flipped[random() % flipped.size()] = char(random() % 256);
        writeBytes(path, flipped);
        expectSafeOutcome(path, &flipped);
    }
    const std::string gz = readBytes(source);
    if (gz.size() < 2 || uint8_t(gz[0]) != 0x1f)
        return;
    const std::string gzPath = tmpPath("damaged.json.gz");
    for (int i = 1; i <= 20; ++i) {
        writeBytes(gzPath, std::string_view(gz).substr(0, gz.size() * size_t(i) / 21));
        QVERIFY_THROWS_EXCEPTION(Error, importKineto({gzPath}));
    }
}

void TestProfilerImport::badInputNamesFileAndOffset_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << QByteArray() << "is empty";
    QTest::newRow("not a trace") << QByteArray(R"({"a":1})") << "no \"traceEvents\"";
    QTest::newRow("a number") << QByteArray("42") << "is not a trace";
    QTest::newRow("ts as string") << QByteArray(R"([{"ph":"X","name":"a","ts":"12","dur":1}])") << "\"ts\" is not a number";
    QTest::newRow("negative dur") << QByteArray(R"([{"ph":"X","name":"a","ts":12,"dur":-1}])") << "negative";
    QTest::newRow("no ph") << QByteArray(R"([{"name":"a","ts":12}])") << "no \"ph\"";
    QTest::newRow("truncated") << QByteArray(R"({"traceEvents":[{"ph":"X","name":"a","ts":12,"dur":1},{"ph")")
                               << "ends inside an array or object (is it cut short?) in event 1 at byte 59";
    QTest::newRow("bad number") << QByteArray(R"([{"ph":"X","name":"a","ts":12,"dur":1,"args":{"x":1x2}}])")
                                << "invalid JSON";
    QTest::newRow("trailing") << QByteArray(R"([] [])") << "after the trace";
    QTest::newRow("ts with a leading zero") << QByteArray(R"([{"ph":"X","name":"a","ts":012,"dur":1}])")
                                            << "invalid JSON value in event 0";
    QTest::newRow("dur cut at the dot") << QByteArray(R"([{"ph":"X","name":"a","ts":12,"dur":1.}])")
                                        << "invalid JSON";
    QTest::newRow("bad escape in a name") << QByteArray(R"([{"ph":"X","name":"a\qb","ts":12,"dur":1}])")
                                          << "invalid JSON";
}

void TestProfilerImport::badInputNamesFileAndOffset()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, message);
    const std::string path = tmpPath("bad.json");
    writeBytes(path, std::string_view(content.constData(), size_t(content.size())));
    try {
        importKineto({path});
        QFAIL("no error");
    } catch (const Error &e) {
        const std::string what = e.what();
        QVERIFY2(what.starts_with(path + ": "), e.what());
        QVERIFY2(what.find(message.toStdString()) != std::string::npos, e.what());
        QVERIFY2(content.isEmpty() || what.find("byte") != std::string::npos, e.what());
    }
}

void TestProfilerImport::cancelFromProgress_data()
{
    QTest::addColumn<bool>("whileReading");
    QTest::newRow("while reading") << true;
    QTest::newRow("while parsing") << false;
}

// Plain JSON of 15 MB (read by two threads), so reports come during both
// reading and parsing; the cancel comes in the half the row says.
void TestProfilerImport::cancelFromProgress()
{
    QFETCH(bool, whileReading);
    const std::string source = kinetoPath(kTraces[4].file);
    if (!QFile::exists(QString::fromStdString(source)))
        QSKIP("the shared test data is not here");
    const std::string path = tmpPath("large.json");
    writeBytes(path, readText(source));
    std::atomic<bool> cancel{false};
    int reports = 0;
    uint64_t last = 0;
    ImportControl control;
    control.cancel = &cancel;
    control.progress = [&](uint64_t done, uint64_t total) {
        QVERIFY(done <= total && done >= last);
        last = done;
        ++reports;
        if (whileReading ? done > total / 8 && done < total / 2 : done > total / 2 && done < total)
            cancel = true;
    };
    QVERIFY(!importKineto({path}, control).has_value());
    QVERIFY(cancel);
    QVERIFY2(reports >= (whileReading ? 2 : 8), qPrintable(QString::number(reports)));
    QVERIFY2(!whileReading || last < uint64_t(std::filesystem::file_size(path)) / 2, qPrintable(QString::number(last)));
}

// The 15 MB trace decompressed: read as plain JSON by two threads, it must
// give what the streamed gzip gives, event for event.
void TestProfilerImport::plainAndGzipImportAlike()
{
    const std::string source = kinetoPath(kTraces[4].file);
    if (!QFile::exists(QString::fromStdString(source)))
        QSKIP("the shared test data is not here");
    const std::string path = tmpPath("plain.json");
    writeBytes(path, readText(source));
    const Trace packed = importOne(source);
    const Trace plain = importOne(path);
    const Run &a = packed.runs.at(0);
    const Run &b = plain.runs.at(0);
    QCOMPARE(b.events.size(), a.events.size());
    QCOMPARE(b.flows.size(), a.flows.size());
    for (size_t i = 0; i < a.events.size(); ++i) {
        QCOMPARE(b.events[i].start, a.events[i].start);
        QCOMPARE(b.events[i].duration, a.events[i].duration);
        QCOMPARE(plain.strings[b.events[i].name], packed.strings[a.events[i].name]);
    }
}

void TestProfilerImport::errorsOfBigFilesInFileOrder_data()
{
    QTest::addColumn<int>("negativeDurAt"); // the builder's error (on its own thread for big files)
    QTest::addColumn<int>("textTsAt");      // the walk's error; -1: none
    QTest::addColumn<QString>("message");
    QTest::newRow("builder's first") << 40000 << 40001 << "\"dur\" is negative in event 40000";
    QTest::newRow("walk's first") << 40001 << 40000 << "\"ts\" is not a number in event 40000";
    QTest::newRow("builder's, last event") << -1 << -1 << "\"dur\" is negative in event ";
}

// The 15 MB trace with two damaged events: whichever thread finds its error
// first, the one reported is the earlier event's, as a single pass would.
void TestProfilerImport::errorsOfBigFilesInFileOrder()
{
    QFETCH(int, negativeDurAt);
    QFETCH(int, textTsAt);
    QFETCH(QString, message);
    const std::string source = kinetoPath(kTraces[4].file);
    if (!QFile::exists(QString::fromStdString(source)))
        QSKIP("the shared test data is not here");
    nlohmann::json doc = nlohmann::json::parse(readText(source));
    nlohmann::json &events = doc["traceEvents"];
    const size_t last = events.size() - 1;
    const auto at = [&](int i) -> nlohmann::json & { return events[i < 0 ? last : size_t(i)]; };
    at(negativeDurAt)["ph"] = "X";
    at(negativeDurAt)["dur"] = -1;
    if (textTsAt >= 0)
        at(textTsAt)["ts"] = "soon";
    const std::string path = tmpPath("damaged-big.json");
    writeBytes(path, doc.dump());
    QVERIFY(std::filesystem::file_size(path) > (8u << 20));
    try {
        importKineto({path});
        QFAIL("no error");
    } catch (const Error &e) {
        const std::string expected = message.toStdString() + (negativeDurAt < 0 ? std::to_string(last) : "");
        QVERIFY2(std::string(e.what()).find(expected) != std::string::npos, e.what());
    }
}

// Keys and values with escapes go through simdjson's unescaping; the rest are
// read in place. Both must mean the same.
void TestProfilerImport::escapedKeysAndStrings()
{
    const std::string path = tmpPath("escaped.json");
    writeBytes(path, R"([
        {"ph":"X","cat":"cpu_op","n\u0061me":"say \"hi\"\n","pid":1,"tid":1,"ts":10,"dur":2,
         "args":{"tag\tname":"a\\b","plain":"x"}},
        {"ph":"X","cat":"cpu_op","name":"say \"hi\"\n","pid":1,"tid":1,"ts":20,"dur":3}])");
    const Trace trace = importOne(path);
    const Run &run = trace.runs.at(0);
    QCOMPARE(run.events.size(), size_t(2));
    QCOMPARE(run.events[0].name, run.events[1].name);
    QCOMPARE(trace.strings[run.events[0].name], std::string("say \"hi\"\n"));
    QCOMPARE(trace.strings[argsOf(run, run.events[0])->extra],
             std::string(R"({"tag\u0009name":"a\\b","plain":"x"})"));
}

void TestProfilerImport::bareArrayOfEveryPhase()
{
    const std::string path = tmpPath("small.json");
    writeBytes(path, kSmallTrace);
    const Trace trace = importOne(path);
    const Run &run = trace.runs.at(0);
    QCOMPARE(run.info.name, std::string("small"));

    const Event *outer = findEvent(trace, run, "outer");
    const Event *inner = findEvent(trace, run, "inner");
    QVERIFY(outer && inner);
    QCOMPARE(outer->duration, int64_t(300'000));
    QCOMPARE(inner->duration, int64_t(100'500));
    QCOMPARE(int(inner->depth), int(outer->depth) + 1);

    const Event *kernel = findEvent(trace, run, "gemm");
    QVERIFY(kernel && kernel->kind == EventKind::Kernel);
    const EventArgs *k = argsOf(run, *kernel);
    QVERIFY(k);
    QCOMPARE(k->correlation, int64_t(99));
    QCOMPARE(k->grid[0], 4);
    QCOMPARE(k->block[0], 128);
    QCOMPARE(trace.strings[k->extra], std::string(R"({"registers per thread":32})"));
    QCOMPARE(run.tracks[kernel->track.value].kind, TrackKind::GpuStream);
    QCOMPARE(run.tracks[kernel->track.value].tid, int64_t(7));

    const Event *op = findEvent(trace, run, "aten::mm");
    QVERIFY(op && op->kind == EventKind::Op);
    QCOMPARE(trace.strings[argsOf(run, *op)->extra],
             std::string(R"({"Input Dims":[[2,3],[3,4]],"Input type":["float","float"]})"));
    QCOMPARE(trace.strings[run.tracks[op->track.value].name], std::string("trainer (7) · main thread"));

    const Event *copy = findEvent(trace, run, "Memcpy HtoD (Pinned -> Device)");
    QVERIFY(copy && argsOf(run, *copy)->copyKind == CopyKind::HostToDevice && argsOf(run, *copy)->pinned);
    QCOMPARE(copy->bytes, 4096.0f);

    QCOMPARE(run.flows.size(), size_t(1));
    QCOMPARE(trace.strings[run.event(run.flows[0].from).name], std::string("cudaLaunchKernel"));
    QCOMPARE(run.flows[0].to.value, uint32_t(kernel - run.events.data()));
    QCOMPARE(run.flows[0].kind, FlowKind::Launch);

    QCOMPARE(run.allocations.size(), size_t(2));
    QCOMPARE(run.allocations[0].allocatedAfter, int64_t(512));
    QCOMPARE(run.allocations[1].allocatedAfter, int64_t(0));
    QCOMPARE(run.allocations[0].device, int16_t(0));
    QCOMPARE(run.allocations[0].address, uint64_t(0x10));
    QCOMPARE(trace.strings[run.event(run.allocations[0].op).name], std::string("aten::mm"));

    std::map<std::string, std::vector<double>> counters;
    for (const CounterSample &c : run.counters)
        counters[trace.strings[run.tracks[c.track.value].name]].push_back(c.value);
    QCOMPARE(counters["queue · depth"], (std::vector<double>{3, 5}));
    QCOMPARE(counters["queue · bytes"], (std::vector<double>{10, 20}));
    QCOMPARE(counters["memory allocated · GPU 0"], (std::vector<double>{512, 0}));
    QVERIFY(findEvent(trace, run, "marker")->kind == EventKind::Instant);
}

void TestProfilerImport::fractionalMicrosAreExact()
{
    const std::string path = tmpPath("fraction.json");
    writeBytes(path, R"({"traceEvents":[
        {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1712195495519689.001,"dur":1234567.891},
        {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":1712195495519689.0,"dur":0.0005}],
        "displayTimeUnit":"ns","baseTimeNanoseconds":5})");
    const Trace trace = importOne(path);
    const Run &run = trace.runs[0];
    const Event *a = findEvent(trace, run, "a");
    const Event *b = findEvent(trace, run, "b");
    QCOMPARE(a->duration, int64_t(1'234'567'891));
    QCOMPARE(a->start, int64_t(1));
    QCOMPARE(b->start, int64_t(0));
    QCOMPARE(b->duration, int64_t(1)); // half a ns rounds up
    QCOMPARE(run.info.originNs, int64_t(1'712'195'495'519'689'005));
    QCOMPARE(run.info.wallStartUnixNs, run.info.originNs);
}

// The time fields' one-pass conversion and the JSON reader's number grammar
// against the reference above, on 200,000 texts.
void TestProfilerImport::numberTextsAgainstReference()
{
    std::mt19937 rng(20261203);
    int valid = 0, converted = 0;
    for (int i = 0; i < 200'000; ++i) {
        const std::string text = randomNumberText(rng);
        const ReferenceNumber want = referenceNumber(text);
        // Valid by the grammar, an exponent form may still be beyond a double's range.
        const bool inRange = !want.exponent || nlohmann::json::accept(text);
        QVERIFY2(readerAccepts(text, false) == (want.valid && inRange), text.c_str()); // no text starts with t, f, n or "
        int64_t ns = 0;
        const bool ok = kineto::microsTextToNs(text, ns);
        valid += want.valid;
        if (want.exponent)
            continue; // exponent forms go through double
        QVERIFY2(ok == (want.valid && want.fits), text.c_str());
        if (ok) {
            QCOMPARE(ns, want.ns);
            ++converted;
        }
    }
    QVERIFY(valid > 50'000 && converted > 30'000); // the generator makes both kinds
}

// Random documents, whole and with ASCII bytes changed, inserted or deleted
// (UTF-8 is checked apart from the reader): the importer's JSON reader
// accepts exactly what nlohmann::json accepts.
void TestProfilerImport::readerAcceptsWhatNlohmannAccepts()
{
    std::mt19937 rng(20261205);
    // No NUL: nlohmann takes it for the end of the input, the reader refuses it (below).
    const std::string bytes = "{}[]\",:\\ \n0123456789-+.eEtrufalsnu/xX\x01\x7f";
    int accepted = 0, refused = 0;
    for (int i = 0; i < 30'000; ++i) {
        std::string text = randomJson(rng, 0);
        editRandomly(rng, text, bytes);
        const bool want = nlohmann::json::accept(text);
        QVERIFY2(readerAcceptsDocument(text) == want, printable(text).c_str());
        (want ? accepted : refused) += 1;
    }
    QVERIFY2(accepted > 5'000 && refused > 5'000, qPrintable(QString("%1 %2").arg(accepted).arg(refused)));
    for (const std::string &text : {std::string("[1,\0 2]", 7), std::string("1\0", 2), std::string("\"a\0b\"", 5)})
        QVERIFY2(!readerAcceptsDocument(text), printable(text).c_str());
    QVERIFY(readerAcceptsDocument("\"a\\u0000b\""));
    // Nesting is limited (the reader recurses), not refused by a crash.
    const auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
    QVERIFY(readerAcceptsDocument(nested(1000)));
    QVERIFY(!readerAcceptsDocument(nested(1001)));
    QVERIFY(!readerAcceptsDocument(nested(200'000)));
}

// The reader guesses each key from the one before it: what it reads, keys
// and all, is what nlohmann::json reads, with and without edits to the text.
void TestProfilerImport::guessedKeysReadAsNlohmannReadsThem()
{
    std::mt19937 rng(20261206);
    const std::string bytes = "{}[]\",: \\ku0068phx";
    int accepted = 0, refused = 0;
    for (int i = 0; i < 5'000; ++i) {
        std::string text = repeatedKeysDocument(rng);
        editRandomly(rng, text, bytes);
        const std::optional<std::vector<std::string>> want = nlohmannKeys(text);
        QVERIFY2(readerKeys(text) == want, printable(text).c_str());
        (want ? accepted : refused) += 1;
    }
    QVERIFY2(accepted > 1'000 && refused > 1'000, qPrintable(QString("%1 %2").arg(accepted).arg(refused)));
}

// Gzip files are inflated whole by libdeflate, a member at a time; what it
// cannot read, the streaming reader reads (and names the damage).
void TestProfilerImport::gzipInflatedWhole()
{
    const std::string json = traceOfEvents(500);
    const size_t half = json.size() / 2;
    const std::string a = deflated(json.substr(0, half), true), b = deflated(json.substr(half), true);
    const std::string path = tmpPath("whole.json.gz");
    const auto inflate = [&](const std::string &bytes, size_t hint, std::string *text) {
        writeBytes(path, bytes);
        std::ifstream in(path, std::ios::binary);
        kineto::JsonBuffer buffer;
        buffer.reserve(hint);
        const ImportControl control;
        kineto::ImportProgress progress(control, bytes.size());
        progress.beginFile(bytes.size());
        const kineto::WholeGzip result = kineto::inflateWhole(in, bytes.size(), buffer, progress);
        if (text)
            *text = std::string(buffer.data(), buffer.size());
        return result;
    };
    std::string text;
    // Two members and the zeros some writers pad with; a size hint far too small grows the buffer.
    QVERIFY(inflate(a + b + std::string(16, '\0'), 100, &text) == kineto::WholeGzip::Read);
    QVERIFY(text == json);
    QVERIFY(inflate(a + deflated(json.substr(half), false), json.size(), nullptr) == kineto::WholeGzip::Streaming);
    std::string damaged = a + b;
    damaged[damaged.size() - 8] ^= 0x01; // member 2's CRC
    QVERIFY(inflate(damaged, json.size(), nullptr) == kineto::WholeGzip::Streaming);
    QVERIFY(inflate((a + b).substr(0, a.size() + b.size() / 2), json.size(), nullptr) == kineto::WholeGzip::Streaming);
}

// Concatenated members import as one file; each gzip member's CRC-32 and
// length are checked against its trailer (by this import, not zlib), also
// on the second thread a big file's check runs on; a zlib-wrapped member
// keeps zlib's own check.
void TestProfilerImport::gzipMembersAndChecks()
{
    for (const int events : {3, 60'000}) { // 60,000 events: 5 MB, checked on another thread
        const std::string json = traceOfEvents(events);
        const size_t half = json.size() / 2;
        const std::string a = deflated(json.substr(0, half), true), b = deflated(json.substr(half), true);
        QVERIFY(!a.empty() && !b.empty());
        const std::string path = tmpPath("members.json.gz");
        writeBytes(path, a + b);
        QCOMPARE(importOne(path).runs.at(0).events.size(), size_t(events));
        const std::string zlibMember = deflated(json.substr(half), false);
        writeBytes(path, a + zlibMember);
        QCOMPARE(importOne(path).runs.at(0).events.size(), size_t(events));

        std::string damaged = a + b;
        damaged[damaged.size() - 8] ^= 0x01; // member 2's CRC
        writeBytes(path, damaged);
        expectImportError(path, "fail the CRC-32 check (member 2)");
        damaged = a + b;
        damaged[a.size() - 4] ^= 0x01; // member 1's length
        writeBytes(path, damaged);
        expectImportError(path, "fails the gzip length check (member 1)");
        damaged = a + zlibMember;
        damaged[damaged.size() - 1] ^= 0x01; // the zlib member's Adler-32
        writeBytes(path, damaged);
        expectImportError(path, "corrupt gzip data");
        writeBytes(path, deflated(json, true));
        QCOMPARE(importOne(path).runs.at(0).events.size(), size_t(events));
        damaged = deflated(json, true);
        damaged[damaged.size() - 5] ^= 0x80; // the single member's CRC
        writeBytes(path, damaged);
        expectImportError(path, "fail the CRC-32 check");
    }
}

void TestProfilerImport::unfinishedRangeMarksRunIncomplete()
{
    const std::string path = tmpPath("open.json");
    writeBytes(path, R"([{"ph":"B","name":"never ends","pid":1,"tid":1,"ts":10},
                         {"ph":"X","name":"x","pid":1,"tid":1,"ts":20,"dur":5}])");
    const Trace trace = importOne(path);
    QVERIFY(!trace.runs[0].summary.complete);
    QCOMPARE(findEvent(trace, trace.runs[0], "never ends")->duration, int64_t(15'000));
}

void TestProfilerImport::importTracesDispatches()
{
    const std::string path = tmpPath("small.json");
    writeBytes(path, kSmallTrace);
    QVERIFY(importTraces({path}).has_value());
    const std::string text = tmpPath("notes.txt");
    writeBytes(text, "just some text");
    QVERIFY_THROWS_EXCEPTION(Error, importTraces({path, text}));
}

QTEST_GUILESS_MAIN(TestProfilerImport)
#include "tst_profiler_import.moc"
