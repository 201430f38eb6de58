// OpenBLAS against oneDNN on the float products of the benchmark models
// (scripts/bench-vs-ort), one thread: the measurement behind the CPU EP's
// choice of library for MatMul, Gemm and Conv (plugins/cpu/CMakeLists.txt).
//
// Products: Y[M,N] = A[M,K] x B[K,N], B constant: row-major, as the EP keeps
// it for a single row (OpenBLAS's gemv or oneDNN's sgemm), or reordered once
// into the blocked layout oneDNN prefers, as the EP keeps it for products of
// several rows. `matrices` distinct Bs are
// cycled so that a row can stream its weights from memory, as a decoder's do.
// Convolutions: oneDNN's whole convolution (NCHW in and out, so with its
// layout reorders), direct and by Winograd, against OpenBLAS's GEMM over the
// im2col matrix alone, a lower bound for the im2col path.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void SingleThread() {
  openblas_set_num_threads(1);
  omp_set_num_threads(1);
}

// y[M,N] = a[M,K] x w[K,N], all row-major and as given, by one library.
using Multiply = void (*)(int m, int n, int k, const float* a, const float* w, float* y);

void OpenBlasMultiply(int m, int n, int k, const float* a, const float* w, float* y) {
  if (m == 1) {
    cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, w, n, a, 1, 0.0f, y, 1);
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, w, n, 0.0f, y, n);
  }
}

// oneDNN's sgemm on B as given: no plan, no reorder, as the CPU EP runs a
// row times a constant B.
void OneDnnSgemmMultiply(int m, int n, int k, const float* a, const float* w, float* y) {
  dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, w, n, 0.0f, y, n);
}

// Args: M, N, K, matrices.
void PlainProduct(benchmark::State& state, Multiply multiply) {
  SingleThread();
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  std::vector<std::vector<float>> b(state.range(3), std::vector<float>(k * n, 0.01f));
  std::vector<float> a(m * k, 0.5f), y(m * n);
  size_t next = 0;
  for (auto _ : state) {
    multiply(m, n, k, a.data(), b[next++ % b.size()].data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
}

// Args: M, N, K, matrices; `layout` is B's: Tag::ab as given, or Tag::any for
// oneDNN's preferred layout, reordered into before timing.
void OneDnnProduct(benchmark::State& state, Tag layout) {
  SingleThread();
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  const memory::desc a_desc({m, k}, kF32, Tag::ab), given_b_desc({k, n}, kF32, Tag::ab);
  const memory::desc y_desc({m, n}, kF32, Tag::ab);
  const dnnl::matmul::primitive_desc plan(
      dnnl::matmul::desc(a_desc, memory::desc({k, n}, kF32, layout), y_desc), Engine());
  dnnl::stream stream(Engine());
  std::vector<std::vector<float>> b(state.range(3), std::vector<float>(k * n, 0.01f));
  std::vector<float> a(m * k, 0.5f), y(m * n);
  std::vector<memory> b_memory;
  for (auto& matrix : b) {
    memory given(given_b_desc, Engine(), matrix.data());
    b_memory.emplace_back(plan.weights_desc(), Engine());
    dnnl::reorder(given, b_memory.back()).execute(stream, given, b_memory.back());
  }
  memory a_memory(a_desc, Engine(), a.data()), y_memory(y_desc, Engine(), y.data());
  const dnnl::matmul product(plan);
  size_t next = 0;
  for (auto _ : state) {
    product.execute(stream, {{DNNL_ARG_SRC, a_memory},
                             {DNNL_ARG_WEIGHTS, b_memory[next++ % b_memory.size()]},
                             {DNNL_ARG_DST, y_memory}});
  }
}

void ProductShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "N", "K", "matrices"});
  b->Args({1, 1024, 1024, 4});   // mlp, batch 1
  b->Args({64, 1024, 1024, 4});  // mlp, batch 64
  b->Args({128, 768, 256, 1});   // bert_layer: qkv
  b->Args({128, 256, 256, 1});   // bert_layer: attention output
  b->Args({128, 1024, 256, 1});  // bert_layer: ffn up
  b->Args({128, 256, 1024, 1});  // bert_layer: ffn down
  b->Args({1, 1536, 512, 16});   // decoder step: MLP weights streamed from memory
  b->Args({1, 768, 256, 20});    // bundled decoder step: its 16 MB of weights fit the L3 cache
  b->Args({1, 256, 256, 60});    // the same, in its square projections
  b->Args({8, 1536, 512, 16});   // decoder prefill or verify
}
BENCHMARK_CAPTURE(PlainProduct, openblas, OpenBlasMultiply)
    ->Apply(ProductShapes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(PlainProduct, onednn_sgemm, OneDnnSgemmMultiply)
    ->Apply(ProductShapes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(OneDnnProduct, b_as_given, Tag::ab)
    ->Apply(ProductShapes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(OneDnnProduct, b_blocked, Tag::any)
    ->Apply(ProductShapes)
    ->Unit(benchmark::kMicrosecond);

// Args: channels, maps, side (3x3 kernel, pads 1).
void BM_OpenBlasIm2ColGemm(benchmark::State& state) {
  SingleThread();
  const int c = state.range(0), maps = state.range(1), side = state.range(2);
  const int rows = c * 9, cols = side * side;
  std::vector<float> w(maps * rows, 0.1f), columns(rows * cols, 0.5f), y(maps * cols);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, maps, cols, rows, 1.0f, w.data(), rows,
                columns.data(), cols, 0.0f, y.data(), cols);
    benchmark::DoNotOptimize(y.data());
  }
}

// `algorithm`: direct, or Winograd, which oneDNN has for some shapes only.
void OneDnnConvolution(benchmark::State& state, dnnl::algorithm algorithm) {
  SingleThread();
  const int c = state.range(0), maps = state.range(1), side = state.range(2);
  const memory::dims x_dims{1, c, side, side}, w_dims{maps, c, 3, 3}, y_dims{1, maps, side, side};
  using Conv = dnnl::convolution_forward;
  Conv::primitive_desc plan;
  try {
    plan = Conv::primitive_desc(
        Conv::desc(dnnl::prop_kind::forward_inference, algorithm,
                   memory::desc(x_dims, kF32, Tag::any), memory::desc(w_dims, kF32, Tag::any),
                   memory::desc({maps}, kF32, Tag::a), memory::desc(y_dims, kF32, Tag::any), {1, 1},
                   {0, 0}, {1, 1}, {1, 1}),
        Engine());
  } catch (const dnnl::error&) {
    state.SkipWithError("oneDNN has no kernel for this shape");
    return;
  }
  dnnl::stream stream(Engine());
  std::vector<float> x(c * side * side, 0.5f), w(maps * c * 9, 0.1f), bias(maps),
      y(maps * side * side);
  memory x_plain({x_dims, kF32, Tag::nchw}, Engine(), x.data());
  memory y_plain({y_dims, kF32, Tag::nchw}, Engine(), y.data());
  memory w_plain({w_dims, kF32, Tag::oihw}, Engine(), w.data());
  memory bias_memory({{maps}, kF32, Tag::a}, Engine(), bias.data());
  memory x_blocked(plan.src_desc(), Engine()), y_blocked(plan.dst_desc(), Engine());
  memory w_blocked(plan.weights_desc(), Engine());
  dnnl::reorder(w_plain, w_blocked).execute(stream, w_plain, w_blocked);
  const dnnl::reorder to_blocked(x_plain, x_blocked), to_plain(y_blocked, y_plain);
  const Conv convolution(plan);
  for (auto _ : state) {
    to_blocked.execute(stream, x_plain, x_blocked);
    convolution.execute(stream, {{DNNL_ARG_SRC, x_blocked},
                                 {DNNL_ARG_WEIGHTS, w_blocked},
                                 {DNNL_ARG_BIAS, bias_memory},
                                 {DNNL_ARG_DST, y_blocked}});
    to_plain.execute(stream, y_blocked, y_plain);
  }
}

void ConvolutionShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"C", "maps", "side"});
  b->Args({3, 16, 64});     // cnn: conv0
  b->Args({16, 32, 32});    // cnn: conv1
  b->Args({128, 128, 28});  // a ResNet-50 stage-2 3x3 layer
}
BENCHMARK(BM_OpenBlasIm2ColGemm)->Apply(ConvolutionShapes)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(OneDnnConvolution, direct, dnnl::algorithm::convolution_direct)
    ->Apply(ConvolutionShapes)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(OneDnnConvolution, winograd, dnnl::algorithm::convolution_winograd)
    ->Apply(ConvolutionShapes)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
