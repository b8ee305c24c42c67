#pragma once
// The `plan-memory` stage: every value a kernel writes gets a place in one
// arena, reused once its last reader has run; an elementwise kernel may
// write its output over an input that dies there, and the inputs of a
// concatenation may be written straight into their places in its output,
// and a concatenation of inputs already placed one after another is a view.
// Graph outputs get their own allocations, since the caller keeps them.

#include "core/compiler/schedule.h"

#include <optional>

namespace fusescope::compiler {

struct BufferPlan {
    NodeRef value;          // a storage root written by a kernel
    int64_t bytes = 0;
    int64_t offset = 0;     // in the arena (64-byte aligned); unused for graph outputs
    int first = 0;          // index of the kernel that writes it
    int last = 0;           // index of the last kernel that reads it
    bool graphOutput = false;
    int inPlaceOf = -1;     // buffer whose memory this one takes over, or -1
    int partOf = -1;        // a concatenation's output this one lies inside, at partOffset bytes, or -1
    int64_t partOffset = 0;
    bool holdsParts = false; // a concatenation's output whose inputs lie inside it
    bool viewOfParts = false; // a concatenation's output that is the stretch of partOf its inputs already fill
};

struct MemoryPlan {
    std::vector<BufferPlan> buffers;
    int64_t arenaBytes = 0;     // the planned peak of intermediates
    int64_t unplannedBytes = 0; // every intermediate in its own allocation
    int64_t liveBytesBound = 0; // most bytes live at once: no plan does better
    std::vector<int> concatsInPlace; // kernels (aten.cat), ascending, whose inputs already lie in their output
    int indexOf(NodeRef value) const; // -1 when the value has no buffer
    bool skips(size_t kernel) const;
};

MemoryPlan planMemory(const Graph &graph, const Schedule &schedule, PassLog &log);

} // namespace fusescope::compiler
