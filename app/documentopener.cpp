#include "app/documentopener.h"

#include "profiler/traceformat.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace fusescope {

OpenOutcome openDocument(const QString &path)
{
    const QString name = QFileInfo(path).fileName().isEmpty() ? path : QFileInfo(path).fileName();
    const FormatProbe probe = probeFileFormat(path.toStdString());
    if (!probe.ok())
        return {false, QStringLiteral("%1 %2").arg(name, QString::fromStdString(probe.error))};
    return {false,
            QCoreApplication::translate("fusescope", "%1 is a %2; opening this format is not built yet")
                .arg(name, QString::fromUtf8(fileFormatName(probe.format)))};
}

} // namespace fusescope
