// A one-line progress bar on stderr while test cases run, drawn only when
// stderr is a terminal (so logs and CI output stay clean). Result lines go
// to stdout; Clear() wipes the bar before one is printed so the two never
// share a line on screen.
#pragma once

#include <cstddef>
#include <string>

namespace nxrt::cli {

class ProgressBar {
 public:
  explicit ProgressBar(size_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Show(size_t done, const std::string& current);
  void Clear();

 private:
  size_t total_;
  bool enabled_;
};

}  // namespace nxrt::cli
