// distributed::TCPStore on loopback: every command, timeouts that name keys, port in use, and the
// dead-rank report; the host and its clients are threads of this process.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "ember/distributed/store.h"

using namespace ember::distributed;
using namespace std::chrono_literals;

namespace {

TCPStoreOptions master_options() {
  TCPStoreOptions o;
  o.port = 0;
  o.is_master = true;
  o.timeout = 5s;
  return o;
}
TCPStoreOptions client_options(int port, int rank = -1) {
  TCPStoreOptions o;
  o.port = port;
  o.timeout = 5s;
  o.rank = rank;
  return o;
}

}  // namespace

TEST(TCPStore, SetGetAddCompareSetDelete) {
  TCPStore master("127.0.0.1", master_options());
  TCPStore client("127.0.0.1", client_options(master.port()));
  master.set("a", std::string("hello"));
  EXPECT_EQ(client.get_string("a"), "hello");
  EXPECT_EQ(client.add("n", 3), 3);
  EXPECT_EQ(master.add("n", -1), 2);
  EXPECT_EQ(client.get_string("n"), "2");
  EXPECT_TRUE(client.check({"a", "n"}));
  EXPECT_FALSE(client.check({"a", "b"}));
  EXPECT_EQ(client.num_keys(), 2);
  // compare_set: absent + empty expected sets; a wrong expectation leaves the value.
  std::vector<uint8_t> x{'x'}, y{'y'}, z{'z'};
  EXPECT_EQ(client.compare_set("c", {}, x), x);
  EXPECT_EQ(client.compare_set("c", y, z), x);
  EXPECT_EQ(client.compare_set("c", x, z), z);
  EXPECT_TRUE(client.delete_key("c"));
  EXPECT_FALSE(client.delete_key("c"));
  EXPECT_FALSE(master.check({"c"}));
  // Binary values survive.
  std::vector<uint8_t> bin{0, 255, 7, 0};
  client.set("bin", bin);
  EXPECT_EQ(master.get("bin"), bin);
}

TEST(TCPStore, GetAndWaitBlockUntilSet) {
  TCPStore master("127.0.0.1", master_options());
  std::thread writer([port = master.port()] {
    TCPStore c("127.0.0.1", client_options(port));
    std::this_thread::sleep_for(50ms);
    c.set("k1", std::string("v1"));
    c.set("k2", std::string("v2"));
  });
  master.wait({"k1", "k2"});
  EXPECT_EQ(master.get_string("k2"), "v2");
  writer.join();
}

TEST(TCPStore, TimeoutNamesMissingKeys) {
  TCPStore master("127.0.0.1", master_options());
  master.set("here", std::string("1"));
  try {
    master.wait({"here", "absent"}, 100ms);
    FAIL() << "wait did not time out";
  } catch (const DistTimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("'absent'"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("'here'"), std::string::npos) << e.what();
  }
  master.set_timeout(100ms);
  EXPECT_THROW(master.get("never"), DistTimeoutError);
  // The connection is still in step after a timeout.
  EXPECT_EQ(master.get_string("here"), "1");
}

TEST(TCPStore, PortInUseAndNoServerAreNamed) {
  TCPStore master("127.0.0.1", master_options());
  TCPStoreOptions again = master_options();
  again.port = master.port();
  try {
    TCPStore second("127.0.0.1", again);
    FAIL() << "a second store bound a port in use";
  } catch (const DistNetworkError& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  int port = 0;
  {
    TCPStore gone("127.0.0.1", master_options());
    port = gone.port();
  }
  TCPStoreOptions o = client_options(port);
  o.timeout = 200ms;
  EXPECT_THROW(TCPStore("127.0.0.1", o), DistTimeoutError);
}

TEST(TCPStore, ReportsClientsThatLeaveWithoutGoodbye) {
  TCPStore master("127.0.0.1", master_options());
  {
    TCPStore polite("127.0.0.1", client_options(master.port(), 1));
    polite.goodbye();
  }
  { TCPStore rude("127.0.0.1", client_options(master.port(), 2)); }
  std::vector<int> dead;
  for (int i = 0; i < 100 && dead.empty(); ++i) {
    dead = master.dead_ranks();
    if (dead.empty()) std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(dead, std::vector<int>{2});
}

TEST(TCPStore, ClientSeesHostGone) {
  auto master = std::make_unique<TCPStore>("127.0.0.1", master_options());
  TCPStore client("127.0.0.1", client_options(master->port()));
  client.set("x", std::string("1"));
  master.reset();
  try {
    client.get("x");
    FAIL() << "get succeeded with the host gone";
  } catch (const DistNetworkError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
  }
}

TEST(TCPStore, BadPortIsRejected) {
  TCPStoreOptions o;
  o.port = 70000;
  EXPECT_THROW(TCPStore("127.0.0.1", o), ember::ValueError);
}
