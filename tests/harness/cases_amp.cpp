// Op harness cases of the loss scaler's device passes: the fused inf/NaN check and unscale over
// several gradients (finite ones, and ones holding inf and NaN), and the scale's update.
#include <cmath>
#include <limits>

#include "harness/harness.h"

namespace ember::harness {

namespace {

// Three gradients of dtype, found_inf = 0, inv_scale, first_nonfinite = INT32_MAX. With
// poison_at >= 0 that gradient gets an inf and a NaN.
TensorList unscale_inputs(DType dt, std::mt19937& rng, int poison_at) {
  std::normal_distribution<double> normal(0.0, 300.0);
  TensorList in;
  for (Shape s : {Shape{3, 5}, Shape{7}, Shape{2, 3, 4}}) {
    std::vector<double> v(static_cast<size_t>(s.numel()));
    for (double& x : v) x = normal(rng);
    if (static_cast<int>(in.size()) == poison_at) {
      v[1] = std::numeric_limits<double>::infinity();
      v[v.size() - 1] = std::nan("");
    }
    in.push_back(tensor(v, s).to(dt));
  }
  in.push_back(tensor(std::vector<double>{0.0}, Shape{1}).to(kFloat32));
  in.push_back(tensor(std::vector<double>{1.0 / 256.0}, Shape{1}).to(kFloat32));
  in.push_back(
      tensor(std::vector<int64_t>{std::numeric_limits<int32_t>::max()}, Shape{1}).to(kInt32));
  return in;
}

void unscale_case(const std::string& name, int poison_at) {
  register_case(
      {name,
       float_dtypes(),
       {},
       [](const TensorList& in) {
         _amp_foreach_non_finite_check_and_unscale_({in[0], in[1], in[2]}, in[3], in[4], in[5]);
         return TensorList{in[0], in[1], in[2], in[3], in[5]};
       },
       [](const std::vector<Ref>& in, DType) {
         const double inv = in[4].data[0];
         std::vector<Ref> out;
         double found = 0;
         double first = in[5].data[0];
         for (int k = 0; k < 3; ++k) {
           Ref r = in[k];
           for (double& x : r.data) {
             if (!std::isfinite(x)) {
               found = 1;
               first = std::min(first, double(k));
             }
             x *= inv;
           }
           out.push_back(r);
         }
         out.push_back(Ref(Shape{1}, {found}));
         out.push_back(Ref(Shape{1}, {first}));
         return out;
       },
       -1,
       [poison_at](DType dt, std::mt19937& rng) { return unscale_inputs(dt, rng, poison_at); }});
}

// scale, growth_tracker and found_inf for one update; interval 3, growth 2, backoff 0.25.
void update_case(const std::string& name, double scale, int tracker, double found_inf) {
  register_case({name,
                 {kFloat32},
                 {},
                 [](const TensorList& in) {
                   _amp_update_scale_(in[0], in[1], in[2], 2.0, 0.25, 3);
                   return TensorList{in[0], in[1]};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   double s = in[0].data[0];
                   double t = in[1].data[0];
                   if (in[2].data[0] != 0) {
                     s *= 0.25;
                     t = 0;
                   } else if (t + 1 == 3) {
                     if (std::isfinite(static_cast<float>(s * 2))) s *= 2;
                     t = 0;
                   } else {
                     t += 1;
                   }
                   return std::vector<Ref>{Ref(Shape{1}, {s}), Ref(Shape{1}, {t})};
                 },
                 -1,
                 [=](DType, std::mt19937&) {
                   return TensorList{tensor(std::vector<double>{scale}, Shape{1}).to(kFloat32),
                                     tensor(std::vector<int64_t>{tracker}, Shape{1}).to(kInt32),
                                     tensor(std::vector<double>{found_inf}, Shape{1}).to(kFloat32)};
                 }});
}

}  // namespace

EMBER_HARNESS_CASES {
  unscale_case("_amp_foreach_non_finite_check_and_unscale_", -1);
  unscale_case("_amp_foreach_non_finite_check_and_unscale__nonfinite", 1);
  update_case("_amp_update_scale_", 1024.0, 0, 0.0);
  update_case("_amp_update_scale__grow", 1024.0, 2, 0.0);
  update_case("_amp_update_scale__backoff", 1024.0, 2, 1.0);
  update_case("_amp_update_scale__overflow", 3.0e38, 2, 0.0);
}

}  // namespace ember::harness
