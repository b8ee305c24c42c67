#include "profiler/interner.h"

#include <deque>
#include <mutex>
#include <unordered_map>

namespace fusescope::profiler::interner {
namespace {

struct Table {
    std::mutex mutex;
    std::deque<std::string> strings{std::string()}; // a deque keeps the keys' storage in place
    std::unordered_map<std::string_view, uint32_t> index{{std::string_view(), 0u}};
};

Table &table()
{
    static Table t;
    return t;
}

} // namespace

StringId intern(std::string_view s)
{
    Table &t = table();
    std::lock_guard lock(t.mutex);
    if (auto it = t.index.find(s); it != t.index.end())
        return StringId(it->second);
    const auto id = static_cast<uint32_t>(t.strings.size());
    t.strings.emplace_back(s);
    t.index.emplace(t.strings.back(), id);
    return StringId(id);
}

size_t size()
{
    Table &t = table();
    std::lock_guard lock(t.mutex);
    return t.strings.size();
}

std::vector<std::string> since(size_t from)
{
    Table &t = table();
    std::lock_guard lock(t.mutex);
    std::vector<std::string> out;
    for (size_t i = from; i < t.strings.size(); ++i)
        out.push_back(t.strings[i]);
    return out;
}

} // namespace fusescope::profiler::interner
