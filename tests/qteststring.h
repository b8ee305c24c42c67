#pragma once
// So that a failing QCOMPARE of std::string shows both values.

#include <QTest>

#include <string>

namespace QTest {
template <> inline char *toString(const std::string &s)
{
    return qstrdup(s.c_str());
}
} // namespace QTest
