// `ember train`: trains a model on Fashion-MNIST on the best device present, with a progress
// line, per-epoch test accuracy, metrics files, a chart, checkpoints every epoch, --resume and a
// clean stop on Ctrl-C (the checkpoint is saved first).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "ember/ember.h"
#include "monitor_status.h"
#include "train_report.h"

namespace ember::cli {
namespace {

namespace fs = std::filesystem;
namespace F = nn::functional;
using Clock = std::chrono::steady_clock;

constexpr const char* kFormat = "ember-train/1";
constexpr const char* kCheckpointFile = "checkpoint.safetensors";
// Fashion-MNIST's pixel mean and standard deviation over the training set.
constexpr double kMean = 0.2860, kStd = 0.3530;
// Bounds of the numeric flags: beyond them a value is a typo, not a setting.
constexpr int64_t kMaxThreads = 1024, kMaxWorkers = 4096;
constexpr double kMaxLr = 100;

struct Config {
  std::string model = "cnn";
  std::string optimizer = "sgd";
  std::string scheduler = "onecycle";
  int64_t epochs = 8;
  int64_t batch_size = 64;
  double lr = 0.05;
  double weight_decay = 5e-4;
  uint64_t seed = 0;
  int64_t train_samples = 0;  // 0: the whole set
  int64_t test_samples = 0;
  std::string amp = "off";  // off, bf16 or fp16: autocast around forward + loss
};

// ---- the command line ---------------------------------------------------------------------------

std::string choice(const Args& args, const std::string& flag, const std::string& fallback,
                   const std::vector<std::string>& allowed) {
  const std::string v = args.get(flag).value_or(fallback);
  for (const std::string& a : allowed) {
    if (v == a) return v;
  }
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw UsageError{"--" + flag + ": unknown value '" + v + "' (choose from " + list + ")"};
}

int64_t positive(const Args& args, const std::string& flag, int64_t fallback, int64_t min = 1,
                 int64_t max = std::numeric_limits<int64_t>::max()) {
  const int64_t v = args.get_int(flag, fallback);
  if (v < min) {
    throw UsageError{"--" + flag + " must be at least " + std::to_string(min) + ", got " +
                     std::to_string(v)};
  }
  if (v > max) {
    throw UsageError{"--" + flag + " must be at most " + std::to_string(max) + ", got " +
                     std::to_string(v)};
  }
  return v;
}

// An unsigned 64-bit integer in decimal, or nullopt.
std::optional<uint64_t> parse_u64(const std::string& s) {
  uint64_t v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

uint64_t seed_flag(const Args& args) {
  const auto v = args.get("seed");
  if (!v) return 0;
  const auto seed = parse_u64(*v);
  if (!seed) {
    throw UsageError{"--seed expects an integer from 0 to 18446744073709551615, got '" + *v + "'"};
  }
  return *seed;
}

bool valid_lr(double lr) { return std::isfinite(lr) && lr > 0 && lr <= kMaxLr; }

Device pick_device(const std::string& spec) {
  if (spec == "auto") return cuda::is_available() ? Device(kCUDA, 0) : Device(kCPU);
  Device d(kCPU);
  try {
    d = Device(spec);
  } catch (const Error&) {
    throw UsageError{"--device: unknown device '" + spec + "' (use auto, cpu, cuda or cuda:N)"};
  }
  if (d.is_cuda()) {
    if (!d.has_index()) d = Device(kCUDA, 0);
    if (!cuda::is_available()) {
      throw Error("[train] --device " + spec +
                  ": no CUDA device is usable here; `ember doctor` says why. Use --device cpu "
                  "or auto");
    }
    if (d.index() >= cuda::device_count()) {
      throw Error("[train] --device " + spec + ": this machine has " +
                  std::to_string(cuda::device_count()) + " CUDA device(s)");
    }
  }
  return d;
}

// bf16 on a CUDA device that has bfloat16 tensor cores (compute capability 8.0 and later), off
// elsewhere.
std::string default_amp(const Device& device) {
  if (!device.is_cuda()) return "off";
  return cuda::get_device_properties(device.index()).major >= 8 ? "bf16" : "off";
}

// The loss scaler: on for fp16 (whose gradients underflow without it), off otherwise.
amp::GradScaler make_scaler(const Config& c, const Device& device) {
  return amp::GradScaler(amp::GradScalerOptions().device(device.type()).enabled(c.amp == "fp16"));
}

// ---- the models ---------------------------------------------------------------------------------

// The zoo's Fashion-MNIST classifiers (models::make("fashion-cnn" / "fashion-mlp")).
nn::Sequential make_model(const std::string& name) {
  return nn::Sequential(
      std::dynamic_pointer_cast<nn::SequentialImpl>(models::make("fashion-" + name)));
}

std::unique_ptr<optim::Optimizer> make_optimizer(const Config& c, const TensorList& params) {
  if (c.optimizer == "adamw") {
    return std::make_unique<optim::AdamW>(params,
                                          optim::AdamWOptions(c.lr).weight_decay(c.weight_decay));
  }
  return std::make_unique<optim::SGD>(
      params, optim::SGDOptions(c.lr).momentum(0.9).nesterov(true).weight_decay(c.weight_decay));
}

// Schedulers stepped after every batch (onecycle, cosine) or every epoch (step).
std::unique_ptr<optim::lr_scheduler::LRScheduler> make_scheduler(const Config& c,
                                                                 optim::Optimizer& opt,
                                                                 int64_t steps_per_epoch) {
  namespace S = optim::lr_scheduler;
  const int64_t total = c.epochs * steps_per_epoch;
  if (c.scheduler == "onecycle") return std::make_unique<S::OneCycleLR>(opt, c.lr, total);
  if (c.scheduler == "cosine") return std::make_unique<S::CosineAnnealingLR>(opt, total);
  if (c.scheduler == "step") {
    return std::make_unique<S::StepLR>(opt, std::max<int64_t>(1, c.epochs / 3), 0.1);
  }
  return nullptr;
}

double current_lr(optim::Optimizer& opt) { return opt.param_groups().front().lr(); }

// ---- data ---------------------------------------------------------------------------------------

std::shared_ptr<data::Dataset> load_split(const std::string& root, bool train, int64_t limit) {
  std::shared_ptr<data::Dataset> set;
  try {
    set = std::make_shared<data::FashionMNIST>(root, train, data::Normalize({kMean}, {kStd}));
  } catch (const Error& e) {
    throw Error("[train] cannot read Fashion-MNIST from " + root + ": " + e.what() +
                ". Install Debian's dataset-fashion-mnist (scripts/install-deps.sh does) or "
                "pass --data DIR with the four IDX files");
  }
  if (limit > 0 && limit < set->size()) {
    std::vector<int64_t> idx(static_cast<size_t>(limit));
    for (int64_t i = 0; i < limit; ++i) idx[static_cast<size_t>(i)] = i;
    set = std::make_shared<data::Subset>(data::DatasetPtr(set), std::move(idx));
  }
  return set;
}

// ---- checkpoints --------------------------------------------------------------------------------

// Where training stands; saved in every checkpoint so that --resume continues exactly.
struct Position {
  int64_t epoch = 0;                           // completed epochs
  int64_t batch = 0;                           // batches done in the current epoch
  int64_t step = 0;                            // optimizer steps
  double loss_sum = 0, correct = 0, seen = 0;  // the current epoch's running totals
  double train_seconds = 0;                    // training time in the current epoch
  double elapsed = 0;                          // wall time of the run before this process
  std::vector<EpochMetrics> history;
};

std::string str(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

void save(const fs::path& dir, const Config& c, const Position& pos, nn::Module& model,
          optim::Optimizer& opt, optim::lr_scheduler::LRScheduler* sched,
          const amp::GradScaler& scaler) {
  io::Checkpoint ck;
  ck.put("model.", model.state_dict());
  ck.put("optimizer.", opt.state_dict());
  if (sched) ck.put("scheduler.", sched->state_dict());
  if (scaler.is_enabled()) ck.put("scaler.", scaler.state_dict());
  ck.put("rng.", io::capture_rng_state());
  ck.metadata = {
      {"format", kFormat},
      {"model", c.model},
      {"optimizer", c.optimizer},
      {"scheduler", c.scheduler},
      {"amp", c.amp},
      {"epochs", std::to_string(c.epochs)},
      {"batch_size", std::to_string(c.batch_size)},
      {"lr", str(c.lr)},
      {"weight_decay", str(c.weight_decay)},
      {"seed", std::to_string(c.seed)},
      {"train_samples", std::to_string(c.train_samples)},
      {"test_samples", std::to_string(c.test_samples)},
      {"epoch", std::to_string(pos.epoch)},
      {"batch", std::to_string(pos.batch)},
      {"step", std::to_string(pos.step)},
      {"loss_sum", str(pos.loss_sum)},
      {"correct", str(pos.correct)},
      {"seen", str(pos.seen)},
      {"train_seconds", str(pos.train_seconds)},
      {"elapsed", str(pos.elapsed)},
      {"history", metrics_jsonl(pos.history)},
  };
  io::save_checkpoint((dir / kCheckpointFile).string(), ck);
}

const std::string& meta(const io::Checkpoint& ck, const std::string& key, const fs::path& file) {
  auto it = ck.metadata.find(key);
  if (it == ck.metadata.end()) {
    throw Error("[train] " + file.string() + " is not an ember train checkpoint (no '" + key +
                "' entry)");
  }
  return it->second;
}

// Every value read from a checkpoint is checked: a bad one names the file and the key.
[[noreturn]] void bad_value(const fs::path& file, const std::string& key, const std::string& v,
                            const std::string& expected) {
  throw Error("[train] " + file.string() + ": '" + key + "' is '" + v + "', expected " + expected);
}

int64_t meta_int(const io::Checkpoint& ck, const std::string& key, const fs::path& file,
                 int64_t min, int64_t max = std::numeric_limits<int64_t>::max()) {
  const std::string& v = meta(ck, key, file);
  int64_t out = 0;
  const char* end = v.data() + v.size();
  auto [ptr, ec] = std::from_chars(v.data(), end, out);
  if (v.empty() || ec != std::errc() || ptr != end || out < min || out > max) {
    bad_value(file, key, v,
              "an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return out;
}

double meta_real(const io::Checkpoint& ck, const std::string& key, const fs::path& file,
                 double min = 0) {
  const std::string& v = meta(ck, key, file);
  char* end = nullptr;
  errno = 0;
  const double out = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(out) || out < min) {
    bad_value(file, key, v, "a finite number of at least " + str(min));
  }
  return out;
}

const std::string& meta_choice(const io::Checkpoint& ck, const std::string& key,
                               const fs::path& file, const std::vector<std::string>& allowed) {
  const std::string& v = meta(ck, key, file);
  std::string list;
  for (const std::string& a : allowed) {
    if (v == a) return v;
    list += (list.empty() ? "" : ", ") + a;
  }
  bad_value(file, key, v, "one of " + list);
}

// ---- the checkpoint directory -------------------------------------------------------------------

// Creates dir and checks that files can be created, written and renamed in it, before any
// training is done.
void check_writable(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw Error("[train] cannot create the checkpoint directory " + dir.string() + ": " +
                ec.message());
  }
  const std::string pid = std::to_string(::getpid());
  const fs::path probe = dir / (".write-probe." + pid + ".tmp"),
                 probe2 = dir / (".write-probe." + pid);
  const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && ::write(fd, "ember", 5) == 5;
  int err = errno;
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(probe.c_str(), probe2.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  ::unlink(probe.c_str());
  ::unlink(probe2.c_str());
  if (!ok) {
    throw Error("[train] cannot write to the checkpoint directory " + dir.string() + ": " +
                std::strerror(err));
  }
}

// Holds dir/.lock (flock) for the rest of the process, so that two runs never share a directory;
// the kernel drops the lock when its process ends, so a lock left by a dead run is taken over.
void lock_dir(const fs::path& dir) {
  const fs::path file = dir / ".lock";
  const int fd = ::open(file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error("[train] cannot create " + file.string() + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "unknown";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    throw Error("[train] " + dir.string() + " is in use by another ember train (pid " + pid +
                "): wait for it to end, or choose another --checkpoint-dir");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    throw Error("[train] cannot write " + file.string() + ": " + std::strerror(errno));
  }
  // fd stays open (and locked) until the process exits.
}

// Writes text to dir/name through a temporary file, so a reader never sees half a file.
void write_file(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path tmp = dir / ("." + name + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw Error("[train] cannot write " + tmp.string());
  }
  fs::rename(tmp, dir / name);
}

// metrics.csv, metrics.jsonl and chart.svg, each replaced atomically.
void write_reports(const fs::path& dir, const Config& c, const std::vector<EpochMetrics>& h) {
  write_file(dir, "metrics.csv", metrics_csv(h));
  write_file(dir, "metrics.jsonl", metrics_jsonl(h));
  write_file(dir, "chart.svg", metrics_svg(h, "ember train: " + c.model + " on Fashion-MNIST"));
}

// ---- Ctrl-C -------------------------------------------------------------------------------------

// The signal that asked the run to stop (SIGINT or SIGTERM), 0 while none did.
std::atomic<int> g_interrupted{0};
extern "C" void on_stop_signal(int sig) { g_interrupted.store(sig); }

// Installs the SIGINT and SIGTERM handlers for its lifetime, restoring the previous ones after.
// ember's own threads block both, so the handler runs on a thread of the command's.
struct InterruptGuard {
  struct sigaction old_int {
  }, old_term{};
  InterruptGuard() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

// ---- the run ------------------------------------------------------------------------------------

struct Eval {
  double loss = 0, accuracy = 0;
};

Eval evaluate(nn::Sequential& model, data::DataLoader& loader, const Device& device) {
  NoGradGuard no_grad;
  model->eval();
  Tensor loss_sum = zeros({}, TensorOptions(kFloat64).device(device));
  Tensor correct = zeros({}, TensorOptions(kInt64).device(device));
  int64_t seen = 0;
  for (auto& batch : loader) {
    Tensor x = batch.data.to(device, true), y = batch.target.to(device, true);
    Tensor logits = model->forward(x);
    loss_sum += F::cross_entropy(logits, y).to(kFloat64) * static_cast<double>(y.size(0));
    correct += logits.argmax(1).eq(y).sum();
    seen += y.size(0);
  }
  model->train();
  const double n = static_cast<double>(std::max<int64_t>(seen, 1));
  return {loss_sum.item<double>() / n, static_cast<double>(correct.item<int64_t>()) / n};
}

size_t peak_host_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<size_t>(u.ru_maxrss) * 1024;  // KiB on Linux
}

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

int run_train(const Args& args) {
  if (args.get("model").value_or("").rfind("gpt2", 0) == 0) return run_train_lm(args);
  Config c;
  const bool resume = args.has("resume");
  const fs::path dir = args.get("checkpoint-dir").value_or("runs/fashion-mnist");
  const std::string root = args.get("data").value_or(data::FashionMNIST::kDefaultRoot);
  const Device device = pick_device(args.get("device").value_or("auto"));
  const int64_t workers = positive(args, "workers", 1, 0, kMaxWorkers);
  if (args.has("threads")) {
    set_num_threads(static_cast<int>(positive(args, "threads", 1, 1, kMaxThreads)));
  }
  const bool terminal = isatty(STDOUT_FILENO) == 1;

  std::optional<io::Checkpoint> ck;
  Position pos;
  const fs::path ck_file = dir / kCheckpointFile;
  if (resume) {
    if (!fs::exists(ck_file)) {
      throw Error("[train] --resume: no checkpoint in " + dir.string() +
                  "; start a run without --resume (or point --checkpoint-dir at a run)");
    }
    lock_dir(dir);
    check_writable(dir);
    ck = io::load_checkpoint(ck_file.string());
    if (meta(*ck, "format", ck_file) != kFormat) {
      throw Error("[train] " + ck_file.string() + " has format '" + meta(*ck, "format", ck_file) +
                  "', expected '" + kFormat + "'");
    }
    // The run's settings come from the checkpoint; a conflicting flag is a mistake.
    c.model = meta(*ck, "model", ck_file);
    if (auto m = args.get("model"); m && *m != c.model) {
      throw Error("[train] " + ck_file.string() + " is a checkpoint of model '" + c.model +
                  "', not '" + *m + "': drop --model or use another --checkpoint-dir");
    }
    meta_choice(*ck, "model", ck_file, {"cnn", "mlp"});
    c.optimizer = meta_choice(*ck, "optimizer", ck_file, {"sgd", "adamw"});
    c.scheduler = meta_choice(*ck, "scheduler", ck_file, {"onecycle", "cosine", "step", "none"});
    // Checkpoints written before --amp existed trained in float32.
    c.amp = ck->metadata.count("amp") ? ck->metadata.at("amp") : "off";
    if (c.amp != "off" && c.amp != "bf16" && c.amp != "fp16") {
      throw Error("[train] " + ck_file.string() + " has an unknown amp setting '" + c.amp + "'");
    }
    if (auto a = args.get("amp"); a && *a != c.amp) {
      throw Error("[train] " + ck_file.string() + " is a run with --amp " + c.amp + ", not " + *a +
                  ": drop --amp or use another --checkpoint-dir");
    }
    c.epochs = meta_int(*ck, "epochs", ck_file, 1);
    c.batch_size = meta_int(*ck, "batch_size", ck_file, 1);
    c.lr = meta_real(*ck, "lr", ck_file);
    if (!valid_lr(c.lr)) bad_value(ck_file, "lr", meta(*ck, "lr", ck_file), "a positive lr");
    c.weight_decay = meta_real(*ck, "weight_decay", ck_file);
    const auto seed = parse_u64(meta(*ck, "seed", ck_file));
    if (!seed) bad_value(ck_file, "seed", meta(*ck, "seed", ck_file), "an unsigned integer");
    c.seed = *seed;
    c.train_samples = meta_int(*ck, "train_samples", ck_file, 0);
    c.test_samples = meta_int(*ck, "test_samples", ck_file, 0);
    pos.epoch = meta_int(*ck, "epoch", ck_file, 0, c.epochs);
    pos.batch = meta_int(*ck, "batch", ck_file, 0);
    pos.step = meta_int(*ck, "step", ck_file, 0);
    pos.loss_sum = meta_real(*ck, "loss_sum", ck_file);
    pos.correct = meta_real(*ck, "correct", ck_file);
    pos.seen = meta_real(*ck, "seen", ck_file);
    pos.train_seconds = meta_real(*ck, "train_seconds", ck_file);
    pos.elapsed = meta_real(*ck, "elapsed", ck_file);
    try {
      pos.history = parse_metrics_jsonl(meta(*ck, "history", ck_file));
    } catch (const std::exception& e) {
      throw Error("[train] " + ck_file.string() + ": 'history' is not valid: " + e.what());
    }
    if (static_cast<int64_t>(pos.history.size()) != pos.epoch) {
      throw Error("[train] " + ck_file.string() + ": 'history' holds " +
                  std::to_string(pos.history.size()) + " epoch(s) but 'epoch' is " +
                  std::to_string(pos.epoch));
    }
    for (const char* fixed : {"optimizer", "scheduler", "batch-size", "lr", "seed", "epochs",
                              "train-samples", "test-samples"}) {
      if (args.has(fixed)) {
        throw UsageError{std::string("--") + fixed +
                         " cannot change when resuming: the run continues with the settings "
                         "saved in its checkpoint"};
      }
    }
  } else {
    c.model = choice(args, "model", c.model, {"cnn", "mlp"});
    c.optimizer = choice(args, "optimizer", c.optimizer, {"sgd", "adamw"});
    c.scheduler = choice(args, "scheduler", c.scheduler, {"onecycle", "cosine", "step", "none"});
    c.epochs = positive(args, "epochs", c.epochs);
    c.batch_size = positive(args, "batch-size", c.batch_size);
    c.lr = args.get_double("lr", c.optimizer == "adamw" ? 2e-3 : c.lr);
    if (!valid_lr(c.lr)) {
      throw UsageError{"--lr must be a finite number above 0 and at most " + str(kMaxLr) +
                       ", got " + *args.get("lr")};
    }
    c.weight_decay = c.optimizer == "adamw" ? 1e-2 : c.weight_decay;
    c.seed = seed_flag(args);
    c.train_samples = positive(args, "train-samples", 0, 0);
    c.test_samples = positive(args, "test-samples", 0, 0);
    c.amp = choice(args, "amp", default_amp(device), {"bf16", "fp16", "off"});
    check_writable(dir);
    lock_dir(dir);
    if (fs::exists(ck_file)) {
      throw Error("[train] " + dir.string() +
                  " already holds a checkpoint: pass --resume to continue that run, or choose "
                  "another --checkpoint-dir (nothing was overwritten)");
    }
  }

  auto train_set = load_split(root, true, c.train_samples);
  auto test_set = load_split(root, false, c.test_samples);
  const bool pin = device.is_cuda();
  data::DataLoader train_loader(data::DatasetPtr(train_set),
                                data::DataLoaderOptions()
                                    .batch_size(c.batch_size)
                                    .shuffle(true)
                                    .seed(c.seed)
                                    .num_workers(static_cast<int>(workers))
                                    .persistent_workers(workers > 0)
                                    .pin_memory(pin));
  data::DataLoader test_loader(data::DatasetPtr(test_set),
                               data::DataLoaderOptions().batch_size(500).pin_memory(pin));
  const int64_t batches = train_loader.size();
  if (batches == 0) throw Error("[train] the training set is empty");

  manual_seed(c.seed);
  nn::Sequential model = make_model(c.model);
  model->to(device);
  auto opt = make_optimizer(c, model->parameters());
  auto sched = make_scheduler(c, *opt, batches);
  const bool per_batch_sched = c.scheduler == "onecycle" || c.scheduler == "cosine";
  amp::GradScaler scaler = make_scaler(c, device);
  scaler.set_parameter_names(model->named_parameters());
  const std::optional<DType> amp_dtype = c.amp == "bf16"   ? std::optional<DType>(kBFloat16)
                                         : c.amp == "fp16" ? std::optional<DType>(kFloat16)
                                                           : std::nullopt;
  if (ck) {
    try {
      model->load_state_dict(ck->get("model."));
      opt->load_state_dict(ck->get("optimizer."));
      if (sched) sched->load_state_dict(ck->get("scheduler."));
      io::restore_rng_state(ck->get("rng."));
    } catch (const Error& e) {
      throw Error("[train] " + ck_file.string() + " does not fit its own settings (model " +
                  c.model + ", optimizer " + c.optimizer + ", scheduler " + c.scheduler +
                  "): " + e.what());
    }
    if (scaler.is_enabled()) {
      const auto state = ck->get("scaler.");
      try {
        if (state.size() == 0) throw Error("no 'scaler.' entries");
        scaler.load_state_dict(state);
      } catch (const Error& e) {
        throw Error("[train] " + ck_file.string() + " is a run with --amp " + c.amp +
                    " but its GradScaler state is missing or malformed (" + e.what() +
                    "); nothing was overwritten");
      }
    }
  }
  // The reports are rewritten from the checkpoint's history: a run killed after its last
  // checkpoint but before (or while) writing them loses no epoch.
  if (resume && !pos.history.empty()) write_reports(dir, c, pos.history);

  std::ostream& out = std::cout;
  out << "ember train: " << c.model << " on Fashion-MNIST (" << train_set->size() << " train, "
      << test_set->size() << " test) on " << device.str();
  if (device.is_cuda()) out << " (" << cuda::get_device_name(device.index()) << ")";
  if (device.is_cpu()) out << " (" << get_num_threads() << " threads)";
  out << "\n  " << c.optimizer << " lr " << c.lr << ", " << c.scheduler << " schedule, batch "
      << c.batch_size << ", " << c.epochs << " epochs, seed " << c.seed << ", amp " << c.amp
      << (scaler.is_enabled() ? " with loss scaling" : "") << ", checkpoints in " << dir.string()
      << "\n";
  if (resume) {
    out << "  resuming after epoch " << pos.epoch
        << (pos.batch ? ", batch " + std::to_string(pos.batch) : "") << "\n";
  }
  out.flush();

  InterruptGuard interrupt_guard;
  const auto run_start = Clock::now();
  const double elapsed_before = pos.elapsed;
  auto elapsed = [&] {
    return elapsed_before + std::chrono::duration<double>(Clock::now() - run_start).count();
  };
  if (device.is_cuda()) cuda::reset_peak_memory_stats(device.index());
  // `ember smi` reads the allocator's view of this run from the monitor status file.
  std::optional<monitor::Publisher> monitor_status;
  if (device.is_cuda()) monitor_status.emplace("train", device.index());

  for (int64_t epoch = pos.epoch; epoch < c.epochs; ++epoch) {
    train_loader.set_epoch(epoch);
    Progress progress(out, terminal, epoch + 1, c.epochs, batches);
    Tensor loss_sum = full({}, pos.loss_sum, TensorOptions(kFloat64).device(device));
    Tensor correct = full({}, pos.correct, TensorOptions(kFloat64).device(device));
    double seen = pos.seen;
    int64_t done = 0;
    auto epoch_start = Clock::now();
    const double seconds_before = pos.train_seconds;
    for (auto& batch : train_loader) {
      if (done < pos.batch) {  // resuming inside an epoch: these batches were trained on
        ++done;
        continue;
      }
      Tensor x = batch.data.to(device, true), y = batch.target.to(device, true);
      Tensor logits, loss;
      {
        // Autocast covers the forward pass and the loss only, as PyTorch recommends.
        std::optional<amp::autocast> autocast;
        if (amp_dtype) autocast.emplace(device.type(), amp_dtype);
        logits = model->forward(x);
        loss = F::cross_entropy(logits, y);
      }
      opt->zero_grad();
      if (scaler.is_enabled()) {
        scaler.scale(loss).backward();
        scaler.step(*opt);  // skipped when a gradient overflowed; the scale backs off
        scaler.update();
      } else {
        loss.backward();
        opt->step();
      }
      if (sched && per_batch_sched) sched->step();
      ++pos.step;
      ++done;
      {
        NoGradGuard no_grad;
        loss_sum += loss.detach().to(kFloat64) * static_cast<double>(y.size(0));
        correct += logits.argmax(1).eq(y).sum().to(kFloat64);
      }
      seen += static_cast<double>(y.size(0));
      if (done % 10 == 0 || done == batches || g_interrupted) {
        const double secs =
            seconds_before + std::chrono::duration<double>(Clock::now() - epoch_start).count();
        const double trained = seen;
        const double rate = secs > 0 ? trained / secs : 0;
        const double left = static_cast<double>((c.epochs - epoch) * batches - done) *
                            static_cast<double>(c.batch_size);
        progress.update(done, loss_sum.item<double>() / seen, rate, rate > 0 ? left / rate : -1);
      }
      if (const int sig = g_interrupted.load()) {
        progress.finish();
        pos.batch = done;
        pos.loss_sum = loss_sum.item<double>();
        pos.correct = correct.item<double>();
        pos.seen = seen;
        pos.train_seconds =
            seconds_before + std::chrono::duration<double>(Clock::now() - epoch_start).count();
        pos.elapsed = elapsed();
        save(dir, c, pos, *model, *opt, sched.get(), scaler);
        out << "interrupted" << (sig == SIGTERM ? " (SIGTERM)" : "") << ": saved "
            << ck_file.string() << " (epoch " << epoch + 1 << ", batch " << done << "/" << batches
            << "); continue with: ember train --resume --checkpoint-dir " << dir.string() << "\n";
        return 128 + sig;  // as a shell reports the signal: 130 for SIGINT, 143 for SIGTERM
      }
    }
    progress.finish();
    const double train_secs =
        seconds_before + std::chrono::duration<double>(Clock::now() - epoch_start).count();
    if (sched && !per_batch_sched) sched->step();
    EpochMetrics m;
    m.epoch = epoch + 1;
    m.step = pos.step;
    m.train_loss = loss_sum.item<double>() / seen;
    m.train_accuracy = correct.item<double>() / seen;
    const Eval ev = evaluate(model, test_loader, device);
    m.test_loss = ev.loss;
    m.test_accuracy = ev.accuracy;
    m.lr = current_lr(*opt);
    m.samples_per_s = train_secs > 0 ? seen / train_secs : 0;
    m.elapsed_s = elapsed();
    pos.history.push_back(m);
    char line[256];
    std::snprintf(line, sizeof line,
                  "epoch %lld/%lld  train loss %.4f acc %.2f%%  test loss %.4f acc %.2f%%  "
                  "%.0f samples/s  %s",
                  static_cast<long long>(m.epoch), static_cast<long long>(c.epochs), m.train_loss,
                  100 * m.train_accuracy, m.test_loss, 100 * m.test_accuracy, m.samples_per_s,
                  format_duration(m.elapsed_s).c_str());
    out << line << "\n";
    out.flush();
    pos.epoch = epoch + 1;
    pos.batch = 0;
    pos.loss_sum = pos.correct = pos.seen = pos.train_seconds = 0;
    pos.elapsed = m.elapsed_s;
    save(dir, c, pos, *model, *opt, sched.get(), scaler);
    write_reports(dir, c, pos.history);
  }
  // Reached only when every epoch is done (also when resuming a finished run).
  io::save_safetensors((dir / "model.safetensors").string(), model->state_dict(),
                       {{"model", c.model},
                        {"format", "pt"},
                        {"ember.model", "fashion-" + c.model},  // models::load rebuilds it
                        {"ember.config", ""}});
  if (pos.history.empty()) return kExitOk;
  const EpochMetrics& last = pos.history.back();
  double total_samples = 0, total_secs = 0;
  for (const EpochMetrics& m : pos.history) {
    const double n = static_cast<double>(train_set->size());
    total_samples += n;
    total_secs += m.samples_per_s > 0 ? n / m.samples_per_s : 0;
  }
  const size_t peak =
      device.is_cuda() ? cuda::max_memory_allocated(device.index()) : peak_host_bytes();
  out << "\ndone: test accuracy " << (100 * last.test_accuracy) << "% after " << last.epoch
      << " epochs, " << format_duration(last.elapsed_s) << " wall time, "
      << static_cast<int64_t>(total_secs > 0 ? total_samples / total_secs : 0)
      << " samples/s, peak " << (device.is_cuda() ? "device memory " : "resident memory ")
      << mib(peak) << "\n";
  out << "  " << (dir / "metrics.csv").string() << ", " << (dir / "metrics.jsonl").string() << ", "
      << (dir / "chart.svg").string() << ", " << (dir / "model.safetensors").string() << "\n";
  return kExitOk;
}

}  // namespace

Command train_command() {
  Command c;
  c.name = "train";
  c.summary = "train a model on Fashion-MNIST on the best device present";
  c.description =
      "Trains a small CNN (or an MLP) on Fashion-MNIST on the best device present (the first\n"
      "GPU when there is one), showing a progress line, the test accuracy after every epoch and\n"
      "a summary at the end. Writes metrics.csv, metrics.jsonl, chart.svg and a checkpoint every\n"
      "epoch into the checkpoint directory; --resume continues from the last checkpoint to the\n"
      "same result as an uninterrupted run. Ctrl-C saves a checkpoint and stops.";
  c.flags = {
      {"model", "NAME",
       "cnn (two conv+pool blocks, batch norm, dropout, two linear) or mlp; gpt2-tiny or gpt2: "
       "a byte-level language model on --text (flags: --steps, --batch-size, --lr, --device, "
       "--seed, --threads, --checkpoint-dir; then ember generate --run DIR)",
       "cnn"},
      {"text", "PATH", "gpt2 models: a text file or a folder of them", "/usr/share/games/fortunes"},
      {"steps", "N", "gpt2 models: training steps", "2000"},
      {"device", "DEV", "auto, cpu, cuda or cuda:N", "auto"},
      {"epochs", "N", "passes over the training set", "8"},
      {"batch-size", "N", "samples per step", "64"},
      {"lr", "X", "(peak) learning rate", "0.05 for sgd, 0.002 for adamw"},
      {"optimizer", "NAME", "sgd (Nesterov momentum 0.9) or adamw", "sgd"},
      {"scheduler", "NAME", "onecycle, cosine, step or none", "onecycle"},
      {"workers", "N", "DataLoader worker threads (0: load in the training thread)", "1"},
      {"threads", "N", "CPU threads for the ops", "all cores"},
      {"amp", "MODE", "mixed precision: bf16, fp16 (with loss scaling) or off",
       "bf16 on a GPU with compute capability 8.0+, else off"},
      {"seed", "N", "seed of the weights, the shuffling and dropout", "0"},
      {"checkpoint-dir", "DIR", "where checkpoints, metrics and the chart go",
       "runs/fashion-mnist"},
      {"resume", "", "continue the run saved in --checkpoint-dir", ""},
      {"data", "DIR", "directory with the Fashion-MNIST IDX files",
       data::FashionMNIST::kDefaultRoot},
      {"train-samples", "N", "train on the first N samples only (0: all)", "0"},
      {"test-samples", "N", "test on the first N samples only (0: all)", "0"},
  };
  c.run = run_train;
  return c;
}

}  // namespace ember::cli
