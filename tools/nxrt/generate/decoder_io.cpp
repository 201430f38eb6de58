#include "generate/decoder_io.hpp"

#include <charconv>
#include <map>
#include <set>

#include "nxrt/graph/dtype.hpp"

namespace nxrt::cli {
namespace {

// A declared dim as a number; unset for a symbol.
std::optional<int64_t> StaticDim(const std::string& dim) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
  if (error != std::errc() || end != dim.data() + dim.size()) return std::nullopt;
  return value;
}

std::string PastName(size_t layer, const char* part) {
  return "past_key_values." + std::to_string(layer) + "." + part;
}

// Looks up a model's inputs or outputs by name, collecting every problem so
// that one error names them all.
class IoChecker {
 public:
  explicit IoChecker(const std::vector<ValueDescription>& values, const char* kind) : kind_(kind) {
    for (const ValueDescription& value : values) by_name_[value.name] = &value;
  }

  bool Has(const std::string& name) const { return by_name_.count(name) != 0; }

  // The value when it exists with `dtype` and `rank`; otherwise records why not.
  const ValueDescription* Expect(const std::string& name, DataType dtype, size_t rank) {
    const auto found = by_name_.find(name);
    if (found == by_name_.end()) {
      problems_.push_back("no " + std::string(kind_) + " '" + name + "'");
      return nullptr;
    }
    const ValueDescription& value = *found->second;
    if (value.dtype != dtype || !value.rank_known || value.shape.size() != rank) {
      problems_.push_back(std::string(kind_) + " '" + name + "' is not " +
                          std::string(graph::DataTypeName(dtype)) + " of rank " +
                          std::to_string(rank));
      return nullptr;
    }
    return &value;
  }

  void Problem(std::string text) { problems_.push_back(std::move(text)); }
  std::vector<std::string>& problems() { return problems_; }

 private:
  const char* kind_;
  std::map<std::string, const ValueDescription*> by_name_;
  std::vector<std::string> problems_;
};

// Reads kv_heads, head_dim and the capacity from a past tensor, checking that
// every layer agrees with the first.
void ReadKvGeometry(const ValueDescription& past, bool first, DecoderIo& io, IoChecker& checker) {
  const std::optional<int64_t> heads = StaticDim(past.shape[1]);
  const std::optional<int64_t> head_dim = StaticDim(past.shape[3]);
  const std::optional<int64_t> capacity = StaticDim(past.shape[2]);
  if (!heads || !head_dim) {
    checker.Problem("input '" + past.name + "' has no numeric KV-head count and head size");
    return;
  }
  if (first) {
    io.kv_heads = *heads;
    io.head_dim = *head_dim;
    io.kv_capacity = capacity;
    return;
  }
  if (*heads != io.kv_heads || *head_dim != io.head_dim || capacity != io.kv_capacity) {
    checker.Problem("input '" + past.name + "' differs in shape from past_key_values.0.key");
  }
}

}  // namespace

Result<DecoderIo> DiscoverDecoderIo(const Session& session, const std::string& model_name) {
  IoChecker inputs(session.inputs(), "input");
  IoChecker outputs(session.outputs(), "output");
  DecoderIo io;
  inputs.Expect(kInputIdsName, DataType::kInt64, 2);
  inputs.Expect(kAttentionMaskName, DataType::kInt64, 2);
  bool first_past = true;
  for (size_t layer = 0; layer == 0 || inputs.Has(PastName(layer, "key")); ++layer) {
    const std::string present = "present." + std::to_string(layer) + ".";
    DecoderLayerIo names{PastName(layer, "key"), PastName(layer, "value"), present + "key",
                         present + "value"};
    for (const std::string* name : {&names.past_key, &names.past_value}) {
      const ValueDescription* value = inputs.Expect(*name, DataType::kFloat32, 4);
      if (value == nullptr) continue;
      ReadKvGeometry(*value, first_past, io, inputs);
      first_past = false;
    }
    outputs.Expect(names.present_key, DataType::kFloat32, 4);
    outputs.Expect(names.present_value, DataType::kFloat32, 4);
    io.layers.push_back(std::move(names));
  }
  if (const ValueDescription* logits = outputs.Expect(kLogitsName, DataType::kFloat32, 3)) {
    const std::optional<int64_t> vocab = StaticDim(logits->shape[2]);
    if (vocab && *vocab > 0) {
      io.vocab = *vocab;
    } else {
      outputs.Problem("output 'logits' has no numeric vocabulary size");
    }
  }
  std::vector<std::string> problems = std::move(inputs.problems());
  for (std::string& problem : outputs.problems()) problems.push_back(std::move(problem));
  std::set<std::string> fed = {kInputIdsName, kAttentionMaskName};
  for (const DecoderLayerIo& layer : io.layers) fed.insert({layer.past_key, layer.past_value});
  for (const ValueDescription& input : session.inputs()) {
    if (fed.count(input.name) == 0) {
      problems.push_back("input '" + input.name + "' that generate cannot feed");
    }
  }
  if (problems.empty()) return io;
  std::string joined;
  for (const std::string& problem : problems) joined += (joined.empty() ? "" : ", ") + problem;
  return InvalidArgument("model '" + model_name + "' is not a decoder generate can run (" + joined +
                         "); it needs the ONNX Runtime GenAI names input_ids, attention_mask, "
                         "past_key_values.N.key/.value, logits and present.N.key/.value");
}

}  // namespace nxrt::cli
