// Threads ember starts for its own work (the intra-op pool, DataLoader workers): they block every
// asynchronous signal, so a signal sent to the process (Ctrl-C, SIGTERM, a profiler's SIGPROF or
// SIGALRM, SIGCHLD...) is delivered to one of the user's threads and never interrupts a compute
// kernel on a thread the user does not know about. Synchronous signals (SIGSEGV, SIGBUS, SIGFPE,
// SIGILL, SIGTRAP, SIGSYS) stay unblocked: blocking them would hide a crash.
#pragma once

#include <signal.h>

#include <string>
#include <system_error>
#include <thread>
#include <utility>

namespace ember::detail {

// The mask a compute thread runs with: every signal but the synchronous ones.
inline sigset_t compute_thread_signal_mask() {
  sigset_t set;
  sigfillset(&set);
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT}) sigdelset(&set, s);
  return set;
}

// Starts `fn` on a new std::thread whose signal mask blocks every asynchronous signal (a new
// thread inherits its creator's mask, so the creator's mask is swapped for the call and restored).
// Throws std::system_error when the thread cannot be created, like std::thread.
template <class F>
std::thread start_compute_thread(F&& fn) {
  const sigset_t block = compute_thread_signal_mask();
  sigset_t old;
  pthread_sigmask(SIG_SETMASK, &block, &old);
  try {
    std::thread t(std::forward<F>(fn));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return t;
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
}

// "what" of a failed thread creation, for messages: "Resource temporarily unavailable".
inline std::string thread_error_text(const std::exception& e) {
  if (auto* se = dynamic_cast<const std::system_error*>(&e)) return se->code().message();
  return e.what();
}

}  // namespace ember::detail
