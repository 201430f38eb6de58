// A reference to a kernel's shareable prepared constants (packed or uploaded
// weights) that a later shape variant of the same node may adopt instead of
// preparing again.
//
// Copies share one plugin reference, released once when the last copy dies;
// each copy keeps the plugin library loaded, since the state's code lives
// there.
#pragma once

#include <memory>

#include "nxrt/ep_abi.h"
#include "plugin_host/plugin.hpp"

namespace nxrt::plugin_host {

class SharedConstantState {
 public:
  SharedConstantState() = default;  // empty: nothing shared
  // Takes over the plugin's reference `state` (non-null).
  SharedConstantState(std::shared_ptr<Plugin> plugin, nxrt_shared_state* state);

  explicit operator bool() const { return holder_ != nullptr; }
  nxrt_shared_state* handle() const { return holder_ ? holder_->state : nullptr; }
  // How many SharedConstantState copies refer to this reference.
  long use_count() const { return holder_.use_count(); }

 private:
  struct Holder {
    Holder(std::shared_ptr<Plugin> p, nxrt_shared_state* s) : plugin(std::move(p)), state(s) {}
    ~Holder();
    Holder(const Holder&) = delete;
    Holder& operator=(const Holder&) = delete;
    std::shared_ptr<Plugin> plugin;
    nxrt_shared_state* state;
  };
  std::shared_ptr<Holder> holder_;
};

}  // namespace nxrt::plugin_host
