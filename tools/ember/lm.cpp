// `ember train --model gpt2|gpt2-tiny`: a byte-level language model on plain text (by default
// the fortunes Debian ships), and `ember generate`: text sampled from such a run's model.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "cli.h"
#include "ember/ember.h"

namespace ember::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* kDefaultText = "/usr/share/games/fortunes";

// Every regular file of path (a file, or a folder read in name order, skipping the binary
// strfile indexes "*.dat"), concatenated.
std::string read_text(const std::string& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path)) {
      if (e.is_regular_file() && e.path().extension() != ".dat" && e.path().extension() != ".u8") {
        files.push_back(e.path());
      }
    }
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(path)) {
    files.push_back(path);
  }
  std::string text;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return text;
}

Device device_of(const std::string& spec) {
  if (spec == "auto") return cuda::is_available() ? Device(kCUDA, 0) : Device(kCPU);
  return Device(spec);
}

// A batch of windows of data at random offsets: x (B, T) and the next bytes y (B, T).
std::pair<Tensor, Tensor> batch(const std::vector<int64_t>& data, int64_t B, int64_t T,
                                Generator& gen, const Device& dev) {
  Tensor starts = randint(0, static_cast<int64_t>(data.size()) - T - 1, {B}, gen,
                          TensorOptions().dtype(kInt64));
  Tensor x = empty({B, T}, TensorOptions().dtype(kInt64));
  Tensor y = empty({B, T}, TensorOptions().dtype(kInt64));
  int64_t* xp = x.data_ptr<int64_t>();
  int64_t* yp = y.data_ptr<int64_t>();
  const int64_t* sp = starts.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      xp[b * T + t] = data[sp[b] + t];
      yp[b * T + t] = data[sp[b] + t + 1];
    }
  }
  return {x.to(dev), y.to(dev)};
}

std::string decode(const Tensor& row) {
  Tensor r = row.to(Device(kCPU)).contiguous();
  std::string s;
  for (int64_t i = 0; i < r.numel(); ++i) s += static_cast<char>(r.data_ptr<int64_t>()[i]);
  return s;
}

}  // namespace

int run_train_lm(const Args& args) {
  const std::string name = args.get("model").value_or("gpt2-tiny");
  const std::string text_path = args.get("text").value_or(kDefaultText);
  const fs::path dir = args.get("checkpoint-dir").value_or("runs/" + name);
  const Device dev = device_of(args.get("device").value_or("auto"));
  const int64_t steps = args.get_int("steps", 2000);
  const int64_t B = args.get_int("batch-size", 32);
  const double lr = args.get_double("lr", 3e-3);
  const auto seed = static_cast<uint64_t>(args.get_int("seed", 0));
  if (args.has("threads")) set_num_threads(static_cast<int>(args.get_int("threads", 1)));
  if (steps <= 0 || B <= 0) throw UsageError{"--steps and --batch-size must be positive"};

  const std::string text = read_text(text_path);
  manual_seed(seed);
  auto made = models::make(name, {{"vocab_size", "256"}});
  auto* model = dynamic_cast<models::GPT2Impl*>(made.get());
  const int64_t T = model->config.context;
  // The first 90 % trains, the last 10 % validates.
  const auto split = static_cast<int64_t>(text.size()) * 9 / 10;
  if (static_cast<int64_t>(text.size()) - split < T + 2) {
    std::cerr << "ember train: " << text_path << " holds too little text (" << text.size()
              << " bytes; at least " << 10 * (T + 2) << " are needed)\n";
    return kExitFailure;
  }
  std::vector<int64_t> train_data, val_data;
  for (int64_t i = 0; i < static_cast<int64_t>(text.size()); ++i) {
    (i < split ? train_data : val_data).push_back(static_cast<unsigned char>(text[i]));
  }
  model->to(dev);
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(lr).weight_decay(0.1));
  std::printf("%s: %lld parameters, %zu bytes of text (%zu train, %zu validation), %s\n",
              name.c_str(), static_cast<long long>(model->num_parameters()), text.size(),
              train_data.size(), val_data.size(), dev.str().c_str());
  Generator gen(Device(kCPU), seed + 1);
  auto validate = [&] {
    Generator vgen(Device(kCPU), 12345);  // the same validation batches every time
    NoGradGuard no_grad;
    model->eval();
    double sum = 0.0;
    const int kBatches = 8;
    for (int i = 0; i < kBatches; ++i) {
      auto [x, y] = batch(val_data, B, T, vgen, dev);
      sum += model->loss(x, y).item<float>();
    }
    model->train();
    return sum / kBatches;
  };
  const int64_t every = std::max<int64_t>(1, std::min<int64_t>(steps, 200));
  double val = 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t step = 1; step <= steps; ++step) {
    // Cosine decay to a tenth of lr.
    const double f = 0.1 + 0.45 * (1.0 + std::cos(M_PI * static_cast<double>(step - 1) / steps));
    for (auto& group : opt.param_groups()) group.options().set_lr(lr * f);
    auto [x, y] = batch(train_data, B, T, gen, dev);
    opt.zero_grad();
    Tensor loss = model->loss(x, y);
    loss.backward();
    nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    if (step % every == 0 || step == steps) {
      val = validate();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("step %lld/%lld  train loss %.4f  validation loss %.4f  %.1f s\n",
                  static_cast<long long>(step), static_cast<long long>(steps), loss.item<float>(),
                  val, s);
      std::fflush(stdout);
    }
  }
  fs::create_directories(dir);
  const fs::path out = dir / "model.safetensors";
  models::save(made, out.string(),
               {{"validation_loss", std::to_string(val)}, {"steps", std::to_string(steps)}});
  std::printf("validation loss %.4f; model written to %s (ember generate --run %s)\n", val,
              out.c_str(), dir.c_str());
  return kExitOk;
}

int run_generate(const Args& args) {
  const fs::path dir = args.get("run").value_or("runs/gpt2-tiny");
  const fs::path path = dir / "model.safetensors";
  if (!fs::exists(path)) {
    std::cerr << "ember generate: no " << path.string() << " (train one with ember train --model "
              << "gpt2-tiny)\n";
    return kExitFailure;
  }
  auto made = models::load(path.string());
  auto* model = dynamic_cast<models::GPT2Impl*>(made.get());
  if (model == nullptr) {
    std::cerr << "ember generate: " << path.string() << " holds no language model\n";
    return kExitFailure;
  }
  const std::string prompt = args.get("prompt").value_or("\n");
  const int64_t n = args.get_int("tokens", 300);
  const double temperature = args.get_double("temperature", 0.8);
  const int64_t top_k = args.get_int("top-k", 40);
  if (prompt.empty() || n < 0 || temperature < 0 || top_k < 0) {
    throw UsageError{"--prompt must be non-empty; --tokens, --temperature, --top-k >= 0"};
  }
  Generator gen(Device(kCPU), static_cast<uint64_t>(args.get_int("seed", 0)));
  Tensor idx = empty({1, static_cast<int64_t>(prompt.size())}, TensorOptions().dtype(kInt64));
  for (size_t i = 0; i < prompt.size(); ++i) {
    idx.data_ptr<int64_t>()[i] = static_cast<unsigned char>(prompt[i]);
  }
  std::cout << decode(model->generate(idx, n, temperature, top_k, &gen).select(0, 0)) << "\n";
  return kExitOk;
}

Command generate_command() {
  Command c;
  c.name = "generate";
  c.summary = "sample text from a language model that ember train wrote";
  c.description =
      "Loads RUN/model.safetensors (written by ember train --model gpt2-tiny or gpt2) and prints\n"
      "the prompt followed by sampled bytes: softmax(logits / temperature) over the top-k most\n"
      "likely (temperature 0: the most likely byte). The same seed gives the same text.";
  c.flags = {
      {"run", "DIR", "the training run's checkpoint directory", "runs/gpt2-tiny"},
      {"prompt", "TEXT", "the text to continue", "a newline"},
      {"tokens", "N", "bytes to generate", "300"},
      {"temperature", "X", "sampling temperature", "0.8"},
      {"top-k", "N", "sample among the N most likely (0: all)", "40"},
      {"seed", "N", "seed of the sampling", "0"},
  };
  c.run = run_generate;
  return c;
}

}  // namespace ember::cli
