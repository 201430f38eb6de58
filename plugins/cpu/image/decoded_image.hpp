// Decoding of the encoded images ImageDecoder takes (JPEG, PNG, BMP, PNM,
// WebP, JPEG 2000 and TIFF), each through the library that defines or best
// keeps its format, into 8-bit RGB. The libraries are those the ONNX
// reference decodes with, so lossy formats give the same pixels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nxrt::cpu::image {

// height x width pixels of 3 bytes (R, G, B), rows from the top.
struct RgbImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;
};

// Throws the EP's invalid-argument error, naming the format and what its
// decoder said, for bytes that are no image it can decode.
RgbImage DecodeImage(std::span<const uint8_t> encoded);

}  // namespace nxrt::cpu::image
