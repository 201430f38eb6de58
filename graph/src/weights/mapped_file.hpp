// A whole file mapped read-only into memory. External initializer data is
// served straight from the mapping, so a multi-gigabyte model costs no copy
// and no heap; the mapping lives as long as any tensor viewing it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "nxrt/support/status.hpp"

namespace nxrt::graph {

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> Open(const std::filesystem::path& file);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const std::byte* data, size_t size) : data_(data), size_(size) {}

  const std::byte* data_;
  size_t size_;
};

}  // namespace nxrt::graph
