// Inputs that do not fit the model are refused before any kernel runs, with
// an error naming the input and what the model expects; the session then
// runs correct inputs as before.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;
using nxrt_test::ModelBuilder;

class WrongInput : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = nxrt_test::TestLogId();
    // a: [N, 2], b: [N, 2] share the symbol N.
    auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(),
                                         ModelBuilder()
                                             .Input("a", {std::string("N"), int64_t{2}})
                                             .Input("b", {std::string("N"), int64_t{2}})
                                             .Node("Add", {"a", "b"}, "y")
                                             .Output("y")
                                             .Build(),
                                         nxrt_test::MockOptions(log_));
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
    nxrt_test::MockLibrary::Get().Clear(log_);
  }

  // Runs `inputs`, expects a refusal containing every one of `parts`, and
  // checks no kernel was made or computed.
  void ExpectRefused(std::vector<nxrt::NamedTensor> inputs, std::vector<std::string> parts) {
    auto outputs = session_->Run(inputs);
    ASSERT_FALSE(outputs.ok());
    EXPECT_EQ(outputs.status().code(), nxrt::StatusCode::kInvalidArgument);
    for (const std::string& part : parts) {
      EXPECT_NE(outputs.status().message().find(part), std::string::npos)
          << "missing '" << part << "' in: " << outputs.status().message();
    }
    const auto calls = nxrt_test::MockLibrary::Get().CallLog(log_);
    EXPECT_EQ(nxrt_test::CountPrefix(calls, "create_kernel"), 0u);
    EXPECT_EQ(nxrt_test::CountPrefix(calls, "compute"), 0u);
    ExpectStillUsable();
  }

  void ExpectStillUsable() {
    std::vector<nxrt::NamedTensor> good{{"a", Floats({1, 2}, {1, 2})},
                                        {"b", Floats({1, 2}, {10, 20})}};
    auto outputs = session_->Run(good);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[0]), (std::vector<float>{11, 22}));
    nxrt_test::MockLibrary::Get().Clear(log_);
  }

  std::string log_;
  std::unique_ptr<nxrt::Session> session_;
};

TEST_F(WrongInput, UnknownNameIsRefusedListingTheInputs) {
  ExpectRefused(
      {{"a", Floats({1, 2}, {1, 2})}, {"b", Floats({1, 2}, {1, 2})}, {"c", Floats({1, 2}, {1, 2})}},
      {"'c' is not an input", "a, b"});
}

TEST_F(WrongInput, MissingInputIsRefusedWithItsDeclaredType) {
  ExpectRefused({{"a", Floats({1, 2}, {1, 2})}}, {"input 'b' is missing", "float [N,2]"});
}

TEST_F(WrongInput, InputGivenTwiceIsRefused) {
  ExpectRefused(
      {{"a", Floats({1, 2}, {1, 2})}, {"a", Floats({1, 2}, {1, 2})}, {"b", Floats({1, 2}, {1, 2})}},
      {"input 'a' is given twice"});
}

TEST_F(WrongInput, WrongDtypeIsRefused) {
  auto ints = nxrt::Tensor::FromValues<int64_t>({1, 2}, std::vector<int64_t>{1, 2});
  ASSERT_TRUE(ints.ok());
  ExpectRefused({{"a", Floats({1, 2}, {1, 2})}, {"b", std::move(ints).value()}},
                {"input 'b' is int64, expected float"});
}

TEST_F(WrongInput, WrongRankIsRefused) {
  ExpectRefused({{"a", Floats({1, 2}, {1, 2})}, {"b", Floats({2}, {1, 2})}},
                {"input 'b' has rank 1 [2], expected rank 2 [N,2]"});
}

TEST_F(WrongInput, WrongStaticDimIsRefused) {
  ExpectRefused({{"a", Floats({1, 3}, {1, 2, 3})}, {"b", Floats({1, 2}, {1, 2})}},
                {"input 'a' dim 1 is 3, expected 2"});
}

TEST_F(WrongInput, DimContradictingTheSymbolBoundByAnotherInputIsRefused) {
  ExpectRefused({{"a", Floats({1, 2}, {1, 2})}, {"b", Floats({2, 2}, {1, 2, 3, 4})}},
                {"input 'b'", "dim 0", "N", "1", "2"});
}

TEST_F(WrongInput, BufferSmallerThanItsShapeIsRefused) {
  std::vector<float> data{1, 2, 3};
  ExpectRefused({{"a", nxrt::Tensor::Borrow(nxrt::DataType::kFloat32, {2, 2}, data.data(),
                                            data.size() * sizeof(float))},
                 {"b", Floats({2, 2}, {1, 2, 3, 4})}},
                {"input 'a' holds 12 bytes", "needs 16"});
}

TEST_F(WrongInput, UnknownOutputNameIsRefused) {
  std::vector<nxrt::NamedTensor> good{{"a", Floats({1, 2}, {1, 2})},
                                      {"b", Floats({1, 2}, {10, 20})}};
  const std::vector<std::string> names{"z"};
  auto outputs = session_->Run(good, names);
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(
      outputs.status().message().find("'z' is not an output of the model; its outputs are: y"),
      std::string::npos)
      << outputs.status().message();
  ExpectStillUsable();
}

}  // namespace
