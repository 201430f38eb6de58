#include <stb_image.h>

#include <cctype>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "image/codecs.hpp"
#include "tensor.hpp"

namespace nxrt::cpu::image {
namespace {

// stb_image reads past the end of a truncated BMP or PNM as zeros, so these
// check first that the file holds the whole raster its header describes.
// (PNG's chunks carry checksums, which stb_image verifies.)

[[noreturn]] void FailTruncated(const char* format, size_t have, size_t need) {
  FailInvalid(std::string("ImageDecoder: ") + format + ": the file is truncated: it has " +
              std::to_string(have) + " bytes, its header describes " + std::to_string(need));
}

uint32_t LittleEndian(std::span<const uint8_t> bytes, size_t at, size_t size) {
  uint32_t value = 0;
  for (size_t i = size; i-- > 0;) value = value << 8 | bytes[at + i];
  return value;
}

// BITMAPFILEHEADER then BITMAPINFOHEADER; uncompressed rasters only (an RLE
// one has no fixed size).
void RequireWholeBmp(std::span<const uint8_t> bytes) {
  constexpr size_t kHeaders = 34;
  if (bytes.size() < kHeaders) FailTruncated("BMP", bytes.size(), kHeaders);
  const uint64_t offset = LittleEndian(bytes, 10, 4);
  const auto width = static_cast<int32_t>(LittleEndian(bytes, 18, 4));
  const auto height = static_cast<int32_t>(LittleEndian(bytes, 22, 4));
  const uint64_t bits = LittleEndian(bytes, 28, 2);
  const uint32_t compression = LittleEndian(bytes, 30, 4);
  if (compression != 0 || width <= 0) return;
  const uint64_t row = (static_cast<uint64_t>(width) * bits + 31) / 32 * 4;
  const uint64_t need = offset + row * static_cast<uint64_t>(std::abs(int64_t{height}));
  if (bytes.size() < need) FailTruncated("BMP", bytes.size(), need);
}

// "P5" or "P6", then width, height and maxval as decimal text separated by
// whitespace and '#' comments, one whitespace byte, then the raster.
void RequireWholePnm(std::span<const uint8_t> bytes) {
  size_t at = 2;
  uint64_t fields[3] = {0, 0, 0};
  for (uint64_t& field : fields) {
    while (at < bytes.size() && (std::isspace(bytes[at]) || bytes[at] == '#')) {
      if (bytes[at] == '#') {
        while (at < bytes.size() && bytes[at] != '\n') ++at;
      } else {
        ++at;
      }
    }
    if (at >= bytes.size() || !std::isdigit(bytes[at])) return;  // stb_image reports it
    while (at < bytes.size() && std::isdigit(bytes[at]) && field < (uint64_t{1} << 32)) {
      field = field * 10 + (bytes[at++] - '0');
    }
  }
  const uint64_t channels = bytes[1] == '6' ? 3 : 1;
  const uint64_t sample = fields[2] > 255 ? 2 : 1;
  const uint64_t need = at + 1 + fields[0] * fields[1] * channels * sample;
  if (bytes.size() < need) FailTruncated("PNM", bytes.size(), need);
}

}  // namespace

RgbImage DecodePngBmpPnm(std::span<const uint8_t> encoded) {
  if (encoded[0] == 'B') RequireWholeBmp(encoded);
  if (encoded[0] == 'P') RequireWholePnm(encoded);
  if (encoded.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    FailInvalid("ImageDecoder: the encoded image is larger than its decoder reads (2 GiB)");
  }
  int width = 0;
  int height = 0;
  int channels = 0;
  const std::unique_ptr<uint8_t, void (*)(void*)> rgb(
      stbi_load_from_memory(encoded.data(), static_cast<int>(encoded.size()), &width, &height,
                            &channels, 3),
      stbi_image_free);
  if (!rgb) FailInvalid(std::string("ImageDecoder: ") + stbi_failure_reason());
  RgbImage image{height, width, {}};
  image.pixels.assign(rgb.get(), rgb.get() + static_cast<size_t>(width) * height * 3);
  return image;
}

}  // namespace nxrt::cpu::image
