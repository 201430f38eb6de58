// The host's definition of nxrt_options: key/value options handed to a
// plugin (create_ep), owning the strings the plugin borrows through
// option_at and option_get.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nxrt/ep_abi.h"

struct nxrt_options {
  explicit nxrt_options(std::vector<std::pair<std::string, std::string>> entries);
  nxrt_options(const nxrt_options&) = delete;
  nxrt_options& operator=(const nxrt_options&) = delete;

  // The value of `key`, or nullptr.
  const char* Find(const char* key) const;

  const std::vector<std::pair<std::string, std::string>> entries;
  std::vector<nxrt_option> views;  // one per entry, pointing into `entries`
};
