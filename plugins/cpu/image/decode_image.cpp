#include <algorithm>
#include <string_view>

#include "image/codecs.hpp"
#include "tensor.hpp"

namespace nxrt::cpu::image {
namespace {

bool StartsWith(std::span<const uint8_t> bytes, std::string_view magic, size_t at = 0) {
  return bytes.size() >= at + magic.size() &&
         std::equal(magic.begin(), magic.end(), bytes.begin() + static_cast<ptrdiff_t>(at),
                    [](char m, uint8_t b) { return static_cast<uint8_t>(m) == b; });
}

}  // namespace

RgbImage DecodeImage(std::span<const uint8_t> encoded) {
  using namespace std::string_view_literals;
  if (StartsWith(encoded, "\xFF\xD8\xFF"sv)) return DecodeJpeg(encoded);
  if (StartsWith(encoded, "\x89PNG"sv) || StartsWith(encoded, "BM"sv) ||
      StartsWith(encoded, "P5"sv) || StartsWith(encoded, "P6"sv)) {
    return DecodePngBmpPnm(encoded);
  }
  if (StartsWith(encoded, "RIFF"sv) && StartsWith(encoded, "WEBP"sv, 8)) return DecodeWebp(encoded);
  if (StartsWith(encoded, "\x00\x00\x00\x0CjP  "sv)) return DecodeJpeg2000(encoded, false);
  if (StartsWith(encoded, "\xFF\x4F\xFF\x51"sv)) return DecodeJpeg2000(encoded, true);
  if (StartsWith(encoded, "II*\x00"sv) || StartsWith(encoded, "MM\x00*"sv)) {
    return DecodeTiff(encoded);
  }
  FailInvalid(
      "ImageDecoder: the encoded bytes are none of JPEG, PNG, BMP, binary PNM, WebP, "
      "JPEG 2000 or TIFF; pass a whole encoded file");
}

}  // namespace nxrt::cpu::image
