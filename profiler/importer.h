#pragma once
// Importers of traces other tools wrote: PyTorch profiler / Kineto Chrome-trace
// JSON and Nsight Systems SQLite exports, into the same Trace a recording makes.

#include "profiler/trace.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fusescope::profiler {

struct ImportControl {
    std::function<void(uint64_t done, uint64_t total)> progress; // bytes read of the input files (compressed bytes for .gz), throttled by the caller's taste: call it at most every ~1 MB
    const std::atomic<bool> *cancel = nullptr;                     // polled; set by another thread
};

// One imported trace: one Run (info.mode "imported", info.model = the file name(s), info.name = "rank N" or the file stem), events sorted like a recorded run. Throws fusescope::Error (core/tensor/tensor.h) with one message that names the file and the position (byte offset, or event index) or table. Returns std::nullopt when cancelled.
std::optional<Trace> importKineto(const std::vector<std::string> &paths, const ImportControl &control = {});
std::optional<Trace> importNsys(const std::string &path, const ImportControl &control = {});
// By content (probeFileFormat): Kineto/Chrome JSON (.json/.json.gz, several files = several ranks of one run) or one Nsight Systems export.
std::optional<Trace> importTraces(const std::vector<std::string> &paths, const ImportControl &control = {});

} // namespace fusescope::profiler
