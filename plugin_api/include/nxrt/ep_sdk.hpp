// nxrt EP SDK: a header-only C++ layer over ep_abi.h for execution-provider
// authors.
//
// Write one class per kernel (derived from nxrt::sdk::Kernel), one class per
// EP (derived from nxrt::sdk::ExecutionProvider, constructed from a Host and
// its Options), and export the plugin with
//
//   NXRT_EP_DEFINE_PLUGIN(MyEp, "name", "vendor", "1.0")
//
// in one source file. The SDK fills the C tables, negotiates the ABI version,
// reads the host table through its struct_size, and turns every exception
// thrown by EP or kernel code into a status at the boundary (throw
// nxrt::sdk::Error to choose the code), so nothing unwinds into the host.
// Depends on the C++ standard library and ep_abi.h only.
#pragma once

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nxrt/ep_abi.h"
#include "nxrt/ep_dtype.hpp"

namespace nxrt::sdk {

// An error with an ABI status code; thrown from EP or kernel code, it reaches
// the host as that status.
class Error : public std::exception {
 public:
  Error(nxrt_status_code code, std::string message) : code_(code), message_(std::move(message)) {}
  nxrt_status_code code() const { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  nxrt_status_code code_;
  std::string message_;
};

// The host table and this plugin's host context. Cheap to copy; entries the
// host's table does not reach read as absent.
class Host {
 public:
  Host(const nxrt_host_api* api, nxrt_host_context* context)
      : api_(std::make_shared<nxrt_host_api>()), context_(context) {
    std::memset(static_cast<void*>(api_.get()), 0, sizeof(nxrt_host_api));
    std::memcpy(static_cast<void*>(api_.get()), api,
                std::min(api->struct_size, sizeof(nxrt_host_api)));
  }

  const nxrt_host_api& api() const { return *api_; }
  nxrt_host_context* context() const { return context_; }
  uint32_t abi_version() const { return api_->abi_version; }

  bool LogEnabled(nxrt_log_level level) const {
    return api_->log_enabled && api_->log_enabled(context_, level) != 0;
  }
  void Log(nxrt_log_level level, const std::string& message) const {
    if (api_->log) api_->log(context_, level, message.c_str());
  }

  // Converts and releases a status the host returned; throws it as an Error.
  void Check(nxrt_status* status) const {
    if (status == nullptr) return;
    Error error(api_->status_code(status), api_->status_message(status));
    api_->status_release(status);
    throw error;
  }

  nxrt_status* MakeStatus(nxrt_status_code code, const char* message) const {
    return api_->status_create(code, message);
  }

 private:
  std::shared_ptr<nxrt_host_api> api_;
  nxrt_host_context* context_;
};

// The options an EP instance was created with.
class Options {
 public:
  Options(const Host& host, const nxrt_options* options) : host_(&host), options_(options) {}

  size_t size() const { return host_->api().option_count(options_); }
  std::pair<std::string_view, std::string_view> at(size_t index) const {
    const nxrt_option* option = host_->api().option_at(options_, index);
    return {option->key, option->value};
  }
  std::optional<std::string> Get(const char* key) const {
    const char* value = host_->api().option_get(options_, key);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }

 private:
  const Host* host_;
  const nxrt_options* options_;
};

// Read access to one graph node.
class Node {
 public:
  Node(const Host& host, const nxrt_node* node) : host_(host), node_(node) {}

  const nxrt_node* handle() const { return node_; }
  std::string_view op_type() const { return host_.api().node_op_type(node_); }
  std::string_view domain() const { return host_.api().node_domain(node_); }
  std::string_view name() const { return host_.api().node_name(node_); }
  size_t input_count() const { return host_.api().node_input_count(node_); }
  size_t output_count() const { return host_.api().node_output_count(node_); }
  // Empty for an absent optional input.
  std::optional<std::string_view> input_name(size_t index) const {
    const char* value = host_.api().node_input_name(node_, index);
    if (value == nullptr) return std::nullopt;
    return std::string_view(value);
  }
  std::optional<std::string_view> output_name(size_t index) const {
    const char* value = host_.api().node_output_name(node_, index);
    if (value == nullptr) return std::nullopt;
    return std::string_view(value);
  }
  nxrt_value_info input_info(size_t index) const {
    nxrt_value_info info{};
    info.struct_size = sizeof(info);
    host_.Check(host_.api().node_input_info(node_, index, &info));
    return info;
  }
  nxrt_value_info output_info(size_t index) const {
    nxrt_value_info info{};
    info.struct_size = sizeof(info);
    host_.Check(host_.api().node_output_info(node_, index, &info));
    return info;
  }
  bool input_is_constant(size_t index) const {
    return host_.api().node_input_is_constant(node_, index) != 0;
  }

  nxrt_attr_type attr_type(const char* name) const {
    return host_.api().node_attr_type(node_, name);
  }
  int64_t AttrInt(const char* name, int64_t fallback) const {
    if (attr_type(name) == NXRT_ATTR_UNDEFINED) return fallback;
    int64_t value = 0;
    host_.Check(host_.api().node_attr_int(node_, name, &value));
    return value;
  }
  float AttrFloat(const char* name, float fallback) const {
    if (attr_type(name) == NXRT_ATTR_UNDEFINED) return fallback;
    float value = 0;
    host_.Check(host_.api().node_attr_float(node_, name, &value));
    return value;
  }
  std::string AttrString(const char* name, std::string fallback) const {
    if (attr_type(name) == NXRT_ATTR_UNDEFINED) return fallback;
    nxrt_string_view value{};
    host_.Check(host_.api().node_attr_string(node_, name, &value));
    return std::string(value.data, value.size);
  }
  std::vector<int64_t> AttrInts(const char* name) const {
    if (attr_type(name) == NXRT_ATTR_UNDEFINED) return {};
    const int64_t* values = nullptr;
    size_t count = 0;
    host_.Check(host_.api().node_attr_ints(node_, name, &values, &count));
    return std::vector<int64_t>(values, values + count);
  }
  std::vector<float> AttrFloats(const char* name) const {
    if (attr_type(name) == NXRT_ATTR_UNDEFINED) return {};
    const float* values = nullptr;
    size_t count = 0;
    host_.Check(host_.api().node_attr_floats(node_, name, &values, &count));
    return std::vector<float>(values, values + count);
  }
  std::vector<std::string> AttrStrings(const char* name) const {
    if (attr_type(name) == NXRT_ATTR_UNDEFINED) return {};
    size_t count = 0;
    host_.Check(host_.api().node_attr_strings_count(node_, name, &count));
    std::vector<std::string> values;
    values.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      nxrt_string_view value{};
      host_.Check(host_.api().node_attr_strings_at(node_, name, i, &value));
      values.emplace_back(value.data, value.size);
    }
    return values;
  }
  // A graph attribute's formal input and output counts; throws NOT_FOUND
  // when the node has no such graph.
  std::pair<size_t, size_t> AttrGraph(const char* name) const {
    if (host_.api().node_attr_graph == nullptr) {
      throw Error(NXRT_STATUS_UNSUPPORTED, "the host cannot describe graph attributes");
    }
    size_t inputs = 0;
    size_t outputs = 0;
    host_.Check(host_.api().node_attr_graph(node_, name, &inputs, &outputs));
    return {inputs, outputs};
  }

 private:
  Host host_;
  const nxrt_node* node_;
};

// Host services during one compute call. Absent (available() false) when a
// recorded graph is replayed: replayed kernels must not allocate.
class ComputeContext {
 public:
  ComputeContext(const Host& host, nxrt_compute_context* ctx) : host_(&host), ctx_(ctx) {}

  bool available() const { return ctx_ != nullptr; }
  nxrt_compute_context* handle() const { return ctx_; }

  nxrt_tensor AllocateOutput(size_t index, nxrt_dtype dtype, std::span<const int64_t> dims) {
    nxrt_tensor out{};
    out.struct_size = sizeof(out);
    host_->Check(
        host_->api().allocate_output(Require(), index, dtype, dims.size(), dims.data(), &out));
    return out;
  }
  // Makes output `index` a sequence of `length` elements, each then
  // allocated with AllocateSequenceElement.
  void AllocateSequenceOutput(size_t index, size_t length) {
    host_->Check(Service(host_->api().allocate_sequence_output)(Require(), index, length));
  }
  nxrt_tensor AllocateSequenceElement(size_t index, size_t element, nxrt_dtype dtype,
                                      std::span<const int64_t> dims) {
    nxrt_tensor out{};
    out.struct_size = sizeof(out);
    host_->Check(Service(host_->api().allocate_sequence_element)(Require(), index, element, dtype,
                                                                 dims.size(), dims.data(), &out));
    return out;
  }
  void SetOutputNone(size_t index) { host_->Check(host_->api().set_output_none(Require(), index)); }
  // Runs the body in graph attribute `attr_name` of the computing node; the
  // outputs are host-owned and valid until this compute call returns (a
  // later run of the same body may reuse them).
  void RunSubgraph(const char* attr_name, std::span<const nxrt_value> inputs,
                   std::span<nxrt_value> outputs) {
    host_->Check(Service(host_->api().run_subgraph)(Require(), attr_name, inputs.data(),
                                                    inputs.size(), outputs.data(), outputs.size()));
  }
  void SetStringElement(size_t index, size_t element, std::string_view text) {
    host_->Check(
        host_->api().set_string_element(Require(), index, element, text.data(), text.size()));
  }

 private:
  nxrt_compute_context* Require() const {
    if (ctx_ == nullptr) {
      throw Error(NXRT_STATUS_FAILED_PRECONDITION,
                  "a replayed kernel asked the host for a compute service; outputs must be "
                  "preallocated for capture");
    }
    return ctx_;
  }
  // A service entry the host's table may not reach.
  template <typename Fn>
  static Fn Service(Fn fn) {
    if (fn == nullptr) throw Error(NXRT_STATUS_UNSUPPORTED, "the host lacks this compute service");
    return fn;
  }
  const Host* host_;
  nxrt_compute_context* ctx_;
};

// Prepared constants a kernel can share with later shape variants of its
// node. Derive from it to hold packed weights or device buffers.
class SharedState {
 public:
  virtual ~SharedState() = default;
};

class ComputeRecorder;
namespace detail {
struct KernelHandle;
}

// One kernel. Only Compute is required; every other function has the ABI's
// default behaviour. The SDK hands the kernel itself to the host as its
// nxrt_kernel handle.
class Kernel {
 public:
  virtual ~Kernel() = default;

  virtual void Compute(ComputeContext& ctx, std::span<const nxrt_value> inputs,
                       std::span<nxrt_value> outputs) = 0;
  virtual void SetConstantInputs(std::span<const nxrt_bool> /*flags*/) {}
  virtual void PrepareConstantInputs(std::span<const nxrt_constant_input> /*constants*/) {}
  // nullptr: nothing to share.
  virtual std::shared_ptr<SharedState> ShareableConstantState() { return nullptr; }
  // True when the kernel keeps `state` and needs no preparation.
  virtual bool AdoptShareableConstantState(const std::shared_ptr<SharedState>& /*state*/) {
    return false;
  }
  virtual void SetCaptureSeqIndependent(bool /*independent*/) {}
  virtual bool CaptureSafe() const { return false; }
  // True when Compute reads every extent from its inputs, so the host may
  // run this kernel at any shapes of the same ranks (serves_other_shapes).
  virtual bool ServesOtherShapes() const { return false; }
  // False: nothing to report.
  virtual bool TelemetryArm(uint32_t /*request_id*/) { return false; }
  virtual void TelemetryReset() {}
  // nullopt: nothing observed.
  virtual std::optional<nxrt_telemetry> TelemetrySnapshot() { return std::nullopt; }
  virtual void TelemetryDisarm() {}

 private:
  friend struct detail::KernelHandle;
  // Set by the SDK as it hands the kernel over: the host of the kernel's EP
  // and the EP's call recorder (null unless the EP records calls). Kept in
  // the kernel, so a compute call reads no other allocation to reach it.
  std::optional<Host> host_;
  std::shared_ptr<ComputeRecorder> recorder_;
};

// The answer to a claim.
struct ClaimResult {
  bool claimed = false;
  std::string reason;  // why not, when declined

  static ClaimResult Claimed() { return {true, {}}; }
  static ClaimResult Declined(std::string why) { return {false, std::move(why)}; }
};

// One EP instance. Derived classes are constructed as
// `MyEp(const nxrt::sdk::Host&, const nxrt::sdk::Options&)` and should refuse
// unknown option keys by throwing Error(NXRT_STATUS_INVALID_ARGUMENT, ...).
//
// An EP whose kernels compute on memory of its own (a GPU's) also declares
//
//   void* Alloc(size_t bytes, size_t alignment);
//   void Free(void* ptr);
//   void CopyToDevice(void* dst, const void* src, size_t bytes);
//   void CopyToHost(void* dst, const void* src, size_t bytes);
//   void Synchronize();
//
// and the SDK fills the ABI's memory entries from them (OwnsMemory below);
// without them the host's memory serves the EP.
// For an EP whose device graphs are recordings of compute calls rather than
// a device's own capture (the CPU EP): while capturing() holds, the SDK
// offers each compute call of the EP's kernels to Record instead of running
// it, and it calls KernelDestroyed before each of the EP's kernels goes.
// Kernels share the recorder with their EP, so it outlives both.
class ComputeRecorder {
 public:
  virtual ~ComputeRecorder() = default;

  // The check every compute call makes; Record decides for certain.
  bool capturing() const { return capturing_.load(std::memory_order_acquire); }
  // True when the call was recorded; false when it must run now (a capture
  // held by another thread, say). Throws to fail the call.
  virtual bool Record(Kernel& kernel, std::span<const nxrt_value> inputs,
                      std::span<const nxrt_value> outputs) = 0;
  virtual void KernelDestroyed(Kernel& kernel) noexcept = 0;

 protected:
  void set_capturing(bool capturing) { capturing_.store(capturing, std::memory_order_release); }

 private:
  std::atomic<bool> capturing_{false};
};

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;

  virtual ClaimResult Claim(const Node& node, int64_t opset,
                            std::span<const nxrt_value_info> inputs,
                            std::span<const nxrt_layout> layouts) = 0;
  virtual std::unique_ptr<Kernel> CreateKernel(const nxrt_artifact_config& config, const Node& node,
                                               std::span<const nxrt_shape> inputs,
                                               int64_t opset) = 0;

  // Device graphs; an EP that captures overrides all five.
  virtual bool DeviceGraphsSupported() const { return false; }
  virtual void BeginCapture(nxrt_graph_slot /*slot*/) { NoGraphs(); }
  virtual nxrt_graph_token EndCapture(nxrt_graph_slot /*slot*/) {
    NoGraphs();
    return 0;
  }
  virtual void Replay(nxrt_graph_token /*token*/) { NoGraphs(); }
  virtual void Reset(nxrt_graph_token /*token*/) { NoGraphs(); }
  // The recorder of an EP that captures by recording compute calls; asked
  // once per kernel made. Null (the default): compute calls always run.
  virtual std::shared_ptr<ComputeRecorder> CallRecorder() { return nullptr; }

 private:
  [[noreturn]] static void NoGraphs() {
    throw Error(NXRT_STATUS_UNSUPPORTED, "this EP does not capture device graphs");
  }
};

namespace detail {

struct EpBox {
  Host host;
  std::unique_ptr<ExecutionProvider> ep;
};

// The kernel behind an nxrt_kernel handle, and what the SDK keeps in it.
struct KernelHandle {
  static nxrt_kernel* Adopt(std::unique_ptr<Kernel> kernel, const Host& host,
                            std::shared_ptr<ComputeRecorder> recorder) {
    kernel->host_.emplace(host);
    kernel->recorder_ = std::move(recorder);
    return reinterpret_cast<nxrt_kernel*>(kernel.release());
  }
  static Kernel* Of(nxrt_kernel* handle) { return reinterpret_cast<Kernel*>(handle); }
  static const Kernel* Of(const nxrt_kernel* handle) {
    return reinterpret_cast<const Kernel*>(handle);
  }
  static const Host& HostOf(const Kernel& kernel) { return *kernel.host_; }
  static ComputeRecorder* RecorderOf(const Kernel& kernel) { return kernel.recorder_.get(); }
};

// The C handle for shared state: the plugin's reference count around the
// C++ state.
struct SharedStateBox {
  std::atomic<int64_t> references{1};
  std::shared_ptr<SharedState> state;
};

inline EpBox* Unbox(nxrt_ep* ep) {
  return reinterpret_cast<EpBox*>(ep);
}
inline const EpBox* Unbox(const nxrt_ep* ep) {
  return reinterpret_cast<const EpBox*>(ep);
}
inline SharedStateBox* Unbox(nxrt_shared_state* s) {
  return reinterpret_cast<SharedStateBox*>(s);
}

// Runs `body`, turning any exception into a status made by `host`.
template <typename Body>
nxrt_status* Guard(const Host& host, Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const Error& e) {
    return host.MakeStatus(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return host.MakeStatus(NXRT_STATUS_OUT_OF_MEMORY,
                           "out of memory in the plugin: it could not allocate what this call "
                           "needs; try smaller inputs, or free memory");
  } catch (const std::exception& e) {
    return host.MakeStatus(NXRT_STATUS_INTERNAL, e.what());
  } catch (...) {
    return host.MakeStatus(NXRT_STATUS_INTERNAL, "the plugin threw an unknown exception");
  }
}

template <typename T>
std::span<const T> SpanOf(const T* data, size_t count) {
  return data ? std::span<const T>(data, count) : std::span<const T>();
}

// An array of structs the host laid out at its own struct_size, as structs of
// this plugin's size: fields the host does not know read as zero, fields this
// plugin does not know are dropped.
template <typename T>
std::vector<T> StructsOf(const T* data, size_t count) {
  std::vector<T> out(count);
  if (data == nullptr || count == 0) return out;
  const size_t stride = data->struct_size;
  const size_t copied = std::min(stride, sizeof(T));
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  for (size_t i = 0; i < count; ++i) {
    std::memset(static_cast<void*>(&out[i]), 0, sizeof(T));
    std::memcpy(static_cast<void*>(&out[i]), bytes + i * stride, copied);
    out[i].struct_size = sizeof(T);
  }
  return out;
}

template <typename Ep>
nxrt_status* CreateEp(nxrt_host_context* context, const nxrt_options* options, nxrt_ep** out,
                      const nxrt_host_api* host_api) noexcept {
  Host host(host_api, context);
  return Guard(host, [&] {
    auto box = std::make_unique<EpBox>(EpBox{host, nullptr});
    const Options wrapped(box->host, options);
    box->ep = std::make_unique<Ep>(box->host, wrapped);
    *out = reinterpret_cast<nxrt_ep*>(box.release());
  });
}

inline void DestroyEp(nxrt_ep* ep) noexcept {
  delete Unbox(ep);
}

inline nxrt_status* ClaimNode(nxrt_ep* ep, const nxrt_node* node, int64_t opset,
                              const nxrt_value_info* inputs, const nxrt_layout* layouts,
                              size_t input_count) noexcept {
  EpBox* box = Unbox(ep);
  ClaimResult result;
  nxrt_status* failed = Guard(box->host, [&] {
    result = box->ep->Claim(Node(box->host, node), opset, SpanOf(inputs, input_count),
                            SpanOf(layouts, input_count));
  });
  if (failed || result.claimed) return failed;
  return box->host.MakeStatus(NXRT_STATUS_UNSUPPORTED, result.reason.c_str());
}

inline nxrt_status* CreateKernel(nxrt_ep* ep, const nxrt_artifact_config* config,
                                 const nxrt_node* node, const nxrt_shape* inputs,
                                 size_t input_count, int64_t opset, nxrt_kernel** out) noexcept {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] {
    auto kernel =
        box->ep->CreateKernel(*config, Node(box->host, node), SpanOf(inputs, input_count), opset);
    if (!kernel) throw Error(NXRT_STATUS_INTERNAL, "the EP made no kernel");
    *out = KernelHandle::Adopt(std::move(kernel), box->host, box->ep->CallRecorder());
  });
}

inline nxrt_bool DeviceGraphsSupported(const nxrt_ep* ep) noexcept {
  try {
    return Unbox(ep)->ep->DeviceGraphsSupported() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

inline nxrt_status* BeginCapture(nxrt_ep* ep, nxrt_graph_slot slot) noexcept {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { box->ep->BeginCapture(slot); });
}

inline nxrt_status* EndCapture(nxrt_ep* ep, nxrt_graph_slot slot, nxrt_graph_token* out) noexcept {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { *out = box->ep->EndCapture(slot); });
}

inline nxrt_status* Replay(nxrt_ep* ep, nxrt_graph_token token) noexcept {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { box->ep->Replay(token); });
}

inline nxrt_status* Reset(nxrt_ep* ep, nxrt_graph_token token) noexcept {
  EpBox* box = Unbox(ep);
  return Guard(box->host, [&] { box->ep->Reset(token); });
}

inline nxrt_status* Compute(nxrt_kernel* kernel, nxrt_compute_context* ctx,
                            const nxrt_value* inputs, size_t input_count, nxrt_value* outputs,
                            size_t output_count) noexcept {
  Kernel* k = KernelHandle::Of(kernel);
  const Host& host = KernelHandle::HostOf(*k);
  return Guard(host, [&] {
    const std::span<const nxrt_value> in = SpanOf(inputs, input_count);
    const std::span<nxrt_value> out =
        outputs ? std::span<nxrt_value>(outputs, output_count) : std::span<nxrt_value>();
    ComputeRecorder* recorder = KernelHandle::RecorderOf(*k);
    if (recorder && recorder->capturing() && recorder->Record(*k, in, out)) return;
    ComputeContext context(host, ctx);
    k->Compute(context, in, out);
  });
}

inline void DestroyKernel(nxrt_kernel* kernel) noexcept {
  Kernel* k = KernelHandle::Of(kernel);
  if (ComputeRecorder* recorder = KernelHandle::RecorderOf(*k)) recorder->KernelDestroyed(*k);
  delete k;
}

inline void SetConstantInputs(nxrt_kernel* kernel, const nxrt_bool* flags, size_t count) noexcept {
  try {
    KernelHandle::Of(kernel)->SetConstantInputs(SpanOf(flags, count));
  } catch (...) {
    // A notification cannot report failure; the kernel keeps its defaults.
  }
}

inline nxrt_status* PrepareConstantInputs(nxrt_kernel* kernel, const nxrt_constant_input* constants,
                                          size_t count) noexcept {
  Kernel* k = KernelHandle::Of(kernel);
  return Guard(KernelHandle::HostOf(*k), [&] {
    const std::vector<nxrt_constant_input> normalised = StructsOf(constants, count);
    k->PrepareConstantInputs(normalised);
  });
}

inline nxrt_shared_state* ShareableConstantState(nxrt_kernel* kernel) noexcept {
  try {
    auto state = KernelHandle::Of(kernel)->ShareableConstantState();
    if (!state) return nullptr;
    auto* box = new SharedStateBox();
    box->state = std::move(state);
    return reinterpret_cast<nxrt_shared_state*>(box);
  } catch (...) {
    return nullptr;
  }
}

inline nxrt_status* AdoptShareableConstantState(nxrt_kernel* kernel, nxrt_shared_state* state,
                                                nxrt_bool* adopted) noexcept {
  Kernel* k = KernelHandle::Of(kernel);
  return Guard(KernelHandle::HostOf(*k), [&] {
    *adopted = state && k->AdoptShareableConstantState(Unbox(state)->state) ? 1 : 0;
  });
}

inline void SharedStateRetain(nxrt_shared_state* state) noexcept {
  if (state) Unbox(state)->references.fetch_add(1, std::memory_order_relaxed);
}

inline void SharedStateRelease(nxrt_shared_state* state) noexcept {
  if (state && Unbox(state)->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete Unbox(state);
  }
}

inline void SetCaptureSeqIndependent(nxrt_kernel* kernel, nxrt_bool independent) noexcept {
  try {
    KernelHandle::Of(kernel)->SetCaptureSeqIndependent(independent != 0);
  } catch (...) {
    // A notification cannot report failure; the host's decision still stands.
  }
}

inline nxrt_bool CaptureSafe(const nxrt_kernel* kernel) noexcept {
  try {
    return KernelHandle::Of(kernel)->CaptureSafe() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

inline nxrt_bool ServesOtherShapes(const nxrt_kernel* kernel) noexcept {
  try {
    return KernelHandle::Of(kernel)->ServesOtherShapes() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

inline nxrt_status* TelemetryArm(nxrt_kernel* kernel, uint32_t request_id,
                                 nxrt_bool* armed) noexcept {
  Kernel* k = KernelHandle::Of(kernel);
  return Guard(KernelHandle::HostOf(*k), [&] { *armed = k->TelemetryArm(request_id) ? 1 : 0; });
}

inline nxrt_status* TelemetryReset(nxrt_kernel* kernel) noexcept {
  Kernel* k = KernelHandle::Of(kernel);
  return Guard(KernelHandle::HostOf(*k), [&] { k->TelemetryReset(); });
}

inline nxrt_status* TelemetrySnapshot(nxrt_kernel* kernel, nxrt_telemetry* out,
                                      nxrt_bool* observed) noexcept {
  Kernel* k = KernelHandle::Of(kernel);
  return Guard(KernelHandle::HostOf(*k), [&] {
    auto snapshot = k->TelemetrySnapshot();
    *observed = snapshot ? 1 : 0;
    if (!snapshot) return;
    // Write only the fields both sides know; the host sized `out`.
    const size_t host_size = out->struct_size;
    snapshot->struct_size = host_size;
    std::memcpy(static_cast<void*>(out), &*snapshot, std::min(host_size, sizeof(nxrt_telemetry)));
  });
}

inline nxrt_status* TelemetryDisarm(nxrt_kernel* kernel) noexcept {
  Kernel* k = KernelHandle::Of(kernel);
  return Guard(KernelHandle::HostOf(*k), [&] { k->TelemetryDisarm(); });
}

inline nxrt_kernel_api MakeKernelApi() {
  nxrt_kernel_api api{};
  api.struct_size = sizeof(api);
  api.compute = Compute;
  api.destroy = DestroyKernel;
  api.set_constant_inputs = SetConstantInputs;
  api.prepare_constant_inputs = PrepareConstantInputs;
  api.shareable_constant_state = ShareableConstantState;
  api.adopt_shareable_constant_state = AdoptShareableConstantState;
  api.shared_state_retain = SharedStateRetain;
  api.shared_state_release = SharedStateRelease;
  api.set_capture_seq_independent = SetCaptureSeqIndependent;
  api.capture_safe = CaptureSafe;
  api.telemetry_arm = TelemetryArm;
  api.telemetry_reset = TelemetryReset;
  api.telemetry_snapshot = TelemetrySnapshot;
  api.telemetry_disarm = TelemetryDisarm;
  api.serves_other_shapes = ServesOtherShapes;
  return api;
}

using CreateEpFn = nxrt_status* (*)(nxrt_host_context*, const nxrt_options*, nxrt_ep**);

template <typename Ep>
concept OwnsMemory = requires(Ep& ep, void* ptr, const void* src, size_t n) {
  { ep.Alloc(n, n) } -> std::same_as<void*>;
  ep.Free(ptr);
  ep.CopyToDevice(ptr, src, n);
  ep.CopyToHost(ptr, src, n);
  ep.Synchronize();
};

template <typename Ep>
Ep& EpOf(nxrt_ep* ep) {
  return static_cast<Ep&>(*Unbox(ep)->ep);
}

// The memory entries of an EP class that OwnsMemory.
template <typename Ep>
void SetMemoryEntries(nxrt_ep_api& api) {
  api.alloc = [](nxrt_ep* ep, size_t bytes, size_t alignment, void** out) noexcept {
    return Guard(Unbox(ep)->host, [&] { *out = EpOf<Ep>(ep).Alloc(bytes, alignment); });
  };
  api.free = [](nxrt_ep* ep, void* ptr) noexcept {
    try {
      EpOf<Ep>(ep).Free(ptr);
    } catch (...) {
      // free cannot report failure; the EP reclaims its memory when it goes.
    }
  };
  api.copy_to_device = [](nxrt_ep* ep, void* dst, const void* src, size_t bytes) noexcept {
    return Guard(Unbox(ep)->host, [&] { EpOf<Ep>(ep).CopyToDevice(dst, src, bytes); });
  };
  api.copy_to_host = [](nxrt_ep* ep, void* dst, const void* src, size_t bytes) noexcept {
    return Guard(Unbox(ep)->host, [&] { EpOf<Ep>(ep).CopyToHost(dst, src, bytes); });
  };
  api.synchronize = [](nxrt_ep* ep) noexcept {
    return Guard(Unbox(ep)->host, [&] { EpOf<Ep>(ep).Synchronize(); });
  };
}

template <typename Ep>
nxrt_ep_api MakeEpApi(CreateEpFn create_ep, const nxrt_kernel_api* kernel_api, const char* name,
                      const char* vendor, const char* version) {
  nxrt_ep_api api{};
  api.struct_size = sizeof(api);
  api.abi_version = NXRT_EP_ABI_VERSION;
  api.name = name;
  api.vendor = vendor;
  api.version = version;
  api.create_ep = create_ep;
  api.destroy_ep = DestroyEp;
  api.claim = ClaimNode;
  api.create_kernel = CreateKernel;
  api.kernel_api = kernel_api;
  api.begin_capture = BeginCapture;
  api.end_capture = EndCapture;
  api.replay = Replay;
  api.reset = Reset;
  api.device_graphs_supported = DeviceGraphsSupported;
  if constexpr (OwnsMemory<Ep>) SetMemoryEntries<Ep>(api);
  return api;
}

inline nxrt_status* Init(uint32_t host_abi_version, const nxrt_host_api* host,
                         std::atomic<const nxrt_host_api*>& host_table, const nxrt_ep_api* table,
                         const nxrt_ep_api** out) noexcept {
  if (NXRT_EP_ABI_VERSION_MAJOR_OF(host_abi_version) != NXRT_EP_ABI_VERSION_MAJOR) {
    const std::string message = "plugin built for ABI major " +
                                std::to_string(NXRT_EP_ABI_VERSION_MAJOR) + ", host speaks major " +
                                std::to_string(NXRT_EP_ABI_VERSION_MAJOR_OF(host_abi_version));
    return host->status_create(NXRT_STATUS_FAILED_PRECONDITION, message.c_str());
  }
  host_table.store(host);
  *out = table;
  return nullptr;
}

}  // namespace detail
}  // namespace nxrt::sdk

// Defines the plugin's entry symbol for EP class `EpClass` with the plugin's
// short name, vendor and version (string literals). Use once per plugin, at
// global scope. Everything it defines has internal linkage or C linkage, so
// the library can be unloaded (no process-unique symbols).
#define NXRT_EP_DEFINE_PLUGIN(EpClass, ep_name, ep_vendor, ep_version)                            \
  /* Every host speaks through one static table; create_ep needs it. */                           \
  static std::atomic<const nxrt_host_api*> nxrt_sdk_host_table{nullptr};                          \
  static nxrt_status* nxrt_sdk_create_ep(nxrt_host_context* context, const nxrt_options* options, \
                                         nxrt_ep** out) {                                         \
    return ::nxrt::sdk::detail::CreateEp<EpClass>(context, options, out,                          \
                                                  nxrt_sdk_host_table.load());                    \
  }                                                                                               \
  static const nxrt_kernel_api nxrt_sdk_kernel_api = ::nxrt::sdk::detail::MakeKernelApi();        \
  static const nxrt_ep_api nxrt_sdk_ep_api = ::nxrt::sdk::detail::MakeEpApi<EpClass>(             \
      nxrt_sdk_create_ep, &nxrt_sdk_kernel_api, ep_name, ep_vendor, ep_version);                  \
  extern "C" NXRT_EP_EXPORT nxrt_status* nxrt_ep_plugin_init(                                     \
      uint32_t host_abi_version, const nxrt_host_api* host, nxrt_host_context* host_context,      \
      const nxrt_ep_api** out) {                                                                  \
    (void)host_context;                                                                           \
    return ::nxrt::sdk::detail::Init(host_abi_version, host, nxrt_sdk_host_table,                 \
                                     &nxrt_sdk_ep_api, out);                                      \
  }
