// `nxrt serve MODEL...`: the models on Ray Serve behind the Open Inference
// Protocol. The serving lives in the Python package (nxrt.serve), so this
// command becomes `python -m nxrt.serve MODEL...` in place: the same process,
// so Ctrl-C reaches the server, which stops cleanly. The interpreter is
// NXRT_PYTHON, else the one nxrt was built with, else python3 on PATH. In a
// build tree, the tree's package (<build>/python) goes first on PYTHONPATH.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "commands/command.hpp"

namespace nxrt::cli {
namespace {

std::string PythonInterpreter() {
#ifdef NXRT_BUILT_WITH_PYTHON
  if (std::filesystem::exists(NXRT_BUILT_WITH_PYTHON)) return NXRT_BUILT_WITH_PYTHON;
#endif
  return "python3";
}

// <build>/python when this program runs from <build>/bin beside a built package.
void PutBuildTreePackageFirst() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return;
  const std::filesystem::path package_root = self.parent_path().parent_path() / "python";
  if (!std::filesystem::exists(package_root / "nxrt" / "serve" / "__main__.py")) return;
  std::string path = package_root.string();
  if (const char* existing = std::getenv("PYTHONPATH"); existing != nullptr && *existing) {
    path += ":" + std::string(existing);
  }
  setenv("PYTHONPATH", path.c_str(), 1);
}

Result<int> Serve(const std::vector<std::string>& arguments) {
  const char* chosen = std::getenv("NXRT_PYTHON");
  std::string python;
  if (chosen != nullptr && *chosen != '\0') {
    python = chosen;
  } else {
    python = PythonInterpreter();
    PutBuildTreePackageFirst();
  }
  std::vector<std::string> command = {python, "-m", "nxrt.serve"};
  command.insert(command.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& argument : command) argv.push_back(argument.data());
  argv.push_back(nullptr);
  execvp(python.c_str(), argv.data());
  return Unavailable("serve: cannot start " + python + ": " + std::strerror(errno) +
                     "; set NXRT_PYTHON to a Python with the nxrt package and ray[serve]");
}

}  // namespace

void RegisterServeCommand(CLI::App& app, CommandAction& selected) {
  CLI::App* command = app.add_subcommand(
      "serve",
      "Serve models over the Open Inference Protocol on Ray Serve (python -m nxrt.serve; "
      "its --help lists the options)");
  command->prefix_command();
  command->set_help_flag();
  command->callback([command, &selected] {
    selected = [arguments = command->remaining()] { return Serve(arguments); };
  });
}

}  // namespace nxrt::cli
