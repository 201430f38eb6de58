/* An execution provider written in plain C11 against ep_abi.h alone: the
 * proof that the ABI needs no C++ on the plugin side, and a starting point
 * for EP authors. It runs Identity for every tensor dtype and float32 Add of
 * two tensors of one shape, and declines everything else with a reason.
 *
 * Build it in nxrt's tree, or on its own against an installed nxrt:
 *   cmake -S examples/ep_c_identity -B build -DCMAKE_PREFIX_PATH=<nxrt prefix>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nxrt/ep_abi.h"

NXRT_EP_EXPORT nxrt_status* nxrt_ep_plugin_init(uint32_t host_abi_version,
                                                const nxrt_host_api* host,
                                                nxrt_host_context* host_context,
                                                const nxrt_ep_api** out);

/* Set once at init; the host's table lives as long as the process. */
static const nxrt_host_api* host_api;

typedef enum identity_op { OP_IDENTITY = 0, OP_ADD = 1 } identity_op;

struct nxrt_ep {
  nxrt_host_context* host;
};

struct nxrt_kernel {
  identity_op op;
};

/* Bytes per element, or 0 for dtypes this EP does not copy (strings and
 * sub-byte types). */
static size_t element_size(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_BOOL:
    case NXRT_DTYPE_UINT8:
    case NXRT_DTYPE_INT8:
    case NXRT_DTYPE_FLOAT8E4M3FN:
    case NXRT_DTYPE_FLOAT8E4M3FNUZ:
    case NXRT_DTYPE_FLOAT8E5M2:
    case NXRT_DTYPE_FLOAT8E5M2FNUZ:
    case NXRT_DTYPE_FLOAT8E8M0:
      return 1;
    case NXRT_DTYPE_UINT16:
    case NXRT_DTYPE_INT16:
    case NXRT_DTYPE_FLOAT16:
    case NXRT_DTYPE_BFLOAT16:
      return 2;
    case NXRT_DTYPE_FLOAT32:
    case NXRT_DTYPE_INT32:
    case NXRT_DTYPE_UINT32:
      return 4;
    case NXRT_DTYPE_FLOAT64:
    case NXRT_DTYPE_INT64:
    case NXRT_DTYPE_UINT64:
    case NXRT_DTYPE_COMPLEX64:
      return 8;
    case NXRT_DTYPE_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

static size_t element_count(const nxrt_tensor* t) {
  size_t count = 1;
  size_t i;
  for (i = 0; i < t->rank; ++i) count *= (size_t)t->dims[i];
  return count;
}

static nxrt_status* error(nxrt_status_code code, const char* message) {
  return host_api->status_create(code, message);
}

static nxrt_status* create_ep(nxrt_host_context* host, const nxrt_options* options, nxrt_ep** out) {
  nxrt_ep* ep;
  if (host_api->option_count(options) != 0) {
    char message[256];
    snprintf(message, sizeof message, "c_identity takes no options; unknown key '%s'",
             host_api->option_at(options, 0)->key);
    return error(NXRT_STATUS_INVALID_ARGUMENT, message);
  }
  ep = (nxrt_ep*)calloc(1, sizeof(nxrt_ep));
  if (ep == NULL) return error(NXRT_STATUS_OUT_OF_MEMORY, "c_identity: no memory for the EP");
  ep->host = host;
  *out = ep;
  return NULL;
}

static void destroy_ep(nxrt_ep* ep) {
  free(ep);
}

static nxrt_status* claim(nxrt_ep* ep, const nxrt_node* node, int64_t opset,
                          const nxrt_value_info* inputs, const nxrt_layout* layouts,
                          size_t input_count) {
  const char* op = host_api->node_op_type(node);
  size_t i;
  (void)opset;
  if (host_api->node_domain(node)[0] != '\0') {
    return error(NXRT_STATUS_UNSUPPORTED, "c_identity runs default-domain ops only");
  }
  for (i = 0; i < input_count; ++i) {
    if (layouts[i] != NXRT_LAYOUT_CONTIGUOUS || inputs[i].kind != NXRT_VALUE_TENSOR) {
      return error(NXRT_STATUS_UNSUPPORTED, "c_identity takes contiguous tensors only");
    }
  }
  if (strcmp(op, "Identity") == 0) {
    if (input_count == 1 &&
        (inputs[0].dtype == NXRT_DTYPE_STRING || element_size(inputs[0].dtype) != 0)) {
      if (host_api->log_enabled(ep->host, NXRT_LOG_DEBUG)) {
        host_api->log(ep->host, NXRT_LOG_DEBUG, "c_identity claims Identity");
      }
      return NULL;
    }
    return error(NXRT_STATUS_UNSUPPORTED, "c_identity cannot copy this dtype");
  }
  if (strcmp(op, "Add") == 0) {
    if (input_count == 2 && inputs[0].dtype == NXRT_DTYPE_FLOAT32 &&
        inputs[1].dtype == NXRT_DTYPE_FLOAT32) {
      return NULL;
    }
    return error(NXRT_STATUS_UNSUPPORTED, "c_identity adds float32 tensors only");
  }
  return error(NXRT_STATUS_UNSUPPORTED, "c_identity runs Identity and Add only");
}

static nxrt_status* create_kernel(nxrt_ep* ep, const nxrt_artifact_config* config,
                                  const nxrt_node* node, const nxrt_shape* inputs,
                                  size_t input_count, int64_t opset, nxrt_kernel** out) {
  nxrt_kernel* kernel;
  (void)ep;
  (void)config;
  (void)inputs;
  (void)opset;
  kernel = (nxrt_kernel*)calloc(1, sizeof(nxrt_kernel));
  if (kernel == NULL) return error(NXRT_STATUS_OUT_OF_MEMORY, "c_identity: no memory");
  kernel->op = strcmp(host_api->node_op_type(node), "Add") == 0 ? OP_ADD : OP_IDENTITY;
  if (kernel->op == OP_ADD && input_count != 2) {
    free(kernel);
    return error(NXRT_STATUS_INVALID_ARGUMENT, "c_identity: Add needs two inputs");
  }
  *out = kernel;
  return NULL;
}

/* Output 0 shaped like `like`: the host's buffer, or one allocated now. */
static nxrt_status* prepare_output(nxrt_compute_context* ctx, const nxrt_tensor* like,
                                   nxrt_value* output) {
  if (output->kind == NXRT_VALUE_TENSOR && output->tensor.data != NULL) {
    if (output->tensor.rank != like->rank ||
        (like->rank > 0 &&
         memcmp(output->tensor.dims, like->dims, like->rank * sizeof(int64_t)) != 0)) {
      return error(NXRT_STATUS_INVALID_ARGUMENT,
                   "c_identity: the preallocated output has another shape than the input");
    }
    return NULL;
  }
  output->kind = NXRT_VALUE_TENSOR;
  if (element_count(like) == 0) {
    output->tensor.dtype = like->dtype;
    output->tensor.rank = like->rank;
    output->tensor.dims = like->dims;
    return NULL;
  }
  return host_api->allocate_output(ctx, 0, like->dtype, like->rank, like->dims, &output->tensor);
}

static nxrt_status* compute_identity(nxrt_compute_context* ctx, const nxrt_tensor* in,
                                     nxrt_value* output) {
  nxrt_status* status = prepare_output(ctx, in, output);
  size_t i;
  if (status != NULL) return status;
  if (in->dtype == NXRT_DTYPE_STRING) {
    const nxrt_string_view* strings = (const nxrt_string_view*)in->data;
    for (i = 0; i < element_count(in); ++i) {
      status = host_api->set_string_element(ctx, 0, i, strings[i].data, strings[i].size);
      if (status != NULL) return status;
    }
    return NULL;
  }
  if (in->byte_size > 0) memcpy(output->tensor.data, in->data, in->byte_size);
  return NULL;
}

static nxrt_status* compute_add(nxrt_compute_context* ctx, const nxrt_tensor* a,
                                const nxrt_tensor* b, nxrt_value* output) {
  nxrt_status* status;
  const float* pa = (const float*)a->data;
  const float* pb = (const float*)b->data;
  float* po;
  size_t i;
  size_t count = element_count(a);
  if (a->rank != b->rank ||
      (a->rank > 0 && memcmp(a->dims, b->dims, a->rank * sizeof(int64_t)) != 0)) {
    return error(NXRT_STATUS_INVALID_ARGUMENT,
                 "c_identity: Add takes two tensors of one shape (no broadcasting)");
  }
  status = prepare_output(ctx, a, output);
  if (status != NULL) return status;
  po = (float*)output->tensor.data;
  for (i = 0; i < count; ++i) po[i] = pa[i] + pb[i];
  return NULL;
}

static nxrt_status* compute(nxrt_kernel* kernel, nxrt_compute_context* ctx,
                            const nxrt_value* inputs, size_t input_count, nxrt_value* outputs,
                            size_t output_count) {
  if (output_count < 1 || input_count < 1 || inputs[0].kind != NXRT_VALUE_TENSOR) {
    return error(NXRT_STATUS_INVALID_ARGUMENT, "c_identity: expected tensor input and output");
  }
  if (kernel->op == OP_ADD) {
    if (input_count < 2 || inputs[1].kind != NXRT_VALUE_TENSOR) {
      return error(NXRT_STATUS_INVALID_ARGUMENT, "c_identity: Add needs two tensor inputs");
    }
    return compute_add(ctx, &inputs[0].tensor, &inputs[1].tensor, &outputs[0]);
  }
  return compute_identity(ctx, &inputs[0].tensor, &outputs[0]);
}

static void destroy_kernel(nxrt_kernel* kernel) {
  free(kernel);
}

/* A copy or an add touches only the buffers it is given. */
static nxrt_bool capture_safe(const nxrt_kernel* kernel) {
  (void)kernel;
  return 1;
}

static nxrt_kernel_api kernel_table;
static nxrt_ep_api ep_table;

nxrt_status* nxrt_ep_plugin_init(uint32_t host_abi_version, const nxrt_host_api* host,
                                 nxrt_host_context* host_context, const nxrt_ep_api** out) {
  (void)host_context;
  if (NXRT_EP_ABI_VERSION_MAJOR_OF(host_abi_version) != NXRT_EP_ABI_VERSION_MAJOR) {
    return host->status_create(NXRT_STATUS_FAILED_PRECONDITION,
                               "c_identity was built for another ABI major");
  }
  host_api = host;

  memset(&kernel_table, 0, sizeof(kernel_table));
  kernel_table.struct_size = sizeof(kernel_table);
  kernel_table.compute = compute;
  kernel_table.destroy = destroy_kernel;
  kernel_table.capture_safe = capture_safe;

  memset(&ep_table, 0, sizeof(ep_table));
  ep_table.struct_size = sizeof(ep_table);
  ep_table.abi_version = NXRT_EP_ABI_VERSION;
  ep_table.name = "c_identity";
  ep_table.vendor = "nxrt examples";
  ep_table.version = "1.0";
  ep_table.create_ep = create_ep;
  ep_table.destroy_ep = destroy_ep;
  ep_table.claim = claim;
  ep_table.create_kernel = create_kernel;
  ep_table.kernel_api = &kernel_table;
  *out = &ep_table;
  return NULL;
}
