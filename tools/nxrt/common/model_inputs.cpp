#include "common/model_inputs.hpp"

#include <algorithm>
#include <optional>
#include <random>

#include "common/name_value.hpp"
#include "common/random_tensor.hpp"
#include "common/test_value_conversion.hpp"
#include "nxrt/graph/test_data.hpp"

namespace nxrt::cli {
namespace {

std::string InputNames(const std::vector<ValueDescription>& inputs) {
  if (inputs.empty()) return "it has none";
  std::string names = "its inputs are ";
  for (size_t i = 0; i < inputs.size(); ++i) names += (i ? ", " : "") + inputs[i].name;
  return names;
}

}  // namespace

Result<std::vector<NamedValue>> PrepareInputs(const ModelSession& model,
                                              const InputSources& sources) {
  const std::vector<ValueDescription>& inputs = model.session->inputs();
  std::vector<std::optional<Value>> values(inputs.size());
  const std::vector<ValueDescription>& overridable = model.session->overridable_initializers();
  std::vector<NamedValue> overrides;
  for (const std::string& spec : sources.files) {
    NXRT_ASSIGN_OR_RETURN(auto pair, SplitNameValue(spec, "--input", "FILE.pb"));
    const auto& [name, file] = pair;
    size_t position = 0;
    while (position < inputs.size() && inputs[position].name != name) ++position;
    const bool overrides_initializer =
        position == inputs.size() &&
        std::any_of(overridable.begin(), overridable.end(),
                    [&](const ValueDescription& initializer) { return initializer.name == name; });
    if (overrides_initializer) {
      NXRT_ASSIGN_OR_RETURN(graph::TestValue decoded,
                            graph::ReadTestValueFile(file, graph::TestProtoKind::kTensor));
      Result<Value> value = ValueFromTestValue(decoded);
      if (!value.ok()) return value.status().WithContext("--input " + spec);
      overrides.push_back({name, std::move(value).value()});
      continue;
    }
    if (position == inputs.size()) {
      return InvalidArgument("--input " + spec + ": the model has no input '" + name + "'; " +
                             InputNames(inputs));
    }
    if (values[position]) {
      return InvalidArgument("--input " + spec + ": input '" + name + "' is given twice");
    }
    NXRT_ASSIGN_OR_RETURN(
        graph::TestValue decoded,
        graph::ReadTestValueFile(file, graph::TestProtoKindFor(model.input_kinds[position])));
    Result<Value> value = ValueFromTestValue(decoded);
    if (!value.ok()) return value.status().WithContext("--input " + spec);
    values[position] = std::move(value).value();
  }
  for (const auto& [name, shape] : sources.random_shapes.shapes) {
    if (std::none_of(inputs.begin(), inputs.end(),
                     [&](const ValueDescription& input) { return input.name == name; })) {
      return InvalidArgument("--shape " + name + ": the model has no input '" + name + "'; " +
                             InputNames(inputs));
    }
  }
  std::mt19937_64 generator(sources.seed);
  std::vector<NamedValue> prepared;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!values[i]) {
      if (!sources.random_for_rest) {
        return InvalidArgument("input '" + inputs[i].name + "' has no value; pass --input " +
                               inputs[i].name + "=FILE.pb, or --random for random inputs");
      }
      NXRT_ASSIGN_OR_RETURN(Tensor tensor,
                            RandomTensor(inputs[i], sources.random_shapes, generator));
      values[i] = Value(std::move(tensor));
    }
    prepared.push_back({inputs[i].name, std::move(*values[i])});
  }
  for (NamedValue& value : overrides) prepared.push_back(std::move(value));
  return prepared;
}

Result<std::vector<NamedTensor>> AsTensors(std::vector<NamedValue> values) {
  std::vector<NamedTensor> tensors;
  for (NamedValue& named : values) {
    if (!named.value.is_tensor()) {
      return InvalidArgument("input '" + named.name +
                             "' is a sequence or an absent optional; only tensor inputs are "
                             "accepted here");
    }
    tensors.push_back({named.name, std::move(named.value.tensor())});
  }
  return tensors;
}

}  // namespace nxrt::cli
