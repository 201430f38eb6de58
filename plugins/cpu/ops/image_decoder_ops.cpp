// ImageDecoder (opset 20): a 1-D uint8 tensor holding an encoded image in,
// its pixels out as [height, width, channels] uint8 in RGB, BGR or
// Grayscale. Decoding is in image/; grey is the ITU-R 601-2 luma of the RGB
// pixels, rounded as the ONNX reference's Pillow rounds it.
#include <string>

#include "cpu_kernel.hpp"
#include "image/decoded_image.hpp"

namespace nxrt::cpu {
namespace {

enum class PixelFormat { kRgb, kBgr, kGrayscale };

std::optional<PixelFormat> ParsePixelFormat(const std::string& name) {
  if (name == "RGB") return PixelFormat::kRgb;
  if (name == "BGR") return PixelFormat::kBgr;
  if (name == "Grayscale") return PixelFormat::kGrayscale;
  return std::nullopt;
}

uint8_t Luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
}

class ImageDecoderKernel : public CpuKernel {
 public:
  explicit ImageDecoderKernel(PixelFormat format)
      : CpuKernel(false),  // the output's shape is the image's
        format_(format) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& encoded = inputs[0].tensor;
    if (encoded.rank != 1) {
      FailInvalid("ImageDecoder: encoded_stream must be 1-D; got " + DimsText(DimsSpan(encoded)));
    }
    const image::RgbImage decoded =
        image::DecodeImage({DataAs<uint8_t>(encoded), static_cast<size_t>(ElementCount(encoded))});
    const int64_t channels = format_ == PixelFormat::kGrayscale ? 1 : 3;
    const Dims dims{decoded.height, decoded.width, channels};
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_UINT8, dims);
    uint8_t* y = MutableDataAs<uint8_t>(out);
    const int64_t pixels = decoded.height * decoded.width;
    const uint8_t* rgb = decoded.pixels.data();
    for (int64_t i = 0; i < pixels; ++i, rgb += 3) {
      switch (format_) {
        case PixelFormat::kRgb:
          std::copy_n(rgb, 3, y + i * 3);
          break;
        case PixelFormat::kBgr:
          y[i * 3] = rgb[2];
          y[i * 3 + 1] = rgb[1];
          y[i * 3 + 2] = rgb[0];
          break;
        case PixelFormat::kGrayscale:
          y[i] = Luma(rgb);
          break;
      }
    }
  }

 private:
  PixelFormat format_;
};

sdk::ClaimResult ClaimImageDecoder(const sdk::Node& node, int64_t,
                                   std::span<const nxrt_value_info> inputs) {
  if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR ||
      inputs[0].dtype != NXRT_DTYPE_UINT8) {
    return sdk::ClaimResult::Declined("ImageDecoder: encoded_stream must be a uint8 tensor");
  }
  const std::string format = node.AttrString("pixel_format", "RGB");
  if (!ParsePixelFormat(format)) {
    return sdk::ClaimResult::Declined("ImageDecoder: pixel_format '" + format +
                                      "' is none of RGB, BGR and Grayscale");
  }
  return sdk::ClaimResult::Claimed();
}

}  // namespace

void RegisterImageDecoderOps(OpRegistry& r) {
  r.Add("ImageDecoder",
        {20, ClaimImageDecoder, [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<ImageDecoderKernel>(
               *ParsePixelFormat(node.AttrString("pixel_format", "RGB")));
         }});
}

}  // namespace nxrt::cpu
