// `ember profile --trace FILE`: the key_averages table of a Chrome trace written by the profiler.
#include <iostream>

#include "cli.h"
#include "ember/ember.h"
#include "ember/profiler.h"

namespace ember::cli {

Command profile_command() {
  Command c;
  c.name = "profile";
  c.summary = "print the profiler table of a saved Chrome trace";
  c.description =
      "Reads a trace written by profiler::profile::export_chrome_trace and prints PyTorch's "
      "key_averages table (names, calls, CPU total and self time).\n\n  ember profile --trace "
      "trace.json";
  c.flags = {{"trace", "FILE", "the trace (JSON) to read", ""},
             {"sort-by", "KEY", "column to sort by", "self_cpu_time_total"},
             {"row-limit", "N", "rows to print", "100"}};
  c.run = [](const Args& args) {
    auto file = args.get("trace");
    if (!file || file->empty()) throw UsageError{"ember profile needs --trace FILE"};
    try {
      profiler::KeyAverages k = profiler::load_chrome_trace(*file);
      std::cout << k.table(args.get("sort-by").value_or("self_cpu_time_total"),
                           args.get_int("row-limit", 100));
    } catch (const Error& e) {
      std::cerr << "ember profile: " << e.what() << "\n";
      return kExitFailure;
    }
    return kExitOk;
  };
  return c;
}

}  // namespace ember::cli
