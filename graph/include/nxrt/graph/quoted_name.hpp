// Names and text from a model file go into one-line messages and listings; a
// name may hold any bytes, so control characters are escaped before they can
// break a line or a terminal.
#pragma once

#include <string>
#include <string_view>

namespace nxrt::graph {

// `name` with control characters and backslashes escaped (\n, \x1b, \\).
std::string Printable(std::string_view name);

// Printable(name) in single quotes.
std::string Quoted(std::string_view name);

}  // namespace nxrt::graph
