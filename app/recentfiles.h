#pragma once

#include <QStringList>

namespace fusescope {

// Most-recently-opened files, newest first, kept in QSettings.
class RecentFiles
{
public:
    static constexpr int kMaxEntries = 10;

    QStringList files() const;
    void add(const QString &path);
    void remove(const QString &path);
    void clear();

private:
    void store(const QStringList &files);
};

} // namespace fusescope
