#include "plugin_host/shared_constant_state.hpp"

namespace nxrt::plugin_host {

SharedConstantState::SharedConstantState(std::shared_ptr<Plugin> plugin, nxrt_shared_state* state)
    : holder_(std::make_shared<Holder>(std::move(plugin), state)) {}

SharedConstantState::Holder::~Holder() {
  if (auto release = plugin->kernel_api().shared_state_release) release(state);
}

}  // namespace nxrt::plugin_host
