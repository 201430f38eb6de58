#include "loader/topological_order.hpp"

#include <functional>
#include <queue>

namespace nxrt::graph {

std::variant<std::vector<size_t>, CycleMember> TopologicalOrder(
    const std::vector<std::vector<size_t>>& depends_on) {
  const size_t count = depends_on.size();
  std::vector<size_t> waiting_on(count, 0);
  std::vector<std::vector<size_t>> dependents(count);
  for (size_t n = 0; n < count; ++n) {
    for (size_t d : depends_on[n]) {
      ++waiting_on[n];
      dependents[d].push_back(n);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t n = 0; n < count; ++n) {
    if (waiting_on[n] == 0) ready.push(n);
  }
  std::vector<size_t> order;
  order.reserve(count);
  while (!ready.empty()) {
    const size_t n = ready.top();
    ready.pop();
    order.push_back(n);
    for (size_t m : dependents[n]) {
      if (--waiting_on[m] == 0) ready.push(m);
    }
  }
  if (order.size() == count) return order;

  // Every unplaced node waits on another unplaced one, so walking those
  // edges from any of them must revisit a node; that node is on a cycle.
  size_t current = 0;
  while (waiting_on[current] == 0) ++current;
  std::vector<bool> seen(count, false);
  while (!seen[current]) {
    seen[current] = true;
    for (size_t d : depends_on[current]) {
      if (waiting_on[d] != 0) {
        current = d;
        break;
      }
    }
  }
  return CycleMember{current};
}

}  // namespace nxrt::graph
