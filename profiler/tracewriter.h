#pragma once
// Writes a recording into a `.fstrace` file (docs/trace-format.md) as it
// happens: each batch in one SQLite transaction (WAL), so a capture killed
// with SIGKILL loses at most the batch in flight and the file still opens.

#include "profiler/trace.h"

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace fusescope::profiler {

class TraceWriter final : public TraceSink
{
public:
    // Creates the file, replacing one already at `path`. Fields of `meta` left
    // empty are filled in: producer, host, CPU model, creation time (UTC),
    // command line; schemaVersion is always this writer's. Throws Error.
    explicit TraceWriter(const std::string &path, const TraceMeta &meta = {});
    // Closes the file like close(); a run still open stays marked incomplete.
    ~TraceWriter() override;
    TraceWriter(const TraceWriter &) = delete;
    TraceWriter &operator=(const TraceWriter &) = delete;

    // Every call throws Error (naming the file and SQLite's message) on
    // failure, a full disk included; the file then holds every batch before it.
    void beginRun(const RunInfo &info) override;
    void write(EventBatch &&batch) override;
    // Writes the summary and the level-of-detail summaries, marks the run ended.
    void endRun(const RunSummary &summary) override;

    // Replaces the compile stages of run `runIndex` (0 = the first begun).
    void writeCompileStages(int runIndex, const CompileStages &stages);
    // A per-run key/value (a statistic, a note); a later value replaces an earlier one.
    void setRunValue(int runIndex, std::string_view key, std::string_view value);

    // The open run's index, or -1 between runs.
    int currentRun() const;
    const std::string &path() const { return m_path; }
    // Folds the WAL into the file, so a finished trace is one self-contained
    // file, and closes it; later calls throw. Every batch written is already
    // safe before this, so it reports nothing.
    void close();

private:
    struct State;

    void checkOpen(const char *call) const;
    void checkRun(int runIndex) const;

    std::string m_path;
    mutable std::mutex m_mutex; // the drain thread and the main thread take turns
    std::unique_ptr<State> m_state;
};

} // namespace fusescope::profiler
