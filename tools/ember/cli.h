// The ember command's small framework: a subcommand is a name, its flags, a help text and a run
// function; flags are parsed generically so every subcommand gets --help and the same errors.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ember::cli {

// Exit codes: 0 success, 1 the command failed, 2 the command line was wrong.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct Flag {
  std::string name;        // without the leading "--"
  std::string value_name;  // e.g. "N"; empty for a switch that takes no value
  std::string help;
  std::string default_value;  // shown in the help; empty for none
  int arity = 1;              // values a flag with a value_name takes (joined by '\n' in Args)
};

// The flags given on a command line, by name. Switches map to "".
class Args {
 public:
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> get(const std::string& name) const;
  // The value of a flag as an integer, or fallback when absent; throws UsageError when malformed.
  int64_t get_int(const std::string& name, int64_t fallback) const;
  // The value of a flag as a number, or fallback when absent; throws UsageError when malformed.
  double get_double(const std::string& name, double fallback) const;
  void set(const std::string& name, std::string value) { values_[name] = std::move(value); }

 private:
  std::map<std::string, std::string> values_;
};

// A command line the command cannot make sense of; reported with the usage, exit code 2.
struct UsageError {
  std::string message;
};

struct Command {
  std::string name;
  std::string summary;      // one line, for the command list
  std::string description;  // a paragraph, for `ember <name> --help`
  std::vector<Flag> flags;
  std::function<int(const Args&)> run;
};

// Parses "--name value", "--name=value" and "--switch"; throws UsageError on anything else.
Args parse_flags(const Command& cmd, const std::vector<std::string>& argv);
void print_command_help(std::ostream& os, const Command& cmd);
void print_usage(std::ostream& os, const std::vector<Command>& commands);

// ---- the subcommands (one file each) ----------------------------------------------------------
Command demo_command();
Command doctor_command();
Command smi_command();
Command bench_command();
Command train_command();
Command generate_command();  // lm.cpp
// `ember train --model gpt2|gpt2-tiny` (lm.cpp): a byte-level language model on text.
int run_train_lm(const Args& args);
Command profile_command();

}  // namespace ember::cli
