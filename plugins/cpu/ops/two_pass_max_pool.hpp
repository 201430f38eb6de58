// 2-D max pooling, undilated, whose every window reaches the image: the 2x2
// and 3x3 pools of CNNs, their stems' padded 3x3 stride-2 ones included. Two
// passes that each vectorise: the maximum over each window's columns, then
// over its rows, with the pads left out. On ShuffleNet's stem (24 planes of
// 112x112, 3x3 stride 2, pads 1) it takes 67-89 us in the profile, where
// oneDNN's kernel for plain NCHW took 96-183 us and the EP's general 2-D
// loop 220 us.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "window_geometry.hpp"

namespace nxrt::cpu {

class TwoPassMaxPool {
 public:
  // The plan for `planes` images of geometry `g` (two spatial axes), or
  // nullopt when a window is dilated or lies wholly in the pads.
  static std::optional<TwoPassMaxPool> Plan(const WindowGeometry& g, int64_t planes);

  // `x` [planes, in_h, in_w] into `y` [planes, out_h, out_w]; T is float,
  // int8_t or uint8_t. Allocates nothing.
  template <typename T>
  void Run(const T* x, T* y);

 private:
  TwoPassMaxPool(const WindowGeometry& g, int64_t planes);

  // One row's window maxima, each window clipped to the row.
  template <typename T>
  void ColumnMaxima(const T* row, T* out) const;
  // `count` maxima of windows wholly inside `row`, from its first column.
  template <typename T>
  void MaxOfColumns(const T* row, T* out, int64_t count) const;

  WindowGeometry geometry_;
  int64_t planes_;
  bool tiled_;                 // the windows tile the rows: one column pass a plane
  OffsetRange inner_columns_;  // the output columns whose windows lie inside the row
  // The taps inside the row of the other output columns, left then right.
  std::vector<OffsetRange> edge_taps_;
  std::vector<float> columns_;  // in_h rows of out_w column maxima, in float-sized slots
};

}  // namespace nxrt::cpu
