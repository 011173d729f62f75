// Flag parsing and help text shared by every ember subcommand.
#include "cli.h"

#include <algorithm>
#include <charconv>

namespace ember::cli {

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

int64_t Args::get_int(const std::string& name, int64_t fallback) const {
  auto v = get(name);
  if (!v) return fallback;
  int64_t out = 0;
  const char* end = v->data() + v->size();
  auto [ptr, ec] = std::from_chars(v->data(), end, out);
  if (ec == std::errc::result_out_of_range) {
    throw UsageError{"--" + name + ": " + *v + " is out of range"};
  }
  if (ec != std::errc() || ptr != end || v->empty()) {
    throw UsageError{"--" + name + " expects an integer, got '" + *v + "'"};
  }
  return out;
}

double Args::get_double(const std::string& name, double fallback) const {
  auto v = get(name);
  if (!v) return fallback;
  double out = 0;
  const char* end = v->data() + v->size();
  auto [ptr, ec] = std::from_chars(v->data(), end, out);
  if (ec == std::errc::result_out_of_range) {
    throw UsageError{"--" + name + ": " + *v + " is out of range"};
  }
  if (ec != std::errc() || ptr != end || v->empty()) {
    throw UsageError{"--" + name + " expects a number, got '" + *v + "'"};
  }
  return out;
}

Args parse_flags(const Command& cmd, const std::vector<std::string>& argv) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      throw UsageError{"unexpected argument '" + a + "'"};
    }
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name == "help") {
      args.set("help", "");
      continue;
    }
    auto flag = std::find_if(cmd.flags.begin(), cmd.flags.end(),
                             [&](const Flag& f) { return f.name == name; });
    if (flag == cmd.flags.end()) throw UsageError{"unknown option '--" + name + "'"};
    if (flag->value_name.empty()) {
      if (inline_value) throw UsageError{"--" + name + " takes no value"};
      args.set(name, "");
    } else if (inline_value && flag->arity == 1) {
      args.set(name, *inline_value);
    } else if (!inline_value && i + flag->arity < argv.size()) {
      std::string joined = argv[++i];
      for (int k = 1; k < flag->arity; ++k) joined += "\n" + argv[++i];
      args.set(name, joined);
    } else {
      throw UsageError{"--" + name + " needs a value (" + flag->value_name + ")"};
    }
  }
  return args;
}

void print_command_help(std::ostream& os, const Command& cmd) {
  os << "usage: ember " << cmd.name << " [options]\n\n" << cmd.description << "\n\noptions:\n";
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Flag& f : cmd.flags) {
    std::string left = "--" + f.name + (f.value_name.empty() ? "" : " " + f.value_name);
    std::string right =
        f.help + (f.default_value.empty() ? "" : " (default: " + f.default_value + ")");
    rows.emplace_back(std::move(left), std::move(right));
  }
  rows.emplace_back("--help", "show this help and exit");
  size_t width = 0;
  for (auto& r : rows) width = std::max(width, r.first.size());
  for (auto& r : rows) {
    os << "  " << r.first << std::string(width - r.first.size() + 2, ' ') << r.second << "\n";
  }
}

void print_usage(std::ostream& os, const std::vector<Command>& commands) {
  os << "usage: ember <command> [options]\n"
        "       ember --version | --help\n\n"
        "commands:\n";
  size_t width = 0;
  for (const Command& c : commands) width = std::max(width, c.name.size());
  for (const Command& c : commands) {
    os << "  " << c.name << std::string(width - c.name.size() + 2, ' ') << c.summary << "\n";
  }
  os << "\nRun 'ember <command> --help' for the options of one command.\n";
}

}  // namespace ember::cli
