#include "resource_samples.hpp"

#include <dirent.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace nxrt::soak {
namespace {

int64_t ResidentKib() {
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return -1;
  long long size = 0;
  long long resident = 0;
  const int read = std::fscanf(statm, "%lld %lld", &size, &resident);
  std::fclose(statm);
  if (read != 2) return -1;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// The directory stream's own descriptor is not counted.
int64_t OpenFds() {
  DIR* folder = opendir("/proc/self/fd");
  if (folder == nullptr) return -1;
  int64_t count = 0;
  while (const dirent* entry = readdir(folder)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(folder);
  return count - 1;
}

}  // namespace

ResourceSample SampleResources(int64_t step) {
  const struct mallinfo2 heap = mallinfo2();
  return {step, ResidentKib(), OpenFds(), static_cast<int64_t>(heap.uordblks + heap.hblkhd)};
}

double SlopePerThousandSteps(std::span<const ResourceSample> samples, int64_t from_step,
                             int64_t ResourceSample::*quantity) {
  double n = 0, mean_x = 0, mean_y = 0;
  for (const ResourceSample& s : samples) {
    if (s.step < from_step) continue;
    n += 1;
    mean_x += (static_cast<double>(s.step) - mean_x) / n;
    mean_y += (static_cast<double>(s.*quantity) - mean_y) / n;
  }
  if (n < 2) return 0;
  double sxy = 0, sxx = 0;
  for (const ResourceSample& s : samples) {
    if (s.step < from_step) continue;
    const double dx = static_cast<double>(s.step) - mean_x;
    sxy += dx * (static_cast<double>(s.*quantity) - mean_y);
    sxx += dx * dx;
  }
  return sxx == 0 ? 0 : 1000 * sxy / sxx;
}

bool IsMapped(const char* name) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return false;
  char line[4096];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, maps) != nullptr) {
    found = std::strstr(line, name) != nullptr;
  }
  std::fclose(maps);
  return found;
}

}  // namespace nxrt::soak
