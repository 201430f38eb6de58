// Runs the built nxrt binary as a child process and captures what it says:
// its exit status, standard output and standard error, so tests can check
// the command line exactly as a user or a script sees it.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nxrt_test {

struct ProcessResult {
  int exit_code = -1;  // -1 when the process did not exit normally (a crash)
  std::string out;
  std::string err;
};

inline std::string ReadWholeFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string ShellQuote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs `nxrt ARGS...`; `scratch` holds the captured streams.
inline ProcessResult RunNxrt(const std::vector<std::string>& args,
                             const std::filesystem::path& scratch) {
  std::string command = ShellQuote(std::string(NXRT_BINARY_DIR) + "/bin/nxrt");
  for (const std::string& arg : args) command += " " + ShellQuote(arg);
  const auto out_file = scratch / "stdout.txt";
  const auto err_file = scratch / "stderr.txt";
  command += " >" + ShellQuote(out_file.string()) + " 2>" + ShellQuote(err_file.string());
  const int status = std::system(command.c_str());
  ProcessResult result;
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = ReadWholeFile(out_file);
  result.err = ReadWholeFile(err_file);
  return result;
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace nxrt_test
