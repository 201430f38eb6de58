#include "test_cases/isolated_run.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace nxrt::cli {
namespace {

void WriteAll(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<size_t>(n);
  }
}

[[noreturn]] void RunChild(int fd, const std::function<CaseResult()>& run_case) {
  CaseResult result;
  try {
    result = run_case();
  } catch (const std::exception& e) {
    result = {CaseStatus::kError, std::string("uncaught exception: ") + e.what()};
  }
  WriteAll(fd, std::string(1, static_cast<char>('0' + static_cast<int>(result.status))) +
                   result.message);
  close(fd);
  std::fflush(nullptr);
  // Skips static destructors: plugins' atexit work belongs to no case.
  _exit(0);
}

std::string DescribeExit(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int signal_number = WTERMSIG(wait_status);
    return "the case crashed the process (signal " + std::to_string(signal_number) + ", " +
           strsignal(signal_number) + ")";
  }
  if (WIFEXITED(wait_status)) {
    return "the process running the case exited with status " +
           std::to_string(WEXITSTATUS(wait_status)) + " before reporting";
  }
  return "the process running the case ended before reporting";
}

}  // namespace

CaseResult RunIsolated(const std::function<CaseResult()>& run_case, double timeout_seconds) {
  int fds[2];
  if (pipe(fds) != 0) {
    return {CaseStatus::kError, std::string("cannot create a pipe: ") + std::strerror(errno)};
  }
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return {CaseStatus::kError, std::string("cannot fork: ") + std::strerror(errno)};
  }
  if (child == 0) {
    close(fds[0]);
    RunChild(fds[1], run_case);
  }
  close(fds[1]);

  std::string report;
  bool timed_out = false;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd waiting{fds[0], POLLIN, 0};
    const int ready = poll(&waiting, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    report.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(child, SIGKILL);
  int wait_status = 0;
  while (waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof(limit), "%g", timeout_seconds);
    return {CaseStatus::kError, std::string("timed out after ") + limit +
                                    " s; raise --timeout if the case is only slow"};
  }
  if (report.empty() || report[0] < '0' || report[0] > '3') {
    return {CaseStatus::kError, DescribeExit(wait_status)};
  }
  return {static_cast<CaseStatus>(report[0] - '0'), report.substr(1)};
}

}  // namespace nxrt::cli
