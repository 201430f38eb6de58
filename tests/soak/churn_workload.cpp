#include "churn_workload.hpp"

#include <chrono>
#include <random>
#include <string>
#include <vector>

namespace nxrt::soak {
namespace {

constexpr size_t kMostBrokenLines = 5;
constexpr int64_t kSamples = 500;

// The hidden size of the encoder's input [batch, sequence, hidden].
Result<int64_t> HiddenSize(const Session& session) {
  if (session.inputs().size() != 1 || session.inputs()[0].shape.size() != 3) {
    return Unsupported("the churn soak feeds one input of [batch, sequence, hidden]");
  }
  const std::string& hidden = session.inputs()[0].shape[2];
  if (hidden.empty() || hidden.find_first_not_of("0123456789") != std::string::npos) {
    return Unsupported("the churn soak needs a static hidden size, not '" + hidden + "'");
  }
  return std::stoll(hidden);
}

}  // namespace

Result<WorkloadResult> RunChurnSoak(std::shared_ptr<Environment> environment,
                                    const SoakSettings& settings, const ChurnSoak& soak) {
  if (soak.runs < 1 || soak.max_batch < 1 || soak.max_sequence < 1 ||
      soak.max_batch * soak.max_sequence < 2) {
    return InvalidArgument("the churn soak needs at least one run and two shapes to churn");
  }
  const auto start = std::chrono::steady_clock::now();
  NXRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                        Session::Create(std::move(environment), settings.models / "bert_layer.onnx",
                                        SoakSessionOptions(settings)));
  NXRT_ASSIGN_OR_RETURN(const int64_t hidden, HiddenSize(*session));
  std::mt19937_64 random(settings.seed);
  std::uniform_int_distribution<int64_t> batch(1, soak.max_batch);
  std::uniform_int_distribution<int64_t> sequence(1, soak.max_sequence);
  std::normal_distribution<float> value(0.0f, 1.0f);
  // One buffer of the largest shape; each run borrows its leading part.
  std::vector<float> data(static_cast<size_t>(soak.max_batch * soak.max_sequence * hidden));
  for (float& v : data) v = value(random);
  StepProbe probe(soak.runs, std::max<int64_t>(1, soak.runs / kSamples),
                  settings.leak_bytes_per_step);
  WorkloadResult result;
  result.name = "churn";
  const std::string input_name = session->inputs()[0].name;
  const std::vector<std::string> output_names;  // every output
  std::vector<Tensor> outputs;
  int64_t last_batch = 0, last_sequence = 0;
  for (int64_t done = 0; done < soak.runs;) {
    int64_t b = 0, s = 0;
    do {
      b = batch(random);
      s = sequence(random);
    } while (b == last_batch && s == last_sequence);
    last_batch = b;
    last_sequence = s;
    const size_t bytes = static_cast<size_t>(b * s * hidden) * sizeof(float);
    const NamedTensor input{input_name,
                            Tensor::Borrow(DataType::kFloat32, {b, s, hidden}, data.data(), bytes)};
    NXRT_RETURN_IF_ERROR(session->Run({&input, 1}, output_names, outputs));
    probe.StepDone(++done);
    if (done % (soak.runs / 10 + 1) == 0 && result.broken_bounds.size() < kMostBrokenLines) {
      CheckSessionBounds(*session, settings.variants_per_node,
                         "churn after run " + std::to_string(done), result.broken_bounds);
    }
  }
  CheckSessionBounds(*session, settings.variants_per_node, "churn at the end",
                     result.broken_bounds);
  result.steps = soak.runs;
  result.samples = probe.TakeSamples();
  result.counters = DescribeCounters(*session, settings.variants_per_node);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace nxrt::soak
