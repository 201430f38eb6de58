#include <functional>

#include <gtest/gtest.h>

#include "graph_book.hpp"
#include "nxrt/ep_sdk.hpp"

namespace {

using nxrt::cuda::GraphBook;

nxrt_status_code CodeOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const nxrt::sdk::Error& error) {
    return error.code();
  }
  return NXRT_STATUS_OK;
}

TEST(GraphBook, EachCaptureGetsANewNonzeroTokenOwnedByItsSlot) {
  GraphBook book;
  book.BeginCapture(NXRT_GRAPH_SLOT_PRIMARY);
  EXPECT_EQ(book.capturing(), NXRT_GRAPH_SLOT_PRIMARY);
  const nxrt_graph_token primary = book.EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  EXPECT_FALSE(book.capturing().has_value());
  book.BeginCapture(NXRT_GRAPH_SLOT_VERIFY);
  const nxrt_graph_token verify = book.EndCapture(NXRT_GRAPH_SLOT_VERIFY);
  EXPECT_NE(primary, 0u);
  EXPECT_NE(verify, 0u);
  EXPECT_NE(primary, verify);
  EXPECT_EQ(book.SlotOf(primary), NXRT_GRAPH_SLOT_PRIMARY);
  EXPECT_EQ(book.SlotOf(verify), NXRT_GRAPH_SLOT_VERIFY);
  EXPECT_EQ(book.LiveTokens(NXRT_GRAPH_SLOT_PRIMARY), std::vector<nxrt_graph_token>{primary});
  EXPECT_EQ(book.LiveTokens(NXRT_GRAPH_SLOT_VERIFY), std::vector<nxrt_graph_token>{verify});
  EXPECT_EQ(book.live_count(), 2u);
}

TEST(GraphBook, OneCaptureAtATime) {
  GraphBook book;
  book.BeginCapture(NXRT_GRAPH_SLOT_PRIMARY);
  EXPECT_EQ(CodeOf([&] { book.BeginCapture(NXRT_GRAPH_SLOT_VERIFY); }),
            NXRT_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(CodeOf([&] { book.EndCapture(NXRT_GRAPH_SLOT_VERIFY); }),
            NXRT_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(book.capturing(), NXRT_GRAPH_SLOT_PRIMARY);
}

TEST(GraphBook, EndWithoutBeginIsRefused) {
  GraphBook book;
  EXPECT_EQ(CodeOf([&] { book.EndCapture(NXRT_GRAPH_SLOT_PRIMARY); }),
            NXRT_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(book.live_count(), 0u);
}

TEST(GraphBook, AbandonedCaptureMintsNoToken) {
  GraphBook book;
  book.BeginCapture(NXRT_GRAPH_SLOT_VERIFY);
  book.AbandonCapture();
  EXPECT_FALSE(book.capturing().has_value());
  EXPECT_EQ(book.live_count(), 0u);
  book.BeginCapture(NXRT_GRAPH_SLOT_VERIFY);
  EXPECT_NE(book.EndCapture(NXRT_GRAPH_SLOT_VERIFY), 0u);
}

TEST(GraphBook, ForgottenTokensAreNeverLiveAgainNorReused) {
  GraphBook book;
  book.BeginCapture(NXRT_GRAPH_SLOT_PRIMARY);
  const nxrt_graph_token first = book.EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  book.Forget(first);
  EXPECT_EQ(CodeOf([&] { book.SlotOf(first); }), NXRT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(CodeOf([&] { book.Forget(first); }), NXRT_STATUS_INVALID_ARGUMENT);
  book.BeginCapture(NXRT_GRAPH_SLOT_PRIMARY);
  const nxrt_graph_token second = book.EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  EXPECT_NE(second, first);
  EXPECT_TRUE(book.LiveTokens(NXRT_GRAPH_SLOT_PRIMARY) == std::vector<nxrt_graph_token>{second});
}

TEST(GraphBook, SlotsOutsideTheAbiAreRefused) {
  GraphBook book;
  EXPECT_EQ(CodeOf([&] { book.BeginCapture(static_cast<nxrt_graph_slot>(7)); }),
            NXRT_STATUS_INVALID_ARGUMENT);
  EXPECT_FALSE(book.capturing().has_value());
  EXPECT_EQ(CodeOf([&] { book.SlotOf(0); }), NXRT_STATUS_INVALID_ARGUMENT);
}

}  // namespace
