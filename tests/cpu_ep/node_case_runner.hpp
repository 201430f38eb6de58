// Runs one ONNX backend node test case through the CPU EP as the host would:
// load the model, claim its single node at the model's opset, make a kernel
// at the test inputs' shapes, hand it its constant inputs, compute once with
// outputs left for the kernel to allocate and once with them preallocated,
// and compare every output with the expected one (rtol 1e-3, atol 1e-5, NaN
// equal to NaN; exact for integers, bools and strings).
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace nxrt_test {

enum class CaseOutcome { kPassed, kFailed, kDeclined };

struct CaseResult {
  std::string name;
  CaseOutcome outcome = CaseOutcome::kFailed;
  std::string detail;  // the decline reason or the failure
};

// Single-node cases of the Debian ONNX test data whose op type is in
// `op_types`, with their folders.
std::vector<std::filesystem::path> NodeCasesFor(const std::set<std::string>& op_types);

// Every op type with a single-node case in the corpus.
std::set<std::string> CorpusOpTypes();

CaseResult RunNodeCase(const std::filesystem::path& case_dir);

// Runs every case of `op_types`, prints the tally and each failure, and
// returns the failures (a declined case is counted, never a failure).
std::vector<CaseResult> RunFamily(const std::string& family, const std::set<std::string>& op_types,
                                  size_t* ran = nullptr);

// Corpus cases whose expected outputs disagree with the current ONNX
// specification, by name, with the reason. They must keep failing.
const std::map<std::string, std::string>& KnownCorpusDivergences();

// Runs a family and adds a test failure per failed case that is not a known
// divergence, and per known divergence that passes; also fails when no case
// of the family was found.
void ExpectFamilyPasses(const std::string& family, const std::set<std::string>& op_types);

}  // namespace nxrt_test
