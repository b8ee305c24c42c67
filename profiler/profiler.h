#pragma once
// The profiler's user API, modelled on torch.profiler.profile:
//
//   Profiler prof({.schedule = Schedule{1, 1, 3, 1}, .recordShapes = true, .sink = &writer});
//   prof.start();
//   for (...) { model(x); prof.step(); }
//   prof.stop();
//
// Each finished window of active steps becomes one run of the sink (the
// trace store's writer, or an in-memory collector) and is announced through
// onTraceReady. A drain thread hands the records to the sink every
// drainIntervalMs while recording, so a killed process loses little.

#include "profiler/cpubackend.h"
#include "profiler/drainer.h"
#include "profiler/trace.h"

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace fusescope::profiler {

enum class Activity { Cpu, Cuda };

enum class ProfilerAction { None, Warmup, Record, RecordAndSave };
const char *profilerActionName(ProfilerAction action);

// torch.profiler.schedule: skip `skipFirst` steps, then cycles of `wait`
// idle, `warmup` recorded-and-discarded and `active` recorded steps, `repeat`
// times (0 = until stop()).
struct Schedule {
    int wait = 0;
    int warmup = 0;
    int active = 1;
    int repeat = 0;
    int skipFirst = 0;

    ProfilerAction at(int64_t step) const;
    // "wait=1,warmup=1,active=3,repeat=2"; throws Error on a malformed text.
    static Schedule parse(const std::string &text);
    std::string str() const;
};

struct ProfilerOptions {
    std::vector<Activity> activities{Activity::Cpu};
    std::optional<Schedule> schedule{}; // none: record from start() to stop()
    bool recordShapes = false;
    bool profileMemory = false;
    bool withFlops = false;
    TraceSink *sink = nullptr; // none: runs are collected in memory (trace())
    // Called after each window's run was handed to the sink; the argument is
    // the run's index among this profiler's windows.
    std::function<void(int window)> onTraceReady{};
    std::string runName = "run";   // windows after the first get " #2", " #3" …
    std::string model{};
    std::string mode = "eager";
    int drainIntervalMs = 100;
};

class Profiler
{
public:
    explicit Profiler(ProfilerOptions options);
    ~Profiler();
    Profiler(const Profiler &) = delete;
    Profiler &operator=(const Profiler &) = delete;

    void start();
    void step();
    void stop();

    int64_t stepNumber() const { return m_step; }
    ProfilerAction action() const { return m_action; }
    int windows() const { return m_windows; }
    // The runs recorded so far, when no sink was given.
    Trace &trace() { return m_collector.trace(); }

private:
    ProfilerAction actionAt(int64_t step) const;
    void transition(ProfilerAction next);
    void beginWindow();
    void endWindow();
    void beginStepRange();
    void endStepRange();
    void drainLoop();
    void drainNow();
    void raiseError();
    std::string optionsText() const;
    void startDrainThread();
    void stopDrainThread();
    TraceSink &sink() { return m_options.sink ? *m_options.sink : m_collector; }

    ProfilerOptions m_options;
    CpuBackend m_backend;
    TraceCollector m_collector;
    Drainer m_drainer;
    ProfilerAction m_action = ProfilerAction::None;
    bool m_started = false;
    bool m_inWindow = false;
    int64_t m_step = 0;
    int64_t m_windowSteps = 0;
    int64_t m_windowStart = 0;
    int m_windows = 0;
    uint64_t m_droppedBefore = 0;
    bool m_stepOpen = false;
    StringId m_stepName;
    std::exception_ptr m_error; // from the sink, raised on the caller's thread

    std::mutex m_drainMutex; // the drainer and the sink are used by one thread at a time
    std::mutex m_threadMutex;
    std::condition_variable m_wake;
    bool m_quit = false;
    bool m_keep = false;
    std::thread m_thread;
};

} // namespace fusescope::profiler
