#include "executor/memory_budget.hpp"

#include <cstdio>
#include <string>

namespace nxrt::executor {
namespace {

std::string Mebibytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

}  // namespace

Status MemoryBudget::Take(size_t bytes) {
  if (!Fits(bytes)) {
    return Status(StatusCode::kOutOfMemory,
                  "a value needs " + Mebibytes(bytes) + " beside the " + Mebibytes(held_) +
                      " the session holds, over its memory limit of " + Mebibytes(limit_) +
                      "; raise SessionOptions::memory_limit_bytes (nxrt --memory-limit)");
  }
  held_ += bytes;
  return Status::Ok();
}

}  // namespace nxrt::executor
