// GPT-2 training steps per second: synthetic tokens, AdamW, optional bf16 autocast; tokens/s,
// ms/step, MFU against the H100/H200's dense bf16 peak and peak device memory.
// bench/gpu/gpt2_torch.py times the same model in PyTorch (eager and torch.compile).
//
//   gpt2 [--list] [--smoke] [--model gpt2|gpt2-tiny] [--batch B] [--seq T] [--device cpu|cuda]
//        [--amp] [--warmup N] [--steps N]
//
//   --list    print the models this benchmark knows and exit
//   --smoke   one warm-up and one timed step of gpt2-tiny at B=2, T=16 (an emulated device will
//             do); the numbers mean nothing
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "ember/ember.h"

using namespace ember;

namespace {

constexpr double kPeakFlops = 989e12;  // H100/H200 SXM dense bf16 tensor cores

struct Args {
  std::string model = "gpt2";
  int64_t batch = 16, seq = 1024, warmup = 5, steps = 20;
  std::string device = "cuda";
  bool amp = false;
};

int usage(const char* msg) {
  std::fprintf(stderr, "[gpt2 bench] %s\n", msg);
  return 2;
}

void sync(const Device& d) {
  if (d.is_cuda()) cuda::synchronize();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw ValueError("[gpt2 bench] " + f + " needs a value");
      return argv[++i];
    };
    if (f == "--list") {
      std::printf("gpt2\ngpt2-tiny\n");
      return 0;
    } else if (f == "--smoke") {
      a.model = "gpt2-tiny", a.batch = 2, a.seq = 16, a.warmup = 1, a.steps = 1;
    } else if (f == "--model") {
      a.model = next();
    } else if (f == "--batch") {
      a.batch = std::stoll(next());
    } else if (f == "--seq") {
      a.seq = std::stoll(next());
    } else if (f == "--device") {
      a.device = next();
    } else if (f == "--warmup") {
      a.warmup = std::stoll(next());
    } else if (f == "--steps") {
      a.steps = std::stoll(next());
    } else if (f == "--amp") {
      a.amp = true;
    } else {
      return usage(("unknown flag " + f).c_str());
    }
  }
  if (a.device == "cuda" && !cuda::is_available()) {
    std::printf("gpt2 bench: no CUDA device, nothing to time\n");
    return 0;
  }
  const Device dev(a.device);
  manual_seed(0);
  auto made = models::make(
      a.model,
      {{"context", std::to_string(std::max<int64_t>(a.seq, a.model == "gpt2" ? 1024 : 64))}});
  auto* model = dynamic_cast<models::GPT2Impl*>(made.get());
  if (model == nullptr) return usage("only GPT-2 models");
  model->to(dev);
  const int64_t V = model->config.vocab_size;
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-4).weight_decay(0.1));
  Tensor x = randint(V, {a.batch, a.seq}, TensorOptions().dtype(kInt64).device(dev));
  Tensor y = randint(V, {a.batch, a.seq}, TensorOptions().dtype(kInt64).device(dev));
  float last = 0.0f;
  auto step = [&] {
    opt.zero_grad();
    Tensor loss;
    {
      std::optional<amp::autocast> guard;
      if (a.amp) guard.emplace(dev.type(), kBFloat16);
      loss = model->loss(x, y);
    }
    loss.backward();
    opt.step();
    return loss;
  };
  for (int64_t i = 0; i < a.warmup; ++i) step();
  sync(dev);
  if (dev.is_cuda()) cuda::reset_peak_memory_stats();
  const auto t0 = std::chrono::steady_clock::now();
  Tensor loss;
  for (int64_t i = 0; i < a.steps; ++i) loss = step();
  sync(dev);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  last = loss.item<float>();
  // Training FLOPs per token: 6 N (matmuls with the parameters, forward and backward) plus
  // 12 L T C for attention's two matmuls (PaLM's accounting, as nanoGPT's MFU).
  const auto& c = model->config;
  const double n = static_cast<double>(model->num_parameters() - c.context * c.n_embd);
  const double flops_per_token = 6.0 * n + 12.0 * static_cast<double>(c.n_layer * a.seq * c.n_embd);
  const double ms = 1e3 * s / static_cast<double>(a.steps);
  const double tokens_s = static_cast<double>(a.batch * a.seq) * a.steps / s;
  const double mfu = flops_per_token * tokens_s / kPeakFlops;
  const double peak_gib =
      dev.is_cuda() ? static_cast<double>(cuda::max_memory_allocated()) / (1 << 30) : 0.0;
  std::printf(
      "ember %s %s%s B=%lld T=%lld: %.2f ms/step, %.0f tokens/s, MFU %.1f%%, peak %.2f GiB,"
      " loss %.4f\n",
      a.model.c_str(), a.device.c_str(), a.amp ? " bf16" : " fp32", static_cast<long long>(a.batch),
      static_cast<long long>(a.seq), ms, tokens_s, 100.0 * mfu, peak_gib, last);
  return 0;
}
