// What `ember train` shows and writes besides the model: the progress line, the per-epoch
// metrics (CSV and JSON lines) and the loss/accuracy chart (SVG).
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ember::cli {

struct EpochMetrics {
  int64_t epoch = 0;  // 1-based
  int64_t step = 0;   // optimizer steps so far
  double train_loss = 0, train_accuracy = 0;
  double test_loss = 0, test_accuracy = 0;
  double lr = 0;
  double samples_per_s = 0;  // training samples per second of training time in this epoch
  double elapsed_s = 0;      // wall time of the whole run so far
};

// One JSON object per line; read back by parse_metrics_jsonl (checkpoints keep the history so).
std::string metrics_jsonl(const std::vector<EpochMetrics>& history);
std::vector<EpochMetrics> parse_metrics_jsonl(const std::string& text);
std::string metrics_csv(const std::vector<EpochMetrics>& history);
// Two panels, loss and accuracy per epoch (train and test), as a standalone SVG document.
std::string metrics_svg(const std::vector<EpochMetrics>& history, const std::string& title);

// "1:02:03" or "2:03".
std::string format_duration(double seconds);

// The progress of one epoch. On a terminal: one line redrawn in place (bar, loss, samples/s,
// ETA) at most every 0.1 s. Elsewhere: a plain line at every tenth of the epoch.
class Progress {
 public:
  Progress(std::ostream& out, bool terminal, int64_t epoch, int64_t epochs, int64_t batches);
  // After each batch: batches done in this epoch, the running mean loss, samples/s so far and
  // the estimated seconds left in the run.
  void update(int64_t done, double loss, double samples_per_s, double eta_s);
  // Ends the line (terminal) before other output.
  void finish();

 private:
  std::ostream& out_;
  bool terminal_;
  int64_t epoch_, epochs_, batches_;
  int64_t next_report_ = 0;  // plain mode: next batch count to report at
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;
};

}  // namespace ember::cli
