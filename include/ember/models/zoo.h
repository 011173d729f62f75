// The zoo's registry: models by name, and safetensors checkpoints whose metadata names the
// architecture and its configuration ("ember.model", "ember.config"), so load() rebuilds it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/nn/module.h"

namespace ember::models {

// The names make() knows: "gpt2", "gpt2-tiny", "fashion-cnn", "fashion-mlp".
std::vector<std::string> names();
// A freshly initialised model. config: "key=value" pairs overriding the named configuration
// (e.g. {"n_layer", "4"}); unknown names or keys raise "[models.make] ...".
std::shared_ptr<nn::Module> make(const std::string& name,
                                 const std::map<std::string, std::string>& config = {});
// Writes the state dict and, in the metadata, the architecture and configuration (extra
// metadata is kept beside them).
void save(const std::shared_ptr<nn::Module>& model, const std::string& path,
          const std::map<std::string, std::string>& metadata = {});
// Rebuilds the model a save() wrote and loads its weights (strict) on the CPU.
std::shared_ptr<nn::Module> load(const std::string& path);
// The architecture name and configuration a model was made with ("" for one make() did not
// build).
std::string model_name(const nn::Module& model);
std::map<std::string, std::string> model_config(const nn::Module& model);

}  // namespace ember::models
