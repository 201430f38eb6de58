#include "common/decoder_json.hpp"

namespace nxrt::cli {

void WriteDecoderSignature(JsonWriter& json, const graph::DecoderSignature& decoder) {
  json.Key("decoder").BeginObject();
  json.Key("input_ids").String(decoder.input_ids);
  json.Key("attention_mask").String(decoder.attention_mask);
  json.Key("position_ids").String(decoder.position_ids);
  json.Key("cache_position").String(decoder.cache_position);
  json.Key("logits").String(decoder.logits);
  json.Key("kv").BeginArray();
  for (const graph::DecoderKv& kv : decoder.kv) {
    json.BeginObject().Key("past").String(kv.past).Key("present").String(kv.present);
    json.Key("past_axis").Unsigned(kv.past_axis).Key("present_axis").Unsigned(kv.present_axis);
    json.Key("traced").Bool(kv.traced).EndObject();
  }
  json.EndArray();
  json.Key("problems").BeginArray();
  for (const std::string& problem : decoder.problems) json.String(problem);
  json.EndArray();
  json.EndObject();
}

}  // namespace nxrt::cli
