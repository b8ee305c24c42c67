#pragma once
// The recorder's session: which threads have buffers, and whether records are
// taken. One session at a time per process (like torch.profiler).

#include "profiler/recorder.h"

#include <vector>

namespace fusescope::profiler::session {

void start();                 // new buffers for every thread from now on
void setRecording(bool on);   // records are taken only while on
void stop();
std::vector<record::ThreadBuffer *> buffers(); // of the current session
void releaseBlock(record::Block *block);       // a block the drain consumed

} // namespace fusescope::profiler::session
