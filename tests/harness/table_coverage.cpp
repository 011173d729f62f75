// The op tables against the op harness: every element-wise op of kernels/elementwise_ops.def and
// every reduction of kernels/reduce_ops.def has a harness case of its name and, when it has a
// gradient, a gradient check of that case; element-wise autograd nodes carry the table's names;
// every op of autocast's table (ops/autocast_ops.def) has 16-bit cases.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "harness/harness.h"
#include "kernels/elementwise_ops.h"
#include "kernels/reduce_ops.h"
#include "ops/autocast.h"

// The emulated-CUDA build of the harness shares these sources; the table is checked once.
#ifndef EMBER_HARNESS_CUDA_ONLY

namespace ember::harness {
namespace {

struct Row {
  const char* family;
  ElementwiseOpInfo info;
};

std::vector<Row> elementwise_rows() {
  std::vector<Row> rows;
  for (UnaryOp op : kUnaryOps) rows.push_back({"unary", op_info(op)});
  for (BinaryOp op : kBinaryOps) rows.push_back({"binary", op_info(op)});
  for (TernaryOp op : kTernaryOps) rows.push_back({"ternary", op_info(op)});
  return rows;
}

const OpCase* find_case(const std::string& name) {
  for (const OpCase& c : registered_cases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(OpTable, ElementwiseNamesAreUnique) {
  std::set<std::string> seen;
  for (const Row& r : elementwise_rows()) {
    EXPECT_TRUE(seen.insert(r.info.name).second)
        << "kernels/elementwise_ops.def: two rows are named '" << r.info.name << "'";
  }
  EXPECT_EQ(seen.size(), std::size(kUnaryOps) + std::size(kBinaryOps) + std::size(kTernaryOps));
  EXPECT_GT(std::size(kTernaryOps), 0u);
}

TEST(OpTable, EveryElementwiseOpHasAHarnessCase) {
  for (const Row& r : elementwise_rows()) {
    const OpCase* c = find_case(r.info.name);
    EXPECT_NE(c, nullptr) << "the " << r.family << " op '" << r.info.name
                          << "' of kernels/elementwise_ops.def has no op harness case of that "
                             "name (tests/harness/cases_elementwise.cpp)";
    if (c && r.info.grad != Grad::None) {
      EXPECT_TRUE(c->gradcheck.has_value())
          << "the " << r.family << " op '" << r.info.name
          << "' has a gradient but its harness case has no gradient check: add "
             "register_gradcheck(\""
          << r.info.name << "\") in tests/harness/cases_grad.cpp";
    }
  }
}

// Each differentiable op's case, run in float64 on inputs that require grad, gives a result whose
// node has the table's name; ops without a gradient record no node.
TEST(OpTable, ElementwiseNodesCarryTheTableNames) {
  for (const Row& r : elementwise_rows()) {
    const OpCase* c = find_case(r.info.name);
    if (!c) continue;  // reported above
    bool floating = false;
    for (DType t : c->dtypes) floating = floating || is_floating_point(t);
    if (!floating) continue;  // integer inputs cannot require grad
    std::mt19937 rng(7);
    TensorList in;
    if (c->make_inputs) {
      in = c->make_inputs(kFloat64, rng);
    } else {
      for (const InputSpec& s : c->inputs) in.push_back(make_input(s, kFloat64, rng));
    }
    for (Tensor& t : in) {
      if (t.dtype() == kFloat64) t.requires_grad_(true);
    }
    TensorList out = c->run(in);
    ASSERT_FALSE(out.empty()) << r.info.name;
    if (r.info.grad == Grad::None) {
      EXPECT_FALSE(out[0].grad_fn()) << r.info.name << " is not differentiable";
      continue;
    }
    ASSERT_TRUE(out[0].grad_fn()) << r.info.name << " recorded no autograd node";
    EXPECT_EQ(out[0].grad_fn()->name(), std::string(r.info.node)) << r.info.name;
  }
}

TEST(OpTable, EveryReductionHasAHarnessCase) {
  std::set<std::string> seen;
  for (ReduceOp op : kReduceOps) {
    const ReduceOpInfo info = reduce_info(op);
    EXPECT_TRUE(seen.insert(info.name).second)
        << "kernels/reduce_ops.def: two rows are named '" << info.name << "'";
    const OpCase* c = find_case(info.name);
    EXPECT_NE(c, nullptr) << "the reduction '" << info.name
                          << "' of kernels/reduce_ops.def has no op harness case of that name "
                             "(tests/harness/cases_reduce.cpp)";
    if (c && info.grad != Grad::None) {
      EXPECT_TRUE(c->gradcheck.has_value())
          << "the reduction '" << info.name
          << "' has a gradient but its harness case has no gradient check: add "
             "register_gradcheck(\""
          << info.name << "\") in tests/harness/cases_grad.cpp";
    }
  }
  EXPECT_EQ(seen.size(), std::size(kReduceOps));
}

// Every op autocast runs in a 16-bit float or in float32 (ops/autocast_ops.def) has a harness case
// (its name, or its name and a variant suffix) that runs float16 and bfloat16 against the float64
// reference, on every backend: a 16-bit kernel that accumulates in 16 bits fails there.
TEST(OpTable, EveryAutocastOpHasA16BitHarnessCase) {
  for (const autocast::OpInfo& row : autocast::kOps) {
    std::string name = row.name;
    if (name == "scaled_dot_product_attention") name = "sdpa";
    bool f16 = false, bf16 = false, found = false;
    for (const OpCase& c : registered_cases()) {
      if (c.name != name && c.name.rfind(name + "_", 0) != 0) continue;
      found = true;
      for (DType t : c.dtypes) {
        f16 = f16 || t == kFloat16;
        bf16 = bf16 || t == kBFloat16;
      }
    }
    EXPECT_TRUE(found) << "autocast op '" << row.name << "' has no op harness case";
    EXPECT_TRUE(f16 && bf16) << "autocast op '" << row.name
                             << "' has no harness case in float16 and bfloat16";
  }
}

}  // namespace
}  // namespace ember::harness

#endif  // EMBER_HARNESS_CUDA_ONLY
