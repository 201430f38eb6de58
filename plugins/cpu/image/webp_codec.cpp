#include <webp/decode.h>

#include <memory>

#include "image/codecs.hpp"
#include "tensor.hpp"

namespace nxrt::cpu::image {

RgbImage DecodeWebp(std::span<const uint8_t> encoded) {
  int width = 0;
  int height = 0;
  const std::unique_ptr<uint8_t, void (*)(void*)> rgb(
      WebPDecodeRGB(encoded.data(), encoded.size(), &width, &height), WebPFree);
  if (!rgb) FailInvalid("ImageDecoder: WebP: libwebp cannot decode these bytes");
  RgbImage image{height, width, {}};
  image.pixels.assign(rgb.get(), rgb.get() + static_cast<size_t>(width) * height * 3);
  return image;
}

}  // namespace nxrt::cpu::image
