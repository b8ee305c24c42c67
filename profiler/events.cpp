#include "profiler/events.h"

namespace fusescope::profiler {

const char *eventKindName(EventKind kind)
{
    switch (kind) {
    case EventKind::Op: return "op";
    case EventKind::UserRange: return "user_range";
    case EventKind::CompileStage: return "compile_stage";
    case EventKind::Step: return "step";
    case EventKind::Kernel: return "kernel";
    case EventKind::Memcpy: return "memcpy";
    case EventKind::Memset: return "memset";
    case EventKind::Runtime: return "runtime";
    case EventKind::Instant: return "instant";
    }
    return "unknown";
}

const char *copyKindName(CopyKind kind)
{
    switch (kind) {
    case CopyKind::Unknown: return "unknown";
    case CopyKind::HostToDevice: return "HtoD";
    case CopyKind::DeviceToHost: return "DtoH";
    case CopyKind::DeviceToDevice: return "DtoD";
    case CopyKind::HostToHost: return "HtoH";
    case CopyKind::PeerToPeer: return "PtoP";
    }
    return "unknown";
}

const char *flowKindName(FlowKind kind)
{
    switch (kind) {
    case FlowKind::User: return "user";
    case FlowKind::Launch: return "launch";
    case FlowKind::ForwardBackward: return "fwdbwd";
    }
    return "unknown";
}

const char *trackKindName(TrackKind kind)
{
    switch (kind) {
    case TrackKind::CpuThread: return "cpu_thread";
    case TrackKind::CompileStages: return "compile_stages";
    case TrackKind::GpuStream: return "gpu_stream";
    case TrackKind::Counter: return "counter";
    }
    return "unknown";
}

} // namespace fusescope::profiler
