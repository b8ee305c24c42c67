#include "profiler/filecheck.h"

#include "core/tensor/tensor.h"

#include <filesystem>

namespace fusescope::profiler {

void checkFileIsThere(const std::string &path, const std::string &what)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status))
        throw Error(path + ": no such file");
    if (std::filesystem::is_directory(status))
        throw Error(path + ": is a directory, not " + what);
    if (std::filesystem::file_size(path, ec) == 0)
        throw Error(path + ": is empty, not " + what);
}

} // namespace fusescope::profiler
