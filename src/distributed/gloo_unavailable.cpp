// The communicator of a build made without Gloo (libgloo-dev absent at configure time).
#include "distributed/comm.h"

namespace ember::distributed::detail {

std::unique_ptr<Comm> make_gloo_comm(TCPStore&, const std::string&, int rank, int,
                                     std::chrono::milliseconds, const std::string&) {
  throw NotImplementedError("[init_process_group] rank " + std::to_string(rank) +
                            ": this build of ember has no Gloo backend (libgloo-dev was not "
                            "found when it was configured; install it and rebuild)");
}
bool gloo_available() { return false; }

}  // namespace ember::distributed::detail
