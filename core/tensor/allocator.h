#pragma once

#include "core/tensor/device.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace fusescope {

struct AllocatorStats {
    int64_t allocatedBytes = 0;  // handed out to live tensors (rounded to the size class)
    int64_t reservedBytes = 0;   // allocated + cached, i.e. held from the system
    int64_t peakAllocatedBytes = 0;
    int64_t peakReservedBytes = 0;
    int64_t allocations = 0;     // allocate() calls
    int64_t frees = 0;           // deallocate() calls
    int64_t cacheHits = 0;       // allocations served from the cache
    int64_t systemAllocations = 0;
};

class Allocator
{
public:
    virtual ~Allocator() = default;
    virtual void *allocate(size_t bytes) = 0;
    virtual void deallocate(void *ptr, size_t bytes) = 0;
    virtual Device device() const = 0;
};

// CPU allocator that keeps freed blocks in size classes (four per power of
// two, so at most 25% is lost to rounding) and reuses them. Blocks are 64-byte
// aligned. Every allocation and free is reported to the core's observers.
class CachingHostAllocator final : public Allocator
{
public:
    static constexpr size_t kAlignment = 64;

    CachingHostAllocator() = default;
    ~CachingHostAllocator() override;

    void *allocate(size_t bytes) override;
    void deallocate(void *ptr, size_t bytes) override;
    Device device() const override { return kCPU; }

    AllocatorStats stats() const;
    void resetPeakStats();
    // Returns every cached block to the system.
    void emptyCache();

    static size_t sizeClass(size_t bytes);

private:
    void report(const void *ptr, int64_t bytes, int64_t allocated, int64_t reserved) const;

    mutable std::mutex m_mutex;
    std::unordered_map<size_t, std::vector<void *>> m_cache;
    AllocatorStats m_stats;
};

CachingHostAllocator &hostAllocator();

} // namespace fusescope
