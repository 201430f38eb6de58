// nxrt._nxrt: the compiled half of the nxrt package. The Python modules of
// the package (nxrt/*.py) build ONNX Runtime's API on what it registers.
#include "casters.hpp"

#include "errors.hpp"
#include "io_binding_object.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/version.hpp"
#include "session_object.hpp"

namespace nb = nanobind;

NB_MODULE(_nxrt, module) {
  module.doc() = "nxrt's runtime, as the nxrt package uses it.";
  nxrt::python::RegisterErrors(module);
  nxrt::python::RegisterSession(module);
  nxrt::python::RegisterBinding(module);
  module.def(
      "discover_plugins",
      [](const std::vector<std::string>& folders) {
        nxrt::EnvironmentOptions options;
        for (const std::string& folder : folders) options.plugin_folders.push_back(folder);
        auto environment = nxrt::python::ValueOrRaise(nxrt::Environment::Create(options));
        std::vector<std::tuple<std::string, std::string, bool, std::string>> found;
        for (const nxrt::PluginInfo& plugin : environment->DiscoverPlugins()) {
          found.emplace_back(plugin.name, plugin.path.string(), plugin.loaded, plugin.error);
        }
        return found;
      },
      nb::arg("plugin_folders") = std::vector<std::string>{},
      "Every execution provider plugin on the search path, as (name, path, loaded, error).");
  module.attr("__version__") = nxrt::Version();
}
