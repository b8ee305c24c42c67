#include "app/cmdline.h"

#include <cstdio>
#include <iostream>

namespace fusescope {

CommandLine::CommandLine(const QString &name, const QString &usage, const QString &description)
    : m_name(name)
    , m_usage(usage)
    , m_description(description)
{
    m_parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    m_parser.addHelpOption();
}

std::optional<int> CommandLine::parse(const QStringList &args, int minPositional, int maxPositional)
{
    if (!m_parser.parse(QStringList{QStringLiteral("fusescope")} + args))
        return usageError(m_parser.errorText());
    if (m_parser.isSet(QStringLiteral("help"))) {
        QString help = m_parser.helpText();
        help = help.mid(help.indexOf(QLatin1Char('\n')) + 1); // drop Qt's own usage line
        printLine(QStringLiteral("Usage: fusescope %1 %2\n\n%3\n%4").arg(m_name, m_usage, m_description, help));
        return ExitOk;
    }
    const qsizetype n = m_parser.positionalArguments().size();
    if (n < minPositional)
        return usageError(QStringLiteral("missing argument; usage: fusescope %1 %2").arg(m_name, m_usage));
    if (n > maxPositional)
        return usageError(QStringLiteral("unexpected argument '%1'").arg(m_parser.positionalArguments().at(maxPositional)));
    return std::nullopt;
}

std::optional<int> CommandLine::intOption(const QString &option, int fallback, int minimum)
{
    if (!m_parser.isSet(option))
        return fallback;
    bool ok = false;
    const int value = m_parser.value(option).toInt(&ok);
    if (!ok || value < minimum) {
        usageError(QStringLiteral("--%1 needs an integer >= %2, got '%3'").arg(option).arg(minimum).arg(m_parser.value(option)));
        return std::nullopt;
    }
    return value;
}

std::optional<int> CommandLine::refuseDevice()
{
    const QString device = m_parser.value(QStringLiteral("device"));
    if (device == QLatin1String("cuda"))
        return usageError(QStringLiteral("--device cuda: the CUDA backend is not built yet in this version"));
    if (device != QLatin1String("cpu"))
        return usageError(QStringLiteral("--device must be cpu or cuda, got '%1'").arg(device));
    return std::nullopt;
}

int CommandLine::usageError(const QString &message) const
{
    std::cerr << "fusescope " << m_name.toStdString() << ": " << message.toStdString() << "\n";
    return ExitUsage;
}

int CommandLine::badInput(const QString &message) const
{
    std::cerr << "fusescope " << m_name.toStdString() << ": " << message.toStdString() << "\n";
    return ExitBadInput;
}

void printJson(const QJsonDocument &doc)
{
    std::cout << doc.toJson(QJsonDocument::Indented).toStdString();
    std::cout.flush();
}

void printLine(const QString &line)
{
    std::cout << line.toStdString() << "\n";
}

void printText(const QString &text)
{
    std::cout << text.toStdString();
    std::cout.flush();
}

} // namespace fusescope
