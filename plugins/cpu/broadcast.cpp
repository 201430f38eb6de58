#include "broadcast.hpp"

#include <algorithm>

namespace nxrt::cpu {

Dims BroadcastDims(std::span<const Dims> shapes, const std::string& what) {
  size_t rank = 0;
  for (const Dims& s : shapes) rank = std::max(rank, s.size());
  Dims out(rank, 1);
  for (const Dims& s : shapes) {
    const size_t pad = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[pad + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o != 1) {
        std::string text;
        for (const Dims& t : shapes) text += (text.empty() ? "" : " and ") + DimsText(t);
        FailInvalid(what + ": shapes " + text + " do not broadcast");
      }
      o = s[i];
    }
  }
  return out;
}

template <size_t N>
BroadcastPlan<N> MakeBroadcastPlan(const std::array<Dims, N>& shapes, const std::string& what) {
  BroadcastPlan<N> plan;
  plan.out_dims = BroadcastDims(std::span<const Dims>(shapes.data(), N), what);
  plan.count = ElementCount(plan.out_dims);
  const size_t rank = plan.out_dims.size();
  // Full-rank aligned strides first.
  std::array<Dims, N> full;
  for (size_t k = 0; k < N; ++k) {
    full[k].assign(rank, 0);
    const Dims& s = shapes[k];
    const size_t pad = rank - s.size();
    int64_t stride = 1;
    for (size_t i = s.size(); i-- > 0;) {
      full[k][pad + i] = s[i] == 1 ? 0 : stride;
      stride *= s[i];
    }
  }
  // Drop unit axes, then merge an axis into the previous one when every input
  // steps through both as one.
  for (size_t axis = 0; axis < rank; ++axis) {
    const int64_t extent = plan.out_dims[axis];
    if (extent == 1) continue;
    bool merge = !plan.loop_dims.empty();
    for (size_t k = 0; k < N && merge; ++k) {
      merge = plan.strides[k].back() == full[k][axis] * extent;
    }
    if (merge) {
      plan.loop_dims.back() *= extent;
      for (size_t k = 0; k < N; ++k) plan.strides[k].back() = full[k][axis];
    } else {
      plan.loop_dims.push_back(extent);
      for (size_t k = 0; k < N; ++k) plan.strides[k].push_back(full[k][axis]);
    }
  }
  if (plan.loop_dims.empty()) {
    plan.loop_dims.push_back(1);
    for (size_t k = 0; k < N; ++k) plan.strides[k].push_back(0);
  }
  for (size_t k = 0; k < N; ++k) plan.inner_strides[k] = plan.strides[k].back();
  plan.single_row = plan.loop_dims.size() == 1;
  return plan;
}

template BroadcastPlan<1> MakeBroadcastPlan<1>(const std::array<Dims, 1>&, const std::string&);
template BroadcastPlan<2> MakeBroadcastPlan<2>(const std::array<Dims, 2>&, const std::string&);
template BroadcastPlan<3> MakeBroadcastPlan<3>(const std::array<Dims, 3>&, const std::string&);

}  // namespace nxrt::cpu
