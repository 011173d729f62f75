#include "train_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ember/error.h"

namespace ember::cli {

namespace {

std::string num(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// The number after "\"key\":" in a flat JSON object line.
double json_number(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const size_t at = line.find(k);
  if (at == std::string::npos) throw Error("[train] metrics line lacks \"" + key + "\": " + line);
  return std::strtod(line.c_str() + at + k.size(), nullptr);
}

}  // namespace

std::string metrics_jsonl(const std::vector<EpochMetrics>& history) {
  std::ostringstream o;
  for (const EpochMetrics& m : history) {
    o << "{\"epoch\":" << m.epoch << ",\"step\":" << m.step
      << ",\"train_loss\":" << num(m.train_loss, 9)
      << ",\"train_accuracy\":" << num(m.train_accuracy, 9)
      << ",\"test_loss\":" << num(m.test_loss, 9)
      << ",\"test_accuracy\":" << num(m.test_accuracy, 9) << ",\"lr\":" << num(m.lr, 9)
      << ",\"samples_per_s\":" << num(m.samples_per_s) << ",\"elapsed_s\":" << num(m.elapsed_s)
      << "}\n";
  }
  return o.str();
}

std::vector<EpochMetrics> parse_metrics_jsonl(const std::string& text) {
  std::vector<EpochMetrics> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    EpochMetrics m;
    m.epoch = static_cast<int64_t>(json_number(line, "epoch"));
    m.step = static_cast<int64_t>(json_number(line, "step"));
    m.train_loss = json_number(line, "train_loss");
    m.train_accuracy = json_number(line, "train_accuracy");
    m.test_loss = json_number(line, "test_loss");
    m.test_accuracy = json_number(line, "test_accuracy");
    m.lr = json_number(line, "lr");
    m.samples_per_s = json_number(line, "samples_per_s");
    m.elapsed_s = json_number(line, "elapsed_s");
    out.push_back(m);
  }
  return out;
}

std::string metrics_csv(const std::vector<EpochMetrics>& history) {
  std::ostringstream o;
  o << "epoch,step,train_loss,train_accuracy,test_loss,test_accuracy,lr,samples_per_s,elapsed_s\n";
  for (const EpochMetrics& m : history) {
    o << m.epoch << ',' << m.step << ',' << num(m.train_loss, 9) << ',' << num(m.train_accuracy, 9)
      << ',' << num(m.test_loss, 9) << ',' << num(m.test_accuracy, 9) << ',' << num(m.lr, 9) << ','
      << num(m.samples_per_s) << ',' << num(m.elapsed_s) << '\n';
  }
  return o.str();
}

namespace {

struct Series {
  std::string name, color;
  std::vector<double> y;
};

// One chart panel: axes, ticks, a polyline and dots per series, a legend.
void panel(std::ostringstream& o, double x0, double y0, double w, double h,
           const std::string& title, const std::vector<double>& xs,
           const std::vector<Series>& series, bool percent) {
  double lo = 1e300, hi = -1e300;
  for (const Series& s : series) {
    for (double v : s.y) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo > hi) lo = 0, hi = 1;
  if (hi - lo < 1e-9) lo -= 0.5, hi += 0.5;
  const double pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  const double xmin = xs.empty() ? 0 : xs.front(), xmax = xs.empty() ? 1 : xs.back();
  const double xspan = xmax > xmin ? xmax - xmin : 1;
  auto px = [&](double x) { return x0 + (xs.size() > 1 ? (x - xmin) / xspan * w : w / 2); };
  auto py = [&](double v) { return y0 + h - (v - lo) / (hi - lo) * h; };

  o << "<text x='" << x0 + w / 2 << "' y='" << y0 - 12
    << "' text-anchor='middle' font-size='15' font-weight='bold'>" << title << "</text>\n";
  o << "<rect x='" << x0 << "' y='" << y0 << "' width='" << w << "' height='" << h
    << "' fill='none' stroke='#444'/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double v = lo + (hi - lo) * i / 4;
    const double y = py(v);
    o << "<line x1='" << x0 << "' y1='" << y << "' x2='" << x0 + w << "' y2='" << y
      << "' stroke='#ddd'/>\n";
    o << "<text x='" << x0 - 6 << "' y='" << y + 4 << "' text-anchor='end' font-size='11'>"
      << (percent ? num(v * 100, 4) + "%" : num(v, 3)) << "</text>\n";
  }
  const size_t every = std::max<size_t>(1, xs.size() / 10);
  for (size_t i = 0; i < xs.size(); i += every) {
    o << "<text x='" << px(xs[i]) << "' y='" << y0 + h + 16
      << "' text-anchor='middle' font-size='11'>" << num(xs[i]) << "</text>\n";
  }
  o << "<text x='" << x0 + w / 2 << "' y='" << y0 + h + 34
    << "' text-anchor='middle' font-size='12'>epoch</text>\n";
  for (size_t si = 0; si < series.size(); ++si) {
    const Series& s = series[si];
    o << "<polyline fill='none' stroke='" << s.color << "' stroke-width='2' points='";
    for (size_t i = 0; i < s.y.size() && i < xs.size(); ++i) {
      o << px(xs[i]) << ',' << py(s.y[i]) << ' ';
    }
    o << "'/>\n";
    for (size_t i = 0; i < s.y.size() && i < xs.size(); ++i) {
      o << "<circle cx='" << px(xs[i]) << "' cy='" << py(s.y[i]) << "' r='3' fill='" << s.color
        << "'/>\n";
    }
    const double ly = y0 + 16 + 18 * static_cast<double>(si);
    o << "<line x1='" << x0 + w - 120 << "' y1='" << ly - 4 << "' x2='" << x0 + w - 100 << "' y2='"
      << ly - 4 << "' stroke='" << s.color << "' stroke-width='3'/>\n";
    o << "<text x='" << x0 + w - 94 << "' y='" << ly << "' font-size='12'>" << s.name
      << "</text>\n";
  }
}

}  // namespace

std::string metrics_svg(const std::vector<EpochMetrics>& history, const std::string& title) {
  std::vector<double> xs;
  Series train_loss{"train", "#1f77b4", {}}, test_loss{"test", "#d62728", {}};
  Series train_acc{"train", "#1f77b4", {}}, test_acc{"test", "#d62728", {}};
  for (const EpochMetrics& m : history) {
    xs.push_back(static_cast<double>(m.epoch));
    train_loss.y.push_back(m.train_loss);
    test_loss.y.push_back(m.test_loss);
    train_acc.y.push_back(m.train_accuracy);
    test_acc.y.push_back(m.test_accuracy);
  }
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='960' height='420' "
       "font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  o << "<text x='480' y='24' text-anchor='middle' font-size='17'>" << title << "</text>\n";
  panel(o, 70, 70, 380, 280, "loss", xs, {train_loss, test_loss}, false);
  panel(o, 550, 70, 380, 280, "accuracy", xs, {train_acc, test_acc}, true);
  o << "</svg>\n";
  return o.str();
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<int64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  }
  return buf;
}

Progress::Progress(std::ostream& out, bool terminal, int64_t epoch, int64_t epochs, int64_t batches)
    : out_(out), terminal_(terminal), epoch_(epoch), epochs_(epochs), batches_(batches) {
  next_report_ = std::max<int64_t>(1, batches_ / 10);
}

void Progress::update(int64_t done, double loss, double samples_per_s, double eta_s) {
  char line[256];
  const double frac = batches_ > 0 ? static_cast<double>(done) / static_cast<double>(batches_) : 1;
  if (terminal_) {
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && done < batches_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    drawn_ = true;
    constexpr int kWidth = 28;
    const int fill = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<size_t>(fill), '=');
    if (fill < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - fill - 1), ' ');
    std::snprintf(line, sizeof line, "\repoch %lld/%lld [%s] %lld/%lld  loss %.4f  %.0f samples/s",
                  static_cast<long long>(epoch_), static_cast<long long>(epochs_), bar.c_str(),
                  static_cast<long long>(done), static_cast<long long>(batches_), loss,
                  samples_per_s);
    out_ << line;
  } else {
    if (done < next_report_ && done < batches_) return;
    while (next_report_ <= done) next_report_ += std::max<int64_t>(1, batches_ / 10);
    std::snprintf(line, sizeof line, "epoch %lld/%lld  batch %lld/%lld  loss %.4f  %.0f samples/s",
                  static_cast<long long>(epoch_), static_cast<long long>(epochs_),
                  static_cast<long long>(done), static_cast<long long>(batches_), loss,
                  samples_per_s);
    out_ << line;
  }
  out_ << "  ETA " << format_duration(eta_s) << (terminal_ ? "   " : "\n");
  out_.flush();
}

void Progress::finish() {
  if (terminal_ && drawn_) out_ << "\n";
  drawn_ = false;
}

}  // namespace ember::cli
