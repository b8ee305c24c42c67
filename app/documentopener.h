#pragma once
// Opens a file the user asked for into one immutable Document, synchronously:
// callable from any thread and headless (--screenshot, tests). The GUI runs it
// in a worker through DocumentLoader (documentloader.h).

#include "views/document.h"

#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>

namespace fusescope {

struct LoadProgress {
    // Called from the loading thread with the overall fraction 0 … 1 and what
    // is being done ("reading trace", "parsing graphs"); often, so keep it cheap.
    std::function<void(double fraction, const QString &what)> progress;
    // Another thread sets it to stop the load.
    const std::atomic<bool> *cancel = nullptr;
    // Called once from the loading thread, before the rest is ready, with a
    // document that holds only the captured graph (and the measured times of
    // a trace), so a big model shows while it compiles. Its capture graph is
    // the very StageGraph the full document shares.
    std::function<void(std::shared_ptr<const Document> preview)> preview;
};

// Recognizes `path` by content and loads it:
//  - a Fusescope trace: the first run that holds compile stages (the compiled
//    run of a `profile --compare` file), every stage's graph parsed, and when
//    the run has events its measured times per captured node and fused kernel;
//  - an ONNX model: captured on meta tensors and compiled in interpret mode,
//    so neither the system C++ compiler nor the model's maths runs.
// Formats whose importer is not built yet are refused by name, so nothing
// half-loaded is ever shown as complete.
// Throws Error with one sentence naming the file and what is wrong.
// Returns null when, and only when, control.cancel was set during the load.
std::shared_ptr<const Document> loadDocument(const QString &path, const LoadProgress &control = {});
// Several files: the per-rank Kineto traces of one run, as one document with a
// process group per rank. Throws Error when they are not all Kineto JSON.
std::shared_ptr<const Document> loadDocument(const QStringList &paths, const LoadProgress &control = {});

struct OpenOutcome {
    bool ok = false;
    // When !ok: one sentence that names the file and what is wrong with it.
    QString reason;
    std::shared_ptr<const Document> document; // when ok
};

// loadDocument without cancellation, its Error turned into `reason`.
OpenOutcome openDocument(const QString &path);

} // namespace fusescope
