#include "profiler/profiler.h"
#include "profiler/session.h"

#include "core/tensor/tensor.h"

#include <chrono>
#include <sstream>
#include <utility>

namespace fusescope::profiler {

const char *profilerActionName(ProfilerAction action)
{
    switch (action) {
    case ProfilerAction::None: return "none";
    case ProfilerAction::Warmup: return "warmup";
    case ProfilerAction::Record: return "record";
    case ProfilerAction::RecordAndSave: return "record_and_save";
    }
    return "none";
}

ProfilerAction Schedule::at(int64_t step) const
{
    if (step < skipFirst)
        return ProfilerAction::None;
    step -= skipFirst;
    const int64_t cycle = wait + warmup + active;
    if (cycle <= 0 || (repeat > 0 && step / cycle >= repeat))
        return ProfilerAction::None;
    const int64_t s = step % cycle;
    if (s < wait)
        return ProfilerAction::None;
    if (s < wait + warmup)
        return ProfilerAction::Warmup;
    return s < cycle - 1 ? ProfilerAction::Record : ProfilerAction::RecordAndSave;
}

Schedule Schedule::parse(const std::string &text)
{
    Schedule s;
    std::istringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        const size_t eq = item.find('=');
        const std::string key = item.substr(0, eq);
        int *field = key == "wait" ? &s.wait : key == "warmup" ? &s.warmup : key == "active" ? &s.active
                   : key == "repeat" ? &s.repeat : key == "skip_first" ? &s.skipFirst : nullptr;
        size_t used = 0;
        int value = -1;
        try {
            value = eq == std::string::npos ? -1 : std::stoi(item.substr(eq + 1), &used);
        } catch (const std::exception &) {
        }
        if (!field || value < 0 || used != item.size() - eq - 1)
            throw Error("schedule: '" + item + "' is not one of wait=N, warmup=N, active=N, repeat=N, skip_first=N");
        *field = value;
    }
    if (s.active < 1)
        throw Error("schedule: active must be at least 1");
    return s;
}

std::string Schedule::str() const
{
    return "wait=" + std::to_string(wait) + ",warmup=" + std::to_string(warmup) + ",active=" + std::to_string(active) +
           ",repeat=" + std::to_string(repeat) + (skipFirst ? ",skip_first=" + std::to_string(skipFirst) : "");
}

Profiler::Profiler(ProfilerOptions options)
    : m_options(std::move(options)),
      m_backend({m_options.recordShapes, m_options.profileMemory, m_options.withFlops})
{
}

Profiler::~Profiler()
{
    if (m_started) {
        try {
            stop();
        } catch (const std::exception &) {
            // a destructor cannot report the sink's failure; stop() did
        }
    }
}

ProfilerAction Profiler::actionAt(int64_t step) const
{
    return m_options.schedule ? m_options.schedule->at(step) : ProfilerAction::Record;
}

void Profiler::start()
{
    if (m_started)
        throw Error("profiler: start() called twice");
    for (Activity a : m_options.activities) {
        if (a == Activity::Cuda)
            throw Error("profiler: the CUDA activity needs the CUPTI backend, which is not built yet in this version");
    }
    session::start();
    clock::recalibrate();
    observers::add(&m_backend);
    m_started = true;
    m_step = 0;
    transition(actionAt(0));
    beginStepRange();
    startDrainThread();
}

void Profiler::step()
{
    if (!m_started)
        throw Error("profiler: step() before start()");
    endStepRange();
    ++m_step;
    ++m_windowSteps;
    transition(actionAt(m_step));
    beginStepRange();
    raiseError();
}

void Profiler::stop()
{
    if (!m_started)
        return;
    endStepRange();
    transition(ProfilerAction::None);
    stopDrainThread();
    observers::remove(&m_backend);
    session::stop();
    m_started = false;
    raiseError();
}

void Profiler::transition(ProfilerAction next)
{
    const ProfilerAction prev = m_action;
    const bool recording = next != ProfilerAction::None;
    if (m_inWindow && (prev == ProfilerAction::RecordAndSave || next == ProfilerAction::None))
        endWindow();
    session::setRecording(recording);
    if ((next == ProfilerAction::Record || next == ProfilerAction::RecordAndSave) && !m_inWindow)
        beginWindow();
    m_action = next;
}

void Profiler::beginWindow()
{
    std::lock_guard lock(m_drainMutex);
    m_drainer.collect(false); // warm-up steps are recorded to be thrown away
    RunInfo info;
    info.name = m_options.runName + (m_windows ? " #" + std::to_string(m_windows + 1) : "");
    info.model = m_options.model;
    info.mode = m_options.mode;
    info.originNs = clock::nowNs();
    info.wallStartUnixNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
    info.options = optionsText();
    m_windowStart = info.originNs;
    m_windowSteps = 0;
    m_droppedBefore = m_drainer.dropped();
    m_drainer.beginRun(info.originNs);
    sink().beginRun(info);
    m_inWindow = true;
}

void Profiler::endWindow()
{
    {
        std::lock_guard lock(m_drainMutex);
        m_inWindow = false;
        m_drainer.collect(true);
        RunSummary summary;
        summary.durationNs = clock::nowNs() - m_windowStart;
        summary.steps = m_windowSteps;
        try {
            sink().write(m_drainer.takeBatch());
            summary.events = static_cast<int64_t>(m_drainer.events());
            summary.droppedEvents = static_cast<int64_t>(m_drainer.dropped() - m_droppedBefore);
            sink().endRun(summary);
        } catch (...) {
            m_error = std::current_exception();
        }
    }
    const int window = m_windows++;
    if (m_options.onTraceReady && !m_error)
        m_options.onTraceReady(window);
}

void Profiler::beginStepRange()
{
    if (m_action == ProfilerAction::None)
        return;
    m_stepName = interner::intern("ProfilerStep#" + std::to_string(m_step));
    m_stepOpen = record::begin(EventKind::Step, m_stepName);
}

void Profiler::endStepRange()
{
    if (m_stepOpen)
        record::end(m_stepName);
    m_stepOpen = false;
}

std::string Profiler::optionsText() const
{
    std::string s = "record_shapes=" + std::to_string(m_options.recordShapes) +
                    " profile_memory=" + std::to_string(m_options.profileMemory) +
                    " with_flops=" + std::to_string(m_options.withFlops);
    if (m_options.schedule)
        s += " schedule=" + m_options.schedule->str();
    return s;
}

void Profiler::startDrainThread()
{
    m_quit = false;
    m_thread = std::thread([this] { drainLoop(); });
}

void Profiler::stopDrainThread()
{
    {
        std::lock_guard lock(m_threadMutex);
        m_quit = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void Profiler::drainLoop()
{
    std::unique_lock lock(m_threadMutex);
    while (!m_quit) {
        m_wake.wait_for(lock, std::chrono::milliseconds(m_options.drainIntervalMs), [this] { return m_quit; });
        if (m_quit)
            break;
        lock.unlock();
        drainNow();
        lock.lock();
    }
}

// Hands what was recorded to the sink in one batch (one transaction of the
// trace store), or frees it when no window is open.
void Profiler::drainNow()
{
    std::lock_guard lock(m_drainMutex);
    if (m_error)
        return;
    m_drainer.collect(m_inWindow);
    if (!m_inWindow)
        return;
    try {
        sink().write(m_drainer.takeBatch());
    } catch (...) {
        m_error = std::current_exception();
    }
}

void Profiler::raiseError()
{
    std::exception_ptr error;
    {
        std::lock_guard lock(m_drainMutex);
        error = std::exchange(m_error, nullptr);
    }
    if (error)
        std::rethrow_exception(error);
}

} // namespace fusescope::profiler
