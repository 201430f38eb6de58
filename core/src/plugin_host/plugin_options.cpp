#include "plugin_host/plugin_options.hpp"

#include <cstring>

nxrt_options::nxrt_options(std::vector<std::pair<std::string, std::string>> entries_in)
    : entries(std::move(entries_in)) {
  views.reserve(entries.size());
  for (const auto& [key, value] : entries) {
    views.push_back({sizeof(nxrt_option), key.c_str(), value.c_str()});
  }
}

const char* nxrt_options::Find(const char* key) const {
  if (key == nullptr) return nullptr;
  for (const auto& [k, v] : entries) {
    if (k == key) return v.c_str();
  }
  return nullptr;
}
