// How the CPU EP spreads the blocks of one product over its threads, all of
// them OpenMP's.
//
// Eagerly, each product opens its own parallel region. A region's fork and
// join cost about two microseconds on a two-core machine, which a decode
// step's twenty-odd split gemvs of a few microseconds each feel. So a
// replay, which runs one recorded segment straight through, keeps one
// region open for its whole length (RunWithCrew): the replaying thread runs
// the recorded calls, and the other threads of the region, its crew, spin
// on a counter for blocks to take, which hands a block over in a fraction
// of that.
//
// Every member, the caller included, claims blocks one at a time until none
// is left, so a crew member the scheduler has set aside costs nothing: the
// caller takes its blocks. Blocks are the caller's choice, from the work
// alone, so results do not depend on which thread computed which block.
//
// oneDNN's own parallel regions cannot open inside the crew's (a nested
// region runs on one thread). A oneDNN execution during a crew's replay
// says so (NoteNestedParallelism), and RunWithCrew reports it, so the
// recording replays without a crew from then on.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

namespace detail {
using BlockFunction = void (*)(const void* context, int block);
using BodyFunction = void (*)(void* context);
void RunBlocks(int blocks, BlockFunction function, const void* context);
bool RunWithCrew(int threads, BodyFunction body, void* context);
}  // namespace detail

// Calls block(b) for every b in [0, blocks), on the calling thread's crew
// when it has one, else in a parallel region of `blocks` threads; returns
// once every call has. `block` must not throw. `blocks` is below 65536.
// Allocates nothing once OpenMP's thread pool of that size exists.
template <typename Block>
void RunBlocks(int blocks, const Block& block) {
  detail::RunBlocks(
      blocks, [](const void* context, int b) { (*static_cast<const Block*>(context))(b); }, &block);
}

// Runs body() on the calling thread with a crew of `threads` - 1 other
// threads for RunBlocks (no crew with one thread), and rethrows what body
// throws. Returns whether a oneDNN execution ran inside, where it had a
// single thread.
template <typename Body>
bool RunWithCrew(int threads, Body& body) {
  return detail::RunWithCrew(
      threads, [](void* context) { (*static_cast<Body*>(context))(); }, &body);
}

// Called before each oneDNN execution: inside a crew's replay, marks it.
void NoteNestedParallelism();

}  // namespace nxrt::cpu
