#pragma once
// Loads a document in a worker thread with throttled progress and
// cancellation; loadDocument (documentopener.h) is the synchronous core.

#include "app/documentopener.h"

#include <QFuture>
#include <QObject>
#include <QString>

#include <memory>
#include <vector>

namespace fusescope {

// Runs loadDocument in a worker thread. Every start() is a new job; the
// results of a job that start() or cancel() has superseded are dropped,
// never delivered. Signals are emitted on the thread that owns the loader.
class DocumentLoader : public QObject
{
    Q_OBJECT
public:
    explicit DocumentLoader(QObject *parent = nullptr);
    // Cancels the job in flight and waits for its worker to stop.
    ~DocumentLoader() override;

    // Starts loading `path`, superseding the job in flight; returns the job's id.
    int start(const QString &path);
    // The per-rank Kineto traces of one run, as one document.
    int start(const QStringList &paths);
    // Stops the job in flight and emits cancelled() before returning; nothing
    // when no job is in flight.
    void cancel();
    bool isLoading() const { return m_current != nullptr; }
    // The path of the job in flight, or "".
    QString path() const;

signals:
    // Only when the percentage or the text changes.
    void progress(int percent, const QString &what);
    // The captured graph while the rest loads (LoadProgress::preview); at most
    // once per job, always before loaded().
    void previewReady(std::shared_ptr<const fusescope::Document> preview);
    void loaded(std::shared_ptr<const fusescope::Document> document);
    void failed(const QString &path, const QString &reason);
    void cancelled();

private:
    struct Job;
    void finish(const std::shared_ptr<Job> &job, std::shared_ptr<const Document> document, const QString &error);
    void reportProgress(const std::shared_ptr<Job> &job, int percent, const QString &what);
    void pruneFinished();

    int m_nextId = 1;
    std::shared_ptr<Job> m_current;
    // Every worker not known to have ended, superseded ones included: the
    // destructor waits for them all, since they post to this object.
    std::vector<QFuture<void>> m_workers;
};

} // namespace fusescope

Q_DECLARE_METATYPE(std::shared_ptr<const fusescope::Document>)
