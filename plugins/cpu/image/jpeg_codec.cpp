// libjpeg reports errors through a callback that must not return; the
// decoder jumps back out of it with longjmp. Only C objects live between the
// setjmp and the jump.
#include <cstddef>  // jpeglib.h uses size_t and FILE without declaring them
#include <cstdio>

#include <jpeglib.h>

#include <csetjmp>
#include <string>

#include "image/codecs.hpp"
#include "tensor.hpp"

namespace nxrt::cpu::image {
namespace {

struct JpegErrors {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JumpOut(j_common_ptr info) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

void Quiet(j_common_ptr) {}

}  // namespace

RgbImage DecodeJpeg(std::span<const uint8_t> encoded) {
  RgbImage image;
  jpeg_decompress_struct decoder{};
  JpegErrors errors{};
  decoder.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = JumpOut;
  errors.base.output_message = Quiet;
  if (setjmp(errors.jump) != 0) {
    jpeg_destroy_decompress(&decoder);
    FailInvalid(std::string("ImageDecoder: JPEG: ") + errors.message);
  }
  jpeg_create_decompress(&decoder);
  jpeg_mem_src(&decoder, encoded.data(), static_cast<unsigned long>(encoded.size()));
  jpeg_read_header(&decoder, TRUE);
  decoder.out_color_space = JCS_RGB;
  jpeg_start_decompress(&decoder);
  image.height = decoder.output_height;
  image.width = decoder.output_width;
  image.pixels.resize(static_cast<size_t>(image.height * image.width * 3));
  while (decoder.output_scanline < decoder.output_height) {
    JSAMPROW row = image.pixels.data() + static_cast<size_t>(decoder.output_scanline) *
                                             static_cast<size_t>(image.width) * 3;
    jpeg_read_scanlines(&decoder, &row, 1);
  }
  jpeg_finish_decompress(&decoder);
  jpeg_destroy_decompress(&decoder);
  return image;
}

}  // namespace nxrt::cpu::image
