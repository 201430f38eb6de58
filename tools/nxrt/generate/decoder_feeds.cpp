#include "generate/decoder_feeds.hpp"

#include <algorithm>

namespace nxrt::cli {

const char* KvFormName(KvForm form) {
  return form == KvForm::kFixed ? "fixed" : "growing";
}

Result<DecoderFeeds> DecoderFeeds::Create(const DecoderIo& io, KvForm form) {
  if (form == KvForm::kFixed && !io.kv_capacity) {
    return FailedPrecondition("the fixed KV form needs pasts of a static capacity");
  }
  DecoderFeeds feeds(form, io.kv_capacity);
  feeds.feeds_.push_back({kInputIdsName, Tensor()});
  feeds.feeds_.push_back({kAttentionMaskName, Tensor()});
  if (form == KvForm::kFixed) {
    NXRT_ASSIGN_OR_RETURN(feeds.attention_mask(),
                          Tensor::Zeros(DataType::kInt64, {1, *io.kv_capacity}));
  }
  const int64_t cache_rows = form == KvForm::kFixed ? *io.kv_capacity : 0;
  feeds.output_names_.push_back(kLogitsName);
  for (const DecoderLayerIo& layer : io.layers) {
    for (const auto& [past, present] : {std::pair{&layer.past_key, &layer.present_key},
                                        std::pair{&layer.past_value, &layer.present_value}}) {
      NXRT_ASSIGN_OR_RETURN(Tensor cache, Tensor::Zeros(DataType::kFloat32,
                                                        {1, io.kv_heads, cache_rows, io.head_dim}));
      feeds.feeds_.push_back({*past, std::move(cache)});
      if (form == KvForm::kGrowing) feeds.output_names_.push_back(*present);
    }
  }
  return feeds;
}

Status DecoderFeeds::BindTokens(std::span<const int64_t> tokens) {
  const int64_t count = static_cast<int64_t>(tokens.size());
  const int64_t total = length_ + count;
  if (form_ == KvForm::kFixed && total > *capacity_) {
    return FailedPrecondition("the KV cache holds " + std::to_string(*capacity_) +
                              " tokens, too few for " + std::to_string(total));
  }
  const int64_t ids_shape[] = {1, count};
  NXRT_RETURN_IF_ERROR(input_ids().Reshape(DataType::kInt64, ids_shape));
  std::copy(tokens.begin(), tokens.end(), input_ids().mutable_values<int64_t>().begin());
  if (form_ == KvForm::kGrowing) {
    const int64_t mask_shape[] = {1, total};
    NXRT_RETURN_IF_ERROR(attention_mask().Reshape(DataType::kInt64, mask_shape));
    std::ranges::fill(attention_mask().mutable_values<int64_t>(), 1);
  } else {
    std::fill_n(attention_mask().mutable_values<int64_t>().begin() + length_, count, 1);
  }
  bound_ = count;
  return Status::Ok();
}

void DecoderFeeds::Commit(std::vector<Tensor>& outputs) {
  length_ += bound_;
  bound_ = 0;
  if (form_ == KvForm::kFixed) return;
  // Pasts follow input_ids and attention_mask; presents follow logits.
  for (size_t i = 1; i < output_names_.size(); ++i) feeds_[i + 1].tensor = std::move(outputs[i]);
}

}  // namespace nxrt::cli
