#include "core/buildinfo.h"

#include "fusescope_config.h"

#include <QRegularExpression>
#include <QTest>

using namespace fusescope;

class TestBuildInfo : public QObject
{
    Q_OBJECT
private slots:
    void versionIsSemantic()
    {
        const QString v = QString::fromStdString(versionString());
        QVERIFY2(QRegularExpression(QStringLiteral("^\\d+\\.\\d+\\.\\d+$")).match(v).hasMatch(), qPrintable(v));
    }

    void featureLineMatchesConfigure()
    {
        const QString line = QString::fromStdString(featureLine());
        QVERIFY(QRegularExpression(QStringLiteral("^cuda=(on|off) cupti=(on|off) nvrtc=(on|off) onnx=(on|off)$"))
                    .match(line)
                    .hasMatch());
        QCOMPARE(line.contains(QLatin1String("cuda=on")), FUSESCOPE_HAVE_CUDA == 1);
        QCOMPARE(line.contains(QLatin1String("cupti=on")), FUSESCOPE_HAVE_CUPTI == 1);
        QCOMPARE(line.contains(QLatin1String("nvrtc=on")), FUSESCOPE_HAVE_NVRTC == 1);
        QCOMPARE(line.contains(QLatin1String("onnx=on")), FUSESCOPE_HAVE_ONNX == 1);
    }

    void cuptiAndNvrtcNeedCuda()
    {
        const BuildFeatures f = buildFeatures();
        if (!f.cuda) {
            QVERIFY(!f.cupti);
            QVERIFY(!f.nvrtc);
        }
    }
};

QTEST_GUILESS_MAIN(TestBuildInfo)
#include "tst_core_buildinfo.moc"
