// NonMaxSuppression: per batch and class, greedily keep the highest-scoring
// boxes above score_threshold whose IoU with every box already kept is at
// most iou_threshold, up to max_output_boxes_per_class. Boxes are corners
// (either order) or centre-size, as center_point_box says.
#include <algorithm>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

struct Box {
  float y1, x1, y2, x2;
};

class NonMaxSuppressionKernel : public CpuKernel {
 public:
  explicit NonMaxSuppressionKernel(bool center_point)
      : CpuKernel(false), center_point_(center_point) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& boxes = inputs[0].tensor;
    const nxrt_tensor& scores = inputs[1].tensor;
    if (boxes.rank != 3 || scores.rank != 3 || boxes.dims[2] != 4 ||
        scores.dims[0] != boxes.dims[0] || scores.dims[2] != boxes.dims[1]) {
      FailInvalid("NonMaxSuppression: boxes must be [B, N, 4] and scores [B, C, N]; got " +
                  DimsText(DimsSpan(boxes)) + " and " + DimsText(DimsSpan(scores)));
    }
    const int64_t batches = boxes.dims[0];
    const int64_t count = boxes.dims[1];
    const int64_t classes = scores.dims[1];
    const int64_t max_boxes = IsPresent(inputs, 2) && ElementCount(inputs[2].tensor) > 0
                                  ? ReadInt64s(inputs[2].tensor)[0]
                                  : 0;
    const float iou_threshold = IsPresent(inputs, 3) && ElementCount(inputs[3].tensor) > 0
                                    ? *DataAs<float>(inputs[3].tensor)
                                    : 0.0f;
    const bool has_score_threshold = IsPresent(inputs, 4) && ElementCount(inputs[4].tensor) > 0;
    const float score_threshold = has_score_threshold ? *DataAs<float>(inputs[4].tensor) : 0.0f;
    const float* box_data = DataAs<float>(boxes);
    const float* score_data = DataAs<float>(scores);
    std::vector<int64_t> selected;  // triples
    for (int64_t b = 0; b < batches; ++b) {
      std::vector<Box> corners(count);
      for (int64_t i = 0; i < count; ++i) corners[i] = Corners(box_data + (b * count + i) * 4);
      for (int64_t c = 0; c < classes; ++c) {
        const float* s = score_data + (b * classes + c) * count;
        std::vector<int64_t> order;
        for (int64_t i = 0; i < count; ++i) {
          if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(),
                         [s](int64_t a, int64_t z) { return s[a] > s[z]; });
        std::vector<int64_t> kept;
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_boxes) break;
          const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
            return IoU(corners[i], corners[k]) > iou_threshold;
          });
          if (suppressed) continue;
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
    const int64_t rows = static_cast<int64_t>(selected.size() / 3);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_INT64, Dims{rows, 3});
    std::copy(selected.begin(), selected.end(), MutableDataAs<int64_t>(out));
  }

 private:
  Box Corners(const float* b) const {
    if (center_point_) {
      return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
    }
    return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
  }

  static float IoU(const Box& a, const Box& b) {
    const float h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
    const float w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
    if (h <= 0 || w <= 0) return 0.0f;
    const float inter = h * w;
    const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
    const float area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
    const float uni = area_a + area_b - inter;
    return uni > 0 ? inter / uni : 0.0f;
  }

  bool center_point_;
};

}  // namespace

void RegisterNonMaxSuppressionOps(OpRegistry& r) {
  r.Add("NonMaxSuppression", {10, ClaimInputDtype(TypeList<float>{}),
                              [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
                                return std::make_unique<NonMaxSuppressionKernel>(
                                    node.AttrInt("center_point_box", 0) != 0);
                              }});
}

}  // namespace nxrt::cpu
