// `nxrt inspect`: what a model declares and what nxrt made of it: the
// model's producer, version and metadata_props, inputs and outputs with their
// symbolic dims, which provider runs each node and why
// the providers before it declined, and the capture plan: the capture-
// eligible segments, the eager seams between them, and for each ineligible
// node the disqualifying symbol and its lineage path; for a decoder, the
// roles its inputs and outputs take (nxrt/graph/decoder_signature.hpp).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands/command.hpp"
#include "common/decoder_json.hpp"
#include "common/environment_setup.hpp"
#include "common/free_dimensions.hpp"
#include "common/json_writer.hpp"
#include "common/model_session.hpp"
#include "common/provider_list.hpp"
#include "common/tensor_summary.hpp"
#include "nxrt/graph/dtype.hpp"
#include "nxrt/graph/quoted_name.hpp"

namespace nxrt::cli {
namespace {

struct InspectFlags {
  std::string model;
  ProviderFlags providers;
  std::vector<std::string> free_dims;
  bool json = false;
  bool no_rewrites = false;
  EnvironmentFlags environment;
};

// The node's name, or "#index" (as errors name it) for an unnamed node;
// placements are indexed by node.
std::string NodeName(const std::vector<NodePlacement>& placements, size_t index) {
  const std::string& name = placements[index].node;
  return name.empty() ? "#" + std::to_string(index) : name;
}

// Maximal runs of capture-eligible nodes in execution order, as node names.
std::vector<std::vector<std::string>> CaptureSegments(
    const std::vector<NodePlacement>& placements) {
  std::vector<std::vector<std::string>> segments;
  bool in_segment = false;
  for (size_t i = 0; i < placements.size(); ++i) {
    const NodePlacement& placement = placements[i];
    if (!placement.capture_eligible) {
      in_segment = false;
      continue;
    }
    if (!in_segment) segments.emplace_back();
    segments.back().push_back(NodeName(placements, i));
    in_segment = true;
  }
  return segments;
}

std::string DescribeValue(const ValueDescription& value) {
  return value.name + ": " + std::string(graph::DataTypeName(value.dtype)) + " " +
         (value.rank_known ? ShapeText(value.shape) : std::string("(rank unknown)"));
}

// The metadata fields the model sets, one line each, text escaped so that a
// model cannot break the listing or the terminal.
void PrintMetadata(const ModelMetadata& metadata) {
  const auto field = [](const char* label, const std::string& text) {
    if (!text.empty()) std::printf("%s: %s\n", label, graph::Printable(text).c_str());
  };
  std::string producer = metadata.producer_name;
  if (!metadata.producer_version.empty()) {
    producer += (producer.empty() ? "" : " ") + metadata.producer_version;
  }
  field("producer", producer);
  field("domain", metadata.domain);
  if (metadata.model_version != 0)
    std::printf("model version: %lld\n", static_cast<long long>(metadata.model_version));
  field("description", metadata.description);
  field("graph description", metadata.graph_description);
  if (metadata.custom.empty()) return;
  std::printf("metadata:\n");
  for (const auto& [key, value] : metadata.custom) {
    std::printf("  %s: %s\n", graph::Printable(key).c_str(), graph::Printable(value).c_str());
  }
}

void PrintText(const InspectFlags& flags, const Session& session) {
  std::printf("model: %s\n", flags.model.c_str());
  PrintMetadata(session.metadata());
  std::printf("inputs:\n");
  for (const ValueDescription& input : session.inputs()) {
    std::printf("  %s\n", DescribeValue(input).c_str());
  }
  std::printf("outputs:\n");
  for (const ValueDescription& output : session.outputs()) {
    std::printf("  %s\n", DescribeValue(output).c_str());
  }
  const graph::DecoderSignature& decoder = session.decoder_signature();
  if (!decoder.kv.empty()) {
    std::printf("decoder: %s\n", graph::FormatDecoderRoles(decoder).c_str());
    for (const std::string& problem : decoder.problems) {
      std::printf("  generate cannot drive it: %s\n", problem.c_str());
    }
  }
  if (!session.overridable_initializers().empty()) {
    std::printf("overridable initializers (a run may feed them; otherwise the model's data):\n");
    for (const ValueDescription& initializer : session.overridable_initializers()) {
      std::printf("  %s\n", DescribeValue(initializer).c_str());
    }
  }
  if (!session.graph_rewrites().empty()) {
    std::printf("graph rewrites:\n");
    for (const std::string& line : session.graph_rewrites()) std::printf("  %s\n", line.c_str());
  }
  const std::vector<NodePlacement>& placements = session.placements();
  std::printf("partition (%zu nodes):\n", placements.size());
  for (size_t i = 0; i < placements.size(); ++i) {
    const NodePlacement& placement = placements[i];
    const std::string op =
        placement.domain.empty() ? placement.op_type : placement.domain + "::" + placement.op_type;
    const std::string fused =
        placement.fused_into.empty() ? "" : ", fused into '" + placement.fused_into + "'";
    std::printf("  node '%s' (%s) -> %s%s%s\n", NodeName(placements, i).c_str(), op.c_str(),
                placement.provider.c_str(), fused.c_str(),
                placement.capture_eligible ? "" : " [eager]");
    for (const ClaimDecline& decline : placement.declines) {
      std::printf("    declined by %s: %s\n", decline.provider.c_str(), decline.reason.c_str());
    }
  }
  std::printf("capture plan:\n");
  for (const std::string& line : graph::FormatCaptureReport(session.capture_report())) {
    std::printf("  %s\n", line.c_str());
  }
  const auto segments = CaptureSegments(placements);
  std::printf("  %zu capture segment%s\n", segments.size(), segments.size() == 1 ? "" : "s");
  for (size_t i = 0; i < segments.size(); ++i) {
    std::printf("    segment %zu: %zu node%s, '%s' .. '%s'\n", i, segments[i].size(),
                segments[i].size() == 1 ? "" : "s", segments[i].front().c_str(),
                segments[i].back().c_str());
  }
  std::string seams;
  for (size_t i = 0; i < placements.size(); ++i) {
    if (!placements[i].capture_eligible) {
      seams += (seams.empty() ? "'" : ", '") + NodeName(placements, i) + "'";
    }
  }
  std::printf("  eager seams: %s\n", seams.empty() ? "none" : seams.c_str());
}

void WriteValues(JsonWriter& json, const std::vector<ValueDescription>& values) {
  json.BeginArray();
  for (const ValueDescription& value : values) {
    json.BeginObject();
    json.Key("name").String(value.name);
    json.Key("dtype").String(graph::DataTypeName(value.dtype));
    json.Key("shape");
    if (value.rank_known) {
      json.BeginArray();
      for (const std::string& dim : value.shape) json.String(dim);
      json.EndArray();
    } else {
      json.Null();
    }
    json.EndObject();
  }
  json.EndArray();
}

void WriteStrings(JsonWriter& json, const std::vector<std::string>& strings) {
  json.BeginArray();
  for (const std::string& s : strings) json.String(s);
  json.EndArray();
}

void WriteMetadata(JsonWriter& json, const ModelMetadata& metadata) {
  json.BeginObject();
  json.Key("producer_name").String(metadata.producer_name);
  json.Key("producer_version").String(metadata.producer_version);
  json.Key("domain").String(metadata.domain);
  json.Key("model_version").Integer(metadata.model_version);
  json.Key("description").String(metadata.description);
  json.Key("graph_description").String(metadata.graph_description);
  json.Key("custom").BeginObject();
  for (const auto& [key, value] : metadata.custom) json.Key(key).String(value);
  json.EndObject().EndObject();
}

void PrintJson(const InspectFlags& flags, const Session& session) {
  JsonWriter json;
  json.BeginObject();
  json.Key("model").String(flags.model);
  json.Key("metadata");
  WriteMetadata(json, session.metadata());
  json.Key("inputs");
  WriteValues(json, session.inputs());
  json.Key("outputs");
  WriteValues(json, session.outputs());
  json.Key("overridable_initializers");
  WriteValues(json, session.overridable_initializers());
  json.Key("graph_rewrites");
  WriteStrings(json, session.graph_rewrites());
  json.Key("placements").BeginArray();
  const std::vector<NodePlacement>& placements = session.placements();
  for (size_t i = 0; i < placements.size(); ++i) {
    const NodePlacement& placement = placements[i];
    json.BeginObject();
    json.Key("node").String(NodeName(placements, i));
    json.Key("op_type").String(placement.op_type);
    json.Key("domain").String(placement.domain);
    json.Key("provider").String(placement.provider);
    json.Key("capture_eligible").Bool(placement.capture_eligible);
    json.Key("fused_into").String(placement.fused_into);
    json.Key("declines").BeginArray();
    for (const ClaimDecline& decline : placement.declines) {
      json.BeginObject().Key("provider").String(decline.provider);
      json.Key("reason").String(decline.reason).EndObject();
    }
    json.EndArray().EndObject();
  }
  json.EndArray();

  WriteDecoderSignature(json, session.decoder_signature());
  const graph::CaptureReport& report = session.capture_report();
  json.Key("capture").BeginObject();
  json.Key("mode").String(report.mode);
  json.Key("node_count").Unsigned(report.node_count);
  json.Key("eligible_count").Unsigned(report.eligible_count);
  json.Key("disqualifying");
  WriteStrings(json, report.disqualifying);
  json.Key("pinned");
  WriteStrings(json, report.pinned);
  json.Key("segments").BeginArray();
  for (const auto& segment : CaptureSegments(session.placements())) WriteStrings(json, segment);
  json.EndArray();
  json.Key("ineligible").BeginArray();
  for (const graph::NodeCaptureReport& node : report.ineligible) {
    json.BeginObject();
    json.Key("node").String(node.node);
    json.Key("op_type").String(node.op_type);
    json.Key("domain").String(node.domain);
    json.Key("verdict").String(node.verdict);
    json.Key("edges").BeginArray();
    for (const graph::DisqualifiedEdgeReport& edge : node.edges) {
      json.BeginObject();
      json.Key("side").String(edge.side);
      json.Key("slot").Unsigned(edge.slot);
      json.Key("value").String(edge.value);
      json.Key("axis").Unsigned(edge.axis);
      json.Key("symbol").String(edge.symbol);
      json.Key("path").String(edge.path_text);
      json.Key("root_kind").String(edge.root_kind);
      json.Key("root").String(edge.root);
      json.EndObject();
    }
    json.EndArray().EndObject();
  }
  json.EndArray();
  json.EndObject();
  json.EndObject();
  std::printf("%s\n", json.text().c_str());
}

Result<int> Inspect(const InspectFlags& flags) {
  SessionOptions options;
  NXRT_ASSIGN_OR_RETURN(options.providers, ParseProviderList(flags.providers));
  options.rewrite_graph = !flags.no_rewrites;
  NXRT_ASSIGN_OR_RETURN(options.free_dimension_overrides, ParseFreeDimensions(flags.free_dims));
  NXRT_ASSIGN_OR_RETURN(std::shared_ptr<Environment> environment,
                        MakeEnvironment(flags.environment));
  NXRT_ASSIGN_OR_RETURN(ModelSession model,
                        LoadModelSession(environment, flags.model, std::move(options)));
  if (flags.json) {
    PrintJson(flags, *model.session);
  } else {
    PrintText(flags, *model.session);
  }
  return 0;
}

}  // namespace

void RegisterInspectCommand(CLI::App& app, CommandAction& selected) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* command = app.add_subcommand(
      "inspect", "show a model's inputs and outputs, its partition and its capture plan");
  command->add_option("model", flags->model, "the .onnx model file")->required();
  AddProviderOptions(*command, flags->providers);
  AddFreeDimensionOption(*command, flags->free_dims);
  command->add_flag("--json", flags->json, "print one JSON object instead of text");
  command->add_flag("--no-rewrites", flags->no_rewrites,
                    "run every node as the model spells it (no folding or fusion)");
  AddEnvironmentOptions(*command, flags->environment);
  command->callback([flags, &selected] { selected = [flags] { return Inspect(*flags); }; });
}

}  // namespace nxrt::cli
