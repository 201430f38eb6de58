// One decoder per image format, each on its library; DecodeImage picks one
// by the leading bytes. Each throws the EP's invalid-argument error with the
// library's message.
#pragma once

#include "image/decoded_image.hpp"

namespace nxrt::cpu::image {

RgbImage DecodeJpeg(std::span<const uint8_t> encoded);                       // libjpeg-turbo
RgbImage DecodeWebp(std::span<const uint8_t> encoded);                       // libwebp
RgbImage DecodeJpeg2000(std::span<const uint8_t> encoded, bool codestream);  // OpenJPEG
RgbImage DecodeTiff(std::span<const uint8_t> encoded);                       // libtiff
RgbImage DecodePngBmpPnm(std::span<const uint8_t> encoded);                  // stb_image

}  // namespace nxrt::cpu::image
