// Reads back the trace `--profile` writes (Chrome trace-event JSON), with
// Boost.PropertyTree's JSON parser, so the tests check the file a user opens
// rather than the report printed beside it.
#pragma once

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace nxrt_test {

struct TraceEvent {
  std::string name;
  std::string category;  // the step kind: node, replay, capture, eager segment
  std::string phase;
  double start_us = 0;
  double duration_us = 0;
  std::string op_type;
  std::string provider;
  std::string graph;
  int depth = 0;
  int nodes = 0;
  std::string input_shapes;
};

// Throws boost::property_tree::json_parser_error when the file is not JSON.
inline std::vector<TraceEvent> ReadTrace(const std::filesystem::path& file) {
  boost::property_tree::ptree root;
  boost::property_tree::read_json(file.string(), root);
  std::vector<TraceEvent> events;
  for (const auto& [unused, item] : root.get_child("traceEvents")) {
    TraceEvent event;
    event.name = item.get<std::string>("name");
    event.category = item.get<std::string>("cat");
    event.phase = item.get<std::string>("ph");
    event.start_us = item.get<double>("ts");
    event.duration_us = item.get<double>("dur");
    event.op_type = item.get<std::string>("args.op_type");
    event.provider = item.get<std::string>("args.provider");
    event.graph = item.get<std::string>("args.graph");
    event.depth = item.get<int>("args.depth");
    event.nodes = item.get<int>("args.nodes");
    event.input_shapes = item.get<std::string>("args.input_shapes", "");
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace nxrt_test
