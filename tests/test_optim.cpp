// Optimizers against a naive float64 re-implementation of PyTorch's single-tensor formulas,
// parameter groups, state dicts and errors; schedulers against PyTorch's closed forms; gradient
// clipping.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
using namespace ember::optim;
namespace sched = ember::optim::lr_scheduler;

namespace {

using Vec = std::vector<double>;

// Reference state of one parameter: the step count and up to three state vectors.
struct RefState {
  double step = 0;
  bool started = false;
  Vec s0, s1, s2;
};

using RefFn = std::function<void(Vec& p, const Vec& g, RefState& st)>;
using MakeOpt = std::function<std::unique_ptr<Optimizer>(const std::vector<Tensor>&)>;

const std::vector<Shape> kShapes = {{5}, {3, 4}, {7}, {2, 3, 2}};

Tensor make_tensor(const Vec& v, const Shape& s, DType dt) { return tensor(v, s, kFloat64).to(dt); }

// Runs 6 steps of the optimizer on float64 (tight) or float32 parameters and the reference in
// float64 with the same random gradients; parameter 2 has no gradient on step 3 (skipped).
void check_against_reference(const MakeOpt& make, const RefFn& ref, DType dt, double tol) {
  std::mt19937 rng(1234);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<Tensor> params;
  std::vector<Vec> ref_p(kShapes.size());
  std::vector<RefState> ref_st(kShapes.size());
  for (size_t i = 0; i < kShapes.size(); ++i) {
    Vec v(static_cast<size_t>(Tensor(zeros(kShapes[i])).numel()));
    for (double& x : v) x = normal(rng);
    params.push_back(make_tensor(v, kShapes[i], dt).requires_grad_());
    ref_p[i] = params.back().to_vector<double>();
  }
  std::unique_ptr<Optimizer> opt = make(params);
  for (int step = 0; step < 6; ++step) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (step == 3 && i == 2) {
        params[i].mutable_grad() = Tensor();
        continue;
      }
      Vec g(ref_p[i].size());
      for (double& x : g) x = normal(rng);
      params[i].mutable_grad() = make_tensor(g, kShapes[i], dt);
      ref(ref_p[i], params[i].grad().to_vector<double>(), ref_st[i]);
    }
    opt->step();
    for (size_t i = 0; i < params.size(); ++i) {
      const Vec got = params[i].to_vector<double>();
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_NEAR(got[j], ref_p[i][j], tol * (1 + std::abs(ref_p[i][j])))
            << "step " << step << " param " << i << " element " << j;
      }
    }
  }
}

void check_both(const MakeOpt& make, const RefFn& ref) {
  check_against_reference(make, ref, kFloat64, 1e-12);
  check_against_reference(make, ref, kFloat32, 2e-5);
}

RefFn sgd_ref(SGDOptions o) {
  return [o](Vec& p, const Vec& grad, RefState& st) {
    if (st.s0.empty()) st.s0.assign(p.size(), 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = o.maximize() ? -grad[i] : grad[i];
      if (o.weight_decay() != 0) g += o.weight_decay() * p[i];
      if (o.momentum() != 0) {
        double& buf = st.s0[i];
        buf = st.started ? buf * o.momentum() + (1 - o.dampening()) * g : g;
        g = o.nesterov() ? g + o.momentum() * buf : buf;
      }
      p[i] -= o.lr() * g;
    }
    st.started = true;
  };
}

template <class O>
RefFn adam_ref(O o, bool decoupled) {
  return [o, decoupled](Vec& p, const Vec& grad, RefState& st) {
    if (st.s0.empty()) {
      st.s0.assign(p.size(), 0.0);
      st.s1.assign(p.size(), 0.0);
      st.s2.assign(p.size(), 0.0);
    }
    st.step += 1;
    const double b1 = std::get<0>(o.betas()), b2 = std::get<1>(o.betas());
    const double bc1 = 1 - std::pow(b1, st.step), bc2 = 1 - std::pow(b2, st.step);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = o.maximize() ? -grad[i] : grad[i];
      if (o.weight_decay() != 0) {
        if (decoupled) {
          p[i] *= 1 - o.lr() * o.weight_decay();
        } else {
          g += o.weight_decay() * p[i];
        }
      }
      st.s0[i] = b1 * st.s0[i] + (1 - b1) * g;
      st.s1[i] = b2 * st.s1[i] + (1 - b2) * g * g;
      double v = st.s1[i];
      if (o.amsgrad()) {
        st.s2[i] = std::max(st.s2[i], v);
        v = st.s2[i];
      }
      const double denom = std::sqrt(v) / std::sqrt(bc2) + o.eps();
      p[i] -= o.lr() / bc1 * st.s0[i] / denom;
    }
  };
}

RefFn rmsprop_ref(RMSpropOptions o) {
  return [o](Vec& p, const Vec& grad, RefState& st) {
    if (st.s0.empty()) {
      st.s0.assign(p.size(), 0.0);
      st.s1.assign(p.size(), 0.0);
      st.s2.assign(p.size(), 0.0);
    }
    for (size_t i = 0; i < p.size(); ++i) {
      double g = o.maximize() ? -grad[i] : grad[i];
      if (o.weight_decay() != 0) g += o.weight_decay() * p[i];
      st.s0[i] = o.alpha() * st.s0[i] + (1 - o.alpha()) * g * g;
      double avg;
      if (o.centered()) {
        st.s2[i] = o.alpha() * st.s2[i] + (1 - o.alpha()) * g;
        avg = std::sqrt(st.s0[i] - st.s2[i] * st.s2[i]);
      } else {
        avg = std::sqrt(st.s0[i]);
      }
      avg += o.eps();
      if (o.momentum() > 0) {
        st.s1[i] = o.momentum() * st.s1[i] + g / avg;
        p[i] -= o.lr() * st.s1[i];
      } else {
        p[i] -= o.lr() * g / avg;
      }
    }
  };
}

RefFn adagrad_ref(AdagradOptions o) {
  return [o](Vec& p, const Vec& grad, RefState& st) {
    if (st.s0.empty()) st.s0.assign(p.size(), o.initial_accumulator_value());
    st.step += 1;
    const double clr = o.lr() / (1 + (st.step - 1) * o.lr_decay());
    for (size_t i = 0; i < p.size(); ++i) {
      double g = o.maximize() ? -grad[i] : grad[i];
      if (o.weight_decay() != 0) g += o.weight_decay() * p[i];
      st.s0[i] += g * g;
      p[i] -= clr * g / (std::sqrt(st.s0[i]) + o.eps());
    }
  };
}

template <class Opt, class O>
MakeOpt maker(O o) {
  return [o](const std::vector<Tensor>& ps) { return std::make_unique<Opt>(ps, o); };
}

}  // namespace

// ---- optimizers against the reference -----------------------------------------------------------

TEST(Optim, SGDMatchesReference) {
  for (const SGDOptions& o : {SGDOptions(0.1), SGDOptions(0.05).momentum(0.9),
                              SGDOptions(0.05).momentum(0.8).dampening(0.1).weight_decay(0.01),
                              SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.1),
                              SGDOptions(0.02).weight_decay(0.2).maximize(true),
                              SGDOptions(0.02).momentum(0.5).maximize(true)}) {
    SCOPED_TRACE("momentum " + std::to_string(o.momentum()));
    check_both(maker<SGD>(o), sgd_ref(o));
  }
}

TEST(Optim, AdamMatchesReference) {
  for (const AdamOptions& o :
       {AdamOptions(), AdamOptions(0.01).weight_decay(0.1), AdamOptions(0.01).amsgrad(true),
        AdamOptions(0.02).maximize(true), AdamOptions(0.01).betas({0.8, 0.99}).eps(1e-6),
        AdamOptions(0.01).amsgrad(true).weight_decay(0.05).maximize(true)}) {
    check_both(maker<Adam>(o), adam_ref(o, false));
  }
}

TEST(Optim, AdamWMatchesReference) {
  for (const AdamWOptions& o :
       {AdamWOptions(), AdamWOptions(0.01).weight_decay(0.1).amsgrad(true),
        AdamWOptions(0.01).betas({0.85, 0.995}).weight_decay(0.3).maximize(true)}) {
    check_both(maker<AdamW>(o), adam_ref(o, true));
  }
}

TEST(Optim, RMSpropMatchesReference) {
  for (const RMSpropOptions& o :
       {RMSpropOptions(), RMSpropOptions(0.01).momentum(0.9), RMSpropOptions(0.01).centered(true),
        RMSpropOptions(0.005).centered(true).momentum(0.5).weight_decay(0.1).alpha(0.9),
        RMSpropOptions(0.01).maximize(true).eps(1e-4)}) {
    check_both(maker<RMSprop>(o), rmsprop_ref(o));
  }
}

TEST(Optim, AdagradMatchesReference) {
  for (const AdagradOptions& o :
       {AdagradOptions(),
        AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).initial_accumulator_value(0.1),
        AdagradOptions(0.05).maximize(true).eps(1e-6)}) {
    check_both(maker<Adagrad>(o), adagrad_ref(o));
  }
}

TEST(Optim, HalfPrecisionParametersUpdateInFloat) {
  Tensor p = tensor({1.0, -2.0, 0.5}).to(kFloat16).requires_grad_();
  p.mutable_grad() = tensor({0.5, 0.25, -1.0}).to(kFloat16);
  Adam opt({p}, AdamOptions(0.1));
  opt.step();
  // Adam's first step moves every element by lr against the gradient's sign.
  const Vec got = p.to_vector<double>();
  const Vec want = {0.9, -2.1, 0.6};
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-3);
  EXPECT_EQ(opt.state(p)["exp_avg"].dtype(), kFloat16);
}

TEST(Optim, NonContiguousParameterIsUpdatedInPlace) {
  Tensor base = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  Tensor p = base.t().detach().requires_grad_();  // (3, 2) view of base's storage
  ASSERT_FALSE(p.is_contiguous());
  p.mutable_grad() = ones({3, 2});
  SGD opt({p}, SGDOptions(0.5).momentum(0.9));
  opt.step();
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}));
  opt.step();  // buf = 0.9 + 1 = 1.9
  EXPECT_NEAR(base.to_vector<float>()[0], 0.5 - 0.95, 1e-6);
}

TEST(Optim, ModuleParametersAndLibtorchSpelling) {
  nn::Linear net(4, 3);
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  std::vector<Tensor> params = net->parameters();
  optim::AdamW adamw(params, optim::AdamWOptions(1e-3).weight_decay(0.01));
  EXPECT_DOUBLE_EQ(sgd.param_groups()[0].lr(), 0.01);
  EXPECT_DOUBLE_EQ(adamw.param_groups()[0].lr(), 1e-3);
  Tensor loss = net(ones({2, 4})).sum();
  loss.backward();
  const Vec before = net->weight.to_vector<double>();
  sgd.step();
  const Vec after = net->weight.to_vector<double>();
  const Vec grad = net->weight.grad().to_vector<double>();
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_NEAR(after[i], before[i] - 0.01 * grad[i], 1e-7);
}

// ---- groups, zero_grad, closure -----------------------------------------------------------------

TEST(Optim, ParamGroupsHaveTheirOwnOptions) {
  Tensor a = ones({3}).requires_grad_();
  Tensor b = ones({2}).requires_grad_();
  Tensor c = ones({2}).requires_grad_();
  SGD opt({OptimizerParamGroup({a}), OptimizerParamGroup({b}, SGDOptions(0.5))}, SGDOptions(0.1));
  opt.add_param_group(OptimizerParamGroup({c}, SGDOptions(0.01)));
  ASSERT_EQ(opt.param_groups().size(), 3u);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].lr(), 0.1);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].lr(), 0.5);
  EXPECT_DOUBLE_EQ(opt.param_groups()[2].lr(), 0.01);
  opt.param_groups()[0].set_lr(0.2);
  for (Tensor* t : {&a, &b, &c}) t->mutable_grad() = ones_like(*t);
  opt.step();
  EXPECT_FLOAT_EQ(a.to_vector<float>()[0], 0.8f);
  EXPECT_FLOAT_EQ(b.to_vector<float>()[0], 0.5f);
  EXPECT_FLOAT_EQ(c.to_vector<float>()[0], 0.99f);
  auto& o = static_cast<SGDOptions&>(opt.param_groups()[1].options());
  o.momentum(0.9);
  EXPECT_EQ(opt.param_groups()[1].options().get_option("momentum"), Vec{0.9});
}

TEST(Optim, ZeroGrad) {
  Tensor p = ones({3}).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  p.mutable_grad() = ones({3});
  opt.zero_grad(false);
  ASSERT_TRUE(p.grad().defined());
  EXPECT_EQ(p.grad().to_vector<float>(), (std::vector<float>{0, 0, 0}));
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  opt.step();  // no gradient: nothing happens
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_FALSE(opt.has_state(p));
}

TEST(Optim, StepWithClosureReturnsLossAndRecordsGraph) {
  Tensor p = tensor({1.0, 2.0}).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  NoGradGuard outer;  // the closure still runs with grad mode on
  const Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = (p * p).sum();
    l.backward();
    return l;
  });
  EXPECT_FLOAT_EQ(loss.item<float>(), 5.0f);
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{0.8f, 1.6f}));
}

// ---- state dicts --------------------------------------------------------------------------------

TEST(Optim, StateDictLayout) {
  Tensor a = ones({2, 2}).requires_grad_();
  Tensor b = ones({3}).requires_grad_();
  Adam opt({OptimizerParamGroup({a}), OptimizerParamGroup({b}, AdamOptions(0.5).amsgrad(true))});
  a.mutable_grad() = ones({2, 2});
  b.mutable_grad() = ones({3});
  opt.step();
  opt.step();
  const OptimizerStateDict sd = opt.state_dict();
  const std::vector<std::string> keys = {"state.0.step",
                                         "state.0.exp_avg",
                                         "state.0.exp_avg_sq",
                                         "state.1.step",
                                         "state.1.exp_avg",
                                         "state.1.exp_avg_sq",
                                         "state.1.max_exp_avg_sq",
                                         "param_groups.0.lr",
                                         "param_groups.0.betas",
                                         "param_groups.0.eps",
                                         "param_groups.0.weight_decay",
                                         "param_groups.0.amsgrad",
                                         "param_groups.0.maximize",
                                         "param_groups.0.params",
                                         "param_groups.1.lr",
                                         "param_groups.1.betas",
                                         "param_groups.1.eps",
                                         "param_groups.1.weight_decay",
                                         "param_groups.1.amsgrad",
                                         "param_groups.1.maximize",
                                         "param_groups.1.params"};
  ASSERT_EQ(sd.size(), keys.size());
  size_t i = 0;
  for (const auto& [k, v] : sd) EXPECT_EQ(k, keys[i++]);
  EXPECT_EQ(sd["state.0.step"].dtype(), kFloat32);
  EXPECT_EQ(sd["state.0.step"].dim(), 0);
  EXPECT_EQ(sd["state.0.step"].item<float>(), 2.0f);
  EXPECT_EQ(sd["param_groups.1.lr"].dtype(), kFloat64);
  EXPECT_EQ(sd["param_groups.1.lr"].dim(), 0);
  EXPECT_EQ(sd["param_groups.1.lr"].item<double>(), 0.5);
  EXPECT_EQ(sd["param_groups.1.amsgrad"].item<double>(), 1.0);
  EXPECT_EQ(sd["param_groups.0.betas"].to_vector<double>(), (Vec{0.9, 0.999}));
  EXPECT_EQ(sd["param_groups.1.params"].dtype(), kInt64);
  EXPECT_EQ(sd["param_groups.1.params"].to_vector<int64_t>(), (std::vector<int64_t>{1}));
}

TEST(Optim, StateDictRoundTripResumesIdentically) {
  auto run = [](Optimizer& opt, std::vector<Tensor>& ps, int steps, int seed) {
    manual_seed(seed);
    for (int s = 0; s < steps; ++s) {
      for (Tensor& p : ps) p.mutable_grad() = randn(p.sizes());
      opt.step();
    }
  };
  auto clone_params = [](const std::vector<Tensor>& ps) {
    std::vector<Tensor> out;
    for (const Tensor& p : ps) out.push_back(p.detach().clone().requires_grad_());
    return out;
  };
  std::vector<std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>&)>> makers = {
      [](std::vector<Tensor>& ps) {
        return std::make_unique<SGD>(ps, SGDOptions(0.1).momentum(0.9));
      },
      [](std::vector<Tensor>& ps) {
        return std::make_unique<Adam>(ps, AdamOptions(0.01).amsgrad(true));
      },
      [](std::vector<Tensor>& ps) { return std::make_unique<AdamW>(ps, AdamWOptions(0.01)); },
      [](std::vector<Tensor>& ps) {
        return std::make_unique<RMSprop>(ps, RMSpropOptions(0.01).centered(true).momentum(0.5));
      },
      [](std::vector<Tensor>& ps) {
        return std::make_unique<Adagrad>(ps, AdagradOptions(0.1).lr_decay(0.1));
      },
  };
  for (auto& make : makers) {
    manual_seed(7);
    std::vector<Tensor> a = {randn({4, 3}).requires_grad_(), randn({5}).requires_grad_()};
    auto opt_a = make(a);
    run(*opt_a, a, 3, 1);
    std::vector<Tensor> b = clone_params(a);
    auto opt_b = make(b);
    opt_b->param_groups()[0].set_lr(123.0);  // overwritten by the load
    // Saved to host copies, as a checkpoint would be.
    OptimizerStateDict saved;
    for (const auto& [k, v] : opt_a->state_dict()) saved.insert(k, v.clone());
    opt_b->load_state_dict(saved);
    EXPECT_EQ(opt_b->param_groups()[0].lr(), opt_a->param_groups()[0].lr());
    run(*opt_a, a, 3, 2);
    run(*opt_b, b, 3, 2);
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(a[i].to_vector<float>(), b[i].to_vector<float>());
  }
}

TEST(Optim, LoadStateDictChecksGroups) {
  Tensor a = ones({2}).requires_grad_(), b = ones({2}).requires_grad_();
  SGD one({a, b}, SGDOptions(0.1));
  SGD two({OptimizerParamGroup({a}), OptimizerParamGroup({b})}, SGDOptions(0.1));
  SGD small({a}, SGDOptions(0.1));
  EXPECT_NE(error_of([&] { two.load_state_dict(one.state_dict()); })
                .find("[Optimizer.load_state_dict] loaded state dict has a different number of "
                      "parameter groups"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { small.load_state_dict(one.state_dict()); }),
            "[Optimizer.load_state_dict] loaded state dict contains a parameter group that "
            "doesn't match the size of optimizer's group");
}

TEST(Optim, LoadStateDictRefusesAnotherOptimizersState) {
  Tensor a = ones({2}).requires_grad_();
  SGD sgd({a}, SGDOptions(0.1).momentum(0.9));
  AdamW adamw({a}, AdamWOptions(0.01));
  a.sum().backward();
  sgd.step();
  adamw.step();
  const auto sgd_state = sgd.state_dict(), adamw_state = adamw.state_dict();
  const std::string e1 = error_of([&] { adamw.load_state_dict(sgd_state); });
  EXPECT_NE(e1.find("is not an option of this optimizer: the state dict was saved by another "
                    "optimizer"),
            std::string::npos)
      << e1;
  const std::string e2 = error_of([&] { sgd.load_state_dict(adamw_state); });
  EXPECT_NE(e2.find("saved by another optimizer"), std::string::npos) << e2;
  // Nothing changed: each still loads its own state.
  adamw.load_state_dict(adamw_state);
  sgd.load_state_dict(sgd_state);
  // A malformed index is a ValueError naming the key, not a parse failure.
  OptimizerStateDict bad = sgd_state;
  bad.insert("state.x1.momentum_buffer", zeros({2}));
  EXPECT_EQ(error_of([&] { sgd.load_state_dict(bad); }),
            "[Optimizer.load_state_dict] malformed key 'state.x1.momentum_buffer'");
}

// ---- errors -------------------------------------------------------------------------------------

TEST(Optim, Errors) {
  Tensor p = ones({3}).requires_grad_();
  Tensor q = ones({3}).requires_grad_();
  Tensor non_leaf = p * 2;
  EXPECT_EQ(error_of([&] { SGD({non_leaf}, SGDOptions(0.1)); }),
            "[SGD] can't optimize a non-leaf Tensor");
  EXPECT_EQ(error_of([&] { SGD({p}, SGDOptions(-0.1)); }), "[SGD] Invalid learning rate: -0.1");
  EXPECT_EQ(error_of([&] { SGD({p}, SGDOptions(0.1).momentum(-1)); }),
            "[SGD] Invalid momentum value: -1.0");
  EXPECT_EQ(error_of([&] { SGD({p}, SGDOptions(0.1).weight_decay(-1)); }),
            "[SGD] Invalid weight_decay value: -1.0");
  EXPECT_EQ(error_of([&] { SGD({p}, SGDOptions(0.1).nesterov(true)); }),
            "[SGD] Nesterov momentum requires a momentum and zero dampening");
  EXPECT_EQ(
      error_of([&] { SGD({p}, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)); }),
      "[SGD] Nesterov momentum requires a momentum and zero dampening");
  EXPECT_EQ(error_of([&] {
              Adam({p}, AdamOptions().betas({1.0, 0.999}));
            }),
            "[Adam] Invalid beta parameter at index 0: 1.0");
  EXPECT_EQ(error_of([&] {
              AdamW({p}, AdamWOptions().betas({0.9, -0.5}));
            }),
            "[AdamW] Invalid beta parameter at index 1: -0.5");
  EXPECT_EQ(error_of([&] { Adam({p}, AdamOptions().eps(-1e-8)); }),
            "[Adam] Invalid epsilon value: -1e-08");
  EXPECT_EQ(error_of([&] { RMSprop({p}, RMSpropOptions().alpha(-0.5)); }),
            "[RMSprop] Invalid alpha value: -0.5");
  EXPECT_EQ(error_of([&] { Adagrad({p}, AdagradOptions().lr_decay(-0.5)); }),
            "[Adagrad] Invalid lr_decay value: -0.5");
  EXPECT_EQ(error_of([&] {
              SGD({p, q, p}, SGDOptions(0.1));
            }),
            "[SGD] optimizer contains a parameter group with duplicate parameters");
  EXPECT_EQ(error_of([&] {
              SGD({OptimizerParamGroup({p}), OptimizerParamGroup({q, p})}, SGDOptions(0.1));
            }),
            "[SGD] some parameters appear in more than one parameter group");
  EXPECT_EQ(error_of([&] { SGD(std::vector<Tensor>{}, SGDOptions(0.1)); }),
            "[SGD] optimizer got an empty parameter list");
  SGD opt({p}, SGDOptions(0.1));
  EXPECT_EQ(error_of([&] { opt.add_param_group(OptimizerParamGroup({q}, AdamOptions())); }),
            "[SGD] parameter group options are of another optimizer");
  p.mutable_grad() = ones({4});
  EXPECT_EQ(error_of([&] { opt.step(); }),
            "[SGD] the gradient of a parameter has shape [4] but the parameter has shape [3]");
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{1, 1, 1}));
}

// ---- schedulers ---------------------------------------------------------------------------------

namespace {

struct SchedFixture {
  Tensor p = ones({2}).requires_grad_();
  SGD opt{std::vector<Tensor>{p}, SGDOptions(0.1).momentum(0.9)};
};

void expect_lrs(const std::vector<double>& got, const std::vector<double>& want,
                double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "epoch " << i;
}

// lr after construction (epoch 0) and after each of n steps.
template <class S>
std::vector<double> run_sched(S& s, Optimizer& opt, int n) {
  std::vector<double> lrs = {opt.param_groups()[0].lr()};
  EXPECT_EQ(s.get_last_lr()[0], lrs[0]);
  for (int e = 1; e <= n; ++e) {
    s.step();
    lrs.push_back(opt.param_groups()[0].lr());
    EXPECT_EQ(s.get_last_lr()[0], lrs.back());
    EXPECT_EQ(s.last_epoch(), e);
  }
  return lrs;
}

}  // namespace

TEST(LRScheduler, StepLR) {
  SchedFixture f;
  sched::StepLR s(f.opt, 3, 0.5);
  EXPECT_EQ(f.opt.param_groups()[0].initial_lr(), 0.1);
  std::vector<double> want;
  for (int e = 0; e <= 30; ++e) want.push_back(0.1 * std::pow(0.5, e / 3));
  expect_lrs(run_sched(s, f.opt, 30), want);
}

TEST(LRScheduler, MultiStepLR) {
  SchedFixture f;
  sched::MultiStepLR s(f.opt, {20, 5, 10, 10}, 0.1);
  std::vector<double> want;
  for (int e = 0; e <= 30; ++e) {
    const int reached = (e >= 5) + 2 * (e >= 10) + (e >= 20);
    want.push_back(0.1 * std::pow(0.1, reached));
  }
  expect_lrs(run_sched(s, f.opt, 30), want);
}

TEST(LRScheduler, ExponentialLR) {
  SchedFixture f;
  sched::ExponentialLR s(f.opt, 0.9);
  std::vector<double> want;
  for (int e = 0; e <= 30; ++e) want.push_back(0.1 * std::pow(0.9, e));
  expect_lrs(run_sched(s, f.opt, 30), want);
}

TEST(LRScheduler, CosineAnnealingLRFollowsTheClosedFormPastTMax) {
  SchedFixture f;
  sched::CosineAnnealingLR s(f.opt, 10, 0.001);
  std::vector<double> want;
  for (int e = 0; e <= 30; ++e)
    want.push_back(0.001 + (0.1 - 0.001) * (1 + std::cos(M_PI * e / 10)) / 2);
  expect_lrs(run_sched(s, f.opt, 30), want, 1e-9);
  EXPECT_NEAR(want[10], 0.001, 1e-15);
  EXPECT_NEAR(want[20], 0.1, 1e-15);
}

TEST(LRScheduler, LinearLR) {
  SchedFixture f;
  sched::LinearLR s(f.opt, 0.5, 1.0, 4);
  std::vector<double> want;
  for (int e = 0; e <= 30; ++e) want.push_back(0.1 * (0.5 + 0.5 * std::min(e, 4) / 4.0));
  expect_lrs(run_sched(s, f.opt, 30), want);
  EXPECT_NE(error_of([&] { sched::LinearLR(f.opt, 0.0); })
                .find("Starting multiplicative factor expected to be greater than 0 and less or "
                      "equal to 1."),
            std::string::npos);
}

TEST(LRScheduler, OneCycleLRCyclesLrAndMomentum) {
  SchedFixture f;
  sched::OneCycleLR s(f.opt, 0.1, 30);
  auto momentum = [&] { return f.opt.param_groups()[0].options().get_option("momentum")[0]; };
  // Known points: start max_lr / 25, peak max_lr at step 0.3 * 30 - 1 = 8, end initial / 1e4.
  EXPECT_NEAR(f.opt.param_groups()[0].lr(), 0.004, 1e-15);
  EXPECT_NEAR(momentum(), 0.95, 1e-15);
  std::vector<double> want, want_m;
  const double init = 0.004, max = 0.1, min = 0.004 / 1e4;
  auto cos_anneal = [](double a, double b, double pct) {
    return b + (a - b) / 2 * (std::cos(M_PI * pct) + 1);
  };
  std::vector<double> got_m = {momentum()};
  for (int e = 0; e < 30; ++e) {
    if (e <= 8) {
      want.push_back(cos_anneal(init, max, e / 8.0));
      want_m.push_back(cos_anneal(0.95, 0.85, e / 8.0));
    } else {
      want.push_back(cos_anneal(max, min, (e - 8) / 21.0));
      want_m.push_back(cos_anneal(0.85, 0.95, (e - 8) / 21.0));
    }
  }
  std::vector<double> got = {f.opt.param_groups()[0].lr()};
  for (int e = 1; e < 30; ++e) {
    s.step();
    got.push_back(f.opt.param_groups()[0].lr());
    got_m.push_back(momentum());
  }
  expect_lrs(got, want);
  expect_lrs(got_m, want_m);
  EXPECT_NEAR(got[8], 0.1, 1e-15);
  EXPECT_NEAR(got[29], 4e-7, 1e-18);
  s.step();  // step 30 == total_steps is still allowed
  EXPECT_NE(error_of([&] {
              s.step();
            }).find("Tried to step 31 times. The specified number of total steps is 30"),
            std::string::npos);
}

TEST(LRScheduler, OneCycleLRThreePhaseLinearAdamBeta1) {
  Tensor p = ones({2}).requires_grad_();
  Adam opt({p}, AdamOptions(1.0));
  sched::OneCycleLR s(opt, 1.0, 20, 0.25, "linear", 10.0, 100.0, true);
  // Phases end at steps 4 (0.1 -> 1), 8 (1 -> 0.1) and 19 (0.1 -> 0.001).
  std::vector<double> lrs = {opt.param_groups()[0].lr()};
  std::vector<double> beta1 = {opt.param_groups()[0].options().get_option("betas")[0]};
  for (int e = 1; e < 20; ++e) {
    s.step();
    lrs.push_back(opt.param_groups()[0].lr());
    beta1.push_back(opt.param_groups()[0].options().get_option("betas")[0]);
  }
  EXPECT_NEAR(lrs[0], 0.1, 1e-15);
  EXPECT_NEAR(lrs[2], 0.55, 1e-15);
  EXPECT_NEAR(lrs[4], 1.0, 1e-15);
  EXPECT_NEAR(lrs[6], 0.55, 1e-15);
  EXPECT_NEAR(lrs[8], 0.1, 1e-15);
  EXPECT_NEAR(lrs[19], 0.001, 1e-15);
  EXPECT_NEAR(beta1[0], 0.95, 1e-15);
  EXPECT_NEAR(beta1[4], 0.85, 1e-15);
  EXPECT_NEAR(beta1[8], 0.95, 1e-15);
  EXPECT_NEAR(beta1[15], 0.95, 1e-15);
  EXPECT_EQ(opt.param_groups()[0].options().get_option("betas")[1], 0.999);
}

TEST(LRScheduler, ChainedSchedulersMultiply) {
  SchedFixture f;
  sched::ExponentialLR s1(f.opt, 0.9);
  sched::StepLR s2(f.opt, 3, 0.5);
  std::vector<double> got = {f.opt.param_groups()[0].lr()};
  for (int e = 1; e <= 30; ++e) {
    s1.step();
    s2.step();
    got.push_back(f.opt.param_groups()[0].lr());
  }
  std::vector<double> want;
  for (int e = 0; e <= 30; ++e) want.push_back(0.1 * std::pow(0.9, e) * std::pow(0.5, e / 3));
  expect_lrs(got, want, 1e-12);
  EXPECT_EQ(s2.base_lrs()[0], 0.1);  // the second scheduler starts from initial_lr
}

TEST(LRScheduler, SequentialLR) {
  SchedFixture f;
  f.opt.param_groups()[0].set_lr(1.0);
  auto warm = std::make_shared<sched::LinearLR>(f.opt, 0.5, 1.0, 2);
  auto decay = std::make_shared<sched::ExponentialLR>(f.opt, 0.9);
  sched::SequentialLR s(f.opt, {warm, decay}, {2});
  // Warm-up 0.5, 0.75; from epoch 2 ExponentialLR restarts at its closed form for epoch 0.
  std::vector<double> want = {0.5, 0.75};
  for (int e = 2; e <= 30; ++e) want.push_back(std::pow(0.9, e - 2));
  expect_lrs(run_sched(s, f.opt, 30), want, 1e-12);
  EXPECT_NE(error_of([&] {
              sched::SequentialLR(f.opt, {warm, decay}, {2, 3});
            })
                .find("expects number of schedulers provided to be one more than the number of "
                      "milestone points"),
            std::string::npos);
}

TEST(LRScheduler, ReduceLROnPlateauPatienceCooldownMinLr) {
  SchedFixture f;
  sched::ReduceLROnPlateau s(f.opt, "min", 0.5, 2, 1e-4, "rel", 1, 0.02);
  const std::vector<double> metrics = {1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9,
                                       0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9};
  // Reductions at epochs 5, 9 and 13 (patience 2, then one cooldown epoch); 0.02 is the floor.
  const std::vector<double> want = {0.1,   0.1,   0.1,   0.1,  0.05, 0.05, 0.05, 0.05, 0.025,
                                    0.025, 0.025, 0.025, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02};
  std::vector<double> got;
  for (double m : metrics) {
    s.step(m);
    got.push_back(f.opt.param_groups()[0].lr());
    EXPECT_EQ(s.get_last_lr()[0], got.back());
  }
  expect_lrs(got, want);
  EXPECT_EQ(s.last_epoch(), 18);
  EXPECT_EQ(s.best(), 0.9);
  // max mode, absolute threshold: an improvement smaller than the threshold counts as bad.
  SchedFixture g;
  sched::ReduceLROnPlateau m(g.opt, "max", 0.1, 0, 0.5, "abs");
  m.step(1.0);
  EXPECT_EQ(g.opt.param_groups()[0].lr(), 0.1);
  m.step(1.2);
  EXPECT_NEAR(g.opt.param_groups()[0].lr(), 0.01, 1e-15);
  EXPECT_EQ(error_of([&] { sched::ReduceLROnPlateau(g.opt, "min", 1.0); }),
            "[ReduceLROnPlateau] Factor should be < 1.0.");
}

TEST(LRScheduler, StateDictRoundTrip) {
  SchedFixture a, b;
  sched::CosineAnnealingLR sa(a.opt, 7, 0.01);
  sched::CosineAnnealingLR sb(b.opt, 3, 0.0);
  for (int e = 0; e < 5; ++e) sa.step();
  const auto sd = sa.state_dict();
  EXPECT_EQ(sd["last_epoch"].item<int64_t>(), 5);
  EXPECT_EQ(sd["last_epoch"].dtype(), kInt64);
  EXPECT_EQ(sd["base_lrs.0"].dtype(), kFloat64);
  b.opt.load_state_dict(a.opt.state_dict());
  sb.load_state_dict(sd);
  for (int e = 0; e < 20; ++e) {
    sa.step();
    sb.step();
    EXPECT_EQ(sa.get_last_lr(), sb.get_last_lr());
  }
  SchedFixture c, d;
  sched::ReduceLROnPlateau pa(c.opt, "min", 0.5, 1);
  sched::ReduceLROnPlateau pb(d.opt, "max", 0.1, 5);
  for (double m : {3.0, 2.0, 2.5}) pa.step(m);
  pb.load_state_dict(pa.state_dict());
  d.opt.load_state_dict(c.opt.state_dict());
  for (double m : {2.5, 2.5, 2.5, 1.0, 1.5, 1.5}) {
    pa.step(m);
    pb.step(m);
    EXPECT_EQ(pa.get_last_lr(), pb.get_last_lr());
  }
}

// ---- gradient clipping --------------------------------------------------------------------------

TEST(ClipGrad, NormScalesAllGradients) {
  Tensor a = zeros({2}).requires_grad_(), b = zeros({1}).requires_grad_(),
         c = zeros({3}).requires_grad_();
  a.mutable_grad() = tensor({3.0f, 4.0f});
  b.mutable_grad() = tensor({12.0f});
  const Tensor total = nn::utils::clip_grad_norm_({a, b, c}, 6.5);
  EXPECT_NEAR(total.item<float>(), 13.0f, 1e-5);
  const double coef = 6.5 / (13.0 + 1e-6);
  EXPECT_NEAR(a.grad().to_vector<float>()[0], 3 * coef, 1e-6);
  EXPECT_NEAR(a.grad().to_vector<float>()[1], 4 * coef, 1e-6);
  EXPECT_NEAR(b.grad().to_vector<float>()[0], 12 * coef, 1e-6);
  // Below max_norm nothing changes (the coefficient is clamped to 1).
  const Tensor again = nn::utils::clip_grad_norm_({a, b}, 100.0);
  EXPECT_NEAR(again.item<float>(), 6.5f, 1e-5);
  EXPECT_NEAR(b.grad().to_vector<float>()[0], 12 * coef, 1e-6);
}

TEST(ClipGrad, InfAndOneNorms) {
  Tensor a = zeros({3}).requires_grad_();
  a.mutable_grad() = tensor({-8.0f, 2.0f, 1.0f});
  Tensor b = zeros({2}).requires_grad_();
  b.mutable_grad() = tensor({4.0f, -1.0f});
  const Tensor inf = nn::utils::clip_grad_norm_({a, b}, 2.0, INFINITY);
  EXPECT_FLOAT_EQ(inf.item<float>(), 8.0f);
  EXPECT_NEAR(a.grad().to_vector<float>()[0], -8 * 2 / (8 + 1e-6), 1e-6);
  const Tensor one = nn::utils::clip_grad_norm_({a, b}, 100.0, 1.0);
  EXPECT_NEAR(one.item<float>(), (8 + 2 + 1 + 4 + 1) * 2 / (8 + 1e-6), 1e-5);
  EXPECT_EQ(nn::utils::clip_grad_norm_({zeros({2})}, 1.0).item<float>(), 0.0f);
}

TEST(ClipGrad, NonFiniteNorm) {
  Tensor a = zeros({2}).requires_grad_();
  a.mutable_grad() = tensor({NAN, 1.0f});
  EXPECT_EQ(error_of([&] { nn::utils::clip_grad_norm_({a}, 1.0, 2.0, true); }),
            "[clip_grad_norm_] The total norm of order 2.0 for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients by "
            "the non-finite norm anyway, set `error_if_nonfinite=False`");
  EXPECT_TRUE(std::isnan(nn::utils::clip_grad_norm_({a}, 1.0).item<float>()));
}

TEST(ClipGrad, Value) {
  Tensor a = zeros({4}).requires_grad_();
  a.mutable_grad() = tensor({-3.0f, -0.5f, 0.5f, 3.0f});
  Tensor b = zeros({1}).requires_grad_();  // no gradient: skipped
  nn::utils::clip_grad_value_({a, b}, 1.0);
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{-1.0f, -0.5f, 0.5f, 1.0f}));
  EXPECT_FALSE(b.grad().defined());
}
