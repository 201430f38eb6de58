// nxrt: run, test, inspect, benchmark and serve ONNX models from the command line.
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "commands/command.hpp"
#include "nxrt/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"nxrt: run ONNX models through plugin execution providers", "nxrt"};
  app.require_subcommand(1);
  app.set_version_flag("--version", nxrt::Version());

  nxrt::cli::CommandAction selected;
  nxrt::cli::RegisterRunCommand(app, selected);
  nxrt::cli::RegisterTestCommand(app, selected);
  nxrt::cli::RegisterInspectCommand(app, selected);
  nxrt::cli::RegisterBenchCommand(app, selected);
  nxrt::cli::RegisterPluginsCommand(app, selected);
  nxrt::cli::RegisterGenerateCommand(app, selected);
  nxrt::cli::RegisterServeCommand(app, selected);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version requests arrive as parse "errors" that exit 0.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::fprintf(stderr, "nxrt: error: %s; see nxrt --help\n", e.what());
    return 2;
  }
  // Nothing below the public API throws, but a library (CLI11, the standard
  // library) may; the command line answers with one line either way.
  try {
    nxrt::Result<int> status = selected();
    if (!status.ok()) {
      std::fprintf(stderr, "nxrt: error: %s\n", status.status().message().c_str());
      return 1;
    }
    return *status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nxrt: error: %s\n", e.what());
    return 1;
  }
}
