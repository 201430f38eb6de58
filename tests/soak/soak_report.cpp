#include "soak_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nxrt::soak {
namespace {

struct Fit {
  int64_t from_step = 0;
  const ResourceSample* first = nullptr;  // the first sample
  const ResourceSample* warm = nullptr;   // the first sample fitted
  const ResourceSample* last = nullptr;
  double rss_kib = 0;
  double heap_kib = 0;
  double fds = 0;
  bool rss_ok = true;
  bool heap_ok = true;
  bool fds_ok = true;
};

Fit FitOf(const WorkloadResult& result, const Thresholds& thresholds) {
  Fit fit;
  const std::vector<ResourceSample>& samples = result.samples;
  if (samples.empty()) return fit;
  fit.from_step = static_cast<int64_t>(
      std::ceil(thresholds.warmup_fraction * static_cast<double>(result.steps)));
  fit.first = &samples.front();
  fit.last = &samples.back();
  const auto warm = std::ranges::find_if(
      samples, [&](const ResourceSample& s) { return s.step >= fit.from_step; });
  fit.warm = warm == samples.end() ? fit.last : &*warm;
  fit.rss_kib = SlopePerThousandSteps(samples, fit.from_step, &ResourceSample::rss_kib);
  fit.heap_kib = SlopePerThousandSteps(samples, fit.from_step, &ResourceSample::heap_bytes) / 1024;
  fit.fds = SlopePerThousandSteps(samples, fit.from_step, &ResourceSample::open_fds);
  fit.rss_ok = fit.rss_kib <= thresholds.rss_kib;
  fit.heap_ok = !thresholds.heap_kib || fit.heap_kib <= *thresholds.heap_kib;
  fit.fds_ok = fit.fds <= thresholds.fds;
  return fit;
}

bool Passed(const WorkloadResult& result, const Fit& fit) {
  return fit.last != nullptr && fit.rss_ok && fit.heap_ok && fit.fds_ok &&
         result.broken_bounds.empty();
}

double Mib(int64_t kib) {
  return static_cast<double>(kib) / 1024;
}

}  // namespace

void PrintWorkload(const WorkloadResult& result, const Thresholds& thresholds) {
  const Fit fit = FitOf(result, thresholds);
  std::printf("== %s: %lld steps in %.1f s, %zu samples, fitted from step %lld\n",
              result.name.c_str(), static_cast<long long>(result.steps), result.seconds,
              result.samples.size(), static_cast<long long>(fit.from_step));
  if (fit.last != nullptr) {
    std::printf(
        "  RSS %.2f MiB at step %lld, %.2f MiB after warm-up, %.2f MiB at the end: "
        "%+.3f KiB per 1,000 steps (at most %.3f)%s\n",
        Mib(fit.first->rss_kib), static_cast<long long>(fit.first->step), Mib(fit.warm->rss_kib),
        Mib(fit.last->rss_kib), fit.rss_kib, thresholds.rss_kib, fit.rss_ok ? "" : "  OVER");
    std::printf(
        "  malloc in use %.2f MiB after warm-up, %.2f MiB at the end: %+.3f KiB per 1,000 "
        "steps%s\n",
        static_cast<double>(fit.warm->heap_bytes) / (1 << 20),
        static_cast<double>(fit.last->heap_bytes) / (1 << 20), fit.heap_kib,
        fit.heap_ok ? "" : "  OVER");
    std::printf("  open fds %lld after warm-up, %lld at the end: %+.3f per 1,000 steps%s\n",
                static_cast<long long>(fit.warm->open_fds),
                static_cast<long long>(fit.last->open_fds), fit.fds, fit.fds_ok ? "" : "  OVER");
  }
  for (const std::string& line : result.counters) std::printf("  %s\n", line.c_str());
  for (const std::string& line : result.broken_bounds) std::printf("  BROKEN: %s\n", line.c_str());
  std::fflush(stdout);
}

bool PrintSummary(std::span<const WorkloadResult> results, const Thresholds& thresholds) {
  std::printf("\n%-9s %8s %8s %10s %10s %14s %14s %11s %6s\n", "workload", "steps", "seconds",
              "RSS start", "RSS end", "RSS KiB/1k", "heap KiB/1k", "fds/1k", "");
  bool all_passed = true;
  for (const WorkloadResult& result : results) {
    const Fit fit = FitOf(result, thresholds);
    const bool passed = Passed(result, fit);
    all_passed = all_passed && passed;
    if (fit.last == nullptr) {
      std::printf("%-9s no samples\n", result.name.c_str());
      continue;
    }
    std::printf("%-9s %8lld %8.1f %6.1f MiB %6.1f MiB %+14.3f %+14.3f %+11.3f %6s\n",
                result.name.c_str(), static_cast<long long>(result.steps), result.seconds,
                Mib(fit.warm->rss_kib), Mib(fit.last->rss_kib), fit.rss_kib, fit.heap_kib, fit.fds,
                passed ? "ok" : "FAILED");
  }
  std::printf("(RSS start is after warm-up; slopes are least-squares fits after warm-up)\n");
  return all_passed;
}

Status WriteSamples(std::span<const WorkloadResult> results, const std::filesystem::path& file) {
  FILE* out = std::fopen(file.c_str(), "w");
  if (out == nullptr) return InvalidArgument("cannot write the samples to " + file.string());
  std::fprintf(out, "workload,step,rss_kib,open_fds,heap_bytes\n");
  for (const WorkloadResult& result : results) {
    for (const ResourceSample& s : result.samples) {
      std::fprintf(out, "%s,%lld,%lld,%lld,%lld\n", result.name.c_str(),
                   static_cast<long long>(s.step), static_cast<long long>(s.rss_kib),
                   static_cast<long long>(s.open_fds), static_cast<long long>(s.heap_bytes));
    }
  }
  return std::fclose(out) == 0 ? Status::Ok()
                               : InvalidArgument("cannot write the samples to " + file.string());
}

}  // namespace nxrt::soak
