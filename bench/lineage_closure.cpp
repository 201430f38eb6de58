// The lineage closure on synthetic lineage of 10^4, 10^5 and 10^6 symbols with
// about two records per symbol (one unification between random symbols, one
// derivation from an earlier symbol), closed from 1% of the symbols. The
// closure must grow linearly; `ms` is the time of one closure and
// `ns_per_edge` that time per directed edge searched.
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>
#include <vector>

#include "nxrt/graph/lineage_closure.hpp"

namespace {

using nxrt::graph::ClosureDetail;
using nxrt::graph::LineageClosure;
using nxrt::graph::SymbolId;
using nxrt::graph::SymbolLineage;

struct SyntheticLineage {
  SymbolLineage lineage;
  std::vector<SymbolId> seeds;
};

SyntheticLineage MakeLineage(uint32_t symbols) {
  SyntheticLineage out;
  std::mt19937 random(20260101);
  std::uniform_int_distribution<uint32_t> any(0, symbols - 1);
  out.lineage.unifications.reserve(symbols);
  out.lineage.derivations.reserve(symbols);
  for (uint32_t i = 0; i < symbols; ++i) {
    out.lineage.unifications.emplace_back(SymbolId{any(random)}, SymbolId{any(random)});
    if (i > 0) {
      const uint32_t source = std::uniform_int_distribution<uint32_t>(0, i - 1)(random);
      out.lineage.derivations.emplace_back(SymbolId{i}, SymbolId{source});
    }
  }
  for (uint32_t i = 0; i < symbols / 100; ++i) out.seeds.push_back(SymbolId{any(random)});
  return out;
}

void RunClosure(benchmark::State& state, ClosureDetail detail) {
  const auto symbols = static_cast<uint32_t>(state.range(0));
  const SyntheticLineage input = MakeLineage(symbols);
  size_t edges = 0;
  size_t reached = 0;
  double total_ns = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    LineageClosure closure = LineageClosure::Compute(input.lineage, input.seeds, symbols, detail);
    benchmark::DoNotOptimize(closure);
    total_ns +=
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    edges = closure.edge_count();
    reached = closure.reached().size();
  }
  const double runs = static_cast<double>(state.iterations());
  state.counters["symbols"] = symbols;
  state.counters["edges"] = static_cast<double>(edges);
  state.counters["reached"] = static_cast<double>(reached);
  state.counters["ms"] = total_ns / runs / 1e6;
  state.counters["ns_per_edge"] = total_ns / runs / static_cast<double>(edges);
  state.SetComplexityN(symbols);
}

void BM_LineageClosureMembership(benchmark::State& state) {
  RunClosure(state, ClosureDetail::kMembership);
}
void BM_LineageClosureExplain(benchmark::State& state) {
  RunClosure(state, ClosureDetail::kExplain);
}

BENCHMARK(BM_LineageClosureMembership)
    ->RangeMultiplier(10)
    ->Range(10'000, 1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);
BENCHMARK(BM_LineageClosureExplain)
    ->RangeMultiplier(10)
    ->Range(10'000, 1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
