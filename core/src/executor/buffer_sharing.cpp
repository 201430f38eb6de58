#include "executor/buffer_sharing.hpp"

#include <algorithm>

namespace nxrt::executor {

BufferAssignment AssignBuffers(std::span<const std::optional<Lifetime>> lifetimes) {
  BufferAssignment assignment;
  assignment.buffer_of_value.resize(lifetimes.size());
  std::vector<size_t> order;
  for (size_t v = 0; v < lifetimes.size(); ++v) {
    if (lifetimes[v]) {
      order.push_back(v);
    } else {
      assignment.buffer_of_value[v] = assignment.buffer_count++;
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lifetimes[a]->first < lifetimes[b]->first; });
  struct Busy {
    size_t last;
    size_t buffer;
  };
  std::vector<Busy> busy;
  // Buffers whose values are all dead, most recently freed last: a value
  // takes the one still warm in cache.
  std::vector<size_t> free;
  for (size_t v : order) {
    const Lifetime& life = *lifetimes[v];
    for (auto it = busy.begin(); it != busy.end();) {
      if (it->last < life.first) {
        free.push_back(it->buffer);
        it = busy.erase(it);
      } else {
        ++it;
      }
    }
    size_t buffer;
    if (free.empty()) {
      buffer = assignment.buffer_count++;
    } else {
      buffer = free.back();
      free.pop_back();
    }
    assignment.buffer_of_value[v] = buffer;
    busy.push_back({life.last, buffer});
  }
  return assignment;
}

}  // namespace nxrt::executor
