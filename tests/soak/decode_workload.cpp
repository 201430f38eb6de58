#include "decode_workload.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace nxrt::soak {
namespace {

constexpr size_t kMostBrokenLines = 5;

// The extent of a declared dim: its number, 0 on the growing axis, else 1
// (the batch).
int64_t StartExtent(const std::string& dim, size_t axis, size_t growing_axis) {
  if (axis == growing_axis) return 0;
  if (!dim.empty() && std::ranges::all_of(dim, [](char c) { return c >= '0' && c <= '9'; })) {
    return std::stoll(dim);
  }
  return 1;
}

const ValueDescription* Find(const std::vector<ValueDescription>& values, const std::string& name) {
  const auto it = std::ranges::find(values, name, &ValueDescription::name);
  return it == values.end() ? nullptr : &*it;
}

// The feeds of one decoder run: token ids, mask, then each KV past; the
// outputs wanted: logits, then each present.
struct DecoderRun {
  std::vector<NamedTensor> feeds;
  std::vector<std::string> outputs;
  std::vector<std::vector<int64_t>> empty_past_dims;
  int64_t vocab = 0;
};

Result<DecoderRun> DescribeRun(const Session& session) {
  const graph::DecoderSignature& roles = session.decoder_signature();
  if (!roles.drivable() || roles.attention_mask.empty() || !roles.position_ids.empty() ||
      !roles.cache_position.empty()) {
    return Unsupported(
        "the decode soak drives decoders fed token ids, an attention mask and KV pasts");
  }
  const ValueDescription* logits = Find(session.outputs(), roles.logits);
  if (logits == nullptr || logits->shape.size() != 3) {
    return Unsupported("the decoder's logits are not [batch, sequence, vocabulary]");
  }
  DecoderRun run;
  run.vocab = StartExtent(logits->shape[2], 2, 3);
  if (run.vocab < 2) return Unsupported("the decoder's logits declare no vocabulary size");
  run.feeds.push_back({roles.input_ids, Tensor()});
  run.feeds.push_back({roles.attention_mask, Tensor()});
  run.outputs.push_back(roles.logits);
  for (const graph::DecoderKv& kv : roles.kv) {
    const ValueDescription* past = Find(session.inputs(), kv.past);
    if (past == nullptr) return Unsupported("no input '" + kv.past + "'");
    std::vector<int64_t> dims;
    for (size_t axis = 0; axis < past->shape.size(); ++axis) {
      dims.push_back(StartExtent(past->shape[axis], axis, kv.past_axis));
    }
    run.empty_past_dims.push_back(std::move(dims));
    run.feeds.push_back({kv.past, Tensor()});
    run.outputs.push_back(kv.present);
  }
  return run;
}

int64_t LastPositionArgmax(const Tensor& logits, int64_t vocab) {
  const std::span<const float> all = logits.values<float>();
  const std::span<const float> last = all.last(static_cast<size_t>(vocab));
  return std::ranges::max_element(last) - last.begin();
}

Status FillMask(Tensor& mask, int64_t length) {
  const int64_t shape[] = {1, length};
  NXRT_RETURN_IF_ERROR(mask.Reshape(DataType::kInt64, shape));
  std::ranges::fill(mask.mutable_values<int64_t>(), 1);
  return Status::Ok();
}

}  // namespace

Result<WorkloadResult> RunDecodeSoak(std::shared_ptr<Environment> environment,
                                     const SoakSettings& settings, const DecodeSoak& soak) {
  if (soak.steps < 1 || soak.reset_every < 1 || soak.max_prompt < 1) {
    return InvalidArgument("the decode soak needs at least one step, period and prompt token");
  }
  const auto start = std::chrono::steady_clock::now();
  NXRT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                        Session::Create(std::move(environment), settings.models / "decoder.onnx",
                                        SoakSessionOptions(settings)));
  NXRT_ASSIGN_OR_RETURN(DecoderRun run, DescribeRun(*session));
  std::mt19937_64 random(settings.seed);
  std::uniform_int_distribution<int64_t> prompt_length(1, soak.max_prompt);
  std::uniform_int_distribution<int64_t> token(0, run.vocab - 1);
  // Sampled at the end of each request, always at the same phase, so the
  // cache's sawtooth does not show as noise.
  StepProbe probe(soak.steps, soak.reset_every, settings.leak_bytes_per_step);
  WorkloadResult result;
  result.name = "decode";
  std::vector<Tensor> outputs;
  const auto commit = [&] {
    for (size_t i = 1; i < outputs.size(); ++i) run.feeds[i + 1].tensor = std::move(outputs[i]);
  };
  int64_t done = 0;
  while (done < soak.steps) {
    // The first request is the longest, so warm-up sees the largest buffers.
    const int64_t length = done == 0 ? soak.max_prompt : prompt_length(random);
    for (size_t i = 0; i < run.empty_past_dims.size(); ++i) {
      NXRT_ASSIGN_OR_RETURN(run.feeds[i + 2].tensor,
                            Tensor::Zeros(DataType::kFloat32, run.empty_past_dims[i]));
    }
    std::vector<int64_t> prompt(static_cast<size_t>(length));
    for (int64_t& id : prompt) id = token(random);
    NXRT_ASSIGN_OR_RETURN(run.feeds[0].tensor, Tensor::FromValues<int64_t>({1, length}, prompt));
    NXRT_RETURN_IF_ERROR(FillMask(run.feeds[1].tensor, length));
    NXRT_RETURN_IF_ERROR(session->Run(run.feeds, run.outputs, outputs));
    int64_t next = LastPositionArgmax(outputs[0], run.vocab);
    commit();
    int64_t total = length;
    for (int64_t k = 0; k < soak.reset_every && done < soak.steps; ++k) {
      const int64_t one[] = {1, 1};
      NXRT_RETURN_IF_ERROR(run.feeds[0].tensor.Reshape(DataType::kInt64, one));
      run.feeds[0].tensor.mutable_values<int64_t>()[0] = next;
      NXRT_RETURN_IF_ERROR(FillMask(run.feeds[1].tensor, ++total));
      NXRT_RETURN_IF_ERROR(
          session->Run(DeviceGraphSlot::kPrimary, run.feeds, run.outputs, outputs));
      next = LastPositionArgmax(outputs[0], run.vocab);
      commit();
      probe.StepDone(++done);
    }
    if (result.broken_bounds.size() < kMostBrokenLines) {
      CheckSessionBounds(*session, settings.variants_per_node,
                         "decode after step " + std::to_string(done), result.broken_bounds);
    }
  }
  result.steps = done;
  result.samples = probe.TakeSamples();
  result.counters = DescribeCounters(*session, settings.variants_per_node);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace nxrt::soak
