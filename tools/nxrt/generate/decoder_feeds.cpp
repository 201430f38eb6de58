#include "generate/decoder_feeds.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace nxrt::cli {

const char* KvFormName(KvForm form) {
  return form == KvForm::kFixed ? "fixed" : "growing";
}

std::optional<size_t> DecoderFeeds::AddFeed(const std::string& name) {
  if (name.empty()) return std::nullopt;
  feeds_.push_back({name, Tensor()});
  return feeds_.size() - 1;
}

Result<DecoderFeeds> DecoderFeeds::Create(const DecoderIo& io, KvForm form, int64_t batch) {
  if (form == KvForm::kFixed && !io.kv_capacity) {
    return FailedPrecondition("the fixed KV form needs pasts of a static capacity");
  }
  if (io.static_batch && *io.static_batch != batch) {
    return InvalidArgument("the model takes a batch of exactly " +
                           std::to_string(*io.static_batch) + " rows, not " +
                           std::to_string(batch) + "; give as many prompts");
  }
  DecoderFeeds feeds(form, io.kv_capacity, batch);
  feeds.AddFeed(io.roles.input_ids);
  feeds.mask_ = feeds.AddFeed(io.roles.attention_mask);
  feeds.positions_ = feeds.AddFeed(io.roles.position_ids);
  feeds.cache_position_ = feeds.AddFeed(io.roles.cache_position);
  if (form == KvForm::kFixed && feeds.mask_) {
    NXRT_ASSIGN_OR_RETURN(feeds.feeds_[*feeds.mask_].tensor,
                          Tensor::Zeros(DataType::kInt64, {batch, *io.kv_capacity}));
  }
  feeds.first_past_ = feeds.feeds_.size();
  feeds.output_names_.push_back(io.roles.logits);
  for (const DecoderKvIo& kv : io.kv) {
    std::vector<int64_t> dims = kv.dims;
    if (kv.batch_axis) dims[*kv.batch_axis] = batch;
    dims[kv.axis] = form == KvForm::kFixed ? *io.kv_capacity : 0;
    NXRT_ASSIGN_OR_RETURN(Tensor cache, Tensor::Zeros(kv.dtype, dims));
    feeds.feeds_.push_back({kv.past, std::move(cache)});
    feeds.growing_axes_.push_back(kv.axis);
    if (form == KvForm::kGrowing) feeds.output_names_.push_back(kv.present);
  }
  return feeds;
}

Status DecoderFeeds::BindColumns(int64_t count) {
  const int64_t total = length_ + count;
  if (form_ == KvForm::kFixed && total > *capacity_) {
    return FailedPrecondition("the KV cache holds " + std::to_string(*capacity_) +
                              " tokens, too few for " + std::to_string(total));
  }
  const int64_t ids_shape[] = {batch_, count};
  NXRT_RETURN_IF_ERROR(feeds_[0].tensor.Reshape(DataType::kInt64, ids_shape));
  if (mask_) {
    Tensor& mask = feeds_[*mask_].tensor;
    const int64_t width = form_ == KvForm::kFixed ? *capacity_ : total;
    if (form_ == KvForm::kGrowing) {
      const int64_t mask_shape[] = {batch_, width};
      NXRT_RETURN_IF_ERROR(mask.Reshape(DataType::kInt64, mask_shape));
    }
    std::span<int64_t> values = mask.mutable_values<int64_t>();
    for (int64_t row = 0; row < batch_; ++row) {
      for (int64_t column = 0; column < width; ++column) {
        values[row * width + column] = column >= padding_[row] && column < total ? 1 : 0;
      }
    }
  }
  if (positions_) {
    const int64_t shape[] = {batch_, count};
    Tensor& positions = feeds_[*positions_].tensor;
    NXRT_RETURN_IF_ERROR(positions.Reshape(DataType::kInt64, shape));
    std::span<int64_t> values = positions.mutable_values<int64_t>();
    for (int64_t row = 0; row < batch_; ++row) {
      for (int64_t i = 0; i < count; ++i) {
        const int64_t column = length_ + i;
        values[row * count + i] = column < padding_[row] ? 1 : column - padding_[row];
      }
    }
  }
  if (cache_position_) {
    const int64_t shape[] = {count};
    Tensor& cache_position = feeds_[*cache_position_].tensor;
    NXRT_RETURN_IF_ERROR(cache_position.Reshape(DataType::kInt64, shape));
    std::span<int64_t> values = cache_position.mutable_values<int64_t>();
    for (int64_t i = 0; i < count; ++i) values[i] = length_ + i;
  }
  bound_ = count;
  return Status::Ok();
}

Status DecoderFeeds::BindPrompts(std::span<const std::vector<int64_t>> prompts) {
  if (static_cast<int64_t>(prompts.size()) != batch_ || length_ != 0) {
    return FailedPrecondition("a prompt run needs one prompt per row and an empty cache");
  }
  int64_t longest = 0;
  for (const std::vector<int64_t>& prompt : prompts) {
    longest = std::max(longest, static_cast<int64_t>(prompt.size()));
  }
  for (int64_t row = 0; row < batch_; ++row) {
    padding_[row] = longest - static_cast<int64_t>(prompts[row].size());
  }
  NXRT_RETURN_IF_ERROR(BindColumns(longest));
  std::span<int64_t> ids = feeds_[0].tensor.mutable_values<int64_t>();
  for (int64_t row = 0; row < batch_; ++row) {
    const auto start = ids.begin() + row * longest;
    std::fill_n(start, padding_[row], kPaddingToken);
    std::ranges::copy(prompts[row], start + padding_[row]);
  }
  return Status::Ok();
}

Status DecoderFeeds::BindStep(std::span<const int64_t> tokens) {
  NXRT_RETURN_IF_ERROR(BindColumns(static_cast<int64_t>(tokens.size()) / batch_));
  std::ranges::copy(tokens, feeds_[0].tensor.mutable_values<int64_t>().begin());
  return Status::Ok();
}

Status DecoderFeeds::Rewind(int64_t columns) {
  if (columns < 0 || columns > length_) {
    return FailedPrecondition("cannot rewind " + std::to_string(columns) + " of " +
                              std::to_string(length_) + " cached columns");
  }
  length_ -= columns;
  if (form_ == KvForm::kFixed || columns == 0) return Status::Ok();
  for (size_t i = 0; i < growing_axes_.size(); ++i) {
    Tensor& past = feeds_[first_past_ + i].tensor;
    const size_t axis = growing_axes_[i];
    std::vector<int64_t> dims = past.shape();
    dims[axis] = length_;
    NXRT_ASSIGN_OR_RETURN(Tensor trimmed, Tensor::Zeros(past.dtype(), dims));
    // Each slab of the axes before the growing one keeps its first rows.
    int64_t slabs = 1;
    for (size_t d = 0; d < axis; ++d) slabs *= dims[d];
    if (slabs == 0 || trimmed.byte_size() == 0) {
      past = std::move(trimmed);
      continue;
    }
    const size_t kept = trimmed.byte_size() / static_cast<size_t>(slabs);
    const size_t whole = past.byte_size() / static_cast<size_t>(slabs);
    const auto* from = static_cast<const std::byte*>(past.data());
    auto* to = static_cast<std::byte*>(trimmed.data());
    for (size_t s = 0; s < static_cast<size_t>(slabs); ++s) {
      std::memcpy(to + s * kept, from + s * whole, kept);
    }
    past = std::move(trimmed);
  }
  return Status::Ok();
}

void DecoderFeeds::Commit(std::vector<Tensor>& outputs) {
  length_ += bound_;
  bound_ = 0;
  if (form_ == KvForm::kFixed) return;
  for (size_t i = 1; i < output_names_.size(); ++i) {
    feeds_[first_past_ + i - 1].tensor = std::move(outputs[i]);
  }
}

}  // namespace nxrt::cli
