// One rank of the multi-process distributed tests: runs a scenario under torchrun's environment
// and exits 0 when every check held (3: the expected failure was raised and named).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "ember/ember.h"

using namespace ember;
namespace dist = ember::distributed;

namespace {

int g_rank = 0;
int g_size = 1;
int g_failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "rank " << g_rank << " FAILED: " << what << "\n";
    ++g_failures;
  }
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::vector<double> values(const Tensor& t) { return t.to(kFloat64).to_vector<double>(); }

Tensor make(const std::vector<double>& v, DType dtype, Shape shape = {}) {
  if (shape.size() == 0) shape = Shape{static_cast<int64_t>(v.size())};
  return tensor(v, shape, TensorOptions().dtype(dtype));
}

// The value rank r holds at element i: small, so every dtype holds every result exactly.
double value(int r, int i, dist::ReduceOp op, DType dtype) {
  if (dtype == kBool) return (r + i) % 2;
  if (op == dist::ReduceOp::PRODUCT) return 1 + (r + i) % 2;
  return (r + 1) + i % 3;
}

double expected(int i, dist::ReduceOp op, DType dtype, int size) {
  double acc = value(0, i, op, dtype);
  for (int r = 1; r < size; ++r) {
    double v = value(r, i, op, dtype);
    switch (op) {
      case dist::ReduceOp::SUM:
      case dist::ReduceOp::AVG:
        acc += v;
        break;
      case dist::ReduceOp::PRODUCT:
        acc *= v;
        break;
      case dist::ReduceOp::MIN:
        acc = std::min(acc, v);
        break;
      case dist::ReduceOp::MAX:
        acc = std::max(acc, v);
        break;
    }
  }
  if (dtype == kBool) {
    bool any = false, all = true;
    for (int r = 0; r < size; ++r) {
      any = any || value(r, i, op, dtype) != 0;
      all = all && value(r, i, op, dtype) != 0;
    }
    return (op == dist::ReduceOp::PRODUCT || op == dist::ReduceOp::MIN) ? all : any;
  }
  if (op == dist::ReduceOp::AVG) acc /= size;
  return acc;
}

std::vector<double> rank_values(int r, int n, dist::ReduceOp op, DType dtype) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(value(r, i, op, dtype));
  return v;
}

void collectives_for(DType dtype) {
  const std::string name(dtype_name(dtype));
  const int n = 5;
  bool floating = is_floating_point(dtype);
  std::vector<dist::ReduceOp> ops = {dist::ReduceOp::SUM, dist::ReduceOp::PRODUCT,
                                     dist::ReduceOp::MIN, dist::ReduceOp::MAX};
  if (floating) ops.push_back(dist::ReduceOp::AVG);
  for (auto op : ops) {
    Tensor t = make(rank_values(g_rank, n, op, dtype), dtype);
    dist::all_reduce(t, op);
    auto got = values(t);
    for (int i = 0; i < n; ++i) {
      double want = expected(i, op, dtype, g_size);
      double tol = floating ? 1e-2 * std::abs(want) + 1e-6 : 0;
      if (std::abs(got[static_cast<size_t>(i)] - want) > tol) {
        check(false, "all_reduce " + name + " op " + std::to_string(static_cast<int>(op)) +
                         " element " + std::to_string(i) + ": got " +
                         std::to_string(got[static_cast<size_t>(i)]) + " want " +
                         std::to_string(want));
        break;
      }
    }
  }
  // reduce to rank 1 % size: the others keep their values.
  {
    int dst = 1 % g_size;
    auto mine = rank_values(g_rank, n, dist::ReduceOp::SUM, dtype);
    Tensor t = make(mine, dtype);
    dist::reduce(t, dst);
    auto got = values(t);
    for (int i = 0; i < n; ++i) {
      double want = g_rank == dst ? expected(i, dist::ReduceOp::SUM, dtype, g_size)
                                  : mine[static_cast<size_t>(i)];
      check(got[static_cast<size_t>(i)] == want, "reduce " + name);
    }
  }
  // broadcast from the last rank.
  {
    Tensor t = make(rank_values(g_rank, n, dist::ReduceOp::SUM, dtype), dtype);
    dist::broadcast(t, g_size - 1);
    check(values(t) == values(make(rank_values(g_size - 1, n, dist::ReduceOp::SUM, dtype), dtype)),
          "broadcast " + name);
  }
  // all_gather and all_gather_into_tensor: block r is rank r's input.
  {
    Tensor in = make(rank_values(g_rank, n, dist::ReduceOp::SUM, dtype), dtype);
    std::vector<Tensor> outs;
    dist::all_gather(outs, in);
    Tensor flat = empty({g_size * n}, TensorOptions().dtype(dtype));
    dist::all_gather_into_tensor(flat, in);
    auto f = values(flat);
    for (int r = 0; r < g_size; ++r) {
      auto want = values(make(rank_values(r, n, dist::ReduceOp::SUM, dtype), dtype));
      check(values(outs[static_cast<size_t>(r)]) == want, "all_gather " + name);
      check(std::vector<double>(f.begin() + r * n, f.begin() + (r + 1) * n) == want,
            "all_gather_into_tensor " + name);
    }
  }
  // reduce_scatter_tensor: rank r gets the sum of block r.
  if (dtype != kBool) {
    std::vector<double> in;
    for (int b = 0; b < g_size; ++b)
      for (int i = 0; i < n; ++i) in.push_back(g_rank + b + i % 2);
    Tensor input = make(in, dtype);
    Tensor out = empty({n}, TensorOptions().dtype(dtype));
    dist::reduce_scatter_tensor(out, input);
    auto got = values(out);
    for (int i = 0; i < n; ++i) {
      double want = 0;
      for (int r = 0; r < g_size; ++r) want += r + g_rank + i % 2;
      check(got[static_cast<size_t>(i)] == want, "reduce_scatter_tensor " + name);
    }
  }
}

int collectives() {
  dist::InitOptions o;
  o.timeout = std::chrono::seconds(10);
  dist::init_process_group("gloo", o);
  g_rank = dist::get_rank();
  g_size = dist::get_world_size();
  check(dist::is_initialized(), "is_initialized");
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kInt8, kUInt8, kBool})
    collectives_for(d);

  // Async: Work completes, and a sequence of async calls runs in order.
  Tensor a = ones({1000});
  Tensor b = full({3}, 2.0);
  dist::Work wa = dist::all_reduce(a, dist::ReduceOp::SUM, true);
  dist::Work wb = dist::all_reduce(b, dist::ReduceOp::PRODUCT, true);
  wa.wait();
  wb.wait();
  check(wa.is_completed() && wb.is_completed() && wb.is_success(), "async completion");
  check(a.sum().item<float>() == 1000.0f * g_size, "async all_reduce value");
  check(b.to_vector<float>()[0] == static_cast<float>(1 << g_size), "async product value");
  dist::barrier();

  // Point to point around the ring.
  if (g_size > 1) {
    Tensor out = full({4}, static_cast<double>(g_rank));
    Tensor in = zeros({4});
    auto ws = dist::isend(out, (g_rank + 1) % g_size);
    auto wr = dist::irecv(in, (g_rank + g_size - 1) % g_size);
    ws.wait();
    wr.wait();
    check(in.to_vector<float>()[3] == static_cast<float>((g_rank + g_size - 1) % g_size),
          "send/recv ring");
  }

  // A group of the even ranks; odd ranks are not members.
  std::vector<int> evens;
  for (int r = 0; r < g_size; r += 2) evens.push_back(r);
  dist::Group g = dist::new_group(evens);
  if (g_rank % 2 == 0) {
    Tensor t = full({2}, static_cast<double>(g_rank));
    dist::all_reduce(t, dist::ReduceOp::SUM, false, g);
    double want = 0;
    for (int r : evens) want += r;
    check(t.to_vector<float>()[0] == want, "new_group all_reduce");
    check(dist::get_world_size(g) == static_cast<int>(evens.size()), "new_group size");
    check(dist::get_sequence_number(g) == 1, "new_group sequence number");
  } else {
    check(dist::get_rank(g) == -1, "non-member rank");
    Tensor t = ones({2});
    try {
      dist::all_reduce(t, dist::ReduceOp::SUM, false, g);
      check(false, "non-member all_reduce succeeded");
    } catch (const Error& e) {
      check(contains(e.what(), "not a member"), std::string("non-member message: ") + e.what());
    }
  }
  uint64_t seq = dist::get_sequence_number();
  dist::barrier();
  check(dist::get_sequence_number() == seq + 1, "sequence number advances");

  dist::destroy_process_group();
  check(!dist::is_initialized(), "destroyed");
  try {
    Tensor t = ones({2});
    dist::all_reduce(t);
    check(false, "all_reduce after destroy succeeded");
  } catch (const Error& e) {
    check(contains(e.what(), "[all_reduce] rank " + std::to_string(g_rank)) &&
              contains(e.what(), "destroyed"),
          std::string("after-destroy message: ") + e.what());
  }
  if (g_failures == 0) std::cout << "rank " << g_rank << " ok\n";
  return g_failures == 0 ? 0 : 1;
}

// EMBER_DISTRIBUTED_DEBUG=DETAIL: rank 1 calls with another shape; every rank names it.
int mismatch() {
  dist::InitOptions o;
  o.timeout = std::chrono::seconds(10);
  dist::init_process_group("gloo", o);
  g_rank = dist::get_rank();
  Tensor t = ones({g_rank == 1 ? 3 : 4});
  try {
    dist::all_reduce(t);
  } catch (const ValueError& e) {
    std::cerr << e.what() << "\n";
    bool named = contains(e.what(), "does not match") && contains(e.what(), "#1") &&
                 contains(e.what(), "rank 1: all_reduce(SUM) on float32 [3]") &&
                 contains(e.what(), "rank 0: all_reduce(SUM) on float32 [4]");
    dist::destroy_process_group();
    return named ? 3 : 1;
  }
  std::cerr << "rank " << g_rank << ": the mismatch was not detected\n";
  return 1;
}

// Rank 1 dies (SIGKILL) or stops (SIGSTOP) before collective #2; the others must fail, naming it.
int fault(int sig) {
  dist::InitOptions o;
  o.timeout = std::chrono::milliseconds(sig == SIGSTOP ? 1500 : 10000);
  dist::init_process_group("gloo", o);
  g_rank = dist::get_rank();
  Tensor t = ones({64});
  dist::all_reduce(t);
  if (g_rank == 1) raise(sig);
  try {
    dist::all_reduce(t);
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    bool named = contains(e.what(), "[all_reduce] rank " + std::to_string(g_rank)) &&
                 contains(e.what(), "#2") &&
                 (sig == SIGKILL ? contains(e.what(), "rank 1 is gone")
                                 : contains(e.what(), "ranks that did not: 1"));
    // Rank 0 hosts the store: it stays a moment so that the others can read who arrived.
    std::this_thread::sleep_for(std::chrono::milliseconds(g_rank == 0 ? 1000 : 0));
    return named ? 3 : 1;
  }
  std::cerr << "rank " << g_rank << ": no error after rank 1 stopped\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario = argc > 1 ? argv[1] : "";
  try {
    if (scenario == "collectives") return collectives();
    if (scenario == "mismatch") return mismatch();
    if (scenario == "kill") return fault(SIGKILL);
    if (scenario == "stop") return fault(SIGSTOP);
    if (scenario == "fail") return std::atoi(std::getenv("RANK")) == 1 ? 7 : (sleep(30), 0);
  } catch (const std::exception& e) {
    std::cerr << "rank " << g_rank << " uncaught: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: dist_worker collectives|mismatch|kill|stop|fail\n";
  return 2;
}
