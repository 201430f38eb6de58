// ImageDecoder on images made here (binary PNM and uncompressed BMP):
// each pixel format gives the pixels in its order, grey being their
// ITU-R 601-2 luma; bytes that are no image, or a damaged one, fail the run
// with the format and the decoder's reason. The ONNX node cases of every
// format run in the conformance suite.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

std::vector<uint8_t> Bytes(const std::string& text) {
  return {text.begin(), text.end()};
}

// A binary PNM of `width` x `height` RGB pixels.
std::vector<uint8_t> Pnm(int width, int height, const std::vector<uint8_t>& rgb) {
  std::vector<uint8_t> file =
      Bytes("P6\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n");
  file.insert(file.end(), rgb.begin(), rgb.end());
  return file;
}

void PutLittleEndian(std::vector<uint8_t>& bytes, size_t at, uint32_t value, size_t size) {
  for (size_t i = 0; i < size; ++i) bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

// An uncompressed 24-bit BMP of one row of `width` RGB pixels (stored as
// BGR, the row padded to 4 bytes).
std::vector<uint8_t> Bmp(uint32_t width, const std::vector<uint8_t>& rgb) {
  const uint32_t row = (width * 3 + 3) / 4 * 4;
  std::vector<uint8_t> file(54 + row, 0);
  file[0] = 'B';
  file[1] = 'M';
  PutLittleEndian(file, 2, static_cast<uint32_t>(file.size()), 4);
  PutLittleEndian(file, 10, 54, 4);     // pixel data offset
  PutLittleEndian(file, 14, 40, 4);     // BITMAPINFOHEADER
  PutLittleEndian(file, 18, width, 4);  // width
  PutLittleEndian(file, 22, 1, 4);      // height
  PutLittleEndian(file, 26, 1, 2);      // planes
  PutLittleEndian(file, 28, 24, 2);     // bits per pixel
  for (uint32_t x = 0; x < width; ++x) {
    for (int c = 0; c < 3; ++c) file[54 + x * 3 + c] = rgb[x * 3 + 2 - c];
  }
  return file;
}

nxrt::Result<std::vector<nxrt::Tensor>> Decode(const std::vector<uint8_t>& encoded,
                                               const std::string& pixel_format) {
  return RunTensorNode(
      {.op = "ImageDecoder",
       .opset = 20,
       .inputs = {{"encoded", Values<uint8_t>({static_cast<int64_t>(encoded.size())}, encoded)}},
       .outputs = {DataType::kUint8},
       .attributes = {StringAttribute("pixel_format", pixel_format)}});
}

std::vector<uint8_t> Pixels(const nxrt::Tensor& t) {
  const auto values = t.values<uint8_t>();
  return {values.begin(), values.end()};
}

const std::vector<uint8_t> kRgb{200, 10, 30, 0, 255, 64, 17, 99, 250};  // 3 pixels

TEST(CpuEpImageDecoder, EachPixelFormatOrdersThePixels) {
  const std::vector<uint8_t> pnm = Pnm(3, 1, kRgb);
  auto rgb = Decode(pnm, "RGB");
  ASSERT_TRUE(rgb.ok()) << rgb.status().ToString();
  EXPECT_EQ((*rgb)[0].shape(), (std::vector<int64_t>{1, 3, 3}));
  EXPECT_EQ(Pixels((*rgb)[0]), kRgb);

  auto bgr = Decode(pnm, "BGR");
  ASSERT_TRUE(bgr.ok()) << bgr.status().ToString();
  EXPECT_EQ(Pixels((*bgr)[0]), (std::vector<uint8_t>{30, 10, 200, 64, 255, 0, 250, 99, 17}));

  auto grey = Decode(pnm, "Grayscale");
  ASSERT_TRUE(grey.ok()) << grey.status().ToString();
  EXPECT_EQ((*grey)[0].shape(), (std::vector<int64_t>{1, 3, 1}));
  std::vector<uint8_t> luma;
  for (size_t i = 0; i < kRgb.size(); i += 3) {
    luma.push_back(static_cast<uint8_t>(
        std::lround(0.299 * kRgb[i] + 0.587 * kRgb[i + 1] + 0.114 * kRgb[i + 2])));
  }
  EXPECT_EQ(Pixels((*grey)[0]), luma);
}

TEST(CpuEpImageDecoder, ABmpsBgrPixelsComeOutInTheAskedOrder) {
  auto rgb = Decode(Bmp(3, kRgb), "RGB");
  ASSERT_TRUE(rgb.ok()) << rgb.status().ToString();
  EXPECT_EQ((*rgb)[0].shape(), (std::vector<int64_t>{1, 3, 3}));
  EXPECT_EQ(Pixels((*rgb)[0]), kRgb);
}

TEST(CpuEpImageDecoder, BadBytesFailWithTheFormatAndTheReason) {
  auto unknown = Decode(Bytes("not an image at all"), "RGB");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("none of JPEG, PNG"), std::string::npos)
      << unknown.status().ToString();

  std::vector<uint8_t> truncated = Pnm(3, 1, kRgb);
  truncated.resize(truncated.size() - 4);
  auto short_pnm = Decode(truncated, "RGB");
  ASSERT_FALSE(short_pnm.ok());
  EXPECT_NE(short_pnm.status().message().find("ImageDecoder: "), std::string::npos)
      << short_pnm.status().ToString();

  std::vector<uint8_t> short_bmp = Bmp(3, kRgb);
  short_bmp.resize(short_bmp.size() - 2);
  auto bmp = Decode(short_bmp, "RGB");
  ASSERT_FALSE(bmp.ok());
  EXPECT_NE(bmp.status().message().find("ImageDecoder: BMP: the file is truncated"),
            std::string::npos)
      << bmp.status().ToString();

  // A JPEG start-of-image marker followed by no valid segment.
  auto jpeg = Decode({0xFF, 0xD8, 0xFF, 0x00, 0x01, 0x02, 0x03}, "RGB");
  ASSERT_FALSE(jpeg.ok());
  EXPECT_NE(jpeg.status().message().find("ImageDecoder: JPEG: "), std::string::npos)
      << jpeg.status().ToString();
}

TEST(CpuEpImageDecoder, DeclinesAnUnknownPixelFormat) {
  auto result = Decode(Pnm(3, 1, kRgb), "CMYK");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("pixel_format 'CMYK'"), std::string::npos)
      << result.status().ToString();
}

}  // namespace
}  // namespace nxrt_test
