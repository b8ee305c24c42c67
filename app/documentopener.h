#pragma once

#include <QString>

namespace fusescope {

struct OpenOutcome {
    bool ok = false;
    // When !ok: one sentence that names the file and what is wrong with it.
    QString reason;
};

// Checks and loads a file the user asked to open. Every format is recognized
// by content; formats whose loader is not built yet are refused by name, so
// nothing half-loaded is ever shown as complete.
OpenOutcome openDocument(const QString &path);

} // namespace fusescope
