#include "generate/decoder_io.hpp"

#include <charconv>
#include <map>

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

std::string Joined(const std::vector<std::string>& phrases) {
  std::string joined;
  for (const std::string& phrase : phrases) joined += (joined.empty() ? "" : ", ") + phrase;
  return joined;
}

class IoReader {
 public:
  explicit IoReader(const Session& session) {
    for (const ValueDescription& value : session.inputs()) inputs_[value.name] = &value;
    for (const ValueDescription& value : session.outputs()) outputs_[value.name] = &value;
  }

  // An int64 input of `rank` when `name` is set; records why not otherwise.
  void ExpectIndices(const std::string& name, size_t rank) {
    if (name.empty()) return;
    const ValueDescription& value = *inputs_.at(name);
    if (value.dtype != DataType::kInt64 || !value.rank_known || value.shape.size() != rank) {
      problems_.push_back("input '" + name + "' is not int64 of rank " + std::to_string(rank));
    }
  }

  void ReadKv(const graph::DecoderKv& pair, DecoderIo& io) {
    const ValueDescription& past = *inputs_.at(pair.past);
    DecoderKvIo kv{pair.past, pair.present, past.dtype, {}, std::nullopt, pair.past_axis};
    for (size_t axis = 0; axis < past.shape.size(); ++axis) {
      const std::optional<int64_t> extent = StaticDim(past.shape[axis]);
      if (axis == pair.past_axis) {
        if (io.kv.empty()) io.kv_capacity = extent;
        if (extent != io.kv_capacity) {
          problems_.push_back("input '" + pair.past + "' differs in capacity from '" +
                              io.kv.front().past + "'");
        }
        kv.dims.push_back(0);
      } else if (extent) {
        kv.dims.push_back(*extent);
      } else if (!kv.batch_axis) {
        kv.batch_axis = axis;
        kv.dims.push_back(1);
      } else {
        problems_.push_back("input '" + pair.past + "' has symbolic axes other than the batch (" +
                            past.shape[*kv.batch_axis] + ") and the sequence");
        return;
      }
    }
    io.kv.push_back(std::move(kv));
  }

  void ReadBatch(const std::string& input_ids, DecoderIo& io) {
    io.static_batch = StaticDim(inputs_.at(input_ids)->shape[0]);
  }

  void ReadVocab(const std::string& logits, DecoderIo& io) {
    const std::optional<int64_t> vocab = StaticDim(outputs_.at(logits)->shape[2]);
    if (vocab && *vocab > 0) {
      io.vocab = *vocab;
    } else {
      problems_.push_back("output '" + logits + "' has no numeric vocabulary size");
    }
  }

  std::vector<std::string>& problems() { return problems_; }

 private:
  std::map<std::string, const ValueDescription*> inputs_;
  std::map<std::string, const ValueDescription*> outputs_;
  std::vector<std::string> problems_;
};

}  // namespace

Result<DecoderIo> DiscoverDecoderIo(const Session& session, const std::string& model_name) {
  DecoderIo io;
  io.roles = session.decoder_signature();
  const graph::DecoderSignature& roles = io.roles;
  std::vector<std::string> problems = roles.problems;
  if (problems.empty()) {
    IoReader reader(session);
    reader.ExpectIndices(roles.input_ids, 2);
    reader.ExpectIndices(roles.attention_mask, 2);
    reader.ExpectIndices(roles.position_ids, 2);
    reader.ExpectIndices(roles.cache_position, 1);
    for (const graph::DecoderKv& pair : roles.kv) reader.ReadKv(pair, io);
    reader.ReadVocab(roles.logits, io);
    reader.ReadBatch(roles.input_ids, io);
    problems = std::move(reader.problems());
  }
  if (problems.empty()) return io;
  return InvalidArgument("model '" + model_name + "' is not a decoder generate can drive (" +
                         Joined(problems) +
                         "); it feeds token ids, an attention mask, position ids or a cache "
                         "position, and KV pasts whose present outputs extend them");
}

}  // namespace nxrt::cli
