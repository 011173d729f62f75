// What a libtorch user types first: ember::save / ember::load, InferenceMode and AutoGradMode,
// OrderedDict items with key() / value(), libtorch's names for schedulers, dtypes and DataLoader
// options, Tensor::reset().
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <type_traits>

#include "ember/ember.h"

using namespace ember;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = testing::TempDir() + "ember_habits_XXXXXX";
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") unlink((path_ + "/" + n).c_str());
      }
      closedir(d);
    }
    rmdir(path_.c_str());
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

nn::Sequential make_net() { return nn::Sequential(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)); }

bool same(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
         a.to(kFloat64).to_vector<double>() == b.to(kFloat64).to_vector<double>();
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// ---- ember::save / ember::load
// -------------------------------------------------------------------

TEST(Serialize, ModuleRoundTripThroughHolderSharedPtrAndImpl) {
  TempDir dir;
  manual_seed(1);
  nn::Sequential a = make_net();
  save(a, dir.file("net.safetensors"));
  manual_seed(2);
  nn::Sequential b = make_net();
  ASSERT_FALSE(same(a->parameters()[0], b->parameters()[0]));
  load(b, dir.file("net.safetensors"));
  for (const auto& item : a->named_parameters()) {
    EXPECT_TRUE(same(item.value(), b->named_parameters()[item.key()])) << item.key();
  }
  const Tensor x = randn({5, 4});
  EXPECT_TRUE(same(a(x), b(x)));

  // The same file through a shared_ptr and through the Impl itself.
  manual_seed(3);
  std::shared_ptr<nn::SequentialImpl> c = make_net().ptr();
  load(c, dir.file("net.safetensors"));
  EXPECT_TRUE(same(a(x), c->forward(x)));
  manual_seed(4);
  nn::Sequential d = make_net();
  load(*d, dir.file("net.safetensors"));
  EXPECT_TRUE(same(a(x), d(x)));
  // save from a shared_ptr writes the same tensors.
  save(c, dir.file("net2.safetensors"));
  TensorDict back;
  load(back, dir.file("net2.safetensors"));
  EXPECT_EQ(back.size(), a->state_dict().size());
}

TEST(Serialize, ModuleLoadKeepsHandlesAndBuffers) {
  TempDir dir;
  nn::Sequential a(nn::Linear(3, 3), nn::BatchNorm1d(3));
  a->train();
  (void)a(randn({8, 3}));  // moves the running statistics
  save(a, dir.file("bn.safetensors"));
  nn::Sequential b(nn::Linear(3, 3), nn::BatchNorm1d(3));
  const Tensor w = b->parameters()[0];  // a handle held elsewhere (an optimizer's)
  load(b, dir.file("bn.safetensors"));
  EXPECT_TRUE(w.is_same(b->parameters()[0]));
  EXPECT_TRUE(same(w, a->parameters()[0]));
  EXPECT_TRUE(same(b->named_buffers()["1.running_mean"], a->named_buffers()["1.running_mean"]));
}

TEST(Serialize, ModuleMismatchNamesEveryDifference) {
  TempDir dir;
  save(nn::Sequential(nn::Linear(4, 3), nn::Linear(3, 2)), dir.file("a.safetensors"));
  nn::Sequential wider(nn::Linear(4, 5), nn::Linear(5, 2));
  std::string e = error_of([&] { load(wider, dir.file("a.safetensors")); });
  EXPECT_NE(e.find("[load] " + dir.file("a.safetensors") + " does not match the module"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("'0.weight' has shape [3, 4] in the file, [5, 4] in the module"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("'1.weight' has shape [2, 3] in the file, [2, 5] in the module"),
            std::string::npos)
      << e;

  nn::Sequential deeper(nn::Linear(4, 3), nn::Linear(3, 2), nn::Linear(2, 2));
  e = error_of([&] { load(deeper, dir.file("a.safetensors")); });
  EXPECT_NE(e.find("missing from the file: '2.weight', '2.bias'"), std::string::npos) << e;

  nn::Sequential shallow(nn::Linear(4, 3));
  e = error_of([&] { load(shallow, dir.file("a.safetensors")); });
  EXPECT_NE(e.find("not in the module: '1.bias', '1.weight'"), std::string::npos) << e;

  nn::Sequential dbl(nn::Linear(4, 3), nn::Linear(3, 2));
  dbl->to(kFloat64);
  e = error_of([&] { load(dbl, dir.file("a.safetensors")); });
  EXPECT_NE(e.find("'0.weight' has dtype float32 in the file, float64 in the module"),
            std::string::npos)
      << e;

  e = error_of([&] { load(dbl, dir.file("absent.safetensors")); });
  EXPECT_NE(e.find("absent.safetensors"), std::string::npos) << e;
  // A failed load leaves the module as it was.
  nn::Sequential fresh(nn::Linear(4, 5), nn::Linear(5, 2));
  const Tensor before = fresh->parameters()[0].clone();
  EXPECT_THROW(load(fresh, dir.file("a.safetensors")), ValueError);
  EXPECT_TRUE(same(before, fresh->parameters()[0]));
}

TEST(Serialize, TensorAndTensorList) {
  TempDir dir;
  const Tensor t = arange(6, TensorOptions().dtype(kInt64)).view({2, 3});
  save(t, dir.file("t.safetensors"));
  Tensor u;
  load(u, dir.file("t.safetensors"));
  EXPECT_TRUE(same(t, u));

  // Names "0".."11": more than ten, so the file's order ("0", "1", "10", ...) is not the list's.
  std::vector<Tensor> list;
  for (int i = 0; i < 12; ++i) list.push_back(full({i + 1}, i, TensorOptions().dtype(kFloat32)));
  list.push_back(ones({2}, TensorOptions().dtype(kFloat16)));
  save(list, dir.file("list.safetensors"));
  std::vector<Tensor> back;
  load(back, dir.file("list.safetensors"));
  ASSERT_EQ(back.size(), list.size());
  for (size_t i = 0; i < list.size(); ++i) EXPECT_TRUE(same(list[i], back[i])) << i;

  // A list file is not one tensor; a module file is not a list.
  std::string e = error_of([&] { load(u, dir.file("list.safetensors")); });
  EXPECT_NE(e.find("holds 13 tensors, not one"), std::string::npos) << e;
  save(make_net(), dir.file("net.safetensors"));
  e = error_of([&] { load(back, dir.file("net.safetensors")); });
  EXPECT_NE(e.find("is not a tensor list"), std::string::npos) << e;
  e = error_of([&] { save(Tensor(), dir.file("u.safetensors")); });
  EXPECT_NE(e.find("[save] 'tensor' is an undefined tensor"), std::string::npos) << e;
}

TEST(Serialize, OptimizerRoundTrip) {
  TempDir dir;
  manual_seed(0);
  nn::Linear lin(3, 2);
  optim::Adam opt(lin->parameters(), optim::AdamOptions(0.1));
  (lin(randn({4, 3})).sum()).backward();
  opt.step();
  save(opt, dir.file("opt.safetensors"));

  optim::Adam opt2(lin->parameters(), optim::AdamOptions(0.5));
  load(opt2, dir.file("opt.safetensors"));
  EXPECT_DOUBLE_EQ(opt2.param_groups()[0].lr(), 0.1);
  const Tensor p = lin->parameters()[0];
  EXPECT_TRUE(same(opt.state(p)["exp_avg"], opt2.state(p)["exp_avg"]));
}

// ---- grad modes ---------------------------------------------------------------------------------

TEST(GradModes, InferenceModeAndAutoGradMode) {
  const Tensor w = ones({2}).requires_grad_();
  EXPECT_FALSE(InferenceMode::is_enabled());
  {
    InferenceMode guard;
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE(is_grad_enabled());
    EXPECT_FALSE((w * 2).requires_grad());
    {
      AutoGradMode on(true);
      EXPECT_TRUE((w * 2).requires_grad());
    }
    {
      InferenceMode off(false);  // libtorch: grad mode on again inside
      EXPECT_FALSE(InferenceMode::is_enabled());
      EXPECT_TRUE(is_grad_enabled());
    }
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE(is_grad_enabled());
  }
  EXPECT_FALSE(InferenceMode::is_enabled());
  EXPECT_TRUE(is_grad_enabled());
  {
    AutoGradMode off(false);
    EXPECT_FALSE((w * 2).requires_grad());
  }
  EXPECT_TRUE((w * 2).requires_grad());
}

// ---- libtorch's spellings
// -------------------------------------------------------------------------

TEST(LibtorchNames, OrderedDictItemsHaveKeyAndValue) {
  nn::Linear lin(2, 3);
  std::vector<std::string> keys;
  for (const auto& item : lin->named_parameters()) {
    keys.push_back(item.key());
    EXPECT_TRUE(item.value().defined());
    EXPECT_EQ(&item.key(), &item.first);  // still a pair: .first / .second, structured bindings
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"weight", "bias"}));
  OrderedDict<std::string, int> d{{"a", 1}, {"b", 2}};
  for (auto& item : d) item.value() *= 10;
  int sum = 0;
  for (const auto& [k, v] : d) sum += v;
  EXPECT_EQ(sum, 30);
}

TEST(LibtorchNames, AliasesAreTheSameTypes) {
  static_assert(std::is_same_v<optim::StepLR, optim::lr_scheduler::StepLR>);
  static_assert(std::is_same_v<optim::LRScheduler, optim::lr_scheduler::LRScheduler>);
  static_assert(
      std::is_same_v<optim::ReduceLROnPlateauScheduler, optim::lr_scheduler::ReduceLROnPlateau>);
  static_assert(kF32 == kFloat32 && kF16 == kFloat16 && kF64 == kFloat64 && kBF16 == kBFloat16);
  static_assert(kI64 == kInt64 && kI32 == kInt32 && kI8 == kInt8 && kU8 == kUInt8);

  nn::Linear lin(2, 2);
  optim::SGD sgd(lin->parameters(), optim::SGDOptions(1.0));
  optim::StepLR sched(sgd, /*step_size=*/2, /*gamma=*/0.5);
  sched.step();
  sched.step();
  EXPECT_DOUBLE_EQ(sgd.param_groups()[0].lr(), 0.5);

  auto opts = data::DataLoaderOptions().batch_size(8).workers(3);
  EXPECT_EQ(opts.workers(), 3);
  EXPECT_EQ(opts.num_workers(), 3);
}

TEST(LibtorchNames, TensorReset) {
  Tensor t = ones({2});
  Tensor alias = t;
  t.reset();
  EXPECT_FALSE(t.defined());
  EXPECT_TRUE(alias.defined());
  EXPECT_EQ(alias.impl_ptr().use_count(), 1);
}
