#include "nxrt/graph/weight_store.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "nxrt/graph/quoted_name.hpp"
#include "nxrt/support/checked_math.hpp"
#include "weights/huge_page_arena.hpp"
#include "weights/mapped_file.hpp"

namespace nxrt::graph {

namespace fs = std::filesystem;

Result<uint64_t> ElementCount(std::span<const int64_t> dims) {
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("negative dim " + std::to_string(d));
  }
  // An empty axis empties the tensor, however large the other extents.
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return 0;
  uint64_t count = 1;
  for (int64_t d : dims) {
    std::optional<uint64_t> next = CheckedMul(count, static_cast<uint64_t>(d));
    // Counts travel as int64 (ONNX dims, the plugin ABI), so int64 bounds them.
    if (!next || *next > static_cast<uint64_t>(INT64_MAX)) {
      std::string shown;
      for (int64_t e : dims) shown += (shown.empty() ? "" : ",") + std::to_string(e);
      return InvalidArgument("element count of [" + shown + "] overflows int64; fix the dims");
    }
    count = *next;
  }
  return count;
}

Result<uint64_t> RawByteSize(DataType dtype, uint64_t count) {
  const uint64_t bits = DataTypeBits(dtype);
  if (bits == 0) {
    return InvalidArgument("no raw layout for dtype " + std::string(DataTypeName(dtype)));
  }
  std::optional<uint64_t> total_bits = CheckedMul(count, bits);
  if (!total_bits) return InvalidArgument("byte size overflows 64 bits");
  return *total_bits / 8 + (*total_bits % 8 != 0 ? 1 : 0);
}

namespace {

// Tensors from this size up are streamed by the products that read them, so
// they go on huge pages; smaller ones would only spread the arena's pages.
constexpr size_t kArenaThreshold = size_t{16} << 10;

}  // namespace

WeightStore::WeightStore() = default;
WeightStore::~WeightStore() = default;
WeightStore::WeightStore(WeightStore&&) noexcept = default;
WeightStore& WeightStore::operator=(WeightStore&&) noexcept = default;

WeightRef WeightStore::AddOwned(DataType dtype, std::vector<int64_t> dims,
                                std::vector<std::byte> bytes) {
  auto tensor = std::make_unique<TensorData>();
  tensor->dtype = dtype;
  tensor->dims = std::move(dims);
  if (bytes.size() >= kArenaThreshold) {
    if (!arena_) arena_ = std::make_unique<HugePageArena>();
    const std::span<std::byte> block = arena_->Allocate(bytes.size());
    std::memcpy(block.data(), bytes.data(), bytes.size());
    tensor->bytes = block.first(bytes.size());
  } else {
    auto storage = std::make_unique<std::vector<std::byte>>(std::move(bytes));
    tensor->bytes = std::span<const std::byte>(storage->data(), storage->size());
    owned_.push_back(std::move(storage));
  }
  tensors_.push_back(std::move(tensor));
  return WeightRef{static_cast<uint32_t>(tensors_.size() - 1)};
}

WeightRef WeightStore::AddStrings(std::vector<int64_t> dims, std::vector<std::string> strings) {
  auto tensor = std::make_unique<TensorData>();
  tensor->dtype = DataType::kString;
  tensor->dims = std::move(dims);
  tensor->strings = std::move(strings);
  tensors_.push_back(std::move(tensor));
  return WeightRef{static_cast<uint32_t>(tensors_.size() - 1)};
}

namespace {

// Whether `inner` is `folder` or lies below it; both already canonical.
bool IsWithin(const fs::path& inner, const fs::path& folder) {
  auto folder_it = folder.begin();
  auto inner_it = inner.begin();
  for (; folder_it != folder.end(); ++folder_it, ++inner_it) {
    if (inner_it == inner.end() || *inner_it != *folder_it) return false;
  }
  return true;
}

// The canonical path of `location` under `model_dir`, refusing any location
// that could read outside the model's folder.
Result<fs::path> ResolveInsideFolder(const fs::path& model_dir, const std::string& location) {
  const std::string where = "external data location " + Quoted(location);
  if (location.empty()) return InvalidArgument(where + " is empty; name a file beside the model");
  const fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    return InvalidArgument(where + " is absolute; it must be relative to the model's folder");
  }
  const fs::path normal = relative.lexically_normal();
  if (!normal.empty() && *normal.begin() == "..") {
    return InvalidArgument(where + " leaves the model's folder through '..'");
  }
  std::error_code ec;
  const fs::path folder = fs::canonical(model_dir.empty() ? fs::path(".") : model_dir, ec);
  if (ec) {
    return NotFound("model folder " + Quoted(model_dir.string()) + " cannot be resolved (" +
                    ec.message() + ")");
  }
  const fs::path file = fs::canonical(folder / normal, ec);
  if (ec) {
    return NotFound(where + ": file " + Quoted((folder / normal).string()) + " is missing (" +
                    ec.message() + ")");
  }
  if (!IsWithin(file, folder)) {
    return InvalidArgument(where + " resolves through a link to " + Quoted(file.string()) +
                           ", outside the model's folder " + Quoted(folder.string()));
  }
  return file;
}

}  // namespace

Result<WeightRef> WeightStore::AddExternal(DataType dtype, std::vector<int64_t> dims,
                                           const fs::path& model_dir, const std::string& location,
                                           int64_t offset, int64_t length) {
  NXRT_ASSIGN_OR_RETURN(fs::path file, ResolveInsideFolder(model_dir, location));
  auto found = mapping_by_path_.find(file.string());
  if (found == mapping_by_path_.end()) {
    NXRT_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> mapped, MappedFile::Open(file));
    found = mapping_by_path_.emplace(file.string(), std::move(mapped)).first;
  }
  const std::span<const std::byte> whole = found->second->bytes();
  const std::string where =
      "external data " + Quoted(location) + " (" + std::to_string(whole.size()) + " bytes)";
  if (offset < 0) {
    return InvalidArgument(where + ": negative offset " + std::to_string(offset));
  }
  if (length < -1) {
    return InvalidArgument(where + ": negative length " + std::to_string(length));
  }
  const auto start = static_cast<uint64_t>(offset);
  if (start > whole.size()) {
    return InvalidArgument(where + ": offset " + std::to_string(offset) +
                           " is beyond the end of the file");
  }
  const uint64_t available = whole.size() - start;
  const uint64_t count = length == -1 ? available : static_cast<uint64_t>(length);
  if (count > available) {
    return InvalidArgument(where + ": offset " + std::to_string(offset) + " + length " +
                           std::to_string(length) + " runs past the end of the file");
  }
  auto tensor = std::make_unique<TensorData>();
  tensor->dtype = dtype;
  tensor->dims = std::move(dims);
  tensor->bytes = whole.subspan(start, count);
  tensors_.push_back(std::move(tensor));
  return WeightRef{static_cast<uint32_t>(tensors_.size() - 1)};
}

}  // namespace nxrt::graph
