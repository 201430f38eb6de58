#include "ops/conv_layout.hpp"

namespace nxrt::cpu {

ConvLayout ResolveConvLayout(const sdk::Node& node, const Dims& x, const Dims& w,
                             const std::string& op) {
  if (x.size() < 3 || w.size() != x.size()) FailInvalid(op + ": X and W need rank 3 or more");
  ConvLayout layout;
  layout.group = node.AttrInt("group", 1);
  const Dims kernel(w.begin() + 2, w.end());
  layout.geometry =
      ResolveWindow(WindowAttributes::Read(node), Dims(x.begin() + 2, x.end()), kernel, op);
  layout.batch = x[0];
  layout.channels = x[1];
  layout.maps = w[0];
  if (layout.group < 1) FailInvalid(op + ": group must be positive; fix the group attribute");
  if (layout.channels % layout.group != 0 || layout.maps % layout.group != 0 ||
      w[1] * layout.group != layout.channels) {
    FailInvalid(op + ": channels do not split into groups");
  }
  layout.out_dims = {layout.batch, layout.maps};
  layout.out_dims.insert(layout.out_dims.end(), layout.geometry.out.begin(),
                         layout.geometry.out.end());
  return layout;
}

}  // namespace nxrt::cpu
