// The per-thread context of a batch being loaded: the worker's identity and the batch's random
// generator, which data::generator() and data::get_worker_info() read.
#pragma once

#include <optional>

#include "ember/data/dataloader.h"
#include "ember/random.h"

namespace ember::data::detail {

struct WorkerContext {
  WorkerInfo info;
  Generator generator;
};

// Installs `ctx` for the calling thread for the guard's lifetime.
class WorkerContextGuard {
 public:
  explicit WorkerContextGuard(WorkerContext* ctx);
  ~WorkerContextGuard();
  WorkerContextGuard(const WorkerContextGuard&) = delete;
  WorkerContextGuard& operator=(const WorkerContextGuard&) = delete;

 private:
  WorkerContext* previous_;
};

}  // namespace ember::data::detail
