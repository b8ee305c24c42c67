#include "core/runtime/observer.h"

#include <array>
#include <mutex>
#include <stdexcept>

namespace fusescope::observers {
namespace {

// A few fixed slots read without locks on every event; add and remove are
// rare and serialized. remove() does not wait for callbacks already running
// on other threads, so a listener stops its own recording before removing
// itself and outlives any op in flight.
constexpr size_t kSlots = 8;
std::array<std::atomic<Observer *>, kSlots> g_slots{};
std::mutex g_mutex;

template <typename Fn>
void each(Fn &&fn)
{
    for (auto &slot : g_slots) {
        if (Observer *o = slot.load(std::memory_order_acquire))
            fn(*o);
    }
}

void updateActive()
{
    bool any = false;
    for (auto &slot : g_slots)
        any = any || slot.load(std::memory_order_relaxed) != nullptr;
    g_active.store(any, std::memory_order_release);
}

} // namespace

void add(Observer *observer)
{
    std::lock_guard lock(g_mutex);
    for (auto &slot : g_slots) {
        if (!slot.load(std::memory_order_relaxed)) {
            slot.store(observer, std::memory_order_release);
            updateActive();
            return;
        }
    }
    throw std::runtime_error("observers: more than 8 observers registered at once");
}

void remove(Observer *observer)
{
    std::lock_guard lock(g_mutex);
    for (auto &slot : g_slots) {
        if (slot.load(std::memory_order_relaxed) == observer)
            slot.store(nullptr, std::memory_order_release);
    }
    updateActive();
}

void opBegin(const OpEvent &e) { each([&](Observer &o) { o.opBegin(e); }); }
void opEnd(const OpEvent &e) { each([&](Observer &o) { o.opEnd(e); }); }
void kernelBegin(const KernelEvent &e) { each([&](Observer &o) { o.kernelBegin(e); }); }
void kernelEnd(const KernelEvent &e) { each([&](Observer &o) { o.kernelEnd(e); }); }
void allocation(const AllocationEvent &e) { each([&](Observer &o) { o.allocation(e); }); }
void compileStageBegin(std::string_view s) { each([&](Observer &o) { o.compileStageBegin(s); }); }
void compileStageEnd(std::string_view s) { each([&](Observer &o) { o.compileStageEnd(s); }); }
void instant(std::string_view n, std::string_view d) { each([&](Observer &o) { o.instant(n, d); }); }

} // namespace fusescope::observers
