#include "core/tensor/allocator.h"

#include "core/runtime/observer.h"

#include <bit>
#include <cstdlib>
#include <new>

namespace fusescope {

std::string Device::str() const
{
    switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda:" + std::to_string(index);
    case DeviceType::Meta: return "meta";
    }
    return "?";
}

CachingHostAllocator::~CachingHostAllocator()
{
    emptyCache();
}

size_t CachingHostAllocator::sizeClass(size_t bytes)
{
    if (bytes <= 256)
        return (bytes + kAlignment - 1) / kAlignment * kAlignment;
    // Four classes per power of two: round up to a multiple of 2^(k-2) where
    // 2^k is the highest power of two not above bytes.
    const size_t high = std::bit_floor(bytes);
    const size_t step = high / 4;
    return (bytes + step - 1) / step * step;
}

void *CachingHostAllocator::allocate(size_t bytes)
{
    if (bytes == 0)
        return nullptr;
    const size_t size = sizeClass(bytes);
    void *ptr = nullptr;
    int64_t allocated = 0, reserved = 0;
    {
        std::lock_guard lock(m_mutex);
        ++m_stats.allocations;
        auto it = m_cache.find(size);
        if (it != m_cache.end() && !it->second.empty()) {
            ptr = it->second.back();
            it->second.pop_back();
            ++m_stats.cacheHits;
        } else {
            ptr = std::aligned_alloc(kAlignment, size);
            if (!ptr)
                throw std::bad_alloc();
            ++m_stats.systemAllocations;
            m_stats.reservedBytes += static_cast<int64_t>(size);
        }
        m_stats.allocatedBytes += static_cast<int64_t>(size);
        m_stats.peakAllocatedBytes = std::max(m_stats.peakAllocatedBytes, m_stats.allocatedBytes);
        m_stats.peakReservedBytes = std::max(m_stats.peakReservedBytes, m_stats.reservedBytes);
        allocated = m_stats.allocatedBytes;
        reserved = m_stats.reservedBytes;
    }
    report(ptr, static_cast<int64_t>(size), allocated, reserved);
    return ptr;
}

void CachingHostAllocator::deallocate(void *ptr, size_t bytes)
{
    if (!ptr)
        return;
    const size_t size = sizeClass(bytes);
    int64_t allocated = 0, reserved = 0;
    {
        std::lock_guard lock(m_mutex);
        ++m_stats.frees;
        m_cache[size].push_back(ptr);
        m_stats.allocatedBytes -= static_cast<int64_t>(size);
        allocated = m_stats.allocatedBytes;
        reserved = m_stats.reservedBytes;
    }
    report(ptr, -static_cast<int64_t>(size), allocated, reserved);
}

AllocatorStats CachingHostAllocator::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

void CachingHostAllocator::resetPeakStats()
{
    std::lock_guard lock(m_mutex);
    m_stats.peakAllocatedBytes = m_stats.allocatedBytes;
    m_stats.peakReservedBytes = m_stats.reservedBytes;
}

void CachingHostAllocator::emptyCache()
{
    std::lock_guard lock(m_mutex);
    for (auto &[size, blocks] : m_cache) {
        for (void *p : blocks)
            std::free(p);
        m_stats.reservedBytes -= static_cast<int64_t>(size * blocks.size());
        blocks.clear();
    }
    m_cache.clear();
}

void CachingHostAllocator::report(const void *ptr, int64_t bytes, int64_t allocated, int64_t reserved) const
{
    if (observers::active())
        observers::allocation({kCPU, ptr, bytes, allocated, reserved});
}

CachingHostAllocator &hostAllocator()
{
    // Leaked on purpose: tensors held in static storage may be destroyed after
    // any function-local static would be.
    static auto *allocator = new CachingHostAllocator;
    return *allocator;
}

} // namespace fusescope
