#include "common/option_checks.hpp"

#include <exception>

namespace nxrt::cli {

CLI::Validator ZeroOrMore(const std::string& unit, const std::string& name) {
  return CLI::Validator(
      [unit](std::string& text) {
        try {
          if (std::stod(text) >= 0) return std::string();
        } catch (const std::exception&) {
        }
        return "'" + text + "' is not a number of " + unit + ", 0 (no limit) or more";
      },
      name);
}

}  // namespace nxrt::cli
