// Random ops: Philox known answers, the documented element layout (values recomputed here from
// raw Philox blocks), reproducibility, strided outputs, threads, statistics and error cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "backend/cpu/philox_cpu.h"
#include "ember/ember.h"
#include "kernels/philox.h"
#include "kernels/portable_math.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;

namespace {

philox::Words blk(const GeneratorState& s, int64_t b) {
  return philox::block(s.seed, s.offset, static_cast<uint64_t>(b));
}

uint64_t word64(const philox::Words& w, int j) {
  return w.v[2 * j] | (static_cast<uint64_t>(w.v[2 * j + 1]) << 32);
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double std_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0.0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

// ---- Philox -------------------------------------------------------------------------------------

TEST(Philox, Random123KnownAnswers) {
  const philox::Words zero = philox::philox4x32_10({{0, 0, 0, 0}}, 0, 0);
  const uint32_t want0[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
  const philox::Words ones = philox::philox4x32_10(
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu);
  const uint32_t want1[4] = {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu};
  const philox::Words pi = philox::philox4x32_10(
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u);
  const uint32_t want2[4] = {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(zero.v[i], want0[i]) << i;
    EXPECT_EQ(ones.v[i], want1[i]) << i;
    EXPECT_EQ(pi.v[i], want2[i]) << i;
  }
}

TEST(Philox, BlockPutsIndexThenOffsetInTheCounterAndSeedInTheKey) {
  // The pi vector again, through the (seed, offset, index) layout.
  const philox::Words w =
      philox::block(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull);
  EXPECT_EQ(w.v[0], 0xd16cfe09u);
  EXPECT_EQ(w.v[3], 0x24126ea1u);
}

// ---- the documented element layout --------------------------------------------------------------

TEST(RandomLayout, RandFloat32UsesTheTop24BitsOfOneWordPerElement) {
  manual_seed(0);  // seed 0, first call at offset 0: block 0 is the all-zero known answer
  std::vector<float> v = rand({4}).to_vector<float>();
  EXPECT_EQ(v[0], static_cast<float>(0x6627e8d5u >> 8) / 16777216.0f);
  EXPECT_EQ(v[3], static_cast<float>(0x9b00dbd8u >> 8) / 16777216.0f);

  Generator g(Device(kCPU), 1234);
  const GeneratorState s = g.get_state();
  v = rand({37}, g).to_vector<float>();
  for (int64_t i = 0; i < 37; ++i) {
    const float want = static_cast<float>(blk(s, i / 4).v[i % 4] >> 8) / 16777216.0f;
    ASSERT_EQ(v[static_cast<size_t>(i)], want) << i;
  }
}

TEST(RandomLayout, RandFloat64Uses53BitsOfAWordPair) {
  Generator g(Device(kCPU), 99);
  const GeneratorState s = g.get_state();
  std::vector<double> v = rand({9}, g, kFloat64).to_vector<double>();
  for (int64_t i = 0; i < 9; ++i) {
    const double want =
        static_cast<double>(word64(blk(s, i / 2), i % 2) >> 11) * std::ldexp(1.0, -53);
    ASSERT_EQ(v[static_cast<size_t>(i)], want) << i;
  }
}

TEST(RandomLayout, Rand16BitFloatsUseTheirSignificandWidth) {
  Generator g(Device(kCPU), 5);
  GeneratorState s = g.get_state();
  std::vector<float> h = rand({10}, g, kFloat16).to_vector<float>();
  for (int64_t i = 0; i < 10; ++i) {
    ASSERT_EQ(h[static_cast<size_t>(i)],
              static_cast<float>(blk(s, i / 4).v[i % 4] >> 21) / 2048.0f);
  }
  s = g.get_state();
  std::vector<float> b = rand({10}, g, kBFloat16).to_vector<float>();
  for (int64_t i = 0; i < 10; ++i) {
    ASSERT_EQ(b[static_cast<size_t>(i)], static_cast<float>(blk(s, i / 4).v[i % 4] >> 24) / 256.0f);
  }
}

TEST(RandomLayout, RandnIsBoxMullerWithBothHalves) {
  Generator g(Device(kCPU), 77);
  GeneratorState s = g.get_state();
  std::vector<float> f = normal(1.5, 2.0, {11}, g).to_vector<float>();
  for (int64_t i = 0; i < 11; ++i) {
    const philox::Words w = blk(s, i / 4);
    const int pair = static_cast<int>(i % 4) / 2;
    const double u1 = (static_cast<double>(w.v[2 * pair] >> 8) + 1.0) / 16777216.0;
    const double u2 = static_cast<double>(w.v[2 * pair + 1] >> 8) / 16777216.0;
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double z = i % 2 == 0 ? r * std::cos(2.0 * M_PI * u2) : r * std::sin(2.0 * M_PI * u2);
    ASSERT_FLOAT_EQ(f[static_cast<size_t>(i)], static_cast<float>(1.5 + 2.0 * z)) << i;
  }
  s = g.get_state();
  std::vector<double> d = randn({5}, g, kFloat64).to_vector<double>();
  for (int64_t i = 0; i < 5; ++i) {
    const philox::Words w = blk(s, i / 2);
    const double u1 = static_cast<double>((word64(w, 0) >> 11) + 1) * std::ldexp(1.0, -53);
    const double u2 = static_cast<double>(word64(w, 1) >> 11) * std::ldexp(1.0, -53);
    // In long double: near a zero of cos or sin, 2 pi u2 rounded to double is too coarse.
    const long double r = sqrtl(-2.0L * logl(u1));
    const long double a = 6.283185307179586476925L * u2;
    const long double z = i % 2 == 0 ? r * cosl(a) : r * sinl(a);
    ASSERT_NEAR(d[static_cast<size_t>(i)], static_cast<double>(z), 1e-15 * static_cast<double>(r))
        << i;
  }
}

TEST(RandomLayout, RandintIs64BitDrawsModuloTheRange) {
  Generator g(Device(kCPU), 3);
  const GeneratorState s = g.get_state();
  std::vector<int64_t> v = randint(-5, 1000000007, {13}, g).to_vector<int64_t>();
  for (int64_t i = 0; i < 13; ++i) {
    const int64_t want = -5 + static_cast<int64_t>(word64(blk(s, i / 2), i % 2) % 1000000012ull);
    ASSERT_EQ(v[static_cast<size_t>(i)], want) << i;
  }
}

TEST(RandomLayout, BernoulliComparesAUniformWithP) {
  Generator g(Device(kCPU), 8);
  GeneratorState s = g.get_state();
  std::vector<float> ps = {0.1f, 0.5f, 0.9f, 0.3f, 0.7f, 0.2f, 0.6f};
  std::vector<float> got = bernoulli(tensor(ps), g).to_vector<float>();
  for (int64_t i = 0; i < 7; ++i) {
    const double u = static_cast<double>(blk(s, i / 4).v[i % 4] >> 8) / 16777216.0;
    ASSERT_EQ(got[static_cast<size_t>(i)], u < ps[static_cast<size_t>(i)] ? 1.0f : 0.0f) << i;
  }
  s = g.get_state();
  std::vector<double> d = bernoulli(zeros({7}, kFloat64), 0.4, g).to_vector<double>();
  for (int64_t i = 0; i < 7; ++i) {
    const double u = static_cast<double>(word64(blk(s, i / 2), i % 2) >> 11) * std::ldexp(1.0, -53);
    ASSERT_EQ(d[static_cast<size_t>(i)], u < 0.4 ? 1.0 : 0.0) << i;
  }
}

// ---- the CPU's bulk generator ------------------------------------------------------------------

// Every SIMD path this CPU runs gives philox::block's words, for counts that end mid-step, first
// blocks that are not multiples of the lane count, and low counter words that wrap within a call.
TEST(PhiloxBlocks, EveryPathMatchesTheScalarBlock) {
  const uint64_t firsts[] = {
      0, 1, 3, 5, 0xFFFFFFF0u, 0xFFFFFFFBu, 0x1FFFFFFF7ull, 0xFFFFFFFFFFFFFFF3ull};
  const int64_t counts[] = {0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 64, 1001};
  const uint64_t seeds[][2] = {
      {0, 0}, {0x299f31d0a4093822ull, 0x0370734413198a2eull}, {~0ull, ~0ull}};
  std::vector<uint32_t> out(4 * 1001 + 4);
  int paths = 0;
  for (cpu::PhiloxPath path : {cpu::PhiloxPath::Auto, cpu::PhiloxPath::Scalar,
                               cpu::PhiloxPath::Avx2, cpu::PhiloxPath::Avx512}) {
    if (!cpu::philox_path_supported(path)) continue;
    ++paths;
    for (const auto& so : seeds) {
      for (uint64_t first : firsts) {
        for (int64_t count : counts) {
          std::fill(out.begin(), out.end(), 0xA5A5A5A5u);
          cpu::philox_blocks(so[0], so[1], first, count, out.data(), path);
          for (int64_t i = 0; i < count; ++i) {
            const philox::Words w = philox::block(so[0], so[1], first + static_cast<uint64_t>(i));
            for (int j = 0; j < 4; ++j) {
              ASSERT_EQ(out[static_cast<size_t>(4 * i + j)], w.v[j])
                  << "path " << static_cast<int>(path) << " first " << first << " count " << count
                  << " block " << i << " word " << j;
            }
          }
          // Nothing past the last block is written.
          EXPECT_EQ(out[static_cast<size_t>(4 * count)], 0xA5A5A5A5u);
        }
      }
    }
  }
  EXPECT_GE(paths, 2);
}

TEST(PhiloxBlocks, ChunksCoverTheRangeInOrder) {
  const int64_t b0 = 0xFFFFFF00ll, b1 = b0 + 2 * cpu::kPhiloxChunk + 37;
  int64_t next = b0;
  cpu::for_each_philox_block(5, 9, b0, b1, [&](int64_t b, const philox::Words& w) {
    ASSERT_EQ(b, next);
    const philox::Words want = philox::block(5, 9, static_cast<uint64_t>(b));
    for (int j = 0; j < 4; ++j) ASSERT_EQ(w.v[j], want.v[j]) << b;
    ++next;
  });
  EXPECT_EQ(next, b1);
}

// Large outputs cross the generator's chunks and threads: every element still comes from its block.
TEST(PhiloxBlocks, LargeRandAndBernoulliFollowTheLayout) {
  const int saved = get_num_threads();
  Generator g(Device(kCPU), 4321);
  for (int threads : {1, 3}) {
    set_num_threads(threads);
    const int64_t n = 4 * 3 * cpu::kPhiloxChunk * 7 + 3;  // several chunks, ends mid-block
    GeneratorState s = g.get_state();
    const std::vector<float> u = rand({n}, g).to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      const float want = static_cast<float>(blk(s, i / 4).v[i % 4] >> 8) / 16777216.0f;
      ASSERT_EQ(u[static_cast<size_t>(i)], want) << i;
    }
    s = g.get_state();
    const std::vector<double> d = bernoulli(zeros({n}, kFloat64), 0.3, g).to_vector<double>();
    for (int64_t i = 0; i < n; ++i) {
      const double v =
          static_cast<double>(word64(blk(s, i / 2), i % 2) >> 11) * std::ldexp(1.0, -53);
      ASSERT_EQ(d[static_cast<size_t>(i)], v < 0.3 ? 1.0 : 0.0) << i;
    }
  }
  set_num_threads(saved);
}

// ---- generator state ----------------------------------------------------------------------------

TEST(Generator, EachCallTakesOneOffset) {
  Generator g(Device(kCPU), 11);
  EXPECT_EQ(g.get_state(), (GeneratorState{11, 0}));
  rand({1000}, g);
  randn({0}, g);  // empty outputs count too
  randint(10, {3}, g);
  EXPECT_EQ(g.get_state(), (GeneratorState{11, 3}));
  g.manual_seed(12);
  EXPECT_EQ(g.get_state(), (GeneratorState{12, 0}));
  EXPECT_EQ(g.initial_seed(), 12u);
}

TEST(Generator, SetStateReplaysAndCallsDiffer) {
  Generator g(Device(kCPU), 21);
  const GeneratorState s = g.get_state();
  std::vector<float> a = rand({64}, g).to_vector<float>();
  std::vector<float> b = rand({64}, g).to_vector<float>();
  EXPECT_NE(a, b);
  g.set_state(s);
  EXPECT_EQ(rand({64}, g).to_vector<float>(), a);
  EXPECT_EQ(rand({64}, g).to_vector<float>(), b);
}

TEST(Generator, CopiesShareStateAndNewOnesAreIndependent) {
  Generator a(Device(kCPU), 1);
  Generator b = a;
  rand({4}, b);
  EXPECT_EQ(a.get_state().offset, 1u);
  EXPECT_TRUE(a.is_same(b));
  Generator fresh;
  EXPECT_EQ(fresh.initial_seed(), kDefaultSeed);
  EXPECT_FALSE(fresh.is_same(a));
  const uint64_t s = fresh.seed();
  EXPECT_EQ(fresh.get_state(), (GeneratorState{s, 0}));
}

TEST(Generator, ManualSeedReproducesAndSeedsEveryDevice) {
  manual_seed(42);
  std::vector<float> a = rand({100}).to_vector<float>();
  std::vector<int64_t> p = randperm(50).to_vector<int64_t>();
  manual_seed(42);
  EXPECT_EQ(rand({100}).to_vector<float>(), a);
  EXPECT_EQ(randperm(50).to_vector<int64_t>(), p);
  manual_seed(43);
  EXPECT_NE(rand({100}).to_vector<float>(), a);

  // CUDA generators are plain state: seeded now, and created later with the last seed.
  Generator c1 = default_generator(Device("cuda:1"));
  c1.reserve(5);
  manual_seed(7);
  EXPECT_EQ(c1.get_state(), (GeneratorState{7, 0}));
  EXPECT_EQ(default_generator(Device("cuda:3")).get_state(), (GeneratorState{7, 0}));
  EXPECT_TRUE(default_generator(Device("cuda")).is_same(default_generator(Device("cuda:0"))));
  EXPECT_FALSE(default_generator(Device("cuda:0")).is_same(default_generator(Device(kCPU))));
  EXPECT_EQ(initial_seed(), 7u);
  EXPECT_EQ(default_generator().get_state(), (GeneratorState{7, 0}));
}

TEST(Generator, ConcurrentCallsGetDistinctOffsets) {
  Generator g(Device(kCPU), 5);
  std::vector<std::vector<uint64_t>> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) got[static_cast<size_t>(t)].push_back(g.reserve().offset);
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> all;
  for (auto& v : got) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), 4000u);
  EXPECT_EQ(g.get_state().offset, 4000u);
}

// ---- layouts and threads ------------------------------------------------------------------------

TEST(RandomStrided, TransposedOutputGetsValuesByLogicalPosition) {
  Generator g(Device(kCPU), 31);
  const GeneratorState s = g.get_state();
  Tensor base = full({5, 7}, std::nan(""));
  Tensor view = base.t();  // (7, 5), not contiguous
  uniform_(view, 0.0, 1.0, g);
  g.set_state(s);
  Tensor ref = rand({7, 5}, g);
  EXPECT_EQ(view.contiguous().to_vector<float>(), ref.to_vector<float>());
  for (float x : base.to_vector<float>()) EXPECT_FALSE(std::isnan(x));

  // The member form goes through the default generator with the same layout.
  manual_seed(9);
  Tensor t = empty({3, 4}, kFloat64);
  t.t().normal_(0.0, 1.0);
  manual_seed(9);
  EXPECT_EQ(t.t().contiguous().to_vector<double>(), randn({4, 3}, kFloat64).to_vector<double>());
}

TEST(RandomStrided, StridedSliceWritesOnlyItsElements) {
  Tensor base = zeros({4, 6});
  base.slice(1, 0, 6, 2).uniform_(2.0, 3.0);
  std::vector<float> v = base.to_vector<float>();
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 6; ++c) {
      float x = v[static_cast<size_t>(r * 6 + c)];
      if (c % 2 == 0) {
        EXPECT_GE(x, 2.0f);
        EXPECT_LT(x, 3.0f);
      } else {
        EXPECT_EQ(x, 0.0f);
      }
    }
  }
}

TEST(RandomStrided, ViewsWithAStorageOffset) {
  Tensor flat = zeros({10});
  flat.narrow(0, 3, 4).uniform_(1.0, 2.0);  // contiguous, offset 3
  Tensor grid = zeros({3, 5}, kFloat64);
  grid.narrow(1, 1, 3).normal_(10.0, 0.5);  // strided, offset 1
  std::vector<float> f = flat.to_vector<float>();
  for (int64_t i = 0; i < 10; ++i) {
    const float x = f[static_cast<size_t>(i)];
    if (i >= 3 && i < 7) {
      EXPECT_TRUE(x >= 1.0f && x < 2.0f) << i;
    } else {
      EXPECT_EQ(x, 0.0f) << i;
    }
  }
  std::vector<double> g = grid.to_vector<double>();
  for (int64_t i = 0; i < 15; ++i) {
    const int64_t c = i % 5;
    EXPECT_EQ(g[static_cast<size_t>(i)] != 0.0, c >= 1 && c <= 3) << i;
  }
}

TEST(RandomStrided, ExpandedOutputIsRejected) {
  Tensor e = zeros({3}).expand({4, 3});
  std::string msg = error_of<ValueError>([&] { e.uniform_(); });
  EXPECT_TRUE(starts_with(msg, "[uniform_] unsupported operation")) << msg;
}

TEST(RandomStrided, ThreadCountDoesNotChangeValues) {
  const int saved = get_num_threads();
  Generator g(Device(kCPU), 17);
  const GeneratorState s = g.get_state();
  std::vector<std::vector<float>> runs;
  std::vector<std::vector<float>> strided;
  std::vector<std::vector<int64_t>> ints;
  for (int threads : {1, 4}) {
    set_num_threads(threads);
    g.set_state(s);
    runs.push_back(randn({200001}, g).to_vector<float>());
    Tensor t = empty({400, 300});
    normal_(t.t(), 0.0, 1.0, g);
    strided.push_back(t.to_vector<float>());
    ints.push_back(randint(0, 1000, {100003}, g).to_vector<int64_t>());
  }
  set_num_threads(saved);
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(strided[0], strided[1]);
  EXPECT_EQ(ints[0], ints[1]);
}

TEST(RandomStrided, NonContiguousBernoulliProbabilities) {
  Generator g(Device(kCPU), 4);
  Tensor p = rand({6, 5}, g, kFloat64);
  Tensor pt = p.t();
  const GeneratorState before = g.get_state();
  std::vector<double> got = bernoulli(pt, g).to_vector<double>();
  std::vector<double> pv = pt.contiguous().to_vector<double>();
  for (int64_t i = 0; i < 30; ++i) {
    const double u =
        static_cast<double>(word64(blk(before, i / 2), i % 2) >> 11) * std::ldexp(1.0, -53);
    ASSERT_EQ(got[static_cast<size_t>(i)], u < pv[static_cast<size_t>(i)] ? 1.0 : 0.0) << i;
  }
}

// ---- statistics ---------------------------------------------------------------------------------

TEST(RandomStats, NormalMeanAndStd) {
  manual_seed(2024);
  const double n = 100000;
  std::vector<double> v = randn({100000}).to_vector<double>();
  EXPECT_NEAR(mean_of(v), 0.0, 4.0 / std::sqrt(n));
  EXPECT_NEAR(std_of(v), 1.0, 4.0 / std::sqrt(2.0 * n));
  v = normal(2.0, 3.0, {100000}, kFloat64).to_vector<double>();
  EXPECT_NEAR(mean_of(v), 2.0, 4.0 * 3.0 / std::sqrt(n));
  EXPECT_NEAR(std_of(v), 3.0, 4.0 * 3.0 / std::sqrt(2.0 * n));
  // Tails exist but are not absurd.
  const double mx = *std::max_element(v.begin(), v.end());
  EXPECT_GT(mx, 2.0 + 3.0 * 3.0);
  EXPECT_LT(mx, 2.0 + 3.0 * 7.0);
  v = normal(5.0, 0.0, {10}).to_vector<double>();
  for (double x : v) EXPECT_EQ(x, 5.0);
}

TEST(RandomStats, UniformRangeAndMean) {
  manual_seed(1);
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    std::vector<double> v = rand({100000}, t).to_vector<double>();
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0) << t;
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0) << t;
    EXPECT_NEAR(mean_of(v), 0.5, 4.0 * std::sqrt(1.0 / 12.0 / 100000.0) + 0.004) << t;
  }
  Tensor t = empty({50000});
  t.uniform_(-3.0, 5.0);
  std::vector<double> v = t.to_vector<double>();
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -3.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 5.0);
  EXPECT_NEAR(mean_of(v), 1.0, 4.0 * 8.0 * std::sqrt(1.0 / 12.0 / 50000.0));
  // A float64 draw has more than 24 bits.
  v = rand({100}, kFloat64).to_vector<double>();
  bool fine = false;
  for (double x : v) fine |= std::ldexp(x, 24) != std::floor(std::ldexp(x, 24));
  EXPECT_TRUE(fine);
}

TEST(RandomStats, UniformStaysBelowToWhenRoundingWouldReachIt) {
  // Float32 spacing at 1e8 is 8: every draw rounds to 1e8 or 1e8 + 8 = to.
  Tensor t = empty({1000});
  t.uniform_(1e8, 1e8 + 8);
  for (float x : t.to_vector<float>()) ASSERT_EQ(x, 1e8f);
  // Float16 spacing at 1000 is 0.5.
  Tensor h = empty({1000}, kFloat16);
  h.uniform_(1000.0, 1001.0);
  std::set<float> seen;
  for (float x : h.to_vector<float>()) seen.insert(x);
  EXPECT_EQ(seen, (std::set<float>{1000.0f, 1000.5f}));
  // from == to is allowed.
  Tensor c = empty({5}, kFloat64);
  c.uniform_(2.5, 2.5);
  for (double x : c.to_vector<double>()) EXPECT_EQ(x, 2.5);
}

TEST(RandomStats, RandintBoundsAndUniformity) {
  manual_seed(3);
  std::vector<int64_t> v = randint(-3, 7, {100000}).to_vector<int64_t>();
  std::vector<int64_t> counts(10, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    ++counts[static_cast<size_t>(x + 3)];
  }
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c), 10000.0, 4.0 * std::sqrt(9000.0));
  // The full int64 range works without overflow.
  std::vector<int64_t> w =
      randint(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), {1000})
          .to_vector<int64_t>();
  int negative = 0;
  for (int64_t x : w) negative += x < 0;
  EXPECT_GT(negative, 400);
  EXPECT_LT(negative, 600);
}

TEST(RandomStats, BernoulliRate) {
  manual_seed(4);
  std::vector<double> v = bernoulli(zeros({100000}), 0.3).to_vector<double>();
  for (double x : v) ASSERT_TRUE(x == 0.0 || x == 1.0);
  EXPECT_NEAR(mean_of(v), 0.3, 4.0 * std::sqrt(0.21 / 100000.0));
  Tensor t = empty({20000}, kFloat64);
  t.bernoulli_(0.75);
  EXPECT_NEAR(mean_of(t.to_vector<double>()), 0.75, 4.0 * std::sqrt(0.1875 / 20000.0));
  // p of exactly 0 and 1 are exact.
  std::vector<float> p = {0, 1, 0, 1, 1, 0, 0, 1, 1};
  EXPECT_EQ(bernoulli(tensor(p)).to_vector<float>(), p);
  EXPECT_EQ(bernoulli(zeros({9}), 1.0).to_vector<float>(), std::vector<float>(9, 1.0f));
  EXPECT_EQ(bernoulli(ones({9}), 0.0).to_vector<float>(), std::vector<float>(9, 0.0f));
}

// ---- dtypes, shapes, factories ------------------------------------------------------------------

TEST(RandomFactories, DtypesAndShapes) {
  EXPECT_EQ(rand({2, 3}).dtype(), kFloat32);
  EXPECT_EQ(rand({2, 3}).sizes(), (Shape{2, 3}));
  EXPECT_EQ(randn({4}, kFloat16).dtype(), kFloat16);
  EXPECT_EQ(randn({4}, kBFloat16).dtype(), kBFloat16);
  EXPECT_EQ(randint(5, {3}).dtype(), kInt64);
  EXPECT_EQ(randint(0, 5, {3}, kInt32).dtype(), kInt32);
  EXPECT_EQ(randperm(4).dtype(), kInt64);
  EXPECT_EQ(rand({}).dim(), 0);
  EXPECT_EQ(rand({}).numel(), 1);
  EXPECT_EQ(rand({0, 3}).sizes(), (Shape{0, 3}));
  EXPECT_EQ(randperm(0).sizes(), (Shape{0}));
  EXPECT_EQ(randperm(1).to_vector<int64_t>(), (std::vector<int64_t>{0}));

  Tensor x = zeros({2, 5}, kFloat64);
  EXPECT_EQ(rand_like(x).dtype(), kFloat64);
  EXPECT_EQ(rand_like(x).sizes(), (Shape{2, 5}));
  EXPECT_EQ(randn_like(x, TensorOptions(kFloat16)).dtype(), kFloat16);
  EXPECT_EQ(randn_like(x).sizes(), (Shape{2, 5}));
  for (double v : rand_like(x).to_vector<double>()) EXPECT_TRUE(v >= 0.0 && v < 1.0);

  // randint into other dtypes.
  for (float v : randint(-4, 4, {200}, kFloat32).to_vector<float>()) {
    ASSERT_EQ(v, std::floor(v));
    ASSERT_TRUE(v >= -4 && v < 4);
  }
  std::vector<bool> b = randint(0, 2, {200}, kBool).to_vector<bool>();
  EXPECT_TRUE(std::count(b.begin(), b.end(), true) > 50);
  std::vector<int64_t> u8 = randint(0, 256, {5000}, kUInt8).to_vector<int64_t>();
  EXPECT_EQ(*std::max_element(u8.begin(), u8.end()), 255);
  EXPECT_EQ(*std::min_element(u8.begin(), u8.end()), 0);
  Tensor i8 = empty({300}, kInt8);
  random_(i8, -128, 128);
  std::vector<int64_t> iv = i8.to_vector<int64_t>();
  EXPECT_EQ(*std::min_element(iv.begin(), iv.end()), -128);

  // bernoulli keeps the input's dtype.
  Tensor bi = bernoulli(zeros({100}, kInt64), 0.5);
  EXPECT_EQ(bi.dtype(), kInt64);
  for (int64_t v : bi.to_vector<int64_t>()) ASSERT_TRUE(v == 0 || v == 1);
  Tensor bb = zeros({100}, kBool);
  bb.bernoulli_(0.5);
  std::vector<bool> bv = bb.to_vector<bool>();
  EXPECT_GT(std::count(bv.begin(), bv.end(), true), 20);
  EXPECT_EQ(bernoulli(full({3}, 0.5, kFloat16)).dtype(), kFloat16);
  EXPECT_EQ(bernoulli(full({3}, 0.5, kBFloat16)).dtype(), kBFloat16);
}

TEST(RandomFactories, RandpermIsAReproduciblePermutation) {
  manual_seed(10);
  const GeneratorState s = default_generator().get_state();
  std::vector<int64_t> p = randperm(1000).to_vector<int64_t>();
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(p, iota);
  // The documented order: argsort of signed 64-bit keys, one per index.
  std::vector<int64_t> ref = iota;
  std::stable_sort(ref.begin(), ref.end(), [&](int64_t a, int64_t b) {
    return static_cast<int64_t>(word64(blk(s, a / 2), static_cast<int>(a % 2))) <
           static_cast<int64_t>(word64(blk(s, b / 2), static_cast<int>(b % 2)));
  });
  EXPECT_EQ(p, ref);
  manual_seed(10);
  EXPECT_EQ(randperm(1000).to_vector<int64_t>(), p);
  EXPECT_EQ(randperm(1000).to_vector<int64_t>() == p, false);
  // Other dtypes hold the same permutation.
  Generator g(Device(kCPU), 6);
  std::vector<int64_t> a = randperm(300, g).to_vector<int64_t>();
  g.manual_seed(6);
  EXPECT_EQ(randperm(300, g, kFloat32).to_vector<int64_t>(), a);
  g.manual_seed(6);
  EXPECT_EQ(randperm(300, g, kInt32).to_vector<int64_t>(), a);
  EXPECT_EQ(randperm(2049, kFloat16).numel(), 2049);
}

// ---- errors -------------------------------------------------------------------------------------

TEST(RandomErrors, BadArgumentsRaiseNamedErrors) {
  std::string m;
  m = error_of<TypeError>([] { rand({3}, kInt64); });
  EXPECT_TRUE(starts_with(m, "[rand] not implemented for dtype int64")) << m;
  m = error_of<TypeError>([] { randn({3}, kInt32); });
  EXPECT_TRUE(starts_with(m, "[randn] ")) << m;
  m = error_of<TypeError>([] { zeros({3}, kInt64).uniform_(); });
  EXPECT_TRUE(starts_with(m, "[uniform_] ")) << m;
  m = error_of<TypeError>([] { zeros({3}, kBool).normal_(); });
  EXPECT_TRUE(starts_with(m, "[normal_] ")) << m;
  m = error_of<ValueError>([] { empty({3}).uniform_(1.0, 0.0); });
  EXPECT_TRUE(starts_with(m, "[uniform_] uniform_ expects to return a [from, to) range")) << m;
  m = error_of<ValueError>([] { empty({3}).uniform_(0.0, INFINITY); });
  EXPECT_TRUE(starts_with(m, "[uniform_] ")) << m;
  m = error_of<ValueError>([] { empty({3}, kFloat16).uniform_(0.0, 1e6); });
  EXPECT_TRUE(starts_with(m, "[uniform_] ")) << m;
  m = error_of<ValueError>([] { normal(0.0, -1.0, {3}); });
  EXPECT_TRUE(starts_with(m, "[normal] expects std >= 0.0, but found std=-1")) << m;
  m = error_of<ValueError>([] { empty({3}).normal_(0.0, NAN); });
  EXPECT_TRUE(starts_with(m, "[normal_] ")) << m;
  m = error_of<ValueError>([] { randint(5, 5, {3}); });
  EXPECT_TRUE(starts_with(m, "[randint] random_ expects 'from' to be less than 'to'")) << m;
  m = error_of<ValueError>([] { randint(0, 300, {3}, kInt8); });
  EXPECT_TRUE(starts_with(m, "[randint] ") && m.find("int8") != std::string::npos) << m;
  m = error_of<ValueError>([] { randint(0, 5000, {3}, kFloat16); });
  EXPECT_TRUE(starts_with(m, "[randint] ")) << m;
  m = error_of<ValueError>([] { randint(-1, 2, {3}, kUInt8); });
  EXPECT_TRUE(starts_with(m, "[randint] ")) << m;
  m = error_of<ValueError>([] { randint(0, 10, {-1}); });
  EXPECT_TRUE(starts_with(m, "[")) << m;
  m = error_of<ValueError>([] { randperm(-1); });
  EXPECT_EQ(m, "[randperm] n must be non-negative, got -1");
  m = error_of<ValueError>([] { randperm(3000, kFloat16); });
  EXPECT_TRUE(starts_with(m, "[randperm] ")) << m;
  m = error_of<ValueError>([] { zeros({3}).bernoulli_(1.5); });
  EXPECT_TRUE(starts_with(m, "[bernoulli_] expects p to be in [0, 1], but got p=1.5")) << m;
  m = error_of<ValueError>([] { bernoulli(zeros({3}), -0.1); });
  EXPECT_TRUE(starts_with(m, "[bernoulli] ")) << m;
  m = error_of<ValueError>([] { bernoulli(tensor({0.5, 1.5, 0.2})); });
  EXPECT_TRUE(starts_with(m, "[bernoulli] ") && m.find("1.5") != std::string::npos) << m;
  m = error_of<ValueError>([] { bernoulli(tensor({0.5, NAN})); });
  EXPECT_TRUE(starts_with(m, "[bernoulli] ")) << m;
  m = error_of<TypeError>([] { bernoulli(tensor({0, 1})); });
  EXPECT_TRUE(starts_with(m, "[bernoulli] not implemented for dtype int64")) << m;
  m = error_of<ValueError>([] {
    Generator g(Device("cuda:0"));
    rand({3}, g);
  });
  EXPECT_TRUE(starts_with(m, "[rand] expected a generator for device cpu")) << m;
  m = error_of<ValueError>([] {
    Tensor t;
    t.uniform_();
  });
  EXPECT_TRUE(starts_with(m, "[uniform_] ")) << m;
}

// ---- kernels/portable_math.h: the log and sincos the normal distribution uses on every target ---

namespace {

// |got - exact| in units of the last place of the double nearest to `exact`.
double ulp_error(double got, long double exact) {
  const double e = static_cast<double>(exact);
  const double ulp = std::nextafter(std::fabs(e), INFINITY) - std::fabs(e);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / ulp);
}

// sin and cos of 2 pi u from long double libm, reduced the way sincos_2pi does (exactly) so that
// the reference keeps its precision near the zeros.
void reference_sincos_2pi(double u, long double& s, long double& c) {
  const double n = std::rint(u * 4.0);
  const long double a = (static_cast<long double>(u) - 0.25L * n) * 6.283185307179586476925L;
  const long double sa = sinl(a), ca = cosl(a);
  const int q = static_cast<int>(n - 4.0 * std::floor(n / 4.0));
  const long double sv[4] = {sa, ca, -sa, -ca}, cv[4] = {ca, -sa, -ca, sa};
  s = sv[q];
  c = cv[q];
}

}  // namespace

TEST(PortableMath, LogIsWithinOneUlpOfLibm) {
  std::mt19937_64 rng(5);
  double worst = 0.0, worst_x = 0.0;
  auto check = [&](double x) {
    const double e = ulp_error(pmath::log(x), logl(static_cast<long double>(x)));
    if (e > worst) worst = e, worst_x = x;
  };
  for (int i = 0; i < 200000; ++i) {
    check(static_cast<double>((rng() >> 11) + 1) * 0x1p-53);  // the normal distribution's u1
    check(std::bit_cast<double>(rng() >> 1));  // any positive double, subnormals and NaNs included
    check(1.0 + std::ldexp(static_cast<double>(rng() >> 11), -60) - 0x1p-8);  // near 1
  }
  EXPECT_LE(worst, 1.0) << "at x = " << worst_x;
  EXPECT_EQ(pmath::log(1.0), 0.0);
  EXPECT_EQ(pmath::log(0.0), -INFINITY);
  EXPECT_EQ(pmath::log(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(pmath::log(-1.0)));
  EXPECT_TRUE(std::isnan(pmath::log(NAN)));
  EXPECT_DOUBLE_EQ(pmath::log(4.9406564584124654e-324), -744.44007192138126);
}

TEST(PortableMath, SincosOfATurnIsWithinTwoUlpOfLibm) {
  std::mt19937_64 rng(6);
  double worst_s = 0.0, worst_c = 0.0;
  auto check = [&](double u) {
    double s, c;
    pmath::sincos_2pi(u, s, c);
    long double rs, rc;
    reference_sincos_2pi(u, rs, rc);
    worst_s = std::max(worst_s, ulp_error(s, rs));
    worst_c = std::max(worst_c, ulp_error(c, rc));
  };
  for (int i = 0; i < 200000; ++i) {
    check(static_cast<double>(rng() >> 11) * 0x1p-53);  // the normal distribution's u2
    check(std::ldexp(static_cast<double>(rng() >> 11), -53 + static_cast<int>(rng() % 40)) - 8.0);
  }
  EXPECT_LE(worst_s, 2.0);
  EXPECT_LE(worst_c, 2.0);
  double s, c;
  pmath::sincos_2pi(0.25, s, c);
  EXPECT_EQ(s, 1.0);
  EXPECT_EQ(c, 0.0);
  pmath::sincos_2pi(-0.5, s, c);
  EXPECT_EQ(c, -1.0);
  pmath::sincos_2pi(INFINITY, s, c);
  EXPECT_TRUE(std::isnan(s) && std::isnan(c));
}
