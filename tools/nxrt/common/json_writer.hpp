// A small streaming JSON writer for the commands' --json reports: objects,
// arrays, strings (escaped), numbers and booleans, with commas placed for
// the caller. Non-finite numbers, which JSON cannot hold, are written as null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nxrt::cli {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // The key of the next member; only inside an object.
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Number(double value);
  JsonWriter& Integer(int64_t value);
  JsonWriter& Unsigned(uint64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  const std::string& text() const { return text_; }

 private:
  void BeforeValue();

  std::string text_;
  // Per open container: whether it already holds a member.
  std::vector<bool> has_member_;
  bool after_key_ = false;
};

// `text` as a quoted JSON string.
std::string JsonQuote(std::string_view text);

}  // namespace nxrt::cli
