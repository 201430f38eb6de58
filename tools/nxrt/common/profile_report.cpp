#include "common/profile_report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <tuple>

namespace nxrt::cli {
namespace {

double Micros(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

std::string Label(const ProfileEvent& event) {
  if (event.kind == ProfileEvent::Kind::kNode) return event.op_type;
  return "segment at " + event.node + " (" + std::to_string(event.nodes) + " nodes)";
}

}  // namespace

void AddProfileOption(CLI::App& command, std::string& path) {
  command.add_option("--profile", path,
                     "FILE.json: profile the runs, write a trace of every node's time there "
                     "(Chrome trace format: Perfetto, chrome://tracing) and print the ops "
                     "that took longest");
}

std::vector<OpTime> SummarizeProfile(const RunProfile& profile) {
  double main_graph_us = 0;
  std::map<std::tuple<std::string, std::string, ProfileEvent::Kind>, OpTime> by_op;
  for (const ProfileEvent& event : profile.events) {
    const double us = Micros(event.duration);
    if (event.depth == 0) main_graph_us += us;
    const std::string label = Label(event);
    OpTime& op = by_op[{label, event.provider, event.kind}];
    op.label = label;
    op.provider = event.provider;
    op.kind = event.kind;
    ++op.calls;
    op.total_us += us;
  }
  std::vector<OpTime> ops;
  for (auto& [key, op] : by_op) {
    op.share = main_graph_us > 0 ? op.total_us / main_graph_us : 0;
    ops.push_back(std::move(op));
  }
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpTime& a, const OpTime& b) { return a.total_us > b.total_us; });
  return ops;
}

Status WriteProfileTrace(const RunProfile& profile, const std::string& path) {
  auto origin = std::chrono::steady_clock::time_point::max();
  for (const ProfileEvent& event : profile.events) origin = std::min(origin, event.start);
  JsonWriter json;
  json.BeginObject().Key("displayTimeUnit").String("ns").Key("traceEvents").BeginArray();
  for (const ProfileEvent& event : profile.events) {
    json.BeginObject();
    json.Key("name").String(event.node);
    json.Key("cat").String(ProfileEventKindName(event.kind));
    json.Key("ph").String("X");
    json.Key("ts").Number(Micros(event.start - origin));
    json.Key("dur").Number(Micros(event.duration));
    json.Key("pid").Integer(1);
    json.Key("tid").Integer(1);
    json.Key("args").BeginObject();
    json.Key("op_type").String(event.op_type);
    json.Key("provider").String(event.provider);
    json.Key("graph").String(event.graph);
    json.Key("depth").Unsigned(event.depth);
    json.Key("nodes").Unsigned(event.nodes);
    if (!event.input_shapes.empty()) json.Key("input_shapes").String(event.input_shapes);
    json.EndObject();
    json.EndObject();
  }
  json.EndArray().EndObject();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << json.text() << '\n';
  file.close();
  if (!file) {
    return InvalidArgument("--profile " + path +
                           ": the trace could not be written; check that its folder exists and "
                           "is writable");
  }
  return Status::Ok();
}

std::string ProfileSummaryText(const RunProfile& profile, const std::string& path) {
  constexpr size_t kRows = 15;
  const std::vector<OpTime> ops = SummarizeProfile(profile);
  std::string text =
      "profile: " + std::to_string(profile.events.size()) + " events -> " + path + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-36s %-10s %-13s %8s %12s %11s %7s\n", "op", "provider",
                "step", "calls", "total (us)", "mean (us)", "share");
  text += line;
  for (size_t i = 0; i < ops.size() && i < kRows; ++i) {
    const OpTime& op = ops[i];
    std::snprintf(line, sizeof line, "  %-36s %-10s %-13s %8zu %12.1f %11.2f %6.1f%%\n",
                  op.label.c_str(), op.provider.c_str(), ProfileEventKindName(op.kind), op.calls,
                  op.total_us, op.total_us / static_cast<double>(op.calls), 100.0 * op.share);
    text += line;
  }
  if (ops.size() > kRows)
    text += "  ... " + std::to_string(ops.size() - kRows) + " more in the trace\n";
  return text;
}

void WriteProfileSummary(JsonWriter& json, const RunProfile& profile, const std::string& path) {
  json.Key("profile").BeginObject();
  json.Key("trace").String(path);
  json.Key("events").Unsigned(profile.events.size());
  json.Key("ops").BeginArray();
  for (const OpTime& op : SummarizeProfile(profile)) {
    json.BeginObject();
    json.Key("op").String(op.label);
    json.Key("provider").String(op.provider);
    json.Key("step").String(ProfileEventKindName(op.kind));
    json.Key("calls").Unsigned(op.calls);
    json.Key("total_us").Number(op.total_us);
    json.Key("share").Number(op.share);
    json.EndObject();
  }
  json.EndArray().EndObject();
}

}  // namespace nxrt::cli
