// Free-dimension overrides (SessionOptions::free_dimension_overrides): a
// named symbolic dim of the inputs becomes a static extent everywhere it
// appears, so the model's inputs and the shapes inferred from them show it
// and a run that binds another extent is refused in one line; an override the
// inputs cannot take fails the session's creation and names what they have.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;
using nxrt_test::ModelBuilder;

// a: [N, K], b: [N, K] -> y = a + b.
nxrt::graph::Graph SharedSymbolsModel() {
  return ModelBuilder()
      .Input("a", {std::string("N"), std::string("K")})
      .Input("b", {std::string("N"), std::string("K")})
      .Node("Add", {"a", "b"}, "y")
      .Output("y")
      .Build();
}

nxrt::Result<std::unique_ptr<nxrt::Session>> SessionWith(
    const std::string& log, std::vector<std::pair<std::string, int64_t>> overrides) {
  nxrt::SessionOptions options = nxrt_test::MockOptions(log);
  options.free_dimension_overrides = std::move(overrides);
  return nxrt::Session::Create(nxrt_test::TestEnvironment(), SharedSymbolsModel(), options);
}

// a and b as [rows, 1] columns of `a` and `b`.
std::vector<nxrt::NamedTensor> Columns(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<nxrt::NamedTensor> inputs;
  inputs.push_back({"a", Floats({static_cast<int64_t>(a.size()), 1}, a)});
  inputs.push_back({"b", Floats({static_cast<int64_t>(b.size()), 1}, b)});
  return inputs;
}

TEST(FreeDimensionOverride, FixesTheNamedDimOfEveryInputAndWhatFollowsFromIt) {
  const std::string log = nxrt_test::TestLogId();
  auto session = SessionWith(log, {{"N", 3}});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  for (const auto& input : (*session)->inputs()) {
    EXPECT_EQ(input.shape, (std::vector<std::string>{"3", "K"})) << input.name;
  }
  // Shape inference carried the extent to the output.
  ASSERT_EQ((*session)->outputs().size(), 1u);
  EXPECT_EQ((*session)->outputs()[0].shape, (std::vector<std::string>{"3", "K"}));

  auto sum = (*session)->Run(Columns({1, 2, 3}, {10, 20, 30}));
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ((*sum)[0].shape(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(nxrt_test::ValuesOf((*sum)[0]), (std::vector<float>{11, 22, 33}));

  auto refused = (*session)->Run(Columns({1, 2}, {1, 2}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), nxrt::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("input 'a' dim 0 is 2, expected 3"), std::string::npos)
      << refused.status().message();
  // The session stays usable.
  EXPECT_TRUE((*session)->Run(Columns({1, 2, 3}, {1, 2, 3})).ok());
}

TEST(FreeDimensionOverride, OverridesTheInputsCannotTakeFailCreationInOneLine) {
  const std::string log = nxrt_test::TestLogId();
  struct Case {
    std::vector<std::pair<std::string, int64_t>> overrides;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases{
      {{{"M", 1}}, {"free dimension override M=1", "no input has a dim of that name", "K, N"}},
      {{{"N", -1}}, {"free dimension override N=-1", "0 or more"}},
      {{{"N", 1}, {"N", 2}}, {"free dimension override N=2", "overridden twice"}},
  };
  for (const Case& c : cases) {
    auto session = SessionWith(log, c.overrides);
    ASSERT_FALSE(session.ok()) << c.parts.front();
    EXPECT_EQ(session.status().code(), nxrt::StatusCode::kInvalidArgument);
    const std::string& message = session.status().message();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& part : c.parts) {
      EXPECT_NE(message.find(part), std::string::npos)
          << "missing '" << part << "' in: " << message;
    }
  }
}

}  // namespace
