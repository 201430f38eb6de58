// The sequence ops past what the corpus cases reach: negative positions,
// insertion inside a sequence, SplitToSequence with and without split
// lengths and keepdims, ConcatFromSequence with and without a new axis, and
// a position outside the sequence, on small models built here and run
// through a session (sequences live in the executor's value slots).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir_model_builder.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;
using nxrt::graph::ValueId;

nxrt::Tensor Floats(std::vector<int64_t> dims, const std::vector<float>& values) {
  return nxrt::Tensor::FromValues<float>(std::move(dims), values).value();
}

template <typename T>
std::vector<T> ValuesOf(const nxrt::Tensor& t) {
  auto values = t.values<T>();
  return {values.begin(), values.end()};
}

std::vector<int64_t> DimsOf(const nxrt::Tensor& t) {
  return {t.shape().begin(), t.shape().end()};
}

TEST(CpuEpSequences, EraseInsertAtAndConcatWithNegativePositions) {
  IrModelBuilder m(17, "sequences");
  const ValueId x = m.Input("x", std::vector<int64_t>{3, 2});
  const ValueId t = m.Input("t", std::vector<int64_t>{2});
  const ValueId rows = m.Sequence("SplitToSequence", {x}, "rows", {IntAttribute("keepdims", 0)});
  const ValueId erased = m.Sequence("SequenceErase", {rows, m.Int64s("first", {}, {-3})}, "erased");
  const ValueId inserted =
      m.Sequence("SequenceInsert", {erased, t, m.Int64s("middle", {}, {1})}, "inserted");
  m.Output(m.Tensor("SequenceLength", {inserted}, "n", DataType::kInt64));
  m.Output(
      m.Tensor("SequenceAt", {inserted, m.Int64s("last", {}, {-1})}, "tail", DataType::kFloat32));
  m.Output(m.Tensor("ConcatFromSequence", {inserted}, "stacked", DataType::kFloat32,
                    {IntAttribute("axis", 1), IntAttribute("new_axis", 1)}));
  m.Output(m.Tensor("ConcatFromSequence", {inserted}, "joined", DataType::kFloat32,
                    {IntAttribute("axis", 0)}));
  auto session = CpuSessionOf(m.Take());
  ASSERT_NE(session, nullptr);

  const std::vector<float> xs{0, 1, 2, 3, 4, 5};
  const std::vector<float> ts{7, 8};
  std::vector<nxrt::NamedTensor> inputs{{"x", Floats({3, 2}, xs)}, {"t", Floats({2}, ts)}};
  auto outputs = session->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 4u);
  // Row 0 erased, t inserted between rows 1 and 2.
  EXPECT_EQ(ValuesOf<int64_t>((*outputs)[0]), (std::vector<int64_t>{3}));
  EXPECT_EQ(ValuesOf<float>((*outputs)[1]), (std::vector<float>{4, 5}));
  EXPECT_EQ(DimsOf((*outputs)[2]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ValuesOf<float>((*outputs)[2]), (std::vector<float>{2, 7, 4, 3, 8, 5}));
  EXPECT_EQ(DimsOf((*outputs)[3]), (std::vector<int64_t>{6}));
  EXPECT_EQ(ValuesOf<float>((*outputs)[3]), (std::vector<float>{2, 3, 7, 8, 4, 5}));
}

TEST(CpuEpSequences, SplitLengthsThenConcatGivesTheInputBack) {
  IrModelBuilder m(17, "sequences");
  const ValueId x = m.Input("x", std::vector<int64_t>{2, 3});
  const ValueId parts = m.Sequence("SplitToSequence", {x, m.Int64s("split", {2}, {1, 2})}, "parts",
                                   {IntAttribute("axis", 1)});
  const ValueId chunks = m.Sequence("SplitToSequence", {x, m.Int64s("chunk", {}, {2})}, "chunks",
                                    {IntAttribute("axis", 1)});
  m.Output(m.Tensor("SequenceAt", {parts, m.Int64s("one", {}, {1})}, "second", DataType::kFloat32));
  m.Output(m.Tensor("ConcatFromSequence", {parts}, "back", DataType::kFloat32,
                    {IntAttribute("axis", -1)}));
  m.Output(m.Tensor("SequenceAt", {chunks, m.Int64s("end", {}, {-1})}, "rest", DataType::kFloat32));
  auto session = CpuSessionOf(m.Take());
  ASSERT_NE(session, nullptr);

  const std::vector<float> xs{0, 1, 2, 3, 4, 5};
  std::vector<nxrt::NamedTensor> inputs{{"x", Floats({2, 3}, xs)}};
  auto outputs = session->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(DimsOf((*outputs)[0]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ValuesOf<float>((*outputs)[0]), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(DimsOf((*outputs)[1]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ValuesOf<float>((*outputs)[1]), xs);
  // Chunks of 2 along 3 columns: the last chunk holds what is left.
  EXPECT_EQ(DimsOf((*outputs)[2]), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(ValuesOf<float>((*outputs)[2]), (std::vector<float>{2, 5}));
}

TEST(CpuEpSequences, PositionOutsideTheSequenceFailsTheRun) {
  IrModelBuilder m(17, "sequences");
  const ValueId x = m.Input("x", std::vector<int64_t>{2, 2});
  const ValueId rows = m.Sequence("SplitToSequence", {x}, "rows");
  m.Output(m.Tensor("SequenceAt", {rows, m.Int64s("far", {}, {2})}, "row", DataType::kFloat32));
  auto session = CpuSessionOf(m.Take());
  ASSERT_NE(session, nullptr);
  std::vector<nxrt::NamedTensor> inputs{{"x", Floats({2, 2}, {1, 2, 3, 4})}};
  auto outputs = session->Run(inputs);
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.status().message().find("position 2"), std::string::npos)
      << outputs.status().ToString();
}

}  // namespace
}  // namespace nxrt_test
