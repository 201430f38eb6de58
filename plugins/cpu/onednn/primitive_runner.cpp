#include "primitive_runner.hpp"

#include <dlfcn.h>
#include <omp.h>

#include <cstdlib>

#include "math_threads.hpp"
#include "parallel_blocks.hpp"
#include "thread_workspace.hpp"

namespace nxrt::cpu::onednn {
namespace {

// oneDNN and its OpenMP runtime stay loaded for the life of the process once
// this library loads, even if the host unloads the EP: OpenMP's worker
// threads outlive every parallel region and would wake up in unmapped code,
// and oneDNN keeps process-wide caches (primitives, JIT code) it never frees.
bool PinLibraryOf(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0) return false;
  return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
}
[[maybe_unused]] const bool libraries_pinned =
    PinLibraryOf(reinterpret_cast<const void*>(&omp_get_max_threads)) &&
    PinLibraryOf(reinterpret_cast<const void*>(&dnnl_engine_create));

// The calling thread's OpenMP thread count, set to the EP's.
void ApplyThreads() {
  const int threads = MathThreads();
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

}  // namespace

// oneDNN keeps up to 1,024 primitives, with their generated code, in a
// process-wide cache by default; a session whose shapes keep changing fills it
// with primitives of shapes it will not see again, tens of MiB of them. The
// kernels own the primitives they run, so the cache only saves re-planning a
// shape a kernel was evicted for, and a small one does that. A capacity set
// in oneDNN's own environment variable is left as it is.
void BoundPrimitiveCache() {
  constexpr int kPrimitiveCacheCapacity = 64;
  if (std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY") != nullptr ||
      std::getenv("DNNL_PRIMITIVE_CACHE_CAPACITY") != nullptr) {
    return;
  }
  dnnl::set_primitive_cache_capacity(kPrimitiveCacheCapacity);
}

const dnnl::engine& Engine() {
  static const dnnl::engine engine = [] {
    BoundPrimitiveCache();
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::primitive_attr PlanningAttributes() {
  ApplyThreads();
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attributes;
}

PrimitiveRunner::PrimitiveRunner(dnnl::primitive primitive, const dnnl::memory::desc& scratchpad,
                                 std::span<const std::pair<int, dnnl::memory::desc>> args)
    : primitive_(std::move(primitive)),
      stream_(Engine()),
      scratchpad_(scratchpad, Engine(), static_cast<void*>(DNNL_MEMORY_NONE)),
      scratchpad_bytes_(scratchpad.get_size()) {
  memories_.reserve(args.size() + 1);
  args_.reserve(args.size() + 1);
  for (const auto& [name, desc] : args) {
    memories_.emplace_back(desc, Engine(), static_cast<void*>(DNNL_MEMORY_NONE));
    args_.push_back({name, memories_.back().get()});
  }
  args_.push_back({DNNL_ARG_SCRATCHPAD, scratchpad_.get()});
}

void PrimitiveRunner::Run(std::span<const void* const> buffers) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i] != nullptr) memories_[i].set_data_handle(const_cast<void*>(buffers[i]));
  }
  if (scratchpad_bytes_ > 0) {
    scratchpad_.set_data_handle(ThreadWorkspace(Workspace::kScratchpad, scratchpad_bytes_));
  }
  ApplyThreads();
  NoteNestedParallelism();
  dnnl::error::wrap_c_api(dnnl_primitive_execute(primitive_.get(), stream_.get(),
                                                 static_cast<int>(args_.size()), args_.data()),
                          "oneDNN could not run a primitive");
}

void PrimitiveRunner::Rebind(size_t index, const dnnl::memory::desc& desc) {
  memories_[index] = dnnl::memory(desc, Engine(), static_cast<void*>(DNNL_MEMORY_NONE));
  args_[index].memory = memories_[index].get();
}

PrimitiveRunner PlanReorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  const dnnl::reorder::primitive_desc plan(Engine(), from, Engine(), to, PlanningAttributes());
  const std::pair<int, dnnl::memory::desc> args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return PrimitiveRunner(dnnl::reorder(plan), plan.scratchpad_desc(), args);
}

void ReorderOnce(const dnnl::memory::desc& from_desc, const void* from,
                 const dnnl::memory::desc& to_desc, void* to) {
  dnnl::memory source(from_desc, Engine(), const_cast<void*>(from));
  dnnl::memory target(to_desc, Engine(), to);
  dnnl::stream stream(Engine());
  ApplyThreads();
  NoteNestedParallelism();
  dnnl::reorder(source, target).execute(stream, source, target);
}

}  // namespace nxrt::cpu::onednn
