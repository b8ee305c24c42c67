#include "profiler/drainer.h"
#include "profiler/session.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unistd.h>

namespace fusescope::profiler {

namespace {

using record::Type;

Type typeOf(uint64_t head) { return static_cast<Type>(head & 0xff); }
EventKind kindOf(uint64_t head) { return static_cast<EventKind>((head >> 8) & 0xff); }
uint32_t payloadOf(uint64_t head) { return static_cast<uint32_t>((head >> 16) & 0xff); }
uint8_t flagsOf(uint64_t head) { return static_cast<uint8_t>((head >> 24) & 0xff); }
StringId nameOf(uint64_t head) { return StringId(static_cast<uint32_t>(head >> 32)); }

double doubleOf(uint64_t bits)
{
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

} // namespace

void Drainer::beginRun(int64_t originNs)
{
    m_origin = originNs;
    m_nextEvent = 0;
    m_tracks.clear();
    m_tracksSent = 0;
    m_compileTrack = {};
    m_counterTracks.clear();
    m_flows.clear();
    m_pending = {};
    // Ranges still open belong to the previous run; their ends find no begin.
    for (auto &[buffer, t] : m_threads)
        t = Thread();
}

void Drainer::collect(bool keep)
{
    clock::recalibrate();
    m_clock = clock::converter();
    uint64_t dropped = 0;
    for (record::ThreadBuffer *b : session::buffers()) {
        drain(*b);
        dropped += b->dropped.load(std::memory_order_relaxed);
    }
    m_dropped = dropped;
    if (!keep)
        m_pending = {};
}

void Drainer::drain(record::ThreadBuffer &b)
{
    Thread &t = m_threads[&b];
    for (;;) {
        record::Block *block = b.head;
        // `next` is published after the block's last word: read it first.
        record::Block *next = block->next.load(std::memory_order_acquire);
        const uint32_t used = block->used.load(std::memory_order_acquire);
        while (b.headConsumed < used) {
            const uint64_t *p = block->words + b.headConsumed;
            decode(p, t, b);
            b.headConsumed += 2 + payloadOf(p[1]);
        }
        if (!next)
            break;
        b.head = next;
        b.headConsumed = 0;
        session::releaseBlock(block);
    }
}

void Drainer::decode(const uint64_t *p, Thread &t, const record::ThreadBuffer &b)
{
    switch (typeOf(p[1])) {
    case Type::Begin: begin(p, t, b); break;
    case Type::End: end(p, t); break;
    case Type::Instant: instant(p, t, b); break;
    case Type::Allocation: allocation(p, t, b); break;
    case Type::Counter: counter(p); break;
    case Type::FlowOut:
    case Type::FlowIn:
        if (!t.stack.empty())
            (typeOf(p[1]) == Type::FlowOut ? t.stack.back().flowsOut : t.stack.back().flowsIn).push_back(p[2]);
        break;
    }
}

void Drainer::begin(const uint64_t *p, Thread &t, const record::ThreadBuffer &b)
{
    Open o;
    o.start = m_clock.toNs(p[0]) - m_origin;
    o.name = nameOf(p[1]);
    o.kind = kindOf(p[1]);
    if (o.kind == EventKind::CompileStage) {
        o.track = compileTrack();
        o.depth = t.compileDepth++;
    } else {
        o.track = threadTrack(t, b);
        o.depth = t.threadDepth++;
    }
    t.stack.push_back(std::move(o));
}

void Drainer::end(const uint64_t *p, Thread &t)
{
    const StringId name = nameOf(p[1]);
    size_t k = t.stack.size();
    while (k > 0 && t.stack[k - 1].name != name)
        --k;
    if (k == 0)
        return; // its begin was not recorded
    while (t.stack.size() > k)
        pop(t); // never ended: an exception unwound past the observer
    Open o = pop(t);
    emitRange(o, m_clock.toNs(p[0]) - m_origin, p, t);
}

Drainer::Open Drainer::pop(Thread &t)
{
    Open o = std::move(t.stack.back());
    t.stack.pop_back();
    --(o.kind == EventKind::CompileStage ? t.compileDepth : t.threadDepth);
    return o;
}

void Drainer::emitRange(Open &o, int64_t endNs, const uint64_t *p, Thread &t)
{
    const uint64_t head = p[1];
    if ((flagsOf(head) & record::kOpKernel) && o.childKernels > 0) {
        handToParent(o, t); // finer kernels were recorded inside: they tell the truth
        return;
    }
    Event e;
    e.start = o.start;
    e.duration = std::max<int64_t>(0, endNs - o.start);
    e.name = o.name;
    e.kind = o.kind;
    e.track = o.track;
    e.depth = o.depth;
    if (payloadOf(head) >= 3) {
        e.detail = StringId(static_cast<uint32_t>(p[2]));
        e.flops = static_cast<float>(doubleOf(p[3]));
        e.bytes = static_cast<float>(doubleOf(p[4]));
    }
    if (e.kind == EventKind::Kernel && !t.stack.empty())
        ++t.stack.back().childKernels;
    bindToRange(o, push(e));
}

void Drainer::bindToRange(Open &o, uint32_t local)
{
    for (uint32_t a : o.allocations)
        m_pending.allocations[a].op = EventId(local);
    for (uint64_t id : o.flowsOut)
        flowEnd(id, true, local);
    for (uint64_t id : o.flowsIn)
        flowEnd(id, false, local);
}

void Drainer::handToParent(Open &o, Thread &t)
{
    if (t.stack.empty())
        return;
    Open &parent = t.stack.back();
    parent.allocations.insert(parent.allocations.end(), o.allocations.begin(), o.allocations.end());
    parent.flowsOut.insert(parent.flowsOut.end(), o.flowsOut.begin(), o.flowsOut.end());
    parent.flowsIn.insert(parent.flowsIn.end(), o.flowsIn.begin(), o.flowsIn.end());
}

void Drainer::instant(const uint64_t *p, Thread &t, const record::ThreadBuffer &b)
{
    Event e;
    e.start = m_clock.toNs(p[0]) - m_origin;
    e.name = nameOf(p[1]);
    e.detail = StringId(static_cast<uint32_t>(p[2]));
    e.kind = EventKind::Instant;
    e.track = threadTrack(t, b);
    e.depth = t.threadDepth;
    push(e);
}

void Drainer::allocation(const uint64_t *p, Thread &t, const record::ThreadBuffer &b)
{
    Allocation a;
    a.time = m_clock.toNs(p[0]) - m_origin;
    a.address = p[2];
    a.bytes = static_cast<int64_t>(p[3]);
    a.allocatedAfter = static_cast<int64_t>(p[4]);
    a.reservedAfter = static_cast<int64_t>(p[5]);
    a.device = static_cast<int16_t>(static_cast<int64_t>(p[6]));
    a.track = threadTrack(t, b);
    if (!t.stack.empty())
        t.stack.back().allocations.push_back(static_cast<uint32_t>(m_pending.allocations.size()));
    m_pending.allocations.push_back(a);
}

void Drainer::counter(const uint64_t *p)
{
    CounterSample c;
    c.time = m_clock.toNs(p[0]) - m_origin;
    c.value = doubleOf(p[2]);
    c.track = counterTrack(nameOf(p[1]));
    m_pending.counters.push_back(c);
}

void Drainer::flowEnd(uint64_t id, bool out, uint32_t local)
{
    FlowSide &side = out ? m_flows[id].from : m_flows[id].to;
    side = {local, m_batch, true, false};
}

uint32_t Drainer::push(const Event &e)
{
    m_pending.events.push_back(e);
    return static_cast<uint32_t>(m_pending.events.size() - 1);
}

TrackId Drainer::addTrack(Track track)
{
    track.id = TrackId(static_cast<uint16_t>(m_tracks.size()));
    m_tracks.push_back(track);
    return track.id;
}

TrackId Drainer::threadTrack(Thread &t, const record::ThreadBuffer &b)
{
    if (t.track.valid())
        return t.track;
    Track track;
    track.kind = TrackKind::CpuThread;
    const std::string name(b.name, strnlen(b.name, sizeof b.name));
    track.name = interner::intern("thread " + std::to_string(b.tid) + (name.empty() ? "" : " (" + name + ")"));
    track.pid = getpid();
    track.tid = b.tid;
    track.sortIndex = static_cast<int32_t>(b.serial) + 1;
    return t.track = addTrack(track);
}

TrackId Drainer::compileTrack()
{
    if (!m_compileTrack.valid()) {
        Track track;
        track.kind = TrackKind::CompileStages;
        track.name = interner::intern("compile stages");
        track.pid = getpid();
        m_compileTrack = addTrack(track);
    }
    return m_compileTrack;
}

TrackId Drainer::counterTrack(StringId name)
{
    if (auto it = m_counterTracks.find(name.value); it != m_counterTracks.end())
        return it->second;
    Track track;
    track.kind = TrackKind::Counter;
    track.name = name;
    track.pid = getpid();
    track.sortIndex = 1000;
    return m_counterTracks[name.value] = addTrack(track);
}

EventBatch Drainer::takeBatch()
{
    EventBatch batch = std::move(m_pending);
    m_pending = {};
    std::vector<uint32_t> order(batch.events.size());
    std::iota(order.begin(), order.end(), 0u);
    const auto &ev = batch.events;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        if (ev[a].track != ev[b].track)
            return ev[a].track < ev[b].track;
        return ev[a].start != ev[b].start ? ev[a].start < ev[b].start : ev[a].depth < ev[b].depth;
    });
    std::vector<uint32_t> finalOf(order.size());
    std::vector<Event> sorted(order.size());
    for (uint32_t rank = 0; rank < order.size(); ++rank) {
        finalOf[order[rank]] = m_nextEvent + rank;
        sorted[rank] = ev[order[rank]];
    }
    batch.events = std::move(sorted);
    batch.firstEvent = m_nextEvent;
    m_nextEvent += static_cast<uint32_t>(order.size());
    for (Allocation &a : batch.allocations) {
        if (a.op.valid())
            a.op = EventId(finalOf[a.op.value]);
    }
    std::stable_sort(batch.allocations.begin(), batch.allocations.end(),
                     [](const Allocation &a, const Allocation &b) { return a.time < b.time; });
    std::stable_sort(batch.counters.begin(), batch.counters.end(),
                     [](const CounterSample &a, const CounterSample &b) { return a.time < b.time; });
    for (auto &[buffer, t] : m_threads) {
        for (Open &o : t.stack)
            o.allocations.clear(); // they are in this batch; their op stays unknown
    }
    finalizeFlows(finalOf, batch);
    batch.newTracks.assign(m_tracks.begin() + static_cast<std::ptrdiff_t>(m_tracksSent), m_tracks.end());
    m_tracksSent = m_tracks.size();
    batch.firstString = static_cast<uint32_t>(m_stringsSent);
    batch.newStrings = interner::since(m_stringsSent);
    m_stringsSent += batch.newStrings.size();
    ++m_batch;
    return batch;
}

void Drainer::finalizeFlows(const std::vector<uint32_t> &finalOf, EventBatch &batch)
{
    for (auto it = m_flows.begin(); it != m_flows.end();) {
        for (FlowSide *s : {&it->second.from, &it->second.to}) {
            if (s->set && !s->final && s->batch == m_batch) {
                s->index = finalOf[s->index];
                s->final = true;
            }
        }
        if (it->second.from.final && it->second.to.final) {
            batch.flows.push_back({it->first, EventId(it->second.from.index), EventId(it->second.to.index), FlowKind::User});
            it = m_flows.erase(it);
        } else {
            ++it;
        }
    }
}

} // namespace fusescope::profiler
