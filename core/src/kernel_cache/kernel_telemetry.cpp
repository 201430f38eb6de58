#include "kernel_cache/kernel_telemetry.hpp"

#include <algorithm>
#include <string>

#include "nxrt/support/checked_math.hpp"

namespace nxrt::kernel_cache {
namespace {

Status Overflow(const char* field) {
  return Internal(std::string("kernel telemetry: the sum of ") + field +
                  " over the cached kernels overflows 64 bits; reset telemetry between requests");
}

}  // namespace

Status TelemetrySum::Add(const nxrt_telemetry& snapshot) {
  TelemetryTotals next = sum_;
  uint64_t next_physical = physical_bytes_;
  struct Field {
    uint64_t* total;
    uint64_t add;
    const char* name;
  };
  const Field fields[] = {
      {&next.uploaded_bytes, snapshot.uploaded_bytes, "uploaded bytes"},
      {&next.committed_bytes, snapshot.committed_bytes, "committed bytes"},
      {&next.logical_bytes, snapshot.logical_bytes, "logical bytes"},
      {&next.unique_bytes, snapshot.unique_bytes, "unique bytes"},
      {&next.page_ins, snapshot.page_ins, "page-ins"},
  };
  for (const Field& field : fields) {
    auto sum = CheckedAdd<uint64_t>(*field.total, field.add);
    if (!sum) return Overflow(field.name);
    *field.total = *sum;
  }
  if (snapshot.has_physical_bytes) {
    auto sum = CheckedAdd<uint64_t>(next_physical, snapshot.physical_bytes);
    if (!sum) return Overflow("physical bytes");
    next_physical = *sum;
  } else {
    physical_complete_ = false;
  }
  sum_ = next;
  physical_bytes_ = next_physical;
  observed_ = true;
  return Status::Ok();
}

TelemetryTotals TelemetrySum::Totals() const {
  TelemetryTotals totals = sum_;
  totals.physical_bytes.reset();
  totals.byte_hit_rate.reset();
  if (observed_ && physical_complete_) {
    totals.physical_bytes = physical_bytes_;
    if (totals.logical_bytes != 0) {
      const double ratio =
          static_cast<double>(physical_bytes_) / static_cast<double>(totals.logical_bytes);
      totals.byte_hit_rate = 1.0 - std::min(ratio, 1.0);
    }
  }
  return totals;
}

}  // namespace nxrt::kernel_cache
