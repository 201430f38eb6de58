/* nxrt execution-provider ABI, version 1.2 (docs/abi-changelog.md lists the
 * changes between minors).
 *
 * The one contract between the nxrt host (libnxrt) and an execution-provider
 * plugin (libep_NAME.so). Pure C11: only opaque handles, plain structs and
 * UTF-8 strings cross the boundary, so a plugin may be written in any language
 * and built with any compiler against this header alone.
 *
 * Rules that hold for every declaration below:
 *  - Versioning. A plugin exports one symbol, NXRT_EP_ENTRY_SYMBOL. The host
 *    passes the highest ABI version it speaks and its host table; the plugin
 *    answers with its own table, whose abi_version is the version it
 *    implements. Majors must match; the minor in force is the smaller one.
 *  - struct_size. Every struct that crosses, in either direction, starts with
 *    `size_t struct_size`, set by whoever fills it to sizeof the struct it was
 *    compiled with. Tables and structs only ever grow at the end. A reader
 *    treats a field past struct_size as absent, and a NULL optional function as
 *    "use the documented default". An array of structs is laid out at a stride
 *    of its elements' struct_size, which is the same for every element.
 *  - Status. A function that can fail returns `nxrt_status*`: NULL is success,
 *    anything else is an error object made by host->status_create. Whoever
 *    receives a non-NULL status owns it and releases it exactly once with
 *    host->status_release (or passes it on by returning it). Nothing throws
 *    across this boundary and a plugin never aborts the process.
 *  - Strings are UTF-8 and NUL-terminated unless a length is given. A string
 *    returned by the host is borrowed: valid for as long as the object it was
 *    read from, never freed by the plugin.
 *  - Lifetime. The host keeps a plugin library loaded while any EP, kernel,
 *    shared constant state or device graph made by it is alive.
 */
#ifndef NXRT_EP_ABI_H_
#define NXRT_EP_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Versions and the entry symbol                                              */
/* ------------------------------------------------------------------------- */

#define NXRT_EP_ABI_VERSION_MAJOR 1u
#define NXRT_EP_ABI_VERSION_MINOR 3u
#define NXRT_EP_ABI_MAKE_VERSION(major, minor) ((uint32_t)(((major) << 16) | ((minor)&0xFFFFu)))
#define NXRT_EP_ABI_VERSION_MAJOR_OF(version) ((uint32_t)(version) >> 16)
#define NXRT_EP_ABI_VERSION_MINOR_OF(version) ((uint32_t)(version)&0xFFFFu)
#define NXRT_EP_ABI_VERSION \
  NXRT_EP_ABI_MAKE_VERSION(NXRT_EP_ABI_VERSION_MAJOR, NXRT_EP_ABI_VERSION_MINOR)

/* Name of the one symbol every plugin exports, of type nxrt_ep_plugin_init_fn. */
#define NXRT_EP_ENTRY_SYMBOL "nxrt_ep_plugin_init"

#if defined(_WIN32)
#define NXRT_EP_EXPORT __declspec(dllexport)
#else
#define NXRT_EP_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------------- */
/* Plain types                                                                */
/* ------------------------------------------------------------------------- */

typedef int32_t nxrt_bool; /* 0 is false, anything else true. */

/* Error classes. NXRT_STATUS_UNSUPPORTED is also the "declined" answer of a
 * claim: its message is the reason shown to the user. */
typedef enum nxrt_status_code {
  NXRT_STATUS_OK = 0,
  NXRT_STATUS_INVALID_ARGUMENT = 1,
  NXRT_STATUS_NOT_FOUND = 2,
  NXRT_STATUS_UNSUPPORTED = 3,
  NXRT_STATUS_FAILED_PRECONDITION = 4,
  NXRT_STATUS_OUT_OF_MEMORY = 5,
  NXRT_STATUS_UNAVAILABLE = 6,
  NXRT_STATUS_INTERNAL = 7
} nxrt_status_code;

/* Element types; values equal ONNX TensorProto.DataType. */
typedef enum nxrt_dtype {
  NXRT_DTYPE_UNDEFINED = 0,
  NXRT_DTYPE_FLOAT32 = 1,
  NXRT_DTYPE_UINT8 = 2,
  NXRT_DTYPE_INT8 = 3,
  NXRT_DTYPE_UINT16 = 4,
  NXRT_DTYPE_INT16 = 5,
  NXRT_DTYPE_INT32 = 6,
  NXRT_DTYPE_INT64 = 7,
  NXRT_DTYPE_STRING = 8,
  NXRT_DTYPE_BOOL = 9,
  NXRT_DTYPE_FLOAT16 = 10,
  NXRT_DTYPE_FLOAT64 = 11,
  NXRT_DTYPE_UINT32 = 12,
  NXRT_DTYPE_UINT64 = 13,
  NXRT_DTYPE_COMPLEX64 = 14,
  NXRT_DTYPE_COMPLEX128 = 15,
  NXRT_DTYPE_BFLOAT16 = 16,
  NXRT_DTYPE_FLOAT8E4M3FN = 17,
  NXRT_DTYPE_FLOAT8E4M3FNUZ = 18,
  NXRT_DTYPE_FLOAT8E5M2 = 19,
  NXRT_DTYPE_FLOAT8E5M2FNUZ = 20,
  NXRT_DTYPE_UINT4 = 21,
  NXRT_DTYPE_INT4 = 22,
  NXRT_DTYPE_FLOAT4E2M1 = 23,
  NXRT_DTYPE_FLOAT8E8M0 = 24, /* since 1.1 */
  NXRT_DTYPE_UINT2 = 25,      /* since 1.1 */
  NXRT_DTYPE_INT2 = 26        /* since 1.1 */
} nxrt_dtype;

/* What a value slot holds. An absent optional input or output is NONE. */
typedef enum nxrt_value_kind {
  NXRT_VALUE_NONE = 0,
  NXRT_VALUE_TENSOR = 1,
  NXRT_VALUE_SEQUENCE = 2
} nxrt_value_kind;

/* Where a buffer lives. */
typedef enum nxrt_memory_kind { NXRT_MEMORY_HOST = 0, NXRT_MEMORY_DEVICE = 1 } nxrt_memory_kind;

/* How an input is laid out in memory. Version 1 defines dense row-major only. */
typedef enum nxrt_layout { NXRT_LAYOUT_CONTIGUOUS = 0 } nxrt_layout;

typedef enum nxrt_log_level {
  NXRT_LOG_TRACE = 0,
  NXRT_LOG_DEBUG = 1,
  NXRT_LOG_INFO = 2,
  NXRT_LOG_WARN = 3,
  NXRT_LOG_ERROR = 4
} nxrt_log_level;

typedef enum nxrt_attr_type {
  NXRT_ATTR_UNDEFINED = 0, /* also: no attribute of that name */
  NXRT_ATTR_FLOAT = 1,
  NXRT_ATTR_INT = 2,
  NXRT_ATTR_STRING = 3,
  NXRT_ATTR_TENSOR = 4,
  NXRT_ATTR_GRAPH = 5,
  NXRT_ATTR_FLOATS = 6,
  NXRT_ATTR_INTS = 7,
  NXRT_ATTR_STRINGS = 8,
  /* Since 1.1. Reported by node_attr_type only, so that a plugin can decline
   * a node whose attribute it has no getter for. */
  NXRT_ATTR_TENSORS = 9,
  NXRT_ATTR_GRAPHS = 10,
  NXRT_ATTR_TYPE_PROTO = 11,
  NXRT_ATTR_TYPE_PROTOS = 12
} nxrt_attr_type;

/* Device-graph slots: Primary records single-token decode, Verify the K-token
 * speculative verification step. */
typedef enum nxrt_graph_slot {
  NXRT_GRAPH_SLOT_PRIMARY = 0,
  NXRT_GRAPH_SLOT_VERIFY = 1
} nxrt_graph_slot;

/* One dimension of a possibly symbolic shape. */
typedef struct nxrt_dim {
  size_t struct_size;
  int64_t value;      /* the extent when static; -1 when symbolic */
  const char* symbol; /* the symbol's name when symbolic (borrowed), else NULL */
} nxrt_dim;

/* Type and possibly symbolic shape of a node input or output, as the host
 * inferred it. A rank of -1 means the rank is unknown. */
typedef struct nxrt_value_info {
  size_t struct_size;
  nxrt_value_kind kind;
  nxrt_dtype dtype; /* element type (of each element, for a sequence) */
  int64_t rank;
  const nxrt_dim* dims; /* rank entries, borrowed; NULL when rank <= 0 */
} nxrt_value_info;

/* A concrete shape. */
typedef struct nxrt_shape {
  size_t struct_size;
  nxrt_dtype dtype;
  size_t rank;
  const int64_t* dims; /* rank entries, borrowed; may be NULL when rank == 0 */
} nxrt_shape;

/* A view of one string element; not NUL-terminated. */
typedef struct nxrt_string_view {
  const char* data;
  size_t size;
} nxrt_string_view;

/* A dense tensor. For NXRT_DTYPE_STRING, data points to `element count`
 * nxrt_string_view entries. The memory is never owned through this struct: its
 * owner is named where the struct is handed over. */
typedef struct nxrt_tensor {
  size_t struct_size;
  nxrt_dtype dtype;
  nxrt_memory_kind memory;
  size_t rank;
  const int64_t* dims; /* rank entries; may be NULL when rank == 0 */
  void* data;          /* NULL only for an empty tensor or an unallocated output */
  size_t byte_size;
} nxrt_tensor;

/* A value in a compute call: a tensor, a sequence of tensors, or nothing. */
typedef struct nxrt_value {
  size_t struct_size;
  nxrt_value_kind kind;
  nxrt_tensor tensor;          /* meaningful when kind == NXRT_VALUE_TENSOR */
  size_t sequence_length;      /* meaningful when kind == NXRT_VALUE_SEQUENCE */
  const nxrt_tensor* sequence; /* sequence_length entries, borrowed */
} nxrt_value;

/* The configuration an artifact (kernel) is made for. A kernel made for one
 * configuration is never used under another. */
typedef struct nxrt_artifact_config {
  size_t struct_size;
  uint64_t provider;   /* the EP instance's id within the host */
  uint64_t executor;   /* the session executor's id */
  uint64_t generation; /* bumped when the executor is rebuilt */
} nxrt_artifact_config;

/* A constant (initializer) input handed to prepare_constant_inputs. */
typedef struct nxrt_constant_input {
  size_t struct_size;
  size_t input_index; /* the node input this constant feeds */
  nxrt_dtype dtype;
  size_t rank;
  const int64_t* dims;
  const void* bytes; /* borrowed; valid during the call, longer when bytes_persist */
  size_t byte_size;
  /* 1.2: nonzero when `bytes` stay valid and unchanged for as long as the
   * kernel this call prepares lives, and with it every kernel that adopts its
   * shareable state: the kernel may read them in place instead of keeping a
   * copy. Zero, or absent (struct_size too small), means copy what you keep. */
  nxrt_bool bytes_persist;
} nxrt_constant_input;

/* Per-request telemetry a kernel may report, summed by the host per node. */
typedef struct nxrt_telemetry {
  size_t struct_size;
  uint64_t uploaded_bytes;  /* bytes moved to the device for this request */
  uint64_t committed_bytes; /* bytes kept resident afterwards */
  uint64_t logical_bytes;   /* bytes the request asked for */
  uint64_t unique_bytes;    /* distinct bytes among those asked for */
  uint64_t page_ins;        /* residency misses served */
  nxrt_bool has_physical_bytes;
  uint64_t physical_bytes; /* bytes read from backing memory; valid when has_physical_bytes */
} nxrt_telemetry;

/* One key/value option, both borrowed strings. */
typedef struct nxrt_option {
  size_t struct_size;
  const char* key;
  const char* value;
} nxrt_option;

/* ------------------------------------------------------------------------- */
/* Opaque handles                                                             */
/* ------------------------------------------------------------------------- */

typedef struct nxrt_status nxrt_status;                   /* made and freed by the host */
typedef struct nxrt_host_context nxrt_host_context;       /* host side of one loaded plugin */
typedef struct nxrt_node nxrt_node;                       /* a graph node, host-owned */
typedef struct nxrt_options nxrt_options;                 /* key/value options, host-owned */
typedef struct nxrt_compute_context nxrt_compute_context; /* one compute call, host-owned */
typedef struct nxrt_ep nxrt_ep;                           /* an EP instance, plugin-owned */
typedef struct nxrt_kernel nxrt_kernel;                   /* a kernel, plugin-owned */
typedef struct nxrt_shared_state nxrt_shared_state;       /* refcounted prepared constants */
typedef uint64_t nxrt_graph_token;                        /* a captured device graph; 0 is none */

/* ------------------------------------------------------------------------- */
/* Host table: what the host gives a plugin                                   */
/* ------------------------------------------------------------------------- */

/* Every function here is thread-safe and may be called from any thread. */
typedef struct nxrt_host_api {
  size_t struct_size;
  uint32_t abi_version; /* highest version the host speaks */

  /* Statuses. status_create copies `message` (may be NULL) and returns a new
   * status owned by the caller; it never fails (on exhaustion it returns a
   * preallocated out-of-memory status that release ignores). code must not be
   * NXRT_STATUS_OK. */
  nxrt_status* (*status_create)(nxrt_status_code code, const char* message);
  void (*status_release)(nxrt_status* status); /* NULL is ignored */
  nxrt_status_code (*status_code)(const nxrt_status* status);
  /* Borrowed; valid until the status is released. Never NULL. */
  const char* (*status_message)(const nxrt_status* status);

  /* Logging into the host's log under this plugin's name. Messages below the
   * host's level are dropped cheaply; log_enabled lets a plugin skip
   * formatting. */
  void (*log)(nxrt_host_context* host, nxrt_log_level level, const char* message);
  nxrt_bool (*log_enabled)(nxrt_host_context* host, nxrt_log_level level);

  /* Options. Values are borrowed from `options` and live as long as it. A NULL
   * `options` behaves as an empty set. option_get returns NULL for a missing
   * key. */
  size_t (*option_count)(const nxrt_options* options);
  const nxrt_option* (*option_at)(const nxrt_options* options, size_t index);
  const char* (*option_get)(const nxrt_options* options, const char* key);

  /* Node access. A node handle and everything read from it stay valid for as
   * long as the call it was passed to, and for a kernel's whole life when it
   * was passed to create_kernel. */
  const char* (*node_op_type)(const nxrt_node* node);
  const char* (*node_domain)(const nxrt_node* node); /* "" for the default domain */
  const char* (*node_name)(const nxrt_node* node);   /* may be "" */
  size_t (*node_input_count)(const nxrt_node* node);
  /* The input's value name, or NULL for an absent optional input. */
  const char* (*node_input_name)(const nxrt_node* node, size_t index);
  size_t (*node_output_count)(const nxrt_node* node);
  const char* (*node_output_name)(const nxrt_node* node, size_t index); /* NULL if absent */
  /* Inferred type and shape; kind NONE for an absent slot. Returns
   * INVALID_ARGUMENT for an index out of range. */
  nxrt_status* (*node_input_info)(const nxrt_node* node, size_t index, nxrt_value_info* out);
  nxrt_status* (*node_output_info)(const nxrt_node* node, size_t index, nxrt_value_info* out);
  /* Whether input `index` is a constant (initializer) of the graph. */
  nxrt_bool (*node_input_is_constant)(const nxrt_node* node, size_t index);

  /* Attributes. attr_type answers NXRT_ATTR_UNDEFINED for a missing name. Each
   * getter returns NOT_FOUND for a missing name and INVALID_ARGUMENT for a
   * type mismatch; outputs are borrowed from the node. */
  nxrt_attr_type (*node_attr_type)(const nxrt_node* node, const char* name);
  nxrt_status* (*node_attr_int)(const nxrt_node* node, const char* name, int64_t* out);
  nxrt_status* (*node_attr_float)(const nxrt_node* node, const char* name, float* out);
  nxrt_status* (*node_attr_string)(const nxrt_node* node, const char* name, nxrt_string_view* out);
  nxrt_status* (*node_attr_ints)(const nxrt_node* node, const char* name, const int64_t** values,
                                 size_t* count);
  nxrt_status* (*node_attr_floats)(const nxrt_node* node, const char* name, const float** values,
                                   size_t* count);
  nxrt_status* (*node_attr_strings_count)(const nxrt_node* node, const char* name, size_t* count);
  nxrt_status* (*node_attr_strings_at)(const nxrt_node* node, const char* name, size_t index,
                                       nxrt_string_view* out);
  /* A tensor attribute as a host-memory tensor view. */
  nxrt_status* (*node_attr_tensor)(const nxrt_node* node, const char* name, nxrt_tensor* out);
  /* A graph attribute (If/Loop/Scan body): its formal input and output counts.
   * The body itself runs through run_subgraph. */
  nxrt_status* (*node_attr_graph)(const nxrt_node* node, const char* name, size_t* input_count,
                                  size_t* output_count);

  /* Compute-time services; `ctx` is the one passed to compute.
   *
   * allocate_output makes the buffer of output `index` when the host could not
   * preallocate it (its data was NULL): the host owns the memory, and `out`
   * receives the descriptor. Calling it for a preallocated output with the
   * same shape returns that buffer; with another shape, INVALID_ARGUMENT. */
  nxrt_status* (*allocate_output)(nxrt_compute_context* ctx, size_t index, nxrt_dtype dtype,
                                  size_t rank, const int64_t* dims, nxrt_tensor* out);
  /* Makes output `index` a sequence of `length` tensors; each element is then
   * allocated with allocate_sequence_element. A length past 2^24, or one whose
   * bookkeeping outgrows the session's memory limit, is OUT_OF_MEMORY. */
  nxrt_status* (*allocate_sequence_output)(nxrt_compute_context* ctx, size_t index, size_t length);
  nxrt_status* (*allocate_sequence_element)(nxrt_compute_context* ctx, size_t index, size_t element,
                                            nxrt_dtype dtype, size_t rank, const int64_t* dims,
                                            nxrt_tensor* out);
  /* Marks output `index` as an absent optional value. */
  nxrt_status* (*set_output_none)(nxrt_compute_context* ctx, size_t index);
  /* Stores string element `element` of a STRING output; the host copies it. */
  nxrt_status* (*set_string_element)(nxrt_compute_context* ctx, size_t index, size_t element,
                                     const char* data, size_t size);
  /* Runs the body held in graph attribute `attr_name` of the computing node on
   * host tensors. `outputs` receives output_count host-owned values, valid
   * until the compute call returns. */
  nxrt_status* (*run_subgraph)(nxrt_compute_context* ctx, const char* attr_name,
                               const nxrt_value* inputs, size_t input_count, nxrt_value* outputs,
                               size_t output_count);
} nxrt_host_api;

/* ------------------------------------------------------------------------- */
/* Kernel table: what a plugin's kernels do                                   */
/* ------------------------------------------------------------------------- */

/* The host never calls two functions of one kernel at the same time; distinct
 * kernels may be called concurrently. A kernel must not call back into its EP's
 * claim or create_kernel. */
typedef struct nxrt_kernel_api {
  size_t struct_size;

  /* Runs the kernel. `inputs` has one entry per node input (kind NONE when
   * absent); `outputs` one per node output, preallocated by the host where
   * the host knows the shape (data != NULL) and otherwise to be allocated
   * through host->allocate_output. For Identity, Reshape, Flatten, Squeeze
   * and Unsqueeze, a preallocated output 0 may be input 0's own bytes (the
   * host lets a view share its input's buffer): there is nothing to copy.
   * Required. */
  nxrt_status* (*compute)(nxrt_kernel* kernel, nxrt_compute_context* ctx, const nxrt_value* inputs,
                          size_t input_count, nxrt_value* outputs, size_t output_count);

  /* Frees the kernel and everything it owns; never fails. Required. */
  void (*destroy)(nxrt_kernel* kernel);

  /* Which inputs are graph constants (flags[i] != 0), before any prepare or
   * adopt. Optional; default: ignored. */
  void (*set_constant_inputs)(nxrt_kernel* kernel, const nxrt_bool* flags, size_t count);

  /* Prepares constant inputs once (pack weights, upload...). `constants` and
   * their bytes are borrowed for the call only. Optional; default: nothing to
   * prepare. */
  nxrt_status* (*prepare_constant_inputs)(nxrt_kernel* kernel, const nxrt_constant_input* constants,
                                          size_t count);

  /* Shareable prepared constants. shareable_constant_state returns a new
   * reference (the caller releases it with shared_state_release) or NULL when
   * the kernel has nothing to share. adopt_shareable_constant_state offers a
   * sibling variant's state to a new kernel of the same node: on *adopted != 0
   * the kernel took its own reference and skips preparation; on 0 the host
   * prepares constants instead. All optional; default: nothing shared. */
  nxrt_shared_state* (*shareable_constant_state)(nxrt_kernel* kernel);
  nxrt_status* (*adopt_shareable_constant_state)(nxrt_kernel* kernel, nxrt_shared_state* state,
                                                 nxrt_bool* adopted);
  void (*shared_state_retain)(nxrt_shared_state* state);
  void (*shared_state_release)(nxrt_shared_state* state);

  /* The host's capture decision for this node: nonzero when its shapes do not
   * depend on a growing KV length, so it may be recorded into a device graph.
   * Optional; default: ignored. */
  void (*set_capture_seq_independent)(nxrt_kernel* kernel, nxrt_bool independent);

  /* The kernel's own statement that compute does no host sync, no allocation
   * and no host read of device data, so it may run inside a capture.
   * Optional; default: not capture-safe. */
  nxrt_bool (*capture_safe)(const nxrt_kernel* kernel);

  /* Per-request telemetry. telemetry_arm answers *armed = 0 when the kernel
   * has nothing to report. telemetry_snapshot answers *observed = 0 when the
   * kernel has nothing to report; the host zeroes `out` and sets its
   * struct_size, and the plugin writes only fields within both sizes. All
   * optional; default: no telemetry. */
  nxrt_status* (*telemetry_arm)(nxrt_kernel* kernel, uint32_t request_id, nxrt_bool* armed);
  nxrt_status* (*telemetry_reset)(nxrt_kernel* kernel);
  nxrt_status* (*telemetry_snapshot)(nxrt_kernel* kernel, nxrt_telemetry* out, nxrt_bool* observed);
  nxrt_status* (*telemetry_disarm)(nxrt_kernel* kernel);

  /* Since 1.3. Nonzero when compute is correct at every input shape that
   * keeps the dtypes, ranks and absent inputs the kernel was made at and
   * that its EP claims: the kernel reads each extent from the values it is
   * given and keeps nothing sized by the shapes it was made at. The host may
   * then run this one kernel at all such shapes of its node and make no
   * other. Asked once, after the kernel's constants are prepared or adopted,
   * while no compute runs; `kernel` is never NULL. Optional; default: the
   * kernel serves only the shapes it was made at. */
  nxrt_bool (*serves_other_shapes)(const nxrt_kernel* kernel);
} nxrt_kernel_api;

/* ------------------------------------------------------------------------- */
/* EP table: what a plugin gives the host                                     */
/* ------------------------------------------------------------------------- */

/* Calls on one EP instance other than compute-time ones (alloc, free, copy,
 * synchronize) are serialised by the host. */
typedef struct nxrt_ep_api {
  size_t struct_size;
  uint32_t abi_version; /* the version this plugin implements */

  /* Static strings, valid while the library is loaded. Required. */
  const char* name; /* short EP name, e.g. "cpu" */
  const char* vendor;
  const char* version; /* the plugin's own version */

  /* Makes an EP instance from key/value options. Unknown keys should be
   * refused with INVALID_ARGUMENT naming the key. On success *out is owned by
   * the host and released with destroy_ep. A device that is not there is
   * UNAVAILABLE with a message saying so. Required. */
  nxrt_status* (*create_ep)(nxrt_host_context* host, const nxrt_options* options, nxrt_ep** out);
  void (*destroy_ep)(nxrt_ep* ep); /* Required; never fails. */

  /* Claims `node` at the given (possibly symbolic) input types and layouts.
   * NULL: claimed. UNSUPPORTED: declined, the message is the reason. Any other
   * code: the claim itself failed. Required. */
  nxrt_status* (*claim)(nxrt_ep* ep, const nxrt_node* node, int64_t opset,
                        const nxrt_value_info* inputs, const nxrt_layout* layouts,
                        size_t input_count);

  /* Makes a kernel for `node` at concrete input shapes for one artifact
   * configuration. `inputs` has one entry per node input; an absent optional
   * input has dtype NXRT_DTYPE_UNDEFINED and rank 0. On success *out is owned
   * by the host, released through kernel_api->destroy. Required. */
  nxrt_status* (*create_kernel)(nxrt_ep* ep, const nxrt_artifact_config* config,
                                const nxrt_node* node, const nxrt_shape* inputs, size_t input_count,
                                int64_t opset, nxrt_kernel** out);

  const nxrt_kernel_api* kernel_api; /* Required. */

  /* Memory. Optional as a group; default: host memory from the host allocator,
   * copies by memcpy, synchronize a no-op. The host may reuse `src` as soon
   * as copy_to_device returns; the bytes reach `dst` before anything the EP
   * runs after it. `dst` holds the bytes when copy_to_host returns. */
  nxrt_status* (*alloc)(nxrt_ep* ep, size_t bytes, size_t alignment, void** out);
  void (*free)(nxrt_ep* ep, void* ptr);
  nxrt_status* (*copy_to_device)(nxrt_ep* ep, void* dst, const void* src, size_t bytes);
  nxrt_status* (*copy_to_host)(nxrt_ep* ep, void* dst, const void* src, size_t bytes);
  nxrt_status* (*synchronize)(nxrt_ep* ep);

  /* Device graphs. Optional as a group; default: the EP cannot capture. Between
   * begin_capture and end_capture the host calls compute on capture-safe
   * kernels only; those calls are recorded, not run. end_capture yields a
   * token (nonzero) owned by the host; replay runs the recording; reset frees
   * it, after which the token is invalid. */
  nxrt_status* (*begin_capture)(nxrt_ep* ep, nxrt_graph_slot slot);
  nxrt_status* (*end_capture)(nxrt_ep* ep, nxrt_graph_slot slot, nxrt_graph_token* out);
  nxrt_status* (*replay)(nxrt_ep* ep, nxrt_graph_token token);
  nxrt_status* (*reset)(nxrt_ep* ep, nxrt_graph_token token);

  /* Since 1.1. Whether this EP instance can capture device graphs (an EP may
   * turn them off through its options, or lack the device feature). Called
   * after create_ep, from any thread; `ep` is never NULL. Optional; default:
   * nonzero exactly when all four device-graph functions above are set. */
  nxrt_bool (*device_graphs_supported)(const nxrt_ep* ep);
} nxrt_ep_api;

/* The entry symbol's type. `host_abi_version` is the highest version the host
 * speaks; `host` is valid while the library is loaded. On success *out points
 * to the plugin's static table. A plugin that cannot work with the host's
 * version returns FAILED_PRECONDITION saying why. Called once per load, before
 * anything else. */
typedef nxrt_status* (*nxrt_ep_plugin_init_fn)(uint32_t host_abi_version, const nxrt_host_api* host,
                                               nxrt_host_context* host_context,
                                               const nxrt_ep_api** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NXRT_EP_ABI_H_ */
