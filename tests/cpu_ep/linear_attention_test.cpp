// LinearAttention against a reference that walks the op's recurrence token by
// token in double, one query head at a time (each reading its KV head's
// state), for the rules the Gated DeltaNet family uses; the decode property
// the state exists for (a prefill then a decode step from its present state
// equals one longer prefill); and an honest decline of an unknown rule.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

struct Shape {
  int64_t batch, length, q_heads, kv_heads, dk, dv;
};

struct Case {
  std::string rule;
  Shape shape;
  std::vector<float> q, k, v, past, decay, beta;  // past, decay, beta: empty when absent
  int64_t decay_width = 0, beta_width = 0;
  float scale = 0.0f;
};

std::vector<float> Series(size_t count, double step, double amplitude = 1.0) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(amplitude * std::sin(step * i + 0.3));
  return v;
}

struct Result {
  std::vector<double> out, state;
};

Result Reference(const Case& c) {
  const Shape& s = c.shape;
  const bool gated = c.rule == "gated" || c.rule == "gated_delta";
  const bool delta = c.rule == "delta" || c.rule == "gated_delta";
  const double scale = c.scale != 0.0f ? c.scale : 1.0 / std::sqrt(static_cast<double>(s.dk));
  std::vector<double> state(s.batch * s.kv_heads * s.dk * s.dv, 0.0);
  for (size_t i = 0; i < c.past.size(); ++i) state[i] = c.past[i];
  Result r{std::vector<double>(s.batch * s.length * s.q_heads * s.dv), {}};
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < s.length; ++t) {
      const int64_t bt = b * s.length + t;
      for (int64_t h = 0; h < s.kv_heads; ++h) {
        auto S = [&](int64_t i, int64_t j) -> double& {
          return state[((b * s.kv_heads + h) * s.dk + i) * s.dv + j];
        };
        auto key = [&](int64_t i) { return c.k[(bt * s.kv_heads + h) * s.dk + i]; };
        for (int64_t i = 0; i < s.dk && gated; ++i) {
          const double g = c.decay_width == s.kv_heads ? c.decay[bt * s.kv_heads + h]
                                                       : c.decay[(bt * s.kv_heads + h) * s.dk + i];
          for (int64_t j = 0; j < s.dv; ++j) S(i, j) *= std::exp(g);
        }
        std::vector<double> write(s.dv);
        for (int64_t j = 0; j < s.dv; ++j) {
          const double v = c.v[(bt * s.kv_heads + h) * s.dv + j];
          if (!delta) {
            write[j] = v;
            continue;
          }
          double recalled = 0.0;
          for (int64_t i = 0; i < s.dk; ++i) recalled += S(i, j) * key(i);
          const double beta = c.beta[bt * c.beta_width + (c.beta_width == 1 ? 0 : h)];
          write[j] = beta * (v - recalled);
        }
        for (int64_t i = 0; i < s.dk; ++i) {
          for (int64_t j = 0; j < s.dv; ++j) S(i, j) += key(i) * write[j];
        }
      }
      for (int64_t hq = 0; hq < s.q_heads; ++hq) {
        const int64_t h = hq / (s.q_heads / s.kv_heads);
        for (int64_t j = 0; j < s.dv; ++j) {
          double sum = 0.0;
          for (int64_t i = 0; i < s.dk; ++i) {
            sum += c.q[(bt * s.q_heads + hq) * s.dk + i] *
                   state[((b * s.kv_heads + h) * s.dk + i) * s.dv + j];
          }
          r.out[(bt * s.q_heads + hq) * s.dv + j] = scale * sum;
        }
      }
    }
  }
  r.state = std::move(state);
  return r;
}

Case MakeCase(const std::string& rule, Shape s, int64_t decay_width, int64_t beta_width) {
  const auto tokens = static_cast<size_t>(s.batch * s.length);
  Case c{rule,
         s,
         Series(tokens * s.q_heads * s.dk, 0.37),
         {},
         Series(tokens * s.kv_heads * s.dv, 0.53),
         {},
         {},
         {},
         decay_width,
         beta_width};
  // Unit-norm keys, as the delta rules expect.
  c.k = Series(tokens * s.kv_heads * s.dk, 0.71);
  for (size_t row = 0; row < tokens * s.kv_heads; ++row) {
    double norm = 0.0;
    for (int64_t i = 0; i < s.dk; ++i) norm += c.k[row * s.dk + i] * c.k[row * s.dk + i];
    for (int64_t i = 0; i < s.dk; ++i) c.k[row * s.dk + i] /= static_cast<float>(std::sqrt(norm));
  }
  if (decay_width) {
    c.decay = Series(tokens * decay_width, 0.29, 0.4);
    for (float& g : c.decay) g = -std::abs(g) - 0.05f;  // log-space decay below 0
  }
  if (beta_width) {
    c.beta = Series(tokens * beta_width, 0.91, 0.4);
    for (float& b : c.beta) b = 0.5f + b;  // in (0, 1)
  }
  return c;
}

Result RunKernel(const Case& c) {
  const Shape& s = c.shape;
  TensorNode node{
      .op = "LinearAttention",
      .opset = 27,
      .inputs = {{"query", Values({s.batch, s.length, s.q_heads * s.dk}, c.q)},
                 {"key", Values({s.batch, s.length, s.kv_heads * s.dk}, c.k)},
                 {"value", Values({s.batch, s.length, s.kv_heads * s.dv}, c.v)}},
      .outputs = {DataType::kFloat32, DataType::kFloat32},
      .attributes = {StringAttribute("update_rule", c.rule), IntAttribute("q_num_heads", s.q_heads),
                     IntAttribute("kv_num_heads", s.kv_heads)}};
  if (c.scale != 0.0f) node.attributes.push_back(FloatAttribute("scale", c.scale));
  auto optional = [&](const char* name, const std::vector<float>& values,
                      std::vector<int64_t> dims) {
    if (values.empty()) {
      node.inputs.push_back({"", nxrt::Tensor()});
    } else {
      node.inputs.push_back({name, Values(std::move(dims), values)});
    }
  };
  optional("past_state", c.past, {s.batch, s.kv_heads, s.dk, s.dv});
  optional("decay", c.decay, {s.batch, s.length, c.decay_width});
  optional("beta", c.beta, {s.batch, s.length, c.beta_width});
  auto result = RunTensorNode(std::move(node));
  if (!result.ok()) {
    ADD_FAILURE() << result.status().ToString();
    return {};
  }
  if (result.value().size() != 2) {
    ADD_FAILURE() << "expected output and present_state";
    return {};
  }
  return {ValuesAsDouble(result.value()[0]), ValuesAsDouble(result.value()[1])};
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tolerance,
                const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance * (1.0 + std::abs(want[i]))) << what << "[" << i << "]";
  }
}

void ExpectMatchesReference(const Case& c) {
  const Result want = Reference(c);
  const Result got = RunKernel(c);
  ExpectNear(got.out, want.out, 1e-5, "output");
  ExpectNear(got.state, want.state, 1e-5, "present_state");
}

TEST(CpuEpLinearAttention, GatedDeltaWithPerKeyDecayAndPastState) {
  Case c = MakeCase("gated_delta", {2, 5, 3, 3, 4, 6}, 3 * 4, 3);
  c.past = Series(2 * 3 * 4 * 6, 0.13, 0.5);
  ExpectMatchesReference(c);
}

TEST(CpuEpLinearAttention, GroupedQueryHeadsShareTheirKvHeadsState) {
  // Four query heads on two KV heads (heads 0, 1 read state 0), and one KV head for all.
  ExpectMatchesReference(MakeCase("gated_delta", {2, 4, 4, 2, 5, 3}, 2, 1));
  ExpectMatchesReference(MakeCase("gated", {1, 3, 4, 1, 3, 4}, 3, 0));
}

TEST(CpuEpLinearAttention, LinearAndDeltaRulesWithExplicitScale) {
  Case linear = MakeCase("linear", {1, 6, 2, 2, 4, 4}, 0, 0);
  linear.scale = 0.7f;
  ExpectMatchesReference(linear);
  Case delta = MakeCase("delta", {2, 3, 2, 2, 3, 5}, 0, 2);
  delta.scale = 1.3f;
  ExpectMatchesReference(delta);
}

TEST(CpuEpLinearAttention, PrefillThenDecodeStepEqualsOneLongerPrefill) {
  const Shape whole_shape{2, 6, 4, 2, 4, 3};
  const Case whole = MakeCase("gated_delta", whole_shape, 2, 2);
  const Result longer = RunKernel(whole);

  // The same tokens as a 5-token prefill and a 1-token decode step.
  auto slice = [&](const std::vector<float>& values, int64_t from, int64_t count) {
    const auto width =
        static_cast<int64_t>(values.size()) / (whole_shape.batch * whole_shape.length);
    std::vector<float> part;
    for (int64_t b = 0; b < whole_shape.batch; ++b) {
      const auto begin = values.begin() + (b * whole_shape.length + from) * width;
      part.insert(part.end(), begin, begin + count * width);
    }
    return part;
  };
  auto part_case = [&](int64_t from, int64_t count) {
    Case c = whole;
    c.shape.length = count;
    for (auto* v : {&c.q, &c.k, &c.v, &c.decay, &c.beta}) *v = slice(*v, from, count);
    return c;
  };
  const Case prefill = part_case(0, 5);
  const Result first = RunKernel(prefill);
  Case decode = part_case(5, 1);
  decode.past.assign(first.state.begin(), first.state.end());
  const Result step = RunKernel(decode);

  const int64_t row = whole_shape.q_heads * whole_shape.dv;
  ASSERT_EQ(longer.out.size(), static_cast<size_t>(whole_shape.batch * whole_shape.length * row));
  ASSERT_EQ(step.out.size(), static_cast<size_t>(whole_shape.batch * row));
  for (int64_t b = 0; b < whole_shape.batch; ++b) {
    for (int64_t j = 0; j < row; ++j) {
      EXPECT_NEAR(step.out[b * row + j], longer.out[(b * whole_shape.length + 5) * row + j], 1e-5)
          << b << "," << j;
    }
  }
  ExpectNear(step.state, longer.state, 1e-5, "present_state");
  ExpectNear(longer.out, Reference(whole).out, 1e-5, "output");
}

TEST(CpuEpLinearAttention, DeclinesAnUnknownUpdateRule) {
  Case c = MakeCase("linear", {1, 2, 1, 1, 2, 2}, 0, 0);
  TensorNode node{.op = "LinearAttention",
                  .opset = 27,
                  .inputs = {{"query", Values({1, 2, 2}, c.q)},
                             {"key", Values({1, 2, 2}, c.k)},
                             {"value", Values({1, 2, 2}, c.v)}},
                  .outputs = {DataType::kFloat32, DataType::kFloat32},
                  .attributes = {StringAttribute("update_rule", "softmax"),
                                 IntAttribute("q_num_heads", 1), IntAttribute("kv_num_heads", 1)}};
  auto result = RunTensorNode(std::move(node));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("update_rule=softmax not implemented"),
            std::string::npos)
      << result.status().ToString();
}

}  // namespace
}  // namespace nxrt_test
