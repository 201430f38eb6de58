// --profile FILE, shared by the commands that run a model: the runs are
// profiled (RunOptions::profile), their events written as a trace in the
// Chrome trace-event format (open it in Perfetto or chrome://tracing), and
// the ops that took longest summarised on screen or in the --json report.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/json_writer.hpp"
#include "nxrt/run_profile.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// Adds --profile to `command`; `path` stays empty (no profiling) unless given.
void AddProfileOption(CLI::App& command, std::string& path);

// The time of one op on one EP, or of one captured segment, in one kind of
// step, over all events.
struct OpTime {
  // The op type; for a segment "segment at NODE (N nodes)", as a segment's
  // nodes have no times of their own.
  std::string label;
  std::string provider;
  ProfileEvent::Kind kind = ProfileEvent::Kind::kNode;
  size_t calls = 0;
  double total_us = 0;
  // Of the time of the main graph's events; a body's ops are also inside
  // their parent node's share.
  double share = 0;
};

// Longest first.
std::vector<OpTime> SummarizeProfile(const RunProfile& profile);

// Writes the trace; an error names the file and why it could not be written.
Status WriteProfileTrace(const RunProfile& profile, const std::string& path);

// The longest ops as a table of at most 15 rows, after a line naming the
// trace file; each line ends in a newline.
std::string ProfileSummaryText(const RunProfile& profile, const std::string& path);

// A "profile" member: the trace file and every op's time.
void WriteProfileSummary(JsonWriter& json, const RunProfile& profile, const std::string& path);

}  // namespace nxrt::cli
