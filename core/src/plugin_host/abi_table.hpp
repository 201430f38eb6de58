// Reading a table a plugin filled in, whatever ABI minor it was built for.
//
// A plugin's table may be shorter than the host's definition (an older minor)
// or longer (a newer one). NormalizedTable copies the entries both sides know
// into a zeroed host-sized struct, so every entry past the plugin's
// struct_size reads as NULL, which the ABI defines as "use the default".
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace nxrt::plugin_host {

template <typename Table>
Table NormalizedTable(const Table& plugin_table) {
  static_assert(std::is_trivially_copyable_v<Table>);
  Table table;
  std::memset(static_cast<void*>(&table), 0, sizeof(Table));
  std::memcpy(static_cast<void*>(&table), &plugin_table,
              std::min(plugin_table.struct_size, sizeof(Table)));
  table.struct_size = sizeof(Table);
  return table;
}

// Whether a table of `struct_size` bytes reaches past `end_offset`.
inline bool TableCovers(size_t struct_size, size_t end_offset) {
  return struct_size >= end_offset;
}

}  // namespace nxrt::plugin_host

// The byte offset just past `field` of `Type`, for TableCovers.
#define NXRT_TABLE_END_OF(Type, field) (offsetof(Type, field) + sizeof(((Type*)nullptr)->field))
