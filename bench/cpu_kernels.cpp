// CPU EP kernel speed through the plugin ABI: a 1024x1024 float MatMul
// (oneDNN underneath) and the dispatch cost of a one-element Add, each
// timed as the host calls them, through the kernel table's compute.
//
// The program is its own minimal host: it loads libep_cpu.so, answers the
// node queries these two kernels make, and allocates nothing during compute
// (outputs are preallocated), so the numbers are kernel time plus the ABI
// crossing.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nxrt/ep_abi.h"

namespace {

struct nxrt_status_bench {
  nxrt_status_code code;
  std::string message;
};

nxrt_status* StatusCreate(nxrt_status_code code, const char* message) {
  return reinterpret_cast<nxrt_status*>(new nxrt_status_bench{code, message ? message : ""});
}
void StatusRelease(nxrt_status* s) {
  delete reinterpret_cast<nxrt_status_bench*>(s);
}
nxrt_status_code StatusCode(const nxrt_status* s) {
  return reinterpret_cast<const nxrt_status_bench*>(s)->code;
}
const char* StatusMessage(const nxrt_status* s) {
  return reinterpret_cast<const nxrt_status_bench*>(s)->message.c_str();
}
size_t OptionCount(const nxrt_options*) {
  return 0;
}
const nxrt_option* OptionAt(const nxrt_options*, size_t) {
  return nullptr;
}
const char* OptionGet(const nxrt_options*, const char*) {
  return nullptr;
}

// A node is just its op type here: MatMul and Add read nothing else.
const char* NodeOpType(const nxrt_node* node) {
  return reinterpret_cast<const char*>(node);
}
const char* NodeDomain(const nxrt_node*) {
  return "";
}
const char* NodeName(const nxrt_node*) {
  return "";
}
size_t NodeIoCount(const nxrt_node*) {
  return 2;
}
const char* NodeIoName(const nxrt_node*, size_t) {
  return "x";
}
nxrt_attr_type NodeAttrType(const nxrt_node*, const char*) {
  return NXRT_ATTR_UNDEFINED;
}
nxrt_bool NodeInputIsConstant(const nxrt_node*, size_t) {
  return 0;
}

nxrt_host_api MakeHost() {
  nxrt_host_api host{};
  host.struct_size = sizeof(host);
  host.abi_version = NXRT_EP_ABI_VERSION;
  host.status_create = StatusCreate;
  host.status_release = StatusRelease;
  host.status_code = StatusCode;
  host.status_message = StatusMessage;
  host.option_count = OptionCount;
  host.option_at = OptionAt;
  host.option_get = OptionGet;
  host.node_op_type = NodeOpType;
  host.node_domain = NodeDomain;
  host.node_name = NodeName;
  host.node_input_count = NodeIoCount;
  host.node_input_name = NodeIoName;
  host.node_output_count = NodeIoCount;
  host.node_output_name = NodeIoName;
  host.node_input_is_constant = NodeInputIsConstant;
  host.node_attr_type = NodeAttrType;
  return host;
}

struct LoadedEp {
  const nxrt_ep_api* api = nullptr;
  nxrt_ep* ep = nullptr;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "bench_cpu_kernels: %s\n", what.c_str());
  std::exit(1);
}

LoadedEp& Ep() {
  static nxrt_host_api host = MakeHost();
  static LoadedEp loaded = [] {
    const std::string path = std::string(NXRT_BINARY_DIR) + "/lib/libep_cpu.so";
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) Die(dlerror());
    auto init = reinterpret_cast<nxrt_ep_plugin_init_fn>(dlsym(library, NXRT_EP_ENTRY_SYMBOL));
    if (!init) Die("no entry symbol in " + path);
    LoadedEp result;
    if (nxrt_status* s = init(NXRT_EP_ABI_VERSION, &host, nullptr, &result.api)) {
      Die(StatusMessage(s));
    }
    if (nxrt_status* s = result.api->create_ep(nullptr, nullptr, &result.ep)) {
      Die(StatusMessage(s));
    }
    return result;
  }();
  return loaded;
}

nxrt_value Tensor(std::vector<float>& data, const std::vector<int64_t>& dims) {
  nxrt_value v{};
  v.struct_size = sizeof(v);
  v.kind = NXRT_VALUE_TENSOR;
  v.tensor =
      nxrt_tensor{sizeof(nxrt_tensor), NXRT_DTYPE_FLOAT32, NXRT_MEMORY_HOST,           dims.size(),
                  dims.data(),         data.data(),        data.size() * sizeof(float)};
  return v;
}

// Times compute of `op` on float inputs `a` and `b` into a preallocated output.
void RunKernel(benchmark::State& state, const char* op, const std::vector<int64_t>& a_dims,
               const std::vector<int64_t>& b_dims, const std::vector<int64_t>& out_dims) {
  LoadedEp& ep = Ep();
  const std::vector<nxrt_shape> shapes{
      {sizeof(nxrt_shape), NXRT_DTYPE_FLOAT32, a_dims.size(), a_dims.data()},
      {sizeof(nxrt_shape), NXRT_DTYPE_FLOAT32, b_dims.size(), b_dims.data()}};
  nxrt_artifact_config config{sizeof(nxrt_artifact_config), 1, 1, 1};
  nxrt_kernel* kernel = nullptr;
  if (nxrt_status* s = ep.api->create_kernel(ep.ep, &config, reinterpret_cast<const nxrt_node*>(op),
                                             shapes.data(), shapes.size(), 17, &kernel)) {
    Die(StatusMessage(s));
  }
  auto count = [](const std::vector<int64_t>& d) {
    size_t n = 1;
    for (int64_t x : d) n *= static_cast<size_t>(x);
    return n;
  };
  std::vector<float> a(count(a_dims), 0.5f), b(count(b_dims), 0.25f), y(count(out_dims));
  const nxrt_value inputs[2] = {Tensor(a, a_dims), Tensor(b, b_dims)};
  nxrt_value outputs[1] = {Tensor(y, out_dims)};
  for (auto _ : state) {
    if (nxrt_status* s = ep.api->kernel_api->compute(kernel, nullptr, inputs, 2, outputs, 1)) {
      Die(StatusMessage(s));
    }
    benchmark::DoNotOptimize(y.data());
  }
  ep.api->kernel_api->destroy(kernel);
}

void BM_MatMul1024(benchmark::State& state) {
  RunKernel(state, "MatMul", {1024, 1024}, {1024, 1024}, {1024, 1024});
  state.SetItemsProcessed(state.iterations() * 2LL * 1024 * 1024 * 1024);
}
BENCHMARK(BM_MatMul1024)->Unit(benchmark::kMillisecond);

void BM_AddOneElementDispatch(benchmark::State& state) {
  RunKernel(state, "Add", {1}, {1}, {1});
}
BENCHMARK(BM_AddOneElementDispatch);

}  // namespace

BENCHMARK_MAIN();
