// The bytes of a model's initializers. Inline data is held in memory, the
// larger tensors on huge pages; ONNX external data is memory-mapped from
// files inside the model's folder. Every tensor is exposed as a read-only
// byte span in ONNX's little-endian raw layout (strings excepted, kept as a
// vector of std::string) that stays put for the store's lifetime: kernels
// read weights in place while they hold the store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "nxrt/graph/dtype.hpp"
#include "nxrt/support/export.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph {

// A tensor's data as the store holds it.
struct TensorData {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  std::span<const std::byte> bytes;  // raw layout; empty for strings
  std::vector<std::string> strings;  // for DataType::kString only
};

// Handle of one tensor in a store.
struct WeightRef {
  uint32_t index = UINT32_MAX;
};

// Number of elements of a tensor of `dims`; an error for a negative dim or
// a product that overflows.
NXRT_API Result<uint64_t> ElementCount(std::span<const int64_t> dims);

// Bytes of the raw layout of `count` elements of `dtype` (packed types round
// up to whole bytes); an error on overflow or for string and undefined.
NXRT_API Result<uint64_t> RawByteSize(DataType dtype, uint64_t count);

class MappedFile;
class HugePageArena;

class NXRT_API WeightStore {
 public:
  WeightStore();
  ~WeightStore();
  WeightStore(WeightStore&&) noexcept;
  WeightStore& operator=(WeightStore&&) noexcept;

  // Stores a copy of `bytes` (already in raw layout).
  WeightRef AddOwned(DataType dtype, std::vector<int64_t> dims, std::vector<std::byte> bytes);
  WeightRef AddStrings(std::vector<int64_t> dims, std::vector<std::string> strings);

  // Maps `length` bytes at `offset` of `location`, a path relative to
  // `model_dir`. Refuses a location that escapes the folder, a missing file,
  // and a range beyond the file's end; a length of -1 means "to the end".
  // Each file is mapped once per store, however many tensors it holds.
  Result<WeightRef> AddExternal(DataType dtype, std::vector<int64_t> dims,
                                const std::filesystem::path& model_dir, const std::string& location,
                                int64_t offset, int64_t length);

  const TensorData& Get(WeightRef ref) const { return *tensors_.at(ref.index); }
  size_t size() const { return tensors_.size(); }

 private:
  std::vector<std::unique_ptr<TensorData>> tensors_;
  std::vector<std::unique_ptr<std::vector<std::byte>>> owned_;  // small tensors
  std::unique_ptr<HugePageArena> arena_;                        // larger ones
  std::unordered_map<std::string, std::shared_ptr<MappedFile>> mapping_by_path_;
};

}  // namespace nxrt::graph
