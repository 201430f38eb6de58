// The thread workspace oneDNN plans borrow their scratch memory from: it
// grows only, reuses its bytes at a size it has seen, keeps its two
// workspaces apart, and gives each thread its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

#include "onednn/thread_workspace.hpp"

namespace nxrt_test {
namespace {

using nxrt::cpu::onednn::ThreadWorkspace;
using nxrt::cpu::onednn::Workspace;

TEST(CpuThreadWorkspace, ReusesItsBytesAtASizeItHasSeen) {
  void* large = ThreadWorkspace(Workspace::kScratchpad, 1 << 20);
  ASSERT_NE(large, nullptr);
  std::memset(large, 1, 1 << 20);  // every byte is there to be written
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 64, 0u);
  EXPECT_EQ(ThreadWorkspace(Workspace::kScratchpad, 4096), large);
  EXPECT_EQ(ThreadWorkspace(Workspace::kScratchpad, 1 << 20), large);
  EXPECT_EQ(ThreadWorkspace(Workspace::kScratchpad, 0), nullptr);
}

TEST(CpuThreadWorkspace, GrowsForALargerNeed) {
  ThreadWorkspace(Workspace::kActivations, 100);
  void* grown = ThreadWorkspace(Workspace::kActivations, 8 << 20);
  ASSERT_NE(grown, nullptr);
  std::memset(grown, 2, 8 << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(grown) % 64, 0u);
  EXPECT_EQ(ThreadWorkspace(Workspace::kActivations, 100), grown);
}

TEST(CpuThreadWorkspace, KeepsScratchpadsApartFromActivations) {
  auto* scratch = static_cast<unsigned char*>(ThreadWorkspace(Workspace::kScratchpad, 4096));
  auto* activations = static_cast<unsigned char*>(ThreadWorkspace(Workspace::kActivations, 4096));
  ASSERT_NE(scratch, nullptr);
  ASSERT_NE(activations, nullptr);
  EXPECT_TRUE(scratch + 4096 <= activations || activations + 4096 <= scratch);
}

TEST(CpuThreadWorkspace, EachThreadHasItsOwn) {
  auto* mine = static_cast<unsigned char*>(ThreadWorkspace(Workspace::kScratchpad, 4096));
  unsigned char* theirs = nullptr;
  std::thread([&] {
    theirs = static_cast<unsigned char*>(ThreadWorkspace(Workspace::kScratchpad, 4096));
    std::memset(theirs, 3, 4096);
  }).join();
  ASSERT_NE(theirs, nullptr);
  std::memset(mine, 4, 4096);
  // Both were live while the other thread ran: they may not overlap.
  EXPECT_TRUE(mine + 4096 <= theirs || theirs + 4096 <= mine);
}

}  // namespace
}  // namespace nxrt_test
