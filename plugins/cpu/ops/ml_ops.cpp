// The ai.onnx.ml ops: LabelEncoder (keys_*/values_* form, opset 2 on),
// TreeEnsemble, ArrayFeatureExtractor and Binarizer. Attributes, including the tensor-valued ones,
// are read once when the kernel is made. LabelEncoder looks keys up by their element bytes (with
// -0.0 and NaN made canonical so they match as the spec asks), which serves
// every key dtype alike. TreeEnsemble evaluates splits in double, which holds
// float and double inputs and splits exactly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu_kernel.hpp"
#include "tensor_attribute.hpp"

namespace nxrt::cpu {
namespace {

constexpr const char* kMlDomain = "ai.onnx.ml";

// ---- LabelEncoder ----

bool LabelDtype(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_STRING || dtype == NXRT_DTYPE_INT64 || dtype == NXRT_DTYPE_INT32 ||
         dtype == NXRT_DTYPE_INT16 || dtype == NXRT_DTYPE_FLOAT32 || dtype == NXRT_DTYPE_FLOAT64;
}

template <typename T>
AttributeTensor OwnedNumbers(const std::vector<T>& values) {
  AttributeTensor t;
  t.dtype = kDtypeOf<T>;
  t.dims = {static_cast<int64_t>(values.size())};
  const auto* begin = reinterpret_cast<const std::byte*>(values.data());
  t.bytes.assign(begin, begin + values.size() * sizeof(T));
  return t;
}

AttributeTensor OwnedStrings(std::vector<std::string> values) {
  AttributeTensor t;
  t.dtype = NXRT_DTYPE_STRING;
  t.dims = {static_cast<int64_t>(values.size())};
  t.strings = std::move(values);
  return t;
}

// The keys or values of a LabelEncoder: the `<prefix>_tensor` attribute or
// one of the `<prefix>_strings|int64s|floats` lists; nullopt when none is set.
std::optional<AttributeTensor> ReadLabels(const sdk::Host& host, const sdk::Node& node,
                                          const std::string& prefix) {
  if (auto t = ReadTensorAttribute(host, node, (prefix + "_tensor").c_str())) return t;
  const std::string strings = prefix + "_strings";
  const std::string ints = prefix + "_int64s";
  const std::string floats = prefix + "_floats";
  if (node.attr_type(strings.c_str()) != NXRT_ATTR_UNDEFINED) {
    return OwnedStrings(node.AttrStrings(strings.c_str()));
  }
  if (node.attr_type(ints.c_str()) != NXRT_ATTR_UNDEFINED) {
    return OwnedNumbers(node.AttrInts(ints.c_str()));
  }
  if (node.attr_type(floats.c_str()) != NXRT_ATTR_UNDEFINED) {
    return OwnedNumbers(node.AttrFloats(floats.c_str()));
  }
  return std::nullopt;
}

// The value for keys not found: default_tensor, else the scalar default
// attribute of the values' kind ("_Unused", -1, -0.0 unless set).
AttributeTensor ReadLabelDefault(const sdk::Host& host, const sdk::Node& node, nxrt_dtype dtype) {
  if (auto t = ReadTensorAttribute(host, node, "default_tensor")) {
    if (t->dtype != dtype || ElementCount(t->dims) != 1) {
      FailInvalid("LabelEncoder: default_tensor must be one element of the values' dtype");
    }
    return *t;
  }
  switch (dtype) {
    case NXRT_DTYPE_STRING:
      return OwnedStrings({node.AttrString("default_string", "_Unused")});
    case NXRT_DTYPE_FLOAT32:
      return OwnedNumbers(std::vector<float>{node.AttrFloat("default_float", -0.0f)});
    case NXRT_DTYPE_FLOAT64:
      return OwnedNumbers(std::vector<double>{node.AttrFloat("default_float", -0.0f)});
    case NXRT_DTYPE_INT64:
      return OwnedNumbers(std::vector<int64_t>{node.AttrInt("default_int64", -1)});
    case NXRT_DTYPE_INT32:
      return OwnedNumbers(
          std::vector<int32_t>{static_cast<int32_t>(node.AttrInt("default_int64", -1))});
    default:
      return OwnedNumbers(
          std::vector<int16_t>{static_cast<int16_t>(node.AttrInt("default_int64", -1))});
  }
}

// The bytes a key is looked up by.
std::string KeyBytes(nxrt_dtype dtype, const void* element) {
  if (dtype == NXRT_DTYPE_STRING) {
    const auto* s = static_cast<const nxrt_string_view*>(element);
    return std::string(s->data, s->size);
  }
  auto canonical = [](auto v) {
    using T = decltype(v);
    if (std::isnan(v)) v = std::numeric_limits<T>::quiet_NaN();
    if (v == T(0)) v = T(0);
    return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  if (dtype == NXRT_DTYPE_FLOAT32) return canonical(*static_cast<const float*>(element));
  if (dtype == NXRT_DTYPE_FLOAT64) return canonical(*static_cast<const double*>(element));
  return std::string(static_cast<const char*>(element), ElementSize(dtype));
}

const void* ElementOf(const AttributeTensor& t, size_t i) {
  if (t.dtype == NXRT_DTYPE_STRING) return &t.strings[i];
  return t.bytes.data() + i * ElementSize(t.dtype);
}

class LabelEncoderKernel : public CpuKernel {
 public:
  LabelEncoderKernel(nxrt_dtype key_dtype, const AttributeTensor& keys, AttributeTensor values,
                     AttributeTensor fallback)
      : CpuKernel(false),
        key_dtype_(key_dtype),
        values_(std::move(values)),
        default_(std::move(fallback)) {
    const auto n = static_cast<size_t>(ElementCount(keys.dims));
    for (size_t i = 0; i < n; ++i) {
      if (key_dtype == NXRT_DTYPE_STRING) {
        index_.emplace(keys.strings[i], i);
      } else {
        index_.emplace(KeyBytes(key_dtype, ElementOf(keys, i)), i);
      }
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, values_.dtype, DimsSpan(in));
    const size_t in_size = ElementSize(key_dtype_);
    const size_t out_size = ElementSize(values_.dtype);
    const auto* x = static_cast<const std::byte*>(in.data);
    auto* y = static_cast<std::byte*>(out.data);
    for (int64_t i = 0; i < ElementCount(in); ++i) {
      const auto found = index_.find(KeyBytes(key_dtype_, x + i * in_size));
      const AttributeTensor& from = found == index_.end() ? default_ : values_;
      const size_t at = found == index_.end() ? 0 : found->second;
      if (values_.dtype == NXRT_DTYPE_STRING) {
        ctx.SetStringElement(0, i, from.strings[at]);
      } else {
        std::memcpy(y + i * out_size, ElementOf(from, at), out_size);
      }
    }
  }

 private:
  nxrt_dtype key_dtype_;
  AttributeTensor values_;
  AttributeTensor default_;
  std::unordered_map<std::string, size_t> index_;  // key bytes -> value index
};

sdk::ClaimResult ClaimLabelEncoder(const sdk::Node&, int64_t,
                                   std::span<const nxrt_value_info> inputs) {
  if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR) {
    return sdk::ClaimResult::Declined("LabelEncoder: input 0 must be a tensor");
  }
  if (!LabelDtype(inputs[0].dtype)) {
    return sdk::ClaimResult::Declined("LabelEncoder: dtype " + DtypeName(inputs[0].dtype) +
                                      " not supported");
  }
  return sdk::ClaimResult::Claimed();
}

std::unique_ptr<CpuKernel> MakeLabelEncoder(const sdk::Host& host, const sdk::Node& node,
                                            std::span<const nxrt_shape> inputs, int64_t) {
  auto keys = ReadLabels(host, node, "keys");
  auto values = ReadLabels(host, node, "values");
  if (!keys || !values) FailInvalid("LabelEncoder: keys and values are required");
  const nxrt_dtype key_dtype = inputs[0].dtype;
  if (keys->dtype != key_dtype) {
    FailInvalid("LabelEncoder: keys are " + DtypeName(keys->dtype) + " but the input is " +
                DtypeName(key_dtype));
  }
  if (!LabelDtype(values->dtype)) {
    FailUnsupported("LabelEncoder: values of dtype " + DtypeName(values->dtype) + " not supported");
  }
  if (ElementCount(keys->dims) != ElementCount(values->dims)) {
    FailInvalid("LabelEncoder: keys and values differ in length");
  }
  AttributeTensor fallback = ReadLabelDefault(host, node, values->dtype);
  return std::make_unique<LabelEncoderKernel>(key_dtype, *keys, std::move(*values),
                                              std::move(fallback));
}

// ---- TreeEnsemble ----

enum class Branch : uint8_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };
enum class Aggregate { kAverage, kSum, kMin, kMax };
enum class PostTransform { kNone, kSoftmax, kLogistic, kSoftmaxZero };

struct TreeNode {
  Branch mode = Branch::kLeq;
  int64_t feature = 0;
  double split = 0;
  std::vector<double> members;  // for kMember
  bool missing_true = false;
  int64_t next[2] = {0, 0};  // false, true
  bool leaf[2] = {false, false};
};

struct Forest {
  std::vector<TreeNode> nodes;
  std::vector<int64_t> roots;
  std::vector<int64_t> leaf_targets;
  std::vector<double> leaf_weights;
  int64_t targets = 0;
  Aggregate aggregate = Aggregate::kSum;
  PostTransform post = PostTransform::kNone;
};

std::vector<double> AsDoubles(const AttributeTensor& t, const char* name) {
  const auto n = static_cast<size_t>(ElementCount(t.dims));
  std::vector<double> out(n);
  if (t.dtype == NXRT_DTYPE_FLOAT32 || t.dtype == NXRT_DTYPE_FLOAT64 ||
      t.dtype == NXRT_DTYPE_FLOAT16) {
    Dispatch(TypeList<float, double, Float16>{}, t.dtype, name, [&](auto type) {
      using T = typename decltype(type)::type;
      const auto* v = reinterpret_cast<const T*>(t.bytes.data());
      for (size_t i = 0; i < n; ++i)
        out[i] = static_cast<double>(static_cast<ComputeType<T>>(v[i]));
    });
    return out;
  }
  FailInvalid(std::string("TreeEnsemble: ") + name + " must be a float tensor");
}

std::vector<double> RequiredDoubles(const sdk::Host& host, const sdk::Node& node,
                                    const char* name) {
  auto t = ReadTensorAttribute(host, node, name);
  if (!t) FailInvalid(std::string("TreeEnsemble: ") + name + " is required");
  return AsDoubles(*t, name);
}

Forest ReadForest(const sdk::Host& host, const sdk::Node& node) {
  Forest f;
  const std::vector<int64_t> features = node.AttrInts("nodes_featureids");
  const std::vector<int64_t> true_ids = node.AttrInts("nodes_truenodeids");
  const std::vector<int64_t> false_ids = node.AttrInts("nodes_falsenodeids");
  const std::vector<int64_t> true_leafs = node.AttrInts("nodes_trueleafs");
  const std::vector<int64_t> false_leafs = node.AttrInts("nodes_falseleafs");
  const std::vector<int64_t> missing = node.AttrInts("nodes_missing_value_tracks_true");
  const std::vector<double> splits = RequiredDoubles(host, node, "nodes_splits");
  auto modes = ReadTensorAttribute(host, node, "nodes_modes");
  const size_t n = features.size();
  if (!modes || modes->dtype != NXRT_DTYPE_UINT8 || modes->bytes.size() != n ||
      true_ids.size() != n || false_ids.size() != n || true_leafs.size() != n ||
      false_leafs.size() != n || splits.size() != n || (!missing.empty() && missing.size() != n)) {
    FailInvalid("TreeEnsemble: the nodes_* attributes must all have one entry per node");
  }
  std::vector<double> membership;
  if (auto t = ReadTensorAttribute(host, node, "membership_values")) {
    membership = AsDoubles(*t, "membership_values");
  }
  size_t member_at = 0;
  f.leaf_weights = RequiredDoubles(host, node, "leaf_weights");
  f.leaf_targets = node.AttrInts("leaf_targetids");
  f.targets = node.AttrInt("n_targets", 0);
  if (f.leaf_targets.size() != f.leaf_weights.size()) {
    FailInvalid("TreeEnsemble: leaf_targetids and leaf_weights differ in length");
  }
  for (int64_t target : f.leaf_targets) {
    if (target < 0 || target >= f.targets) FailInvalid("TreeEnsemble: leaf target out of range");
  }
  const auto leaves = static_cast<int64_t>(f.leaf_weights.size());
  f.nodes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TreeNode& t = f.nodes[i];
    const auto mode = static_cast<uint8_t>(modes->bytes[i]);
    if (mode > static_cast<uint8_t>(Branch::kMember)) {
      FailInvalid("TreeEnsemble: unknown node mode " + std::to_string(mode));
    }
    t.mode = static_cast<Branch>(mode);
    t.feature = features[i];
    t.split = splits[i];
    t.missing_true = !missing.empty() && missing[i] != 0;
    t.next[0] = false_ids[i];
    t.next[1] = true_ids[i];
    t.leaf[0] = false_leafs[i] != 0;
    t.leaf[1] = true_leafs[i] != 0;
    for (int side = 0; side < 2; ++side) {
      const int64_t limit = t.leaf[side] ? leaves : static_cast<int64_t>(n);
      if (t.next[side] < 0 || t.next[side] >= limit) {
        FailInvalid("TreeEnsemble: node " + std::to_string(i) + " points out of range");
      }
    }
    if (t.mode == Branch::kMember) {
      // membership_values holds one NaN-terminated set per member node.
      while (member_at < membership.size() && !std::isnan(membership[member_at])) {
        t.members.push_back(membership[member_at++]);
      }
      if (member_at == membership.size()) {
        FailInvalid("TreeEnsemble: membership_values has too few sets");
      }
      ++member_at;
    }
  }
  f.roots = node.AttrInts("tree_roots");
  for (int64_t root : f.roots) {
    if (root < 0 || root >= static_cast<int64_t>(n)) FailInvalid("TreeEnsemble: bad tree root");
  }
  f.aggregate = static_cast<Aggregate>(node.AttrInt("aggregate_function", 1));
  f.post = static_cast<PostTransform>(node.AttrInt("post_transform", 0));
  return f;
}

bool TakesTrueBranch(const TreeNode& t, double x) {
  if (std::isnan(x) && t.missing_true) return true;
  switch (t.mode) {
    case Branch::kLeq:
      return x <= t.split;
    case Branch::kLt:
      return x < t.split;
    case Branch::kGte:
      return x >= t.split;
    case Branch::kGt:
      return x > t.split;
    case Branch::kEq:
      return x == t.split;
    case Branch::kNeq:
      return x != t.split;
    case Branch::kMember:
      return std::find(t.members.begin(), t.members.end(), x) != t.members.end();
  }
  return false;
}

class TreeEnsembleKernel : public CpuKernel {
 public:
  TreeEnsembleKernel(nxrt_dtype dtype, Forest forest)
      : CpuKernel(false), dtype_(dtype), f_(std::move(forest)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    if (in.rank != 2) FailInvalid("TreeEnsemble: X must be [N, F], got " + DimsText(DimsSpan(in)));
    const int64_t rows = in.dims[0];
    const int64_t features = in.dims[1];
    const Dims out_dims{rows, f_.targets};
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims);
    std::vector<double> x(features);
    std::vector<double> score(f_.targets);
    std::vector<bool> scored(f_.targets);
    Dispatch(TypeList<float, double>{}, dtype_, "TreeEnsemble", [&](auto type) {
      using T = typename decltype(type)::type;
      const T* data = DataAs<T>(in);
      T* y = MutableDataAs<T>(out);
      for (int64_t r = 0; r < rows; ++r) {
        std::copy_n(data + r * features, features, x.begin());
        std::fill(score.begin(), score.end(), 0.0);
        std::fill(scored.begin(), scored.end(), false);
        for (int64_t root : f_.roots) {
          const int64_t leaf = FindLeaf(root, x);
          Accumulate(f_.leaf_targets[leaf], f_.leaf_weights[leaf], score, scored);
        }
        if (f_.aggregate == Aggregate::kAverage && !f_.roots.empty()) {
          for (double& s : score) s /= static_cast<double>(f_.roots.size());
        }
        Transform(score);
        for (int64_t t = 0; t < f_.targets; ++t) y[r * f_.targets + t] = static_cast<T>(score[t]);
      }
    });
  }

 private:
  int64_t FindLeaf(int64_t at, const std::vector<double>& x) const {
    // A well-formed tree reaches a leaf within one visit per node.
    for (size_t steps = 0; steps <= f_.nodes.size(); ++steps) {
      const TreeNode& t = f_.nodes[at];
      if (t.feature < 0 || t.feature >= static_cast<int64_t>(x.size())) {
        FailInvalid("TreeEnsemble: feature " + std::to_string(t.feature) + " out of range");
      }
      const int side = TakesTrueBranch(t, x[t.feature]) ? 1 : 0;
      if (t.leaf[side]) return t.next[side];
      at = t.next[side];
    }
    FailInvalid("TreeEnsemble: a tree has a cycle");
  }

  void Accumulate(int64_t target, double weight, std::vector<double>& score,
                  std::vector<bool>& scored) const {
    double& s = score[target];
    switch (f_.aggregate) {
      case Aggregate::kAverage:
      case Aggregate::kSum:
        s += weight;
        break;
      case Aggregate::kMin:
        s = scored[target] ? std::min(s, weight) : weight;
        break;
      case Aggregate::kMax:
        s = scored[target] ? std::max(s, weight) : weight;
        break;
    }
    scored[target] = true;
  }

  void Transform(std::vector<double>& score) const {
    switch (f_.post) {
      case PostTransform::kNone:
        break;
      case PostTransform::kLogistic:
        for (double& s : score) s = 1.0 / (1.0 + std::exp(-s));
        break;
      case PostTransform::kSoftmax:
      case PostTransform::kSoftmaxZero: {
        // SOFTMAX_ZERO leaves exact zeros at zero and normalises the rest.
        const bool keep_zero = f_.post == PostTransform::kSoftmaxZero;
        double top = -std::numeric_limits<double>::infinity();
        for (double s : score) {
          if (!(keep_zero && s == 0.0)) top = std::max(top, s);
        }
        double sum = 0;
        for (double& s : score) {
          s = keep_zero && s == 0.0 ? 0.0 : std::exp(s - top);
          sum += s;
        }
        if (sum > 0) {
          for (double& s : score) s /= sum;
        }
        break;
      }
    }
  }

  nxrt_dtype dtype_;
  Forest f_;
};

sdk::ClaimResult ClaimTreeEnsemble(const sdk::Node& node, int64_t,
                                   std::span<const nxrt_value_info> inputs) {
  if (auto reason = CheckInputDtype(node, inputs, 0, TypeList<float, double>{})) {
    return sdk::ClaimResult::Declined(*reason);
  }
  const int64_t aggregate = node.AttrInt("aggregate_function", 1);
  if (aggregate < 0 || aggregate > 3) {
    return sdk::ClaimResult::Declined("TreeEnsemble: aggregate_function " +
                                      std::to_string(aggregate) + " not supported");
  }
  const int64_t post = node.AttrInt("post_transform", 0);
  if (post < 0 || post > 3) {
    return sdk::ClaimResult::Declined("TreeEnsemble: post_transform " + std::to_string(post) +
                                      " (PROBIT or unknown) not implemented");
  }
  return sdk::ClaimResult::Claimed();
}

// ---- ArrayFeatureExtractor ----

using FeatureTypes = TypeList<float, double, int64_t, int32_t>;

class ArrayFeatureExtractorKernel : public CpuKernel {
 public:
  explicit ArrayFeatureExtractorKernel(nxrt_dtype dtype) : CpuKernel(false), dtype_(dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    const std::vector<int64_t> picks = ReadInt64s(inputs[1].tensor);
    Dims dims = DimsOf(in);
    if (dims.empty()) FailInvalid("ArrayFeatureExtractor: X must have rank 1 or more");
    const int64_t width = dims.back();
    for (int64_t p : picks) {
      if (p < 0 || p >= width) {
        FailInvalid("ArrayFeatureExtractor: index " + std::to_string(p) + " out of range for " +
                    std::to_string(width) + " features");
      }
    }
    if (dims.size() == 1) dims.insert(dims.begin(), 1);
    dims.back() = static_cast<int64_t>(picks.size());
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    const int64_t rows = width == 0 ? 0 : ElementCount(in) / width;
    const auto k = static_cast<int64_t>(picks.size());
    if (dtype_ == NXRT_DTYPE_STRING) {
      const auto* x = DataAs<nxrt_string_view>(in);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < k; ++j) {
          const nxrt_string_view& s = x[r * width + picks[j]];
          ctx.SetStringElement(0, r * k + j, std::string_view(s.data, s.size));
        }
      }
      return;
    }
    const size_t size = ElementSize(dtype_);
    const auto* x = static_cast<const std::byte*>(in.data);
    auto* y = static_cast<std::byte*>(out.data);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < k; ++j) {
        std::memcpy(y + (r * k + j) * size, x + (r * width + picks[j]) * size, size);
      }
    }
  }

 private:
  nxrt_dtype dtype_;
};

// ---- Binarizer ----

class BinarizerKernel : public CpuKernel {
 public:
  BinarizerKernel(nxrt_dtype dtype, float threshold)
      : CpuKernel(true), dtype_(dtype), threshold_(threshold) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, DimsSpan(in));
    Dispatch(FeatureTypes{}, dtype_, "Binarizer", [&](auto type) {
      using T = typename decltype(type)::type;
      const T* x = DataAs<T>(in);
      T* y = MutableDataAs<T>(out);
      for (int64_t i = 0; i < ElementCount(in); ++i) {
        y[i] = static_cast<double>(x[i]) > threshold_ ? T(1) : T(0);
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  double threshold_;
};

}  // namespace

void RegisterMlOps(OpRegistry& r) {
  r.Add("LabelEncoder", {2, ClaimLabelEncoder, MakeLabelEncoder}, kMlDomain);
  r.Add("TreeEnsemble",
        {5, ClaimTreeEnsemble,
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) {
           return std::make_unique<TreeEnsembleKernel>(inputs[0].dtype, ReadForest(host, node));
         }},
        kMlDomain);
  r.Add(
      "ArrayFeatureExtractor",
      {1,
       [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
         if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR ||
             (inputs[0].dtype != NXRT_DTYPE_STRING && !Contains(FeatureTypes{}, inputs[0].dtype))) {
           return sdk::ClaimResult::Declined(
               "ArrayFeatureExtractor: X must be a float, double, "
               "int32, int64 or string tensor");
         }
         return ClaimUnless(CheckInputDtype(node, inputs, 1, TypeList<int64_t>{}));
       },
       [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
         return std::make_unique<ArrayFeatureExtractorKernel>(inputs[0].dtype);
       }},
      kMlDomain);
  r.Add("Binarizer",
        {1, ClaimInputDtype(FeatureTypes{}),
         [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<BinarizerKernel>(inputs[0].dtype,
                                                    node.AttrFloat("threshold", 0.0f));
         }},
        kMlDomain);
}

}  // namespace nxrt::cpu
