// A fuzzed model and fuzzed inputs through a session on the cpu EP: create,
// then run twice (the second run takes the settled path), under a memory
// limit and a deadline. The input is the model's bytes followed by a
// control block that picks each symbolic dim's extent and seeds the input
// data, so every backend case seeds this target with its own model.
//
// Models whose inputs would exceed kMaxElements, or that take sequences or
// optionals, are skipped: they test the host's size checks, which the
// model_load target reaches, not the kernels.
#include <fuzzer/FuzzedDataProvider.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nxrt/environment.hpp"
#include "nxrt/session.hpp"

namespace {

constexpr size_t kControlBytes = 16;
constexpr size_t kMaxElements = size_t{1} << 16;
constexpr size_t kMemoryLimitBytes = size_t{64} << 20;
constexpr auto kRunDeadline = std::chrono::seconds(2);

// Never destroyed, so the plugin stays loaded until the process ends: the
// libraries it loads (libre2) keep statics made once and never freed, which
// LeakSanitizer would report at exit once an unload left them unreachable.
std::shared_ptr<nxrt::Environment> SharedEnvironment() {
  static const auto* environment = new std::shared_ptr<nxrt::Environment>([] {
    nxrt::EnvironmentOptions options;
    options.log_level = "off";
    return nxrt::Environment::Create(options).value();
  }());
  return *environment;
}

// splitmix64: reproducible data from the control block's seed.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool IsDigits(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// The input's dims: declared extents as they are, each symbol one extent
// for the whole run, an unknown rank drawn.
std::optional<std::vector<int64_t>> DrawShape(const nxrt::ValueDescription& input,
                                              FuzzedDataProvider& control,
                                              std::map<std::string, int64_t>& symbols) {
  std::vector<int64_t> dims;
  if (!input.rank_known) {
    size_t rank = control.ConsumeIntegralInRange<size_t>(0, 4);
    for (size_t i = 0; i < rank; ++i) dims.push_back(control.ConsumeIntegralInRange<int64_t>(1, 4));
    return dims;
  }
  size_t elements = 1;
  for (const std::string& dim : input.shape) {
    int64_t extent = 0;
    if (IsDigits(dim)) {
      if (dim.size() > 6) return std::nullopt;
      extent = std::stoll(dim);
    } else {
      auto [it, fresh] = symbols.try_emplace(dim, 0);
      if (fresh) it->second = control.ConsumeIntegralInRange<int64_t>(0, 5);
      extent = it->second;
    }
    elements *= static_cast<size_t>(extent);
    if (elements > kMaxElements) return std::nullopt;
    dims.push_back(extent);
  }
  return dims;
}

std::optional<nxrt::Tensor> DrawTensor(const nxrt::ValueDescription& input,
                                       std::vector<int64_t> dims, uint64_t& seed) {
  if (input.dtype == nxrt::DataType::kString) {
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    std::vector<std::string> strings;
    for (size_t i = 0; i < count; ++i) strings.push_back(std::string(NextRandom(seed) % 8, 'x'));
    auto tensor = nxrt::Tensor::FromStrings(std::move(dims), std::move(strings));
    if (!tensor.ok()) return std::nullopt;
    return std::move(tensor).value();
  }
  auto tensor = nxrt::Tensor::Zeros(input.dtype, std::move(dims));
  if (!tensor.ok()) return std::nullopt;
  auto* bytes = static_cast<uint8_t*>(tensor->data());
  for (size_t i = 0; i < tensor->byte_size(); ++i)
    bytes[i] = static_cast<uint8_t>(NextRandom(seed));
  return std::move(tensor).value();
}

void RunTwice(nxrt::Session& session, std::span<const nxrt::NamedTensor> inputs) {
  for (int run = 0; run < 2; ++run) {
    nxrt::RunOptions options;
    options.deadline = std::chrono::steady_clock::now() + kRunDeadline;
    if (!session.Run(inputs, {}, options).ok()) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kControlBytes) return 0;
  auto model = std::as_bytes(std::span(data, size - kControlBytes));
  FuzzedDataProvider control(data + size - kControlBytes, kControlBytes);

  nxrt::SessionOptions options;
  options.memory_limit_bytes = kMemoryLimitBytes;
  auto session = nxrt::Session::Create(SharedEnvironment(), model, "fuzzed.onnx",
                                       "/nonexistent/nxrt-fuzz", options);
  if (!session.ok()) return 0;

  uint64_t seed = control.ConsumeIntegral<uint64_t>();
  std::map<std::string, int64_t> symbols;
  std::vector<nxrt::NamedTensor> inputs;
  for (const nxrt::ValueDescription& input : (*session)->inputs()) {
    if (input.kind != nxrt::graph::ValueKind::kTensor) return 0;
    auto dims = DrawShape(input, control, symbols);
    if (!dims) return 0;
    auto tensor = DrawTensor(input, std::move(*dims), seed);
    if (!tensor) return 0;
    inputs.push_back({input.name, std::move(*tensor)});
  }
  RunTwice(**session, inputs);
  return 0;
}
