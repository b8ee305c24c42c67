#include "views/workerthreads.h"

#include <QThread>

#include <algorithm>

namespace fusescope {

void WorkerThreads::start(std::function<void()> work, std::function<void()> done)
{
    QThread *thread = QThread::create(std::move(work));
    m_threads.push_back(thread);
    QObject::connect(thread, &QThread::finished, m_owner, [this, thread, done = std::move(done)] {
        m_threads.erase(std::remove(m_threads.begin(), m_threads.end(), thread), m_threads.end());
        thread->deleteLater();
        if (done)
            done();
    });
    thread->start();
}

void WorkerThreads::waitAll()
{
    for (QThread *thread : m_threads) {
        thread->wait();
        delete thread;
    }
    m_threads.clear();
}

} // namespace fusescope
