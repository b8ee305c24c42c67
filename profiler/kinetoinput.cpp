// Reading a Kineto trace file into one padded buffer: plain JSON is read in
// blocks; gzip up to kWholeGzipUpTo is inflated a member at a time by
// libdeflate, bigger or damaged gzip as it streams in through zlib, so a big
// compressed file is never held in memory whole.

#include "profiler/jsonscan.h"
#include "profiler/kinetoimport.h"

#include "core/tensor/tensor.h"

#include <libdeflate.h>
#include <simdjson.h>
#include <zlib.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>

namespace fusescope::profiler::kineto {

namespace {

constexpr size_t kBlock = size_t(1) << 20; // read and report every MiB

[[noreturn]] void fail(const std::string &path, const std::string &what)
{
    throw Error(path + ": " + what);
}

// gzip's trailer fields are 32-bit little-endian.
uint32_t le32(const unsigned char *b)
{
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

// gzip keeps the uncompressed size mod 2^32 in its last four bytes: a good
// first guess for the buffer, so a usual trace needs no regrowth.
size_t gzipSizeHint(std::ifstream &in, uint64_t fileBytes)
{
    if (fileBytes < 18)
        return 0;
    unsigned char tail[4] = {};
    in.seekg(std::streamoff(fileBytes - 4));
    in.read(reinterpret_cast<char *>(tail), 4);
    in.clear();
    in.seekg(0);
    const size_t hint = le32(tail);
    // A damaged tail must not reserve gigabytes; JSON rarely deflates past 64:1.
    return std::min<size_t>(hint, size_t(fileBytes) * 64);
}

// Faults in a fresh buffer's pages on another thread, a window ahead of the
// thread that fills it. MADV_POPULATE_WRITE maps pages without writing to
// them, so it cannot disturb what the filler wrote. Inflating the ResNet-50
// trace took 34 ms into fresh pages and 21 ms into populated ones.
class PageFaulter
{
public:
    // Addresses as integers: the window may reach past the buffer's end.
    PageFaulter(const char *begin, const char *end) : m_begin(pageUp(begin)), m_end(pageDown(end))
    {
        m_filled = m_done = m_begin;
        if (m_begin + kStep < m_end)
            m_thread = std::jthread([this](std::stop_token stop) { run(stop); });
    }

    // The filler has written up to `p`.
    void filledTo(const char *p)
    {
        {
            const std::lock_guard lock(m_mutex);
            m_filled = reinterpret_cast<uintptr_t>(p);
        }
        m_wake.notify_one();
    }

private:
    static constexpr uintptr_t kPage = 4096;
    static constexpr uintptr_t kStep = uintptr_t(1) << 20;
    static constexpr uintptr_t kWindow = uintptr_t(8) << 20; // at most this much populated and not yet filled

    static uintptr_t pageUp(const char *p) { return (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1); }
    static uintptr_t pageDown(const char *p) { return reinterpret_cast<uintptr_t>(p) & ~(kPage - 1); }

    void run(std::stop_token stop)
    {
        while (m_done < m_end) {
            uintptr_t to = 0;
            {
                std::unique_lock lock(m_mutex);
                if (!m_wake.wait(lock, stop, [&] { return m_done < m_filled + kWindow; }))
                    return; // stopped
                to = std::min({m_end, m_done + kStep, m_filled + kWindow});
            }
            // Fails on kernels before 5.14: then the filler faults its own pages.
            if (::madvise(reinterpret_cast<void *>(m_done), to - m_done, MADV_POPULATE_WRITE) != 0)
                return;
            m_done = to; // only this thread reads or writes it
        }
    }

    const uintptr_t m_begin;
    const uintptr_t m_end;
    uintptr_t m_done = 0;
    std::mutex m_mutex;
    std::condition_variable_any m_wake;
    uintptr_t m_filled = 0; // guarded by m_mutex
    std::jthread m_thread;  // last: stopped and joined first
};

// One gzip member of the file: where its output and its compressed bytes end.
struct GzipMember {
    uint64_t outBegin = 0, outEnd = 0;
    uint64_t inEnd = 0; // the byte after its trailer (CRC-32, then the length mod 2^32)
    uint32_t crc = 0;   // as the trailer says
};

// " (member 2)" where the file has several members.
std::string whichMember(size_t index, size_t count)
{
    return count > 1 ? " (member " + std::to_string(index + 1) + ")" : std::string();
}

// The CRC-32 of every member's bytes against its trailer: "" or the error.
std::string checkCrcs(const std::string &path, const char *data, const std::vector<GzipMember> &members)
{
    for (size_t i = 0; i < members.size(); ++i) {
        const GzipMember &m = members[i];
        const auto crc = uint32_t(crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef *>(data + m.outBegin),
                                          z_size_t(m.outEnd - m.outBegin)));
        if (crc != m.crc)
            return path + ": corrupt gzip data: the decompressed bytes fail the CRC-32 check"
                 + whichMember(i, members.size());
    }
    return {};
}

// Below this much output the CRC check runs on the reading thread.
constexpr uint64_t kCheckOnThreadFrom = uint64_t(4) << 20;

class GzipReader
{
public:
    GzipReader(const std::string &path, std::ifstream &in, JsonBuffer &out) : m_path(path), m_in(in), m_out(out)
    {
        // 32 + MAX_WBITS: accept a gzip or zlib header.
        if (inflateInit2(&m_z, 32 + MAX_WBITS) != Z_OK)
            fail(path, "cannot start zlib");
        startMember(0x1f); // the caller saw gzip's magic
    }
    ~GzipReader() { inflateEnd(&m_z); }
    GzipReader(const GzipReader &) = delete;
    GzipReader &operator=(const GzipReader &) = delete;

    bool run(ImportProgress &progress)
    {
        uint64_t readBytes = 0;
        std::vector<char> chunk(kBlock);
        m_faulter.emplace(m_out.data() + m_out.size(), m_out.data() + m_out.capacity());
        while (m_in) {
            m_in.read(chunk.data(), std::streamsize(chunk.size()));
            const size_t n = size_t(m_in.gcount());
            if (n == 0)
                break;
            inflateChunk(reinterpret_cast<unsigned char *>(chunk.data()), n);
            readBytes += n;
            progress.reading(readBytes);
            if (progress.cancelled())
                return false;
        }
        if (!m_ended)
            fail(m_path, "the gzip stream is truncated at compressed byte " + std::to_string(m_z.total_in));
        readTrailers();
        return true;
    }

    // The gzip members' CRC-32 check, here or, for a big file, on `check`'s
    // thread. zlib's own check is off for them (inflateValidate); the lengths
    // were checked by readTrailers.
    void checkCrcs(DeferredCheck &check) const
    {
        const char *data = m_out.data();
        if (m_out.size() < kCheckOnThreadFrom) {
            if (std::string error = kineto::checkCrcs(m_path, data, m_members); !error.empty())
                throw Error(error);
            return;
        }
        check.start([path = m_path, data, members = m_members] { return kineto::checkCrcs(path, data, members); });
    }

private:
    void inflateChunk(unsigned char *data, size_t n)
    {
        m_z.next_in = data;
        m_z.avail_in = uInt(n);
        while (m_z.avail_in > 0) {
            if (m_ended && !restartMember())
                return;
            // Whatever room is left, however little: asking for more would grow
            // (and copy) a buffer sized right by the hint just for the trailer.
            size_t room = 1;
            const char *base = m_out.data();
            m_z.next_out = reinterpret_cast<unsigned char *>(m_out.appendSpace(room));
            if (m_out.data() != base)
                m_faulter.reset(); // the buffer grew (a wrong hint): its new pages fault as they fill
            m_z.avail_out = uInt(std::min<size_t>(room, kBlock)); // a MiB at a time, to keep the faulter ahead
            const uInt before = m_z.avail_out;
            const int rc = inflate(&m_z, Z_NO_FLUSH);
            m_out.commit(before - m_z.avail_out);
            if (m_faulter)
                m_faulter->filledTo(m_out.data() + m_out.size());
            if (rc == Z_STREAM_END) {
                m_ended = true;
                if (m_ownCheck) {
                    m_members.back().outEnd = m_z.total_out;
                    m_members.back().inEnd = m_z.total_in;
                }
            }
            else if (rc != Z_OK && rc != Z_BUF_ERROR)
                fail(m_path, std::string("corrupt gzip data at compressed byte ") + std::to_string(m_z.total_in)
                                 + " (" + (m_z.msg ? m_z.msg : zError(rc)) + ")");
        }
    }

    // Concatenated gzip members form one file (gzip -c a b); trailing zeros
    // after the last member, which some writers pad with, are ignored.
    bool restartMember()
    {
        if (*m_z.next_in == 0) {
            m_z.avail_in = 0;
            return false;
        }
        const uLong in = m_z.total_in;
        const uLong out = m_z.total_out;
        inflateReset(&m_z);
        m_z.total_in = in;
        m_z.total_out = out;
        m_ended = false;
        startMember(*m_z.next_in);
        return true;
    }

    // A gzip member's CRC is checked here, off the inflating thread for a big
    // file; a zlib-wrapped one (whose first byte is never 0x1f) keeps zlib's
    // Adler-32 check.
    void startMember(unsigned char firstByte)
    {
        m_ownCheck = firstByte == 0x1f;
        inflateValidate(&m_z, m_ownCheck ? 0 : 1);
        if (m_ownCheck)
            m_members.push_back({m_z.total_out, m_z.total_out, 0, 0});
    }

    // Each member's trailer, read back from the file: its CRC for the check,
    // and its length mod 2^32, which zlib no longer checks either.
    void readTrailers()
    {
        m_in.clear();
        for (size_t i = 0; i < m_members.size(); ++i) {
            GzipMember &m = m_members[i];
            unsigned char t[8] = {};
            m_in.seekg(std::streamoff(m.inEnd - 8));
            m_in.read(reinterpret_cast<char *>(t), 8);
            if (m_in.gcount() != 8)
                fail(m_path, "cannot be read back at compressed byte " + std::to_string(m.inEnd - 8));
            m.crc = le32(t);
            if (le32(t + 4) != uint32_t(m.outEnd - m.outBegin))
                fail(m_path, "corrupt gzip data: the decompressed length fails the gzip length check"
                                 + whichMember(i, m_members.size()));
        }
    }

    const std::string &m_path;
    std::ifstream &m_in;
    JsonBuffer &m_out;
    z_stream m_z{};
    bool m_ended = false;
    bool m_ownCheck = false; // the member being read is gzip: its CRC is ours to check
    std::vector<GzipMember> m_members;
    std::optional<PageFaulter> m_faulter;
};

// Reads bytes [begin, end) of the file into `to` a block at a time, until done
// or stopped. Returns how many arrived: fewer when the file shrank or a read
// failed (then `error` is its errno).
uint64_t readRange(int fd, char *to, uint64_t begin, uint64_t end, int &error, std::stop_token stop = {})
{
    uint64_t at = begin;
    while (at < end && !stop.stop_requested()) {
        const ssize_t n = ::pread(fd, to + at, size_t(std::min<uint64_t>(kBlock, end - at)), off_t(at));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            error = errno;
        if (n <= 0)
            break;
        at += uint64_t(n);
    }
    return at - begin;
}

// ---- gzip inflated whole ----
// libdeflate inflates a whole gzip member in one call, 2.7 times as fast as
// zlib's streaming inflate here (the V100 trace: 13.4 -> 4.9 ms, its CRC-32
// and length checks included). It needs the compressed bytes in memory and
// reports nothing within a member, so it takes files up to this size (about
// half a second of inflating between two progress reports).
constexpr uint64_t kWholeGzipUpTo = uint64_t(128) << 20;

class PlainReader
{
public:
    explicit PlainReader(const std::string &path) : m_path(path), m_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC))
    {
        if (m_fd < 0)
            fail(path, std::string("cannot be read: ") + std::strerror(errno));
    }
    ~PlainReader() { ::close(m_fd); }
    PlainReader(const PlainReader &) = delete;
    PlainReader &operator=(const PlainReader &) = delete;

    // Most of the time of reading a big file is the kernel faulting in and
    // filling the fresh buffer's pages: a second thread reads the second half,
    // so half of that work runs on the other core.
    bool run(uint64_t fileBytes, JsonBuffer &buffer, ImportProgress &progress)
    {
        size_t room = size_t(fileBytes);
        char *to = buffer.appendSpace(room);
        const uint64_t half = fileBytes >= kTwoThreadsFrom ? fileBytes / 2 : fileBytes;
        int error = 0;
        int helperError = 0;
        uint64_t secondHalf = 0;
        std::jthread helper;
        if (half < fileBytes)
            helper = std::jthread([&, to](std::stop_token stop) {
                secondHalf = readRange(m_fd, to, half, fileBytes, helperError, stop);
            });
        for (uint64_t first = 0; first < half;) {
            const uint64_t want = std::min(half - first, uint64_t(kBlock));
            const uint64_t got = readRange(m_fd, to, first, first + want, error);
            first += got;
            if (got < want) // the file shrank, or a read failed
                fail(m_path, error ? std::string("cannot be read: ") + std::strerror(error)
                                   : "became shorter while it was read");
            progress.reading(first * (fileBytes / half)); // the helper keeps pace on its half
            if (progress.cancelled())
                return false; // the helper is stopped and joined on the way out
        }
        if (helper.joinable())
            helper.join(); // not `helper = {}`: that would ask it to stop first
        if (secondHalf < fileBytes - half)
            fail(m_path, helperError ? std::string("cannot be read: ") + std::strerror(helperError)
                                     : "became shorter while it was read");
        buffer.commit(size_t(fileBytes));
        return readGrowth(buffer, progress);
    }

private:
    // A file still being written may have grown since its size was taken.
    // Reads go to a small chunk first: growing the buffer for the read that
    // finds the end would copy the whole file once more.
    bool readGrowth(JsonBuffer &buffer, ImportProgress &progress)
    {
        std::vector<char> chunk(64 * 1024);
        for (;;) {
            const ssize_t n = ::pread(m_fd, chunk.data(), chunk.size(), off_t(buffer.size()));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                fail(m_path, std::string("cannot be read: ") + std::strerror(errno));
            if (n == 0)
                return true;
            size_t room = size_t(n);
            std::memcpy(buffer.appendSpace(room), chunk.data(), size_t(n));
            buffer.commit(size_t(n));
            progress.reading(buffer.size());
            if (progress.cancelled())
                return false;
        }
    }

    static constexpr uint64_t kTwoThreadsFrom = 4 * kBlock;
    const std::string &m_path;
    const int m_fd;
};

} // namespace

namespace {

constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kMapFrom = 2 * kHugePage;
constexpr size_t kSpareUpTo = size_t(32) << 20;

// The last freed mapping of at most kSpareUpTo bytes, kept for the next
// import as the heap keeps a freed block of that size (its pages stay
// mapped: opening a second trace costs no faults).
struct Spare {
    std::mutex mutex;
    char *data = nullptr;
    size_t bytes = 0;
};

Spare &spare()
{
    static Spare s;
    return s;
}

// The spare mapping when it is big enough, else null.
char *takeSpare(size_t &bytes)
{
    Spare &s = spare();
    const std::lock_guard lock(s.mutex);
    if (!s.data || s.bytes < bytes)
        return nullptr;
    bytes = s.bytes;
    return std::exchange(s.data, nullptr);
}

// A big buffer in transparent huge pages: the file's bytes land in a few
// faults of 2 MiB rather than one per 4 KiB page, and it is unmapped at once.
// Reading the ResNet-50 trace (35 MB) into fresh memory took 9.4-11 ms with
// 4 KiB pages and 5.0-5.8 with huge ones, and freeing it 1.6-1.9 ms against
// 0.1. Null when the mapping fails (the heap serves then).
char *mapHuge(size_t bytes)
{
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return nullptr;
    ::madvise(p, bytes, MADV_HUGEPAGE); // a hint; without it the pages are small
    return static_cast<char *>(p);
}

} // namespace

void BufferRelease::operator()(char *p) const
{
    if (!mapped) {
        delete[] p;
        return;
    }
    if (mapped <= kSpareUpTo) {
        Spare &s = spare();
        const std::lock_guard lock(s.mutex);
        std::swap(p, s.data);
        const size_t bytes = std::exchange(s.bytes, mapped);
        if (p)
            ::munmap(p, bytes);
        return;
    }
    ::munmap(p, mapped);
}

static_assert(simdjson::SIMDJSON_PADDING >= kJsonPadding, "the JSON reader reads past the end of the text");

void JsonBuffer::reserve(size_t bytes)
{
    if (bytes <= m_capacity)
        return;
    const size_t total = bytes + simdjson::SIMDJSON_PADDING;
    size_t mapped = total >= kMapFrom ? (total + kHugePage - 1) / kHugePage * kHugePage : 0;
    char *fresh = mapped ? takeSpare(mapped) : nullptr;
    if (mapped && !fresh)
        fresh = mapHuge(mapped);
    // Default-initialized: untouched capacity costs address space, not memory.
    std::unique_ptr<char[], BufferRelease> grown(fresh ? fresh : new char[total], BufferRelease{fresh ? mapped : 0});
    if (m_size)
        std::memcpy(grown.get(), m_data.get(), m_size);
    m_data = std::move(grown);
    m_capacity = bytes;
}

char *JsonBuffer::appendSpace(size_t &bytes)
{
    if (m_capacity - m_size < bytes)
        reserve(std::max(m_size + bytes, m_capacity + m_capacity / 2));
    bytes = m_capacity - m_size;
    return m_data.get() + m_size;
}

void JsonBuffer::finish()
{
    if (!m_data)
        reserve(1);
    std::memset(m_data.get() + m_size, 0, simdjson::SIMDJSON_PADDING);
}

void ImportProgress::beginFile(uint64_t fileBytes)
{
    m_fileBytes = fileBytes;
}

void ImportProgress::endFile()
{
    m_fileStart += m_fileBytes;
    m_fileBytes = 0;
    report(m_fileStart);
}

void ImportProgress::report(uint64_t done)
{
    if (!m_control.progress || (done - m_lastReported < kBlock && done != m_total && done >= m_lastReported))
        return;
    m_lastReported = done;
    m_control.progress(std::min(done, m_total), m_total);
}

void DeferredCheck::start(std::function<std::string()> check)
{
    m_thread = std::thread([this, check = std::move(check)] {
        try {
            m_error = check();
        } catch (const std::exception &e) {
            m_error = e.what();
        }
    });
}

void DeferredCheck::wait()
{
    if (m_thread.joinable())
        m_thread.join();
    if (!m_error.empty())
        throw Error(std::exchange(m_error, {}));
}

DeferredCheck::~DeferredCheck()
{
    if (m_thread.joinable())
        m_thread.join();
}

namespace {

// The gzip member at `in` inflated onto the end of `out`, which grows while
// it is too small (a wrong size hint): the compressed bytes it took, or 0 when
// libdeflate cannot read it.
size_t inflateMember(libdeflate_decompressor *inflater, const char *in, size_t bytes, JsonBuffer &out)
{
    for (;;) {
        size_t room = 1;
        char *to = out.appendSpace(room);
        size_t used = 0, made = 0;
        const libdeflate_result result = libdeflate_gzip_decompress_ex(inflater, in, bytes, to, room, &used, &made);
        if (result == LIBDEFLATE_INSUFFICIENT_SPACE) {
            out.reserve(out.capacity() * 2);
            continue;
        }
        if (result != LIBDEFLATE_SUCCESS)
            return 0;
        out.commit(made);
        return used;
    }
}

} // namespace

WholeGzip inflateWhole(std::ifstream &in, uint64_t fileBytes, JsonBuffer &out, ImportProgress &progress)
{
    const std::unique_ptr<char[]> packed = std::make_unique_for_overwrite<char[]>(fileBytes);
    if (!in.read(packed.get(), std::streamsize(fileBytes)))
        return WholeGzip::Streaming;
    const std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor *)> inflater(
        libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
    if (!inflater)
        return WholeGzip::Streaming;
    // Trailing zeros after the last member, which some writers pad with, are
    // ignored, as the streaming reader does.
    for (size_t at = 0; at < fileBytes && packed[at] != 0;) {
        const size_t used = static_cast<unsigned char>(packed[at]) == 0x1f
            ? inflateMember(inflater.get(), packed.get() + at, fileBytes - at, out)
            : 0; // a zlib-wrapped member
        if (used == 0)
            return WholeGzip::Streaming;
        at += used;
        progress.reading(at);
        if (progress.cancelled())
            return WholeGzip::Cancelled;
    }
    return WholeGzip::Read;
}

bool readJsonFile(const std::string &path, JsonBuffer &buffer, ImportProgress &progress, DeferredCheck &check)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        fail(path, std::string("cannot be read: ") + std::strerror(errno));
    const std::streamoff end = in.tellg();
    if (end < 0) // not a regular file: its size is unknown, and the buffer is sized by it
        fail(path, "cannot be read: its size is unknown (not a regular file)");
    const uint64_t fileBytes = uint64_t(end);
    in.seekg(0);
    progress.beginFile(fileBytes);
    if (fileBytes == 0)
        fail(path, "is empty");
    unsigned char magic[2] = {};
    in.read(reinterpret_cast<char *>(magic), 2);
    in.seekg(0);
    if (magic[0] == 0x1f && magic[1] == 0x8b) {
        buffer.reserve(gzipSizeHint(in, fileBytes));
        if (fileBytes <= kWholeGzipUpTo) {
            const WholeGzip whole = inflateWhole(in, fileBytes, buffer, progress);
            if (whole != WholeGzip::Streaming) {
                buffer.finish();
                return whole == WholeGzip::Read;
            }
            buffer.clear();
            in.clear();
            in.seekg(0);
        }
        GzipReader reader(path, in, buffer);
        const bool done = reader.run(progress);
        buffer.finish(); // before the check may start reading the buffer on its thread
        if (done)
            reader.checkCrcs(check);
        return done;
    }
    in.close();
    PlainReader reader(path);
    const bool done = reader.run(fileBytes, buffer, progress);
    buffer.finish();
    return done;
}

} // namespace fusescope::profiler::kineto
