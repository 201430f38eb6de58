// OpenJPEG reads through a stream whose callbacks here serve the encoded
// bytes; its error callback keeps the last message for the error raised.
#include <openjpeg.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "image/codecs.hpp"
#include "tensor.hpp"

namespace nxrt::cpu::image {
namespace {

struct Source {
  std::span<const uint8_t> bytes;
  size_t offset = 0;
};

OPJ_SIZE_T Read(void* buffer, OPJ_SIZE_T size, void* user) {
  auto* source = static_cast<Source*>(user);
  const size_t count = std::min(size, source->bytes.size() - source->offset);
  if (count == 0) return static_cast<OPJ_SIZE_T>(-1);
  std::memcpy(buffer, source->bytes.data() + source->offset, count);
  source->offset += count;
  return count;
}

OPJ_OFF_T Skip(OPJ_OFF_T count, void* user) {
  auto* source = static_cast<Source*>(user);
  const auto skipped = static_cast<size_t>(
      std::clamp<OPJ_OFF_T>(count, -static_cast<OPJ_OFF_T>(source->offset),
                            static_cast<OPJ_OFF_T>(source->bytes.size() - source->offset)));
  source->offset += skipped;
  return static_cast<OPJ_OFF_T>(skipped);
}

OPJ_BOOL Seek(OPJ_OFF_T offset, void* user) {
  auto* source = static_cast<Source*>(user);
  if (offset < 0 || static_cast<size_t>(offset) > source->bytes.size()) return OPJ_FALSE;
  source->offset = static_cast<size_t>(offset);
  return OPJ_TRUE;
}

void KeepMessage(const char* message, void* user) {
  std::string& kept = *static_cast<std::string*>(user);
  kept = message;
  while (!kept.empty() && kept.back() == '\n') kept.pop_back();
}

void Quiet(const char*, void*) {}

}  // namespace

RgbImage DecodeJpeg2000(std::span<const uint8_t> encoded, bool codestream) {
  Source source{encoded};
  std::string message = "the image could not be decoded";
  const std::unique_ptr<opj_stream_t, void (*)(opj_stream_t*)> stream(
      opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE), opj_stream_destroy);
  const std::unique_ptr<opj_codec_t, void (*)(opj_codec_t*)> codec(
      opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2), opj_destroy_codec);
  if (!stream || !codec) FailInvalid("ImageDecoder: JPEG 2000: OpenJPEG could not start");
  opj_stream_set_read_function(stream.get(), Read);
  opj_stream_set_skip_function(stream.get(), Skip);
  opj_stream_set_seek_function(stream.get(), Seek);
  opj_stream_set_user_data(stream.get(), &source, nullptr);
  opj_stream_set_user_data_length(stream.get(), encoded.size());
  opj_set_error_handler(codec.get(), KeepMessage, &message);
  opj_set_warning_handler(codec.get(), Quiet, nullptr);
  opj_set_info_handler(codec.get(), Quiet, nullptr);
  opj_dparameters_t parameters;
  opj_set_default_decoder_parameters(&parameters);
  opj_image_t* raw = nullptr;
  const bool ok = opj_setup_decoder(codec.get(), &parameters) &&
                  opj_read_header(stream.get(), codec.get(), &raw);
  const std::unique_ptr<opj_image_t, void (*)(opj_image_t*)> decoded(raw, opj_image_destroy);
  if (!ok || !opj_decode(codec.get(), stream.get(), decoded.get()) ||
      !opj_end_decompress(codec.get(), stream.get())) {
    FailInvalid("ImageDecoder: JPEG 2000: " + message);
  }
  const opj_image_t& image = *decoded;
  const uint32_t channels = image.numcomps >= 3 ? 3 : 1;
  if (image.numcomps == 0 || image.color_space == OPJ_CLRSPC_SYCC ||
      image.color_space == OPJ_CLRSPC_EYCC || image.color_space == OPJ_CLRSPC_CMYK) {
    FailUnsupported("ImageDecoder: JPEG 2000: only grey and RGB images are implemented");
  }
  const opj_image_comp_t& first = image.comps[0];
  for (uint32_t c = 0; c < channels; ++c) {
    const opj_image_comp_t& comp = image.comps[c];
    if (comp.prec != 8 || comp.sgnd != 0 || comp.w != first.w || comp.h != first.h) {
      FailUnsupported(
          "ImageDecoder: JPEG 2000: only unsigned 8-bit components of one size are implemented");
    }
  }
  RgbImage rgb{first.h, first.w, {}};
  const size_t count = static_cast<size_t>(first.w) * first.h;
  rgb.pixels.resize(count * 3);
  for (size_t i = 0; i < count; ++i) {
    for (uint32_t c = 0; c < 3; ++c) {
      rgb.pixels[i * 3 + c] = static_cast<uint8_t>(image.comps[channels == 3 ? c : 0].data[i]);
    }
  }
  return rgb;
}

}  // namespace nxrt::cpu::image
