// The ember command: `ember <command> [options]`; dispatches to the subcommands listed below.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "ember/error.h"
#include "ember/version.h"

namespace {

using namespace ember::cli;

// Adding a subcommand: one file that defines its Command, one line here.
std::vector<Command> all_commands() {
  return {train_command(), doctor_command(),   smi_command(),    bench_command(),
          demo_command(),  generate_command(), profile_command()};
}

int usage_error(const std::string& where, const std::string& message,
                const std::vector<Command>& commands, const Command* cmd) {
  std::cerr << where << ": " << message << "\n\n";
  if (cmd) {
    print_command_help(std::cerr, *cmd);
  } else {
    print_usage(std::cerr, commands);
  }
  return kExitUsage;
}

int run_command(const Command& cmd, const std::vector<std::string>& argv,
                const std::vector<Command>& commands) {
  const std::string where = "ember " + cmd.name;
  try {
    Args args = parse_flags(cmd, argv);
    if (args.has("help")) {
      print_command_help(std::cout, cmd);
      return kExitOk;
    }
    return cmd.run(args);
  } catch (const UsageError& e) {
    return usage_error(where, e.message, commands, &cmd);
  } catch (const ember::Error& e) {
    std::cerr << where << ": error: " << e.what() << "\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << where << ": internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Command> commands = all_commands();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("ember", "no command given", commands, nullptr);

  const std::string& first = args[0];
  if (first == "--version") {
    std::cout << "ember " << ember::kVersion << " (" << ember::build_info() << ")\n";
    return kExitOk;
  }
  if (first == "--help" || first == "-h" || first == "help") {
    if (first == "help" && args.size() > 1) {
      for (const Command& c : commands) {
        if (c.name == args[1]) {
          print_command_help(std::cout, c);
          return kExitOk;
        }
      }
      return usage_error("ember", "unknown command '" + args[1] + "'", commands, nullptr);
    }
    print_usage(std::cout, commands);
    return kExitOk;
  }
  if (first.rfind("-", 0) == 0) {
    return usage_error("ember", "unknown option '" + first + "'", commands, nullptr);
  }
  for (const Command& c : commands) {
    if (c.name == first) {
      return run_command(c, std::vector<std::string>(args.begin() + 1, args.end()), commands);
    }
  }
  return usage_error("ember", "unknown command '" + first + "'", commands, nullptr);
}
