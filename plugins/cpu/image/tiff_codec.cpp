// libtiff reads through client callbacks that serve the encoded bytes; its
// per-handle error callback keeps the last message for the error raised.
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "image/codecs.hpp"
#include "tensor.hpp"

namespace nxrt::cpu::image {
namespace {

struct Source {
  std::span<const uint8_t> bytes;
  toff_t offset = 0;
};

tmsize_t Read(thandle_t handle, void* buffer, tmsize_t size) {
  auto* source = static_cast<Source*>(handle);
  const auto available = static_cast<tmsize_t>(source->bytes.size() - source->offset);
  const tmsize_t count = std::clamp<tmsize_t>(size, 0, available);
  std::memcpy(buffer, source->bytes.data() + source->offset, static_cast<size_t>(count));
  source->offset += static_cast<toff_t>(count);
  return count;
}

tmsize_t Write(thandle_t, void*, tmsize_t) {
  return 0;
}

toff_t Seek(thandle_t handle, toff_t offset, int whence) {
  auto* source = static_cast<Source*>(handle);
  const toff_t base = whence == SEEK_CUR   ? source->offset
                      : whence == SEEK_END ? source->bytes.size()
                                           : 0;
  source->offset = std::min<toff_t>(base + offset, source->bytes.size());
  return source->offset;
}

int Close(thandle_t) {
  return 0;
}

toff_t Size(thandle_t handle) {
  return static_cast<Source*>(handle)->bytes.size();
}

int KeepMessage(TIFF*, void* user, const char*, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof(text), format, args);
  *static_cast<std::string*>(user) = text;
  return 1;
}

int Quiet(TIFF*, void*, const char*, const char*, va_list) {
  return 1;
}

}  // namespace

RgbImage DecodeTiff(std::span<const uint8_t> encoded) {
  Source source{encoded};
  std::string message = "the image could not be decoded";
  const std::unique_ptr<TIFFOpenOptions, void (*)(TIFFOpenOptions*)> options(TIFFOpenOptionsAlloc(),
                                                                             TIFFOpenOptionsFree);
  TIFFOpenOptionsSetErrorHandlerExtR(options.get(), KeepMessage, &message);
  TIFFOpenOptionsSetWarningHandlerExtR(options.get(), Quiet, nullptr);
  const std::unique_ptr<TIFF, void (*)(TIFF*)> tiff(
      TIFFClientOpenExt("encoded", "rm", &source, Read, Write, Seek, Close, Size, nullptr, nullptr,
                        options.get()),
      TIFFClose);
  if (!tiff) FailInvalid("ImageDecoder: TIFF: " + message);
  uint32_t width = 0;
  uint32_t height = 0;
  TIFFGetField(tiff.get(), TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField(tiff.get(), TIFFTAG_IMAGELENGTH, &height);
  std::vector<uint32_t> raster(static_cast<size_t>(width) * height);
  if (!TIFFReadRGBAImageOriented(tiff.get(), width, height, raster.data(), ORIENTATION_TOPLEFT,
                                 0)) {
    FailInvalid("ImageDecoder: TIFF: " + message);
  }
  RgbImage image{height, width, {}};
  image.pixels.resize(raster.size() * 3);
  for (size_t i = 0; i < raster.size(); ++i) {
    image.pixels[i * 3] = static_cast<uint8_t>(TIFFGetR(raster[i]));
    image.pixels[i * 3 + 1] = static_cast<uint8_t>(TIFFGetG(raster[i]));
    image.pixels[i * 3 + 2] = static_cast<uint8_t>(TIFFGetB(raster[i]));
  }
  return image;
}

}  // namespace nxrt::cpu::image
