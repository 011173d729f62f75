// Harness cases for random ops. The numbers themselves are checked against Philox known answers
// in test_random; here every backend and output layout must reproduce, element by element, what
// the CPU produces for the same seed (counter-based streams do not depend on device or strides).
#include "harness/harness.h"

namespace ember::harness {
namespace {

constexpr uint64_t kSeed = 1234;

// The CPU's numbers for the same call, as the reference.
Ref cpu_reference(const std::function<Tensor(Device)>& fn) {
  manual_seed(kSeed);
  return Ref(fn(Device(kCPU)));
}

// A case whose op fills its (placed, possibly non-contiguous) input in place.
void inplace_case(const std::string& name, std::vector<DType> dtypes,
                  std::function<void(Tensor&)> fill) {
  register_case({name,
                 std::move(dtypes),
                 {{{3, 5}}},
                 [fill](const TensorList& in) {
                   manual_seed(kSeed);
                   Tensor x = in[0];
                   fill(x);
                   return TensorList{x};
                 },
                 [fill](const std::vector<Ref>& in, DType dt) {
                   return std::vector<Ref>{cpu_reference([&](Device d) {
                     Tensor x = empty(in[0].shape, TensorOptions().dtype(dt).device(d));
                     fill(x);
                     return x;
                   })};
                 },
                 0.0});
}

// A case whose op creates a fresh tensor of the case dtype on the inputs' device.
void factory_case(const std::string& name, std::vector<DType> dtypes,
                  std::function<Tensor(TensorOptions)> make) {
  register_case(
      {name,
       std::move(dtypes),
       {{{1}}},
       [make](const TensorList& in) {
         manual_seed(kSeed);
         return TensorList{make(TensorOptions().dtype(in[0].dtype()).device(in[0].device()))};
       },
       [make](const std::vector<Ref>&, DType dt) {
         return std::vector<Ref>{
             cpu_reference([&](Device d) { return make(TensorOptions().dtype(dt).device(d)); })};
       },
       0.0});
}

EMBER_HARNESS_CASES {
  const auto floats = float_dtypes();
  inplace_case("uniform_", floats, [](Tensor& x) { x.uniform_(-2, 3); });
  inplace_case("normal_", floats, [](Tensor& x) { x.normal_(1, 2); });
  inplace_case("bernoulli_", floats, [](Tensor& x) { x.bernoulli_(0.3); });
  factory_case("rand", floats, [](TensorOptions o) { return rand({4, 7}, o); });
  factory_case("randn", floats, [](TensorOptions o) { return randn({4, 7}, o); });
  factory_case("randint", numeric_dtypes(), [](TensorOptions o) {
    return randint(0, 9, {4, 7}, o);
  });
  factory_case("randperm", {kInt64, kInt32}, [](TensorOptions o) { return randperm(20, o); });
  register_case({"bernoulli_p",
                 floats,
                 {{{3, 5}, Fill::Unit}},
                 [](const TensorList& in) {
                   manual_seed(kSeed);
                   return TensorList{bernoulli(abs(in[0]))};
                 },
                 [](const std::vector<Ref>& in, DType dt) {
                   Tensor p = tensor(in[0].data, Shape{in[0].numel()}).reshape(in[0].shape).to(dt);
                   return std::vector<Ref>{
                       cpu_reference([&](Device d) { return bernoulli(abs(p.to(d))); })};
                 },
                 0.0});
}

}  // namespace
}  // namespace ember::harness
