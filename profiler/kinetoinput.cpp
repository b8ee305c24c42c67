// Reading a Kineto trace file into one padded buffer: plain JSON is read in
// blocks, gzip is inflated as it streams in, so the compressed file is never
// held in memory whole.

#include "profiler/kinetoimport.h"

#include "core/tensor/tensor.h"

#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace fusescope::profiler::kineto {

namespace {

constexpr size_t kBlock = size_t(1) << 20; // read and report every MiB

[[noreturn]] void fail(const std::string &path, const std::string &what)
{
    throw Error(path + ": " + what);
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
    const size_t hint = size_t(tail[0]) | size_t(tail[1]) << 8 | size_t(tail[2]) << 16 | size_t(tail[3]) << 24;
    // A damaged tail must not reserve gigabytes; JSON rarely deflates past 64:1.
    return std::min<size_t>(hint, size_t(fileBytes) * 64);
}

class GzipReader
{
public:
    GzipReader(const std::string &path, std::ifstream &in, JsonBuffer &out) : m_path(path), m_in(in), m_out(out)
    {
        // 32 + MAX_WBITS: accept a gzip or zlib header.
        if (inflateInit2(&m_z, 32 + MAX_WBITS) != Z_OK)
            fail(path, "cannot start zlib");
    }
    ~GzipReader() { inflateEnd(&m_z); }
    GzipReader(const GzipReader &) = delete;
    GzipReader &operator=(const GzipReader &) = delete;

    bool run(ImportProgress &progress)
    {
        uint64_t readBytes = 0;
        std::vector<char> chunk(kBlock);
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
        return true;
    }

private:
    void inflateChunk(unsigned char *data, size_t n)
    {
        m_z.next_in = data;
        m_z.avail_in = uInt(n);
        while (m_z.avail_in > 0) {
            if (m_ended && !restartMember())
                return;
            size_t room = kBlock;
            m_z.next_out = reinterpret_cast<unsigned char *>(m_out.appendSpace(room));
            m_z.avail_out = uInt(std::min<size_t>(room, 1u << 30));
            const uInt before = m_z.avail_out;
            const int rc = inflate(&m_z, Z_NO_FLUSH);
            m_out.commit(before - m_z.avail_out);
            if (rc == Z_STREAM_END)
                m_ended = true;
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
        return true;
    }

    const std::string &m_path;
    std::ifstream &m_in;
    JsonBuffer &m_out;
    z_stream m_z{};
    bool m_ended = false;
};

bool readPlain(std::ifstream &in, uint64_t fileBytes, JsonBuffer &buffer, ImportProgress &progress)
{
    buffer.reserve(size_t(fileBytes));
    while (in) {
        size_t room = kBlock;
        char *at = buffer.appendSpace(room);
        in.read(at, std::streamsize(std::min(room, kBlock)));
        const size_t n = size_t(in.gcount());
        if (n == 0)
            break;
        buffer.commit(n);
        progress.reading(buffer.size());
        if (progress.cancelled())
            return false;
    }
    return true;
}

} // namespace

void JsonBuffer::reserve(size_t bytes)
{
    if (bytes <= m_capacity)
        return;
    // Default-initialized: untouched capacity costs address space, not memory.
    std::unique_ptr<char[]> grown(new char[bytes + simdjson::SIMDJSON_PADDING]);
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

bool readJsonFile(const std::string &path, JsonBuffer &buffer, ImportProgress &progress)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        fail(path, std::string("cannot be read: ") + std::strerror(errno));
    const uint64_t fileBytes = uint64_t(in.tellg());
    in.seekg(0);
    progress.beginFile(fileBytes);
    if (fileBytes == 0)
        fail(path, "is empty");
    unsigned char magic[2] = {};
    in.read(reinterpret_cast<char *>(magic), 2);
    in.seekg(0);
    bool done = true;
    if (magic[0] == 0x1f && magic[1] == 0x8b) {
        buffer.reserve(gzipSizeHint(in, fileBytes));
        GzipReader reader(path, in, buffer);
        done = reader.run(progress);
    } else {
        done = readPlain(in, fileBytes, buffer, progress);
    }
    buffer.finish();
    return done;
}

} // namespace fusescope::profiler::kineto
