// The tensors every run feeds a decoder, kept in the one array Session::Run
// takes: the token ids, then whichever of the attention mask, position ids
// and cache position the model takes, then each KV past.
//
// A batch of prompts of different lengths is left-padded to the longest:
// the padding is masked out and, as transformers does, its positions are
// 1 while each row's real tokens count from 0. The cache position is the
// absolute column of each new token, padding included.
//
// The KV cache has two forms. Growing: the pasts start at length 0 and each
// run's presents are moved in as the next run's pasts, so the cache grows
// by the tokens of each run. Fixed: the pasts are allocated once, zeroed, at
// the model's static capacity, and the session (with
// SessionOptions::fixed_capacity_kv) writes each run's new rows into them in
// place; the attention mask spans the capacity, ones over the valid tokens.
// In both forms a decode step's token ids keep their storage, and in the
// fixed form so do the mask and the cache, so a captured device graph's
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

inline constexpr int64_t kPaddingToken = 0;

class DecoderFeeds {
 public:
  // The fixed form needs a model whose pasts have a static capacity.
  static Result<DecoderFeeds> Create(const DecoderIo& io, KvForm form, int64_t batch);

  // Binds one prompt per row, left-padded to the longest, as the next run.
  Status BindPrompts(std::span<const std::vector<int64_t>> prompts);
  // Binds the same number of tokens per row (row after row in `tokens`) as
  // the next run, after the cached ones: one for a decode step, more for a
  // speculative one. Fails when the fixed cache has no room for them.
  Status BindStep(std::span<const int64_t> tokens);

  // After a run of the bound tokens: they join the cache. The growing form
  // moves the presents out of `outputs` (laid out as output_names()) into
  // the pasts; the fixed form's pasts were written in place.
  void Commit(std::vector<Tensor>& outputs);

  // Drops the last `columns` committed columns, the rejected draft tokens
  // of a speculative step: the growing form trims the pasts along their
  // growing axis; the fixed form only shortens the valid length, the stale
  // rows masked out until later runs overwrite them.
  Status Rewind(int64_t columns);

  std::span<const NamedTensor> feeds() const { return feeds_; }
  // The logits, then, in the growing form, every present in feed order.
  std::span<const std::string> output_names() const { return output_names_; }
  int64_t batch() const { return batch_; }
  // Columns held in the cache, padding included.
  int64_t length() const { return length_; }

 private:
  DecoderFeeds(KvForm form, std::optional<int64_t> capacity, int64_t batch)
      : form_(form), capacity_(capacity), batch_(batch), padding_(batch, 0) {}

  // Shapes the token ids and the inputs that follow them for `count` new
  // columns per row.
  Status BindColumns(int64_t count);
  std::optional<size_t> AddFeed(const std::string& name);

  KvForm form_;
  std::optional<int64_t> capacity_;
  int64_t batch_;
  std::vector<int64_t> padding_;  // left-padding columns per row
  std::vector<NamedTensor> feeds_;
  std::vector<std::string> output_names_;
  std::optional<size_t> mask_, positions_, cache_position_;  // indices into feeds_
  size_t first_past_ = 0;
  std::vector<size_t> growing_axes_;  // of each past, in feed order
  int64_t length_ = 0;
  int64_t bound_ = 0;  // columns bound for the next run
};

}  // namespace nxrt::cli
