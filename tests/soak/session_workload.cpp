#include "session_workload.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "nxrt/environment.hpp"

namespace nxrt::soak {
namespace {

constexpr size_t kMostBrokenLines = 5;
constexpr int64_t kSamples = 500;
constexpr const char* kPluginFile = "libep_cpu.so";

// One run of the model with every input zero-filled, its symbolic dims 1.
Status RunOnce(Session& session) {
  std::vector<NamedTensor> inputs;
  for (const ValueDescription& input : session.inputs()) {
    std::vector<int64_t> shape;
    for (const std::string& dim : input.shape) {
      const bool number = !dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos;
      shape.push_back(number ? std::stoll(dim) : 1);
    }
    NXRT_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Zeros(input.dtype, std::move(shape)));
    inputs.push_back({input.name, std::move(tensor)});
  }
  return session.Run(inputs).status();
}

}  // namespace

Result<WorkloadResult> RunSessionSoak(const SoakSettings& settings, const SessionSoak& soak) {
  if (soak.sessions < 1) return InvalidArgument("the session soak needs at least one session");
  const auto start = std::chrono::steady_clock::now();
  StepProbe probe(soak.sessions, std::max<int64_t>(1, soak.sessions / kSamples),
                  settings.leak_bytes_per_step);
  WorkloadResult result;
  result.name = "sessions";
  int64_t still_mapped = 0;
  for (int64_t done = 0; done < soak.sessions;) {
    {
      NXRT_ASSIGN_OR_RETURN(std::shared_ptr<Environment> environment, Environment::Create());
      NXRT_ASSIGN_OR_RETURN(
          std::unique_ptr<Session> session,
          Session::Create(environment, settings.models / "mlp.onnx", SoakSessionOptions(settings)));
      NXRT_RETURN_IF_ERROR(RunOnce(*session));
      if (done == 0 || done + 1 == soak.sessions) {
        if (result.broken_bounds.size() < kMostBrokenLines) {
          CheckSessionBounds(*session, settings.variants_per_node,
                             "session " + std::to_string(done + 1), result.broken_bounds);
        }
        result.counters = DescribeCounters(*session, settings.variants_per_node);
      }
    }
    if (IsMapped(kPluginFile)) ++still_mapped;
    probe.StepDone(++done);
  }
  result.counters.push_back(std::string(kPluginFile) + " still mapped after " +
                            std::to_string(still_mapped) + " of " + std::to_string(soak.sessions) +
                            " environments closed");
  if (still_mapped > 0) {
    result.broken_bounds.push_back(std::string(kPluginFile) + " stayed loaded after " +
                                   std::to_string(still_mapped) + " environments closed");
  }
  result.steps = soak.sessions;
  result.samples = probe.TakeSamples();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace nxrt::soak
