#pragma once
// The worker threads of one widget: each runs one job off the GUI thread and
// then calls `done` on the owner's thread; the owner's destruction waits for
// the jobs still running, so none outlives what it reports to. Cancelling a
// job is the job's own business (a flag it checks), since only it knows how.

#include <QObject>

#include <functional>
#include <vector>

class QThread;

namespace fusescope {

class WorkerThreads
{
public:
    explicit WorkerThreads(QObject *owner) : m_owner(owner) {}
    ~WorkerThreads() { waitAll(); }
    WorkerThreads(const WorkerThreads &) = delete;
    WorkerThreads &operator=(const WorkerThreads &) = delete;

    void start(std::function<void()> work, std::function<void()> done = {});
    // Blocks until every job has ended.
    void waitAll();
    bool empty() const { return m_threads.empty(); }

private:
    QObject *m_owner;
    std::vector<QThread *> m_threads;
};

} // namespace fusescope
