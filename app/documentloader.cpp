#include "app/documentloader.h"

#include <QtConcurrent/QtConcurrentRun>

#include <atomic>

namespace fusescope {

struct DocumentLoader::Job {
    int id = 0;
    QStringList paths;
    std::atomic<bool> cancel{false};
    // Touched by the worker only: what it reported last, so that an
    // unchanged percentage costs no queued call.
    int lastPercent = -1;
    QString lastWhat;
};

DocumentLoader::DocumentLoader(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<const Document>>();
}

DocumentLoader::~DocumentLoader()
{
    if (m_current)
        m_current->cancel = true;
    // The workers post to this object; it must outlive them. What they posted
    // and did not get delivered dies with the object's event queue.
    for (QFuture<void> &worker : m_workers)
        worker.waitForFinished();
}

int DocumentLoader::start(const QString &path)
{
    return start(QStringList{path});
}

int DocumentLoader::start(const QStringList &paths)
{
    if (m_current)
        m_current->cancel = true; // superseded: whatever it still produces is dropped in finish()
    pruneFinished();
    auto job = std::make_shared<Job>();
    job->id = m_nextId++;
    job->paths = paths;
    m_current = job;
    m_workers.push_back(QtConcurrent::run([this, job] {
        const LoadProgress control{[this, job](double fraction, const QString &what) {
                                       const int percent = int(fraction * 100.0);
                                       if (percent == job->lastPercent && what == job->lastWhat)
                                           return;
                                       job->lastPercent = percent;
                                       job->lastWhat = what;
                                       QMetaObject::invokeMethod(
                                           this, [this, job, percent, what] { reportProgress(job, percent, what); },
                                           Qt::QueuedConnection);
                                   },
                                   &job->cancel,
                                   [this, job](std::shared_ptr<const Document> preview) {
                                       QMetaObject::invokeMethod(
                                           this,
                                           [this, job, preview] {
                                               if (job == m_current)
                                                   emit previewReady(preview);
                                           },
                                           Qt::QueuedConnection);
                                   }};
        std::shared_ptr<const Document> document;
        QString error;
        try {
            document = loadDocument(job->paths, control);
        } catch (const Error &e) {
            error = QString::fromUtf8(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, job, document, error] { finish(job, document, error); }, Qt::QueuedConnection);
    }));
    return job->id;
}

void DocumentLoader::cancel()
{
    if (!m_current)
        return;
    m_current->cancel = true;
    m_current.reset();
    emit cancelled();
}

QString DocumentLoader::path() const
{
    return m_current ? m_current->paths.value(0) : QString();
}

void DocumentLoader::reportProgress(const std::shared_ptr<Job> &job, int percent, const QString &what)
{
    if (job == m_current)
        emit progress(percent, what);
}

void DocumentLoader::finish(const std::shared_ptr<Job> &job, std::shared_ptr<const Document> document, const QString &error)
{
    if (job != m_current)
        return; // superseded or cancelled: stale, never shown
    m_current.reset();
    pruneFinished();
    if (!error.isEmpty())
        emit failed(job->paths.join(QStringLiteral(", ")), error);
    else if (document)
        emit loaded(std::move(document));
    else
        emit cancelled(); // only the loader sets the flag, and it forgets the job when it does
}

void DocumentLoader::pruneFinished()
{
    std::erase_if(m_workers, [](const QFuture<void> &worker) { return worker.isFinished(); });
}

} // namespace fusescope
