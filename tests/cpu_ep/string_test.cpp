// The string ops (StringNormalizer, StringSplit, StringConcat,
// RegexFullMatch) and TfIdfVectorizer: the Debian node cases, and checks
// against results worked out by hand for the edges the cases miss (empty
// strings, stopword case sensitivity, UTF-8 bytes, Python split rules, an
// invalid pattern, skip-grams).
#include <gtest/gtest.h>

#include <limits>

#include <string>
#include <vector>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::Tensor;
using nxrt::graph::DataType;

TEST(CpuEpString, NodeCases) {
  ExpectFamilyPasses("string", {"StringNormalizer", "StringSplit", "StringConcat", "RegexFullMatch",
                                "TfIdfVectorizer"});
}

// The one output of a default-domain string node, or a test failure.
std::vector<Tensor> RunString(const std::string& op, int64_t opset,
                              std::vector<nxrt::NamedTensor> inputs,
                              std::vector<nxrt::graph::Attribute> attributes,
                              std::vector<DataType> outputs = {DataType::kString}) {
  auto result = RunTensorNode({.op = op,
                               .opset = opset,
                               .inputs = std::move(inputs),
                               .outputs = std::move(outputs),
                               .attributes = std::move(attributes)});
  if (!result.ok()) {
    ADD_FAILURE() << op << ": " << result.status().ToString();
    return {};
  }
  return std::move(result).value();
}

using Texts = std::vector<std::string>;
using Dims = std::vector<int64_t>;

TEST(CpuEpString, StopwordsIgnoreCaseUnlessCaseSensitive) {
  const Tensor words = Strings({4}, {"Monday", "MONDAY", "monday", "Tuesday"});
  auto insensitive = RunString(
      "StringNormalizer", 10, {{"x", words}},
      {StringsAttribute("stopwords", {"monday"}), StringAttribute("case_change_action", "LOWER")});
  ASSERT_EQ(insensitive.size(), 1u);
  EXPECT_EQ(insensitive[0].shape(), Dims{1});
  EXPECT_EQ(insensitive[0].strings(), Texts{"tuesday"});

  auto sensitive =
      RunString("StringNormalizer", 10, {{"x", words}},
                {StringsAttribute("stopwords", {"monday"}), IntAttribute("is_case_sensitive", 1)});
  ASSERT_EQ(sensitive.size(), 1u);
  EXPECT_EQ(sensitive[0].strings(), (Texts{"Monday", "MONDAY", "Tuesday"}));
}

TEST(CpuEpString, NormalizerKeepsEmptyStringsAndFillsAnEmptyResult) {
  auto kept = RunString("StringNormalizer", 10, {{"x", Strings({1, 3}, {"", "a", "b"})}},
                        {StringAttribute("case_change_action", "UPPER")});
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].shape(), (Dims{1, 3}));
  EXPECT_EQ(kept[0].strings(), (Texts{"", "A", "B"}));

  // Every word a stopword: one empty string remains, in the input's rank.
  auto emptied = RunString("StringNormalizer", 10, {{"x", Strings({1, 2}, {"a", "A"})}},
                           {StringsAttribute("stopwords", {"a"})});
  ASSERT_EQ(emptied.size(), 1u);
  EXPECT_EQ(emptied[0].shape(), (Dims{1, 1}));
  EXPECT_EQ(emptied[0].strings(), Texts{""});
}

TEST(CpuEpString, CaseChangeLeavesUtf8BytesUntouched) {
  // "Ärger straße": only the ASCII letters change case.
  const std::string word =
      "\xC3\x84rger stra\xC3\x9F"
      "e";
  auto upper = RunString("StringNormalizer", 10, {{"x", Strings({1}, {word})}},
                         {StringAttribute("case_change_action", "UPPER")});
  ASSERT_EQ(upper.size(), 1u);
  EXPECT_EQ(upper[0].strings(), Texts{"\xC3\x84RGER STRA\xC3\x9F"
                                      "E"});
}

TEST(CpuEpString, SplitFollowsPythonRules) {
  auto with_delimiter =
      RunString("StringSplit", 20, {{"x", Strings({3}, {"a,,b,", "", "abc"})}},
                {StringAttribute("delimiter", ",")}, {DataType::kString, DataType::kInt64});
  ASSERT_EQ(with_delimiter.size(), 2u);
  EXPECT_EQ(with_delimiter[0].shape(), (Dims{3, 4}));
  EXPECT_EQ(with_delimiter[0].strings(),
            (Texts{"a", "", "b", "", "", "", "", "", "abc", "", "", ""}));
  const auto counts = with_delimiter[1].values<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(counts.begin(), counts.end()), (std::vector<int64_t>{4, 1, 1}));

  // Whitespace runs, no empty pieces; after maxsplit the rest stays whole.
  auto whitespace =
      RunString("StringSplit", 20, {{"x", Strings({3}, {"  a b  c ", " ", "x\ty\r\nz"})}},
                {IntAttribute("maxsplit", 1)}, {DataType::kString, DataType::kInt64});
  ASSERT_EQ(whitespace.size(), 2u);
  EXPECT_EQ(whitespace[0].shape(), (Dims{3, 2}));
  EXPECT_EQ(whitespace[0].strings(), (Texts{"a", "b  c ", "", "", "x", "y\r\nz"}));
  const auto ws_counts = whitespace[1].values<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(ws_counts.begin(), ws_counts.end()),
            (std::vector<int64_t>{2, 0, 2}));
}

TEST(CpuEpString, ConcatBroadcastsAndKeepsBytes) {
  auto joined =
      RunString("StringConcat", 20,
                {{"a", Strings({2, 1}, {"", "\xE2\x82\xAC"})}, {"b", Strings({2}, {"x", ""})}}, {});
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(joined[0].shape(), (Dims{2, 2}));
  EXPECT_EQ(joined[0].strings(), (Texts{"x", "",
                                        "\xE2\x82\xAC"
                                        "x",
                                        "\xE2\x82\xAC"}));
}

TEST(CpuEpString, RegexMatchesTheWholeString) {
  auto matched = RunString("RegexFullMatch", 20, {{"x", Strings({4}, {"abc", "abcd", "", "xabc"})}},
                           {StringAttribute("pattern", "a.c")}, {DataType::kBool});
  ASSERT_EQ(matched.size(), 1u);
  const auto flags = matched[0].values<bool>();
  EXPECT_EQ(std::vector<bool>(flags.begin(), flags.end()),
            (std::vector<bool>{true, false, false, false}));
}

TEST(CpuEpString, InvalidRegexFailsNamingTheNode) {
  auto result = RunTensorNode({.op = "RegexFullMatch",
                               .opset = 20,
                               .name = "url_filter",
                               .inputs = {{"x", Strings({1}, {"a"})}},
                               .outputs = {DataType::kBool},
                               .attributes = {StringAttribute("pattern", "(a")}});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("url_filter"), std::string::npos)
      << result.status().ToString();
  EXPECT_NE(result.status().message().find("invalid pattern"), std::string::npos)
      << result.status().ToString();
}

std::vector<float> TfIdf(const Tensor& input, std::vector<nxrt::graph::Attribute> attributes) {
  auto out =
      RunString("TfIdfVectorizer", 9, {{"x", input}}, std::move(attributes), {DataType::kFloat32});
  if (out.size() != 1) return {};
  const auto y = out[0].values<float>();
  return std::vector<float>(y.begin(), y.end());
}

TEST(CpuEpString, TfIdfCountsSkipGrams) {
  // Bigram (1, 3) in [1, 2, 3, 1, 3]: at distance 2 (0 -> 2) and distance 1 (3 -> 4).
  const Tensor x = Values<int64_t>({5}, {1, 2, 3, 1, 3});
  auto attributes = [](int64_t skip) {
    return std::vector<nxrt::graph::Attribute>{
        StringAttribute("mode", "TF"),         IntAttribute("min_gram_length", 2),
        IntAttribute("max_gram_length", 2),    IntAttribute("max_skip_count", skip),
        IntsAttribute("ngram_counts", {0, 0}), IntsAttribute("ngram_indexes", {0}),
        IntsAttribute("pool_int64s", {1, 3})};
  };
  EXPECT_EQ(TfIdf(x, attributes(0)), std::vector<float>{1});
  EXPECT_EQ(TfIdf(x, attributes(1)), std::vector<float>{2});
  // Any skip reaches every later (1, 3), here also 0 -> 4; the walk ends at
  // the row's end, not after max_skip_count distances.
  EXPECT_EQ(TfIdf(x, attributes(std::numeric_limits<int64_t>::max())), std::vector<float>{3});
}

TEST(CpuEpString, TfIdfCountsUnigramsOnceWhateverTheSkip) {
  const Tensor x = Values<int64_t>({2, 3}, {1, 1, 1, 2, 1, 2});
  const std::vector<nxrt::graph::Attribute> attributes{
      StringAttribute("mode", "TF"),          IntAttribute("min_gram_length", 1),
      IntAttribute("max_gram_length", 2),     IntAttribute("max_skip_count", 3),
      IntsAttribute("ngram_counts", {0, 1}),  IntsAttribute("ngram_indexes", {0, 1}),
      IntsAttribute("pool_int64s", {1, 2, 2})};
  // Row 0: three 1s, no (2, 2). Row 1: one 1, (2, 2) at distance 2.
  EXPECT_EQ(TfIdf(x, attributes), (std::vector<float>{3, 0, 1, 1}));
}

TEST(CpuEpString, TfIdfWeighsStringsByOutputColumn) {
  const Tensor x = Strings({4}, {"b", "a", "b", "c"});
  auto attributes = [](const std::string& mode) {
    return std::vector<nxrt::graph::Attribute>{StringAttribute("mode", mode),
                                               IntAttribute("min_gram_length", 1),
                                               IntAttribute("max_gram_length", 1),
                                               IntsAttribute("ngram_counts", {0}),
                                               IntsAttribute("ngram_indexes", {2, 0}),
                                               StringsAttribute("pool_strings", {"a", "b"}),
                                               FloatsAttribute("weights", {0.5f, 4.0f, 3.0f})};
  };
  // "a" goes to column 2 (weight 3), "b" to column 0 (weight 0.5); column 1 is unused.
  EXPECT_EQ(TfIdf(x, attributes("TF")), (std::vector<float>{2, 0, 1}));
  EXPECT_EQ(TfIdf(x, attributes("IDF")), (std::vector<float>{0.5f, 0, 3}));
  EXPECT_EQ(TfIdf(x, attributes("TFIDF")), (std::vector<float>{1, 0, 3}));
}

}  // namespace
}  // namespace nxrt_test
