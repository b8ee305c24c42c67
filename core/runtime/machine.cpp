#include "core/runtime/machine.h"

#include "core/runtime/blascore.h"
#include "core/runtime/threadpool.h"

#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <thread>

namespace fusescope {
namespace {

std::string readCpuModel()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "unknown";
}

} // namespace

MachineInfo machineInfo()
{
    MachineInfo info;
    info.cpuModel = readCpuModel();
    info.logicalCores = static_cast<int>(std::thread::hardware_concurrency());
    info.threads = numThreads();
    const char *config = openblas_get_config();
    info.blas = (config ? std::string(config) : std::string("OpenBLAS")) + ", kernels " + blasCoreName();
    if (const std::string timeout = blasThreadTimeout(); !timeout.empty())
        info.blas += ", idle threads spin 2^" + timeout + " cycles";
    return info;
}

double medianOf(std::vector<double> values)
{
    if (values.empty())
        return 0;
    const auto mid = values.begin() + std::ptrdiff_t(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    if (values.size() % 2)
        return *mid;
    return 0.5 * (*mid + *std::max_element(values.begin(), mid));
}

} // namespace fusescope
