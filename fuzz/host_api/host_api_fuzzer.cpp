// The plugin ABI's host functions, called in a fuzzed order with fuzzed
// arguments by libep_fuzz_host_api.so (host_api_plugin.cpp) while a session
// is made and run. The first byte picks one of the small models beside
// this file (an Add, an If with two bodies, a Loop, strings, a sequence);
// the rest is the plugin's script. Whatever the plugin asks, the host must
// answer with a status, and a run either fails cleanly or succeeds.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nxrt/environment.hpp"
#include "nxrt/session.hpp"

namespace {

constexpr std::array<const char*, 5> kModels = {"add", "if", "loop", "strings", "sequence"};

// Never destroyed, so the plugin stays loaded until the process ends: the
// libraries it loads (libre2) keep statics made once and never freed, which
// LeakSanitizer would report at exit once an unload left them unreachable.
std::shared_ptr<nxrt::Environment> SharedEnvironment() {
  static const auto* environment = new std::shared_ptr<nxrt::Environment>([] {
    nxrt::EnvironmentOptions options;
    options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
    options.log_level = "off";
    return nxrt::Environment::Create(options).value();
  }());
  return *environment;
}

std::string Hex(const uint8_t* data, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < size; ++i) {
    hex.push_back(kDigits[data[i] >> 4]);
    hex.push_back(kDigits[data[i] & 15]);
  }
  return hex;
}

// Each declared input filled with small known values.
std::vector<nxrt::NamedTensor> Inputs(const nxrt::Session& session) {
  std::vector<nxrt::NamedTensor> inputs;
  for (const nxrt::ValueDescription& input : session.inputs()) {
    std::vector<int64_t> dims;
    for (const std::string& dim : input.shape) dims.push_back(std::stoll(dim));
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    auto tensor = input.dtype == nxrt::DataType::kString
                      ? nxrt::Tensor::FromStrings(dims, std::vector<std::string>(count, "ab"))
                      : nxrt::Tensor::Zeros(input.dtype, dims);
    inputs.push_back({input.name, std::move(tensor).value()});
  }
  return inputs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string model = std::string(NXRT_SOURCE_DIR "/fuzz/host_api/models/") +
                            kModels[data[0] % kModels.size()] + ".onnx";
  nxrt::SessionOptions options;
  options.providers = {{"fuzz_host_api", {{"script", Hex(data + 1, size - 1)}}}, {"cpu", {}}};
  options.memory_limit_bytes = size_t{64} << 20;
  auto session = nxrt::Session::Create(SharedEnvironment(), model, options);
  if (!session.ok()) return 0;
  std::vector<nxrt::NamedTensor> inputs = Inputs(**session);
  for (int run = 0; run < 2; ++run) (void)(*session)->Run(inputs);
  return 0;
}
