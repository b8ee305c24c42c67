#include "profiler/recorder.h"
#include "profiler/session.h"

#include "core/tensor/tensor.h"

#include <memory>
#include <mutex>
#include <vector>

#include <pthread.h>
#include <unistd.h>

namespace fusescope::profiler::record {

std::atomic<bool> g_recording{false};
std::atomic<uint32_t> g_generation{0};
constinit thread_local ThreadBuffer *t_buffer = nullptr;
constinit thread_local uint32_t t_generation = 0;

namespace {

// 8192 blocks of 64 KiB: past 512 MiB not yet drained, records are dropped
// and counted rather than growing memory without bound.
constexpr int64_t kMaxBlocks = 8192;
std::atomic<int64_t> g_blocks{0};

struct Session {
    std::mutex mutex;
    bool open = false;
    uint32_t serial = 0;
    std::vector<std::unique_ptr<ThreadBuffer>> buffers;
    // The previous session's buffers: a thread may still be ending a range in
    // one of them just after stop(), so they are freed one session later.
    std::vector<std::unique_ptr<ThreadBuffer>> retired;
};

Session &session()
{
    static Session s;
    return s;
}

// Consumed blocks come back here: reusing warm pages spares the producer a
// page fault per 4 KiB of fresh memory.
struct FreeBlocks {
    std::mutex mutex;
    std::vector<Block *> blocks;

    ~FreeBlocks()
    {
        for (Block *b : blocks)
            delete b;
    }
};

FreeBlocks &freeBlocks()
{
    static FreeBlocks f;
    return f;
}

Block *newBlock()
{
    g_blocks.fetch_add(1, std::memory_order_relaxed);
    FreeBlocks &f = freeBlocks();
    {
        std::lock_guard lock(f.mutex);
        if (!f.blocks.empty()) {
            Block *b = f.blocks.back();
            f.blocks.pop_back();
            b->used.store(0, std::memory_order_relaxed);
            b->next.store(nullptr, std::memory_order_relaxed);
            return b;
        }
    }
    return new Block;
}

void recycleBlock(Block *b)
{
    g_blocks.fetch_sub(1, std::memory_order_relaxed);
    FreeBlocks &f = freeBlocks();
    std::lock_guard lock(f.mutex);
    if (f.blocks.size() < 64)
        f.blocks.push_back(b);
    else
        delete b;
}

void freeBuffer(ThreadBuffer &b)
{
    for (Block *blk = b.head; blk;) {
        Block *next = blk->next.load(std::memory_order_acquire);
        recycleBlock(blk);
        blk = next;
    }
    b.head = b.tail = nullptr;
}

void retireBuffers(Session &s)
{
    for (auto &b : s.retired)
        freeBuffer(*b);
    s.retired = std::move(s.buffers);
    s.buffers.clear();
}

} // namespace

// At exit: the session's buffers go with it, straight back to the system.
ThreadBuffer::~ThreadBuffer()
{
    for (Block *b = head; b;) {
        Block *next = b->next.load(std::memory_order_acquire);
        delete b;
        b = next;
    }
}

bool ThreadBuffer::grow(uint32_t n)
{
    if (g_blocks.load(std::memory_order_relaxed) >= kMaxBlocks || n > Block::kWords) {
        dropped.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    Block *b = newBlock();
    tail->next.store(b, std::memory_order_release);
    tail = b;
    tailUsed = 0;
    return true;
}

ThreadBuffer *attachThread()
{
    Session &s = session();
    std::lock_guard lock(s.mutex);
    if (!s.open)
        return nullptr;
    auto b = std::make_unique<ThreadBuffer>();
    b->head = b->tail = newBlock();
    b->tid = static_cast<int64_t>(gettid());
    b->serial = s.serial++;
    pthread_getname_np(pthread_self(), b->name, sizeof b->name);
    t_buffer = b.get();
    t_generation = g_generation.load(std::memory_order_relaxed);
    s.buffers.push_back(std::move(b));
    return t_buffer;
}

} // namespace fusescope::profiler::record

namespace fusescope::profiler::session {

void start()
{
    record::Session &s = record::session();
    std::lock_guard lock(s.mutex);
    if (s.open)
        throw Error("profiler: another profiler is recording in this process; stop it first");
    record::retireBuffers(s);
    s.open = true;
    s.serial = 0;
    record::g_generation.fetch_add(1, std::memory_order_relaxed);
}

void setRecording(bool on)
{
    record::g_recording.store(on, std::memory_order_release);
}

void stop()
{
    setRecording(false);
    record::Session &s = record::session();
    std::lock_guard lock(s.mutex);
    s.open = false;
}

std::vector<record::ThreadBuffer *> buffers()
{
    record::Session &s = record::session();
    std::lock_guard lock(s.mutex);
    std::vector<record::ThreadBuffer *> out;
    for (auto &b : s.buffers)
        out.push_back(b.get());
    return out;
}

void releaseBlock(record::Block *block)
{
    record::recycleBlock(block);
}

} // namespace fusescope::profiler::session
