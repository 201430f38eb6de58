// The tensors every run feeds a decoder, kept in the one array Session::Run
// takes: input_ids, attention_mask, then each layer's past key and value.
//
// The KV cache has two forms. Growing: the pasts start at length 0 and each
// run's presents are moved in as the next run's pasts, so the cache grows
// by the tokens of each run. Fixed: the pasts are allocated once, zeroed, at
// the model's static capacity, and the session (with
// SessionOptions::fixed_capacity_kv) writes each run's new rows into them in
// place; the attention mask spans the capacity, ones over the valid prefix.
// In both forms a decode step's input_ids [1,1] keeps its storage, and in
// the fixed form so do the mask and the cache, so a captured device graph's
// bindings hold from step to step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "generate/decoder_io.hpp"
#include "nxrt/session.hpp"
#include "nxrt/support/status.hpp"
#include "nxrt/tensor.hpp"

namespace nxrt::cli {

enum class KvForm { kGrowing, kFixed };

const char* KvFormName(KvForm form);

class DecoderFeeds {
 public:
  // The fixed form needs a model whose pasts have a static capacity.
  static Result<DecoderFeeds> Create(const DecoderIo& io, KvForm form);

  // Binds `tokens` as the next run's input_ids, after the cached ones, and
  // marks them valid in the attention mask. Fails when the fixed cache has
  // no room for them.
  Status BindTokens(std::span<const int64_t> tokens);

  // After a run of the bound tokens: they join the cache. The growing form
  // moves the presents out of `outputs` (laid out as output_names()) into
  // the pasts; the fixed form's pasts were written in place.
  void Commit(std::vector<Tensor>& outputs);

  std::span<const NamedTensor> feeds() const { return feeds_; }
  // logits, then, in the growing form, every present in feed order.
  std::span<const std::string> output_names() const { return output_names_; }
  // Tokens held in the cache.
  int64_t length() const { return length_; }

 private:
  DecoderFeeds(KvForm form, std::optional<int64_t> capacity) : form_(form), capacity_(capacity) {}

  Tensor& input_ids() { return feeds_[0].tensor; }
  Tensor& attention_mask() { return feeds_[1].tensor; }

  KvForm form_;
  std::optional<int64_t> capacity_;
  std::vector<NamedTensor> feeds_;
  std::vector<std::string> output_names_;
  int64_t length_ = 0;
  int64_t bound_ = 0;  // tokens bound for the next run
};

}  // namespace nxrt::cli
