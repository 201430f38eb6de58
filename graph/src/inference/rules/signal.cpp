// Signal processing: STFT. Its frame count and bin count derive from the
// signal length, frame step and frame length (one-sided spectra keep
// length/2 + 1 bins). libonnx 1.12 reads the onesided default wrongly and
// assumes a rank-3 signal, so the op needs its own rule.
#include <vector>

#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

std::optional<Dim> ScalarElement(NodeContext& ctx, size_t i) {
  const Elements* e = ctx.input_elements(i);
  return e != nullptr && e->size() == 1 ? (*e)[0] : std::nullopt;
}

Status Stft(NodeContext& ctx) {
  ctx.SetOutputDtype(0, ctx.input_dtype(0));
  const Shape* signal = ctx.input_shape(0);
  if (signal == nullptr) return ctx.Unknown("the signal's rank is not known");
  // libonnx's own rule reads three dims without asking how many there are.
  if (signal->size() != 3) {
    return ctx.ModelError("the signal is " + ctx.ShapeText(*signal) +
                          "; STFT takes [batch, length, 1 or 2]");
  }
  SymbolInterner& s = ctx.symbols();
  std::optional<Dim> frame_length = ScalarElement(ctx, 3);
  if (!frame_length) {
    if (const Shape* window = ctx.input_shape(2); window != nullptr && window->size() == 1) {
      frame_length = (*window)[0];
    }
  }
  const std::optional<Dim> step = ScalarElement(ctx, 1);
  Dim frames = s.Mint("frames");
  Dim bins = s.Mint("bins");
  if (frame_length && step) {
    frames =
        s.Add(s.FloorDiv(s.AsExtent(s.Sub((*signal)[1], *frame_length)), *step), Dim::Static(1));
  }
  if (frame_length) {
    bins = ctx.Int("onesided", 1) != 0
               ? s.Add(s.FloorDiv(*frame_length, Dim::Static(2)), Dim::Static(1))
               : *frame_length;
  }
  ctx.SetOutput(0, ctx.input_dtype(0), {(*signal)[0], frames, bins, Dim::Static(2)});
  return Status::Ok();
}

}  // namespace

void AddSignalRules(RuleTable& t) {
  t.Add("", "STFT", Stft);
}

}  // namespace nxrt::graph::inference
