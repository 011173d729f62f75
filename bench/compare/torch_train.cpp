// `ember train`'s default Fashion-MNIST run written against libtorch: the same model (two
// conv3x3-BN-ReLU-maxpool blocks, dropout 0.25, 3136-128-10), data (pixels / 255, normalised by
// the training set's mean 0.2860 and std 0.3530; shuffled batches of 64 read by one loader
// worker; test batches of 500), optimizer (SGD, Nesterov momentum 0.9, weight decay 5e-4) and
// per-batch one-cycle schedule (max lr 0.05, PyTorch's OneCycleLR defaults, written out here:
// libtorch's C++ API has no OneCycleLR).
//
//   torch_train DATA_DIR THREADS [--epochs N] [--target ACC] [--seed S]
//
// DATA_DIR holds the four uncompressed IDX files (libtorch's MNIST reader). The clock starts
// after the data is read and the model built, as in `ember train`; one JSON line per epoch:
// {"framework":"libtorch","epoch":E,"test_accuracy":A,"elapsed_s":T,...}. With --target the
// run stops after the first epoch whose test accuracy reaches ACC.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" void openblas_set_num_threads(int n);

namespace {

constexpr double kMean = 0.2860, kStd = 0.3530;

torch::nn::Sequential make_model() {
  namespace nn = torch::nn;
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1).bias(false)),
                        nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1).bias(false)),
                        nn::BatchNorm2d(64), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                        nn::Flatten(), nn::Dropout(0.25), nn::Linear(64 * 7 * 7, 128), nn::ReLU(),
                        nn::Dropout(0.25), nn::Linear(128, 10));
}

// torch.optim.lr_scheduler.OneCycleLR(opt, max_lr, total_steps) with its defaults: pct_start
// 0.3, cosine annealing, div_factor 25, final_div_factor 1e4, momentum cycled 0.95 -> 0.85 -> 0.95.
class OneCycle {
 public:
  OneCycle(torch::optim::SGD& opt, double max_lr, int64_t total)
      : opt_(opt), max_lr_(max_lr), total_(total) {
    apply(0);
  }
  void step() { apply(++step_); }

 private:
  static double anneal(double start, double end, double pct) {
    return end + (start - end) / 2.0 * (std::cos(M_PI * pct) + 1.0);
  }
  void apply(int64_t step) {
    const double initial = max_lr_ / 25.0, min_lr = initial / 1e4;
    const double end1 = 0.3 * static_cast<double>(total_) - 1;
    const double end2 = static_cast<double>(total_) - 1;
    const double s = static_cast<double>(step);
    double lr, momentum;
    if (s <= end1) {
      lr = anneal(initial, max_lr_, s / end1);
      momentum = anneal(0.95, 0.85, s / end1);
    } else {
      const double pct = (s - end1) / (end2 - end1);
      lr = anneal(max_lr_, min_lr, pct);
      momentum = anneal(0.85, 0.95, pct);
    }
    for (auto& group : opt_.param_groups()) {
      auto& o = static_cast<torch::optim::SGDOptions&>(group.options());
      o.lr(lr);
      o.momentum(momentum);
    }
  }
  torch::optim::SGD& opt_;
  double max_lr_;
  int64_t total_, step_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DATA_DIR THREADS [--epochs N] [--target ACC] [--seed S]\n",
                 argv[0]);
    return 2;
  }
  const std::string root = argv[1];
  const int threads = std::atoi(argv[2]);
  int64_t epochs = 8;
  double target = 0;
  uint64_t seed = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--epochs") {
      epochs = std::atoll(argv[i + 1]);
    } else if (k == "--target") {
      target = std::atof(argv[i + 1]);
    } else if (k == "--seed") {
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  at::set_num_interop_threads(1);
  torch::set_num_threads(threads);
  openblas_set_num_threads(threads);
  torch::manual_seed(seed);

  namespace data = torch::data;
  auto train_set = data::datasets::MNIST(root, data::datasets::MNIST::Mode::kTrain)
                       .map(data::transforms::Normalize<>(kMean, kStd))
                       .map(data::transforms::Stack<>());
  auto test_set = data::datasets::MNIST(root, data::datasets::MNIST::Mode::kTest)
                      .map(data::transforms::Normalize<>(kMean, kStd))
                      .map(data::transforms::Stack<>());
  const int64_t train_size = train_set.size().value();
  const int64_t batch = 64, batches = (train_size + batch - 1) / batch;
  auto train_loader = data::make_data_loader<data::samplers::RandomSampler>(
      std::move(train_set), data::DataLoaderOptions().batch_size(batch).workers(1));
  auto test_loader = data::make_data_loader<data::samplers::SequentialSampler>(
      std::move(test_set), data::DataLoaderOptions().batch_size(500).workers(0));

  torch::nn::Sequential model = make_model();
  torch::optim::SGD opt(
      model->parameters(),
      torch::optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(5e-4));
  OneCycle sched(opt, 0.05, epochs * batches);

  const auto start = std::chrono::steady_clock::now();
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    model->train();
    double loss_sum = 0, correct = 0, seen = 0;
    for (auto& b : *train_loader) {
      torch::Tensor logits = model->forward(b.data);
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits, b.target);
      opt.zero_grad();
      loss.backward();
      opt.step();
      sched.step();
      torch::NoGradGuard no_grad;
      const double n = static_cast<double>(b.target.size(0));
      loss_sum += loss.item<double>() * n;
      correct += logits.argmax(1).eq(b.target).sum().item<double>();
      seen += n;
    }
    model->eval();
    double test_correct = 0, test_seen = 0;
    {
      torch::NoGradGuard no_grad;
      for (auto& b : *test_loader) {
        test_correct += model->forward(b.data).argmax(1).eq(b.target).sum().item<double>();
        test_seen += static_cast<double>(b.target.size(0));
      }
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double acc = test_correct / test_seen;
    std::printf(
        "{\"framework\":\"libtorch\",\"epoch\":%lld,\"train_loss\":%.4f,\"train_accuracy\":%.4f,"
        "\"test_accuracy\":%.4f,\"elapsed_s\":%.2f}\n",
        static_cast<long long>(epoch), loss_sum / seen, correct / seen, acc, elapsed);
    std::fflush(stdout);
    if (target > 0 && acc >= target) break;
  }
  return 0;
}
