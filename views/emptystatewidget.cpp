#include "views/emptystatewidget.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace fusescope {

EmptyStateWidget::EmptyStateWidget(QWidget *parent)
    : QWidget(parent)
    , m_message(tr("Open a trace or a model, or run the demo"))
{
    setObjectName(QStringLiteral("emptyState"));
    auto *title = new QLabel(m_message, this);
    title->setObjectName(QStringLiteral("emptyStateMessage"));
    title->setAlignment(Qt::AlignCenter);
    QFont font = title->font();
    font.setPointSizeF(font.pointSizeF() * 1.4);
    title->setFont(font);

    auto *hint = new QLabel(tr("Fusescope opens .fstrace files, PyTorch profiler / Kineto traces (.json, .json.gz), "
                               "Nsight Systems SQLite exports and ONNX models. Drop a file here or press Ctrl+O."),
                            this);
    hint->setAlignment(Qt::AlignCenter);
    hint->setWordWrap(true);
    hint->setEnabled(false);

    m_openButton = new QPushButton(tr("&Open…"), this);
    m_openButton->setObjectName(QStringLiteral("emptyStateOpen"));
    m_demoButton = new QPushButton(tr("Run &demo"), this);
    m_demoButton->setObjectName(QStringLiteral("emptyStateDemo"));
    connect(m_openButton, &QPushButton::clicked, this, &EmptyStateWidget::openRequested);
    connect(m_demoButton, &QPushButton::clicked, this, &EmptyStateWidget::demoRequested);
    setDemoAvailable(false);

    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(m_openButton);
    buttons->addWidget(m_demoButton);
    buttons->addStretch();

    auto *layout = new QVBoxLayout(this);
    layout->addStretch();
    layout->addWidget(title);
    layout->addWidget(hint);
    layout->addSpacing(12);
    layout->addLayout(buttons);
    layout->addStretch();
}

void EmptyStateWidget::setDemoAvailable(bool available, const QString &reason)
{
    m_demoButton->setEnabled(available);
    m_demoButton->setToolTip(available ? tr("Profile a model from the zoo, eager and compiled, and open the trace")
                                       : reason);
}

QString EmptyStateWidget::message() const
{
    return m_message;
}

} // namespace fusescope
