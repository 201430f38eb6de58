#include "weights/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "nxrt/graph/quoted_name.hpp"

namespace nxrt::graph {

namespace {

// Closes the descriptor on every path out of Open; the mapping outlives it.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::Open(const std::filesystem::path& file) {
  FdCloser fd{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) {
    return NotFound(Quoted(file.string()) + ": cannot open (" + std::strerror(errno) + ")");
  }
  struct stat info {};
  if (::fstat(fd.fd, &info) != 0) {
    return Unavailable(Quoted(file.string()) + ": cannot stat (" + std::strerror(errno) + ")");
  }
  if (!S_ISREG(info.st_mode)) {
    return InvalidArgument(Quoted(file.string()) + ": not a regular file");
  }
  const auto size = static_cast<size_t>(info.st_size);
  // mmap refuses a zero length; an empty file maps to an empty span.
  if (size == 0) return std::shared_ptr<MappedFile>(new MappedFile(nullptr, 0));
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (data == MAP_FAILED) {
    return Unavailable(Quoted(file.string()) + ": cannot map (" + std::strerror(errno) + ")");
  }
  return std::shared_ptr<MappedFile>(new MappedFile(static_cast<const std::byte*>(data), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace nxrt::graph
