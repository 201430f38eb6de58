// Det: the determinant of each trailing square matrix, by LU decomposition
// with partial pivoting in double.
#include <cmath>
#include <utility>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

class DetKernel : public CpuKernel {
 public:
  explicit DetKernel(nxrt_dtype dtype) : CpuKernel(false), dtype_(dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& x = inputs[0].tensor;
    const Dims dims = DimsOf(x);
    if (dims.size() < 2 || dims[dims.size() - 1] != dims[dims.size() - 2]) {
      FailInvalid("Det: input must end in square matrices");
    }
    const int64_t n = dims.back();
    const Dims out_dims(dims.begin(), dims.end() - 2);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims);
    const int64_t matrices = ElementCount(out_dims);
    Dispatch(FloatTypes{}, dtype_, "Det", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = DataAs<T>(x);
      T* y = MutableDataAs<T>(out);
      std::vector<double> a(n * n);
      for (int64_t m = 0; m < matrices; ++m) {
        for (int64_t i = 0; i < n * n; ++i) {
          a[i] = static_cast<double>(static_cast<ComputeType<T>>(xp[m * n * n + i]));
        }
        double det = 1;
        for (int64_t col = 0; col < n && det != 0; ++col) {
          int64_t pivot = col;
          for (int64_t r = col + 1; r < n; ++r) {
            if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
          }
          if (a[pivot * n + col] == 0) {
            det = 0;
            break;
          }
          if (pivot != col) {
            for (int64_t c = 0; c < n; ++c) std::swap(a[pivot * n + c], a[col * n + c]);
            det = -det;
          }
          det *= a[col * n + col];
          for (int64_t r = col + 1; r < n; ++r) {
            const double f = a[r * n + col] / a[col * n + col];
            for (int64_t c = col; c < n; ++c) a[r * n + c] -= f * a[col * n + c];
          }
        }
        y[m] = static_cast<T>(static_cast<ComputeType<T>>(det));
      }
    });
  }

 private:
  nxrt_dtype dtype_;
};

}  // namespace

void RegisterDeterminantOps(OpRegistry& r) {
  r.Add("Det", {11, ClaimInputDtype(FloatTypes{}),
                [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
                  return std::make_unique<DetKernel>(inputs[0].dtype);
                }});
}

}  // namespace nxrt::cpu
