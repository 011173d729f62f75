// The model zoo's registry and self-describing checkpoints (include/ember/models/zoo.h).
#include "ember/models/zoo.h"

#include <mutex>
#include <sstream>
#include <utility>

#include "ember/error.h"
#include "ember/io/safetensors.h"
#include "ember/models/gpt2.h"
#include "ember/nn.h"

namespace ember::models {

namespace {

using Config = std::map<std::string, std::string>;

// Models make() built that are not GPT2 (which carries its own config): name and config by
// module, with a weak pointer so a freed module's address is never mistaken for a live one.
struct Made {
  std::weak_ptr<nn::Module> module;
  std::string name;
  Config config;
};
std::mutex g_mutex;
std::vector<Made> g_made;

const Made* find_made(const nn::Module& m) {
  for (const Made& made : g_made) {
    auto p = made.module.lock();
    if (p.get() == &m) return &made;
  }
  return nullptr;
}

int64_t to_int(const std::string& key, const std::string& value) {
  try {
    size_t used = 0;
    const int64_t v = std::stoll(value, &used);
    if (used == value.size()) return v;
  } catch (const std::exception&) {
  }
  throw ValueError("[models.make] config " + key + "='" + value + "' is not an integer");
}

GPT2Config gpt2_from(const std::string& name, const Config& config) {
  GPT2Config c = name == "gpt2" ? gpt2_config() : gpt2_tiny_config();
  for (const auto& [key, value] : config) {
    if (key == "vocab_size")
      c.vocab_size = to_int(key, value);
    else if (key == "context")
      c.context = to_int(key, value);
    else if (key == "n_layer")
      c.n_layer = to_int(key, value);
    else if (key == "n_head")
      c.n_head = to_int(key, value);
    else if (key == "n_embd")
      c.n_embd = to_int(key, value);
    else if (key == "bias")
      c.bias = value == "true" || value == "1";
    else if (key == "dropout") {
      try {
        c.dropout = std::stod(value);
      } catch (const std::exception&) {
        throw ValueError("[models.make] config dropout='" + value + "' is not a number");
      }
    } else {
      throw ValueError("[models.make] " + name + " has no config key '" + key +
                       "' (vocab_size, context, n_layer, n_head, n_embd, dropout, bias)");
    }
  }
  return c;
}

Config config_of(const GPT2Config& c) {
  std::ostringstream dropout;
  dropout << c.dropout;
  return {{"vocab_size", std::to_string(c.vocab_size)}, {"context", std::to_string(c.context)},
          {"n_layer", std::to_string(c.n_layer)},       {"n_head", std::to_string(c.n_head)},
          {"n_embd", std::to_string(c.n_embd)},         {"dropout", dropout.str()},
          {"bias", c.bias ? "true" : "false"}};
}

// Fashion-MNIST classifiers (1x28x28 images, 10 classes), as `ember train` builds them.
nn::Sequential fashion_mlp() {
  return nn::Sequential(nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Dropout(0.2),
                        nn::Linear(256, 128), nn::ReLU(), nn::Linear(128, 10));
}
nn::Sequential fashion_cnn() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1).bias(false)),
                        nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1).bias(false)),
                        nn::BatchNorm2d(64), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                        nn::Flatten(), nn::Dropout(0.25), nn::Linear(64 * 7 * 7, 128), nn::ReLU(),
                        nn::Dropout(0.25), nn::Linear(128, 10));
}

// "k=v;k=v" with keys in order; values hold no ';' or '='.
std::string encode(const Config& config) {
  std::string out;
  for (const auto& [k, v] : config) out += (out.empty() ? "" : ";") + k + "=" + v;
  return out;
}
Config decode(const std::string& path, const std::string& text) {
  Config out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw ValueError("[models.load] " + path + ": malformed ember.config entry '" + item + "'");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

}  // namespace

std::vector<std::string> names() { return {"gpt2", "gpt2-tiny", "fashion-cnn", "fashion-mlp"}; }

std::shared_ptr<nn::Module> make(const std::string& name, const Config& config) {
  if (name == "gpt2" || name == "gpt2-tiny") return GPT2(gpt2_from(name, config)).ptr();
  std::shared_ptr<nn::Module> m;
  if (name == "fashion-cnn")
    m = fashion_cnn().ptr();
  else if (name == "fashion-mlp")
    m = fashion_mlp().ptr();
  else {
    std::string known;
    for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
    throw ValueError("[models.make] unknown model '" + name + "' (known: " + known + ")");
  }
  if (!config.empty()) {
    throw ValueError("[models.make] " + name + " takes no config (got " + encode(config) + ")");
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_made.push_back({m, name, {}});
  return m;
}

std::string model_name(const nn::Module& model) {
  if (auto* g = dynamic_cast<const GPT2Impl*>(&model)) {
    const GPT2Config tiny = gpt2_tiny_config();
    return g->config.vocab_size == tiny.vocab_size ? "gpt2-tiny" : "gpt2";
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  const Made* made = find_made(model);
  return made ? made->name : "";
}

Config model_config(const nn::Module& model) {
  if (auto* g = dynamic_cast<const GPT2Impl*>(&model)) return config_of(g->config);
  std::lock_guard<std::mutex> lock(g_mutex);
  const Made* made = find_made(model);
  return made ? made->config : Config{};
}

void save(const std::shared_ptr<nn::Module>& model, const std::string& path,
          const Config& metadata) {
  if (!model) throw ValueError("[models.save] no model");
  const std::string name = model_name(*model);
  if (name.empty()) {
    throw ValueError("[models.save] this " + model->name() +
                     " was not built by models::make, so its file could not rebuild it");
  }
  Config meta = metadata;
  meta["ember.model"] = name;
  meta["ember.config"] = encode(model_config(*model));
  io::save_safetensors(path, model->state_dict(), meta);
}

std::shared_ptr<nn::Module> load(const std::string& path) {
  const Config meta = io::load_safetensors_metadata(path);
  const auto it = meta.find("ember.model");
  if (it == meta.end()) {
    throw ValueError("[models.load] " + path +
                     " names no architecture (no ember.model metadata: not written by "
                     "models::save)");
  }
  const auto cfg = meta.find("ember.config");
  auto model = make(it->second, cfg == meta.end() ? Config{} : decode(path, cfg->second));
  model->load_state_dict(io::load_safetensors(path), true);
  return model;
}

}  // namespace ember::models
