#include "test_cases/progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

namespace nxrt::cli {

ProgressBar::ProgressBar(size_t total) : total_(total), enabled_(isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  Clear();
}

void ProgressBar::Show(size_t done, const std::string& current) {
  if (!enabled_ || total_ == 0) return;
  constexpr size_t kWidth = 30;
  const size_t filled = done * kWidth / total_;
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r\033[K[%s] %zu/%zu %.40s", bar.c_str(), done, total_, current.c_str());
  std::fflush(stderr);
}

void ProgressBar::Clear() {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace nxrt::cli
