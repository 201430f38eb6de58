// libep_fuzz_host_api.so: an EP that claims every node and, in claim,
// create_kernel and compute, calls the host's functions in the order and
// with the arguments a fuzzed script says (the EP option `script`, hex).
// Handles and out-pointers stay valid, as the ABI requires of any plugin;
// indices, names, dtypes, ranks, dims, counts and sizes are the script's,
// so every check the host makes on what a plugin asks for is exercised.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "nxrt/ep_abi.h"

extern "C" NXRT_EP_EXPORT nxrt_status* nxrt_ep_plugin_init(uint32_t host_abi_version,
                                                           const nxrt_host_api* host,
                                                           nxrt_host_context* host_context,
                                                           const nxrt_ep_api** out);

namespace {

const nxrt_host_api* host_api = nullptr;

// Reads the script; past its end every read answers 0.
class Script {
 public:
  explicit Script(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  bool done() const { return at_ >= bytes_.size(); }
  uint8_t Byte() { return done() ? 0 : bytes_[at_++]; }
  uint64_t Wide() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = value << 8 | Byte();
    return value;
  }
  // Mostly small, sometimes anything: where the host's range checks live.
  size_t Index() {
    uint8_t b = Byte();
    return b < 0xF0 ? b % 8 : static_cast<size_t>(Wide());
  }
  int64_t Extent() {
    uint8_t b = Byte();
    return b < 0xF0 ? b % 6 : static_cast<int64_t>(Wide());
  }
  std::string Name() {
    static const char* const kNames[] = {"axis", "then_branch", "else_branch", "body",    "value",
                                         "perm", "to",          "mode",        "strings", ""};
    uint8_t b = Byte();
    if (b < 0xE0) return kNames[b % (sizeof kNames / sizeof kNames[0])];
    std::string name(Byte() % 16, '\0');
    for (char& c : name) c = static_cast<char>(Byte() | 1);  // no NUL inside
    return name;
  }

 private:
  const std::vector<uint8_t>& bytes_;
  size_t at_ = 0;
};

volatile uint64_t sink = 0;  // what the script read, so nothing is optimised away

void Touch(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) sink = sink + bytes[i];
}
void Touch(const char* text) {
  if (text != nullptr) Touch(text, std::strlen(text));
}
void Drop(nxrt_status* status) {
  if (status == nullptr) return;
  Touch(host_api->status_message(status));
  host_api->status_release(status);
}

// Ops 0-6 may be called anywhere, 7-12 only in compute.
constexpr uint8_t kFirstComputeOp = 7;
constexpr uint8_t kOpCount = 13;

// One call on the statuses, the log, the options (null outside create_ep)
// or the node (null in create_ep).
void CallAnywhere(uint8_t op, Script& s, const nxrt_node* node, nxrt_host_context* host,
                  const nxrt_options* options) {
  const std::string name = s.Name();
  if (node == nullptr && op >= 3) return;
  switch (op) {
    case 0: {
      auto code = static_cast<nxrt_status_code>(1 + s.Byte() % 7);
      nxrt_status* status = host_api->status_create(code, s.Byte() % 2 ? name.c_str() : nullptr);
      sink = sink + host_api->status_code(status);
      Drop(status);
      return;
    }
    case 1:
      host_api->log(host, static_cast<nxrt_log_level>(s.Byte() % 5), name.c_str());
      sink = sink + host_api->log_enabled(host, static_cast<nxrt_log_level>(s.Byte() % 5));
      return;
    case 2: {
      const nxrt_options* which = s.Byte() % 2 ? options : nullptr;  // null is an empty set
      size_t count = host_api->option_count(which);
      size_t index = s.Index();
      if (index < count) Touch(host_api->option_at(which, index)->value);
      Touch(host_api->option_get(which, name.c_str()));
      return;
    }
    case 3:
      Touch(host_api->node_op_type(node));
      Touch(host_api->node_domain(node));
      Touch(host_api->node_name(node));
      sink = sink + host_api->node_input_count(node) + host_api->node_output_count(node);
      return;
    case 4: {
      size_t index = s.Index();
      if (index < host_api->node_input_count(node)) Touch(host_api->node_input_name(node, index));
      if (index < host_api->node_output_count(node)) Touch(host_api->node_output_name(node, index));
      sink = sink + host_api->node_input_is_constant(node, index);
      return;
    }
    case 5: {
      nxrt_value_info info{};
      info.struct_size = sizeof info;
      size_t index = s.Index();
      nxrt_status* status = s.Byte() % 2 ? host_api->node_input_info(node, index, &info)
                                         : host_api->node_output_info(node, index, &info);
      if (status == nullptr && info.rank > 0) Touch(info.dims, info.rank * sizeof(nxrt_dim));
      Drop(status);
      return;
    }
    case 6: {
      const char* key = name.c_str();
      sink = sink + host_api->node_attr_type(node, key);
      int64_t i = 0;
      float f = 0;
      nxrt_string_view text{};
      const int64_t* ints = nullptr;
      const float* floats = nullptr;
      size_t count = 0;
      nxrt_tensor tensor{};
      tensor.struct_size = sizeof tensor;
      size_t graph_inputs = 0, graph_outputs = 0;
      Drop(host_api->node_attr_int(node, key, &i));
      Drop(host_api->node_attr_float(node, key, &f));
      if (nxrt_status* st = host_api->node_attr_string(node, key, &text); st == nullptr) {
        Touch(text.data, text.size);
      } else {
        Drop(st);
      }
      if (nxrt_status* st = host_api->node_attr_ints(node, key, &ints, &count); st == nullptr) {
        Touch(ints, count * sizeof(int64_t));
      } else {
        Drop(st);
      }
      if (nxrt_status* st = host_api->node_attr_floats(node, key, &floats, &count); st == nullptr) {
        Touch(floats, count * sizeof(float));
      } else {
        Drop(st);
      }
      Drop(host_api->node_attr_strings_count(node, key, &count));
      if (nxrt_status* st = host_api->node_attr_strings_at(node, key, s.Index(), &text); !st) {
        Touch(text.data, text.size);
      } else {
        Drop(st);
      }
      if (nxrt_status* st = host_api->node_attr_tensor(node, key, &tensor); st == nullptr) {
        Touch(tensor.data, tensor.byte_size);
      } else {
        Drop(st);
      }
      Drop(host_api->node_attr_graph(node, key, &graph_inputs, &graph_outputs));
      return;
    }
    default:
      return;
  }
}

// Allocates, fills or clears one output (or its sequence elements), or
// runs a body, as the script says.
void CallInCompute(uint8_t op, Script& s, nxrt_compute_context* ctx, const nxrt_value* inputs,
                   size_t input_count) {
  const size_t index = s.Index();
  switch (op) {
    case 7:
    case 8: {
      std::vector<int64_t> dims(s.Byte() % 9);
      for (int64_t& d : dims) d = s.Extent();
      auto dtype = static_cast<nxrt_dtype>(s.Byte() % 24);
      nxrt_tensor out{};
      out.struct_size = sizeof out;
      nxrt_status* status =
          op == 7 ? host_api->allocate_output(ctx, index, dtype, dims.size(), dims.data(), &out)
                  : host_api->allocate_sequence_element(ctx, index, s.Index(), dtype, dims.size(),
                                                        dims.data(), &out);
      if (status == nullptr && out.data != nullptr) std::memset(out.data, 0x5A, out.byte_size);
      Drop(status);
      return;
    }
    case 9:
      Drop(host_api->allocate_sequence_output(ctx, index, s.Index()));
      return;
    case 10:
      Drop(host_api->set_output_none(ctx, index));
      return;
    case 11: {
      std::string text = s.Name();
      Drop(host_api->set_string_element(ctx, index, s.Index(), text.data(), text.size()));
      return;
    }
    case 12: {
      // The body takes a prefix of the node's own inputs; the output count is drawn.
      std::vector<nxrt_value> outputs(s.Byte() % 4);
      for (nxrt_value& v : outputs) v.struct_size = sizeof v;
      std::string attr = s.Name();
      size_t count = input_count == 0 ? 0 : s.Byte() % (input_count + 1);
      Drop(
          host_api->run_subgraph(ctx, attr.c_str(), inputs, count, outputs.data(), outputs.size()));
      return;
    }
    default:
      return;
  }
}

// The script's answer at the end of a call: OK, or one of the host's codes.
nxrt_status* Answer(Script& s, const char* where) {
  uint8_t b = s.Byte();
  if (b < 0xC0) return nullptr;
  return host_api->status_create(static_cast<nxrt_status_code>(1 + b % 7), where);
}

// Runs the calls up to a stop byte (0xFF), then answers.
nxrt_status* RunScript(Script& s, const nxrt_node* node, nxrt_host_context* host,
                       const nxrt_options* options, nxrt_compute_context* ctx,
                       const nxrt_value* inputs, size_t input_count, const char* where) {
  for (int calls = 0; calls < 64 && !s.done(); ++calls) {
    uint8_t op = s.Byte();
    if (op == 0xFF) break;
    op %= kOpCount;
    if (op < kFirstComputeOp) {
      CallAnywhere(op, s, node, host, options);
    } else if (ctx != nullptr) {
      CallInCompute(op, s, ctx, inputs, input_count);
    }
  }
  return Answer(s, where);
}

std::vector<uint8_t> FromHex(const char* hex) {
  std::vector<uint8_t> bytes;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (size_t i = 0; hex != nullptr && hex[i] != '\0' && hex[i + 1] != '\0'; i += 2) {
    bytes.push_back(static_cast<uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return bytes;
}

}  // namespace

// Every call reads the script from its start, so each node, kernel and run
// sees the same calls whatever the host's order.
struct nxrt_ep {
  nxrt_host_context* host = nullptr;
  std::vector<uint8_t> script;
};
struct nxrt_kernel {
  nxrt_ep* ep = nullptr;
  const nxrt_node* node = nullptr;  // valid for the kernel's life
};

namespace {

nxrt_status* CreateEp(nxrt_host_context* host, const nxrt_options* options, nxrt_ep** out) {
  auto* ep = new nxrt_ep;
  ep->host = host;
  ep->script = FromHex(host_api->option_get(options, "script"));
  Script s(ep->script);
  if (nxrt_status* status =
          RunScript(s, nullptr, host, options, nullptr, nullptr, 0, "create_ep")) {
    delete ep;
    return status;
  }
  *out = ep;
  return nullptr;
}

void DestroyEp(nxrt_ep* ep) {
  delete ep;
}

nxrt_status* Claim(nxrt_ep* ep, const nxrt_node* node, int64_t, const nxrt_value_info*,
                   const nxrt_layout*, size_t) {
  Script s(ep->script);
  return RunScript(s, node, ep->host, nullptr, nullptr, nullptr, 0, "claim");
}

nxrt_status* CreateKernel(nxrt_ep* ep, const nxrt_artifact_config*, const nxrt_node* node,
                          const nxrt_shape*, size_t, int64_t, nxrt_kernel** out) {
  Script s(ep->script);
  if (nxrt_status* status = RunScript(s, node, ep->host, nullptr, nullptr, nullptr, 0, "kernel")) {
    return status;
  }
  *out = new nxrt_kernel{ep, node};
  return nullptr;
}

nxrt_status* Compute(nxrt_kernel* kernel, nxrt_compute_context* ctx, const nxrt_value* inputs,
                     size_t input_count, nxrt_value*, size_t) {
  Script s(kernel->ep->script);
  return RunScript(s, kernel->node, kernel->ep->host, nullptr, ctx, inputs, input_count, "compute");
}

void DestroyKernel(nxrt_kernel* kernel) {
  delete kernel;
}

nxrt_kernel_api kernel_table;
nxrt_ep_api ep_table;

}  // namespace

nxrt_status* nxrt_ep_plugin_init(uint32_t host_abi_version, const nxrt_host_api* host,
                                 nxrt_host_context*, const nxrt_ep_api** out) {
  if (NXRT_EP_ABI_VERSION_MAJOR_OF(host_abi_version) != NXRT_EP_ABI_VERSION_MAJOR) {
    return host->status_create(NXRT_STATUS_FAILED_PRECONDITION, "fuzz_host_api: another ABI major");
  }
  host_api = host;
  kernel_table = {};
  kernel_table.struct_size = sizeof kernel_table;
  kernel_table.compute = Compute;
  kernel_table.destroy = DestroyKernel;
  ep_table = {};
  ep_table.struct_size = sizeof ep_table;
  ep_table.abi_version = NXRT_EP_ABI_VERSION;
  ep_table.name = "fuzz_host_api";
  ep_table.vendor = "nxrt fuzzing";
  ep_table.version = "1.0";
  ep_table.create_ep = CreateEp;
  ep_table.destroy_ep = DestroyEp;
  ep_table.claim = Claim;
  ep_table.create_kernel = CreateKernel;
  ep_table.kernel_api = &kernel_table;
  *out = &ep_table;
  return nullptr;
}
