#pragma once

#include <string>

namespace fusescope {

// The kinds of file the app opens, told apart by content, not by extension
// alone, so a renamed or truncated file gets an honest diagnosis.
enum class FileFormat {
    Unknown,
    FsTrace, // Fusescope's own SQLite trace store
    NsysSqlite, // Nsight Systems SQLite export
    ChromeJson, // PyTorch profiler / Kineto Chrome-trace JSON, plain or gzip
    Onnx, // ONNX ModelProto
};

struct FormatProbe {
    FileFormat format = FileFormat::Unknown;
    bool gzipped = false;
    // Empty when the format was recognized; otherwise names what is wrong.
    std::string error;

    bool ok() const { return error.empty(); }
};

// Reads at most a few kilobytes (and, for SQLite, the schema) of `path`.
FormatProbe probeFileFormat(const std::string &path);

// "Fusescope trace", "Nsight Systems export", ...
const char *fileFormatName(FileFormat format);

} // namespace fusescope
