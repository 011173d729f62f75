// Data loading: the IDX reader (hand-written big-endian files, gzip, every error), Fashion-MNIST
// (a tiny set written here, and the real one when Debian's package is installed), transforms,
// datasets, random_split, samplers and the DataLoader (ordering with workers, prefetch bound,
// errors, timeout, early exit, persistent workers, pinned buffers, determinism).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
using namespace ember::data;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A fresh directory under the system temp dir, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("ember_data_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// An IDX header: magic 0x0000TTRR then big-endian dims.
std::vector<uint8_t> idx_header(uint8_t type, const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int k = 3; k >= 0; --k) b.push_back(static_cast<uint8_t>(d >> (8 * k)));
  }
  return b;
}

template <class T>
void append_big_endian(std::vector<uint8_t>& b, T value) {
  uint8_t raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  for (int k = static_cast<int>(sizeof(T)) - 1; k >= 0; --k) b.push_back(raw[k]);
}

int live_threads();
// The thread count once threads that ended in earlier tests have left /proc.
int baseline_threads() {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return live_threads();
}

int live_threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Threads leave /proc shortly after join; wait briefly for the count to settle.
int threads_settled(int expected) {
  int n = live_threads();
  for (int i = 0; i < 200 && n != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    n = live_threads();
  }
  return n;
}

// Sample i: data = [i, i] (float32), target = i (int64); optional per-sample work and hooks.
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    if (index < 0 || index >= n_) throw IndexError("[CountingDataset] index out of range");
    loads.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mu);
      thread_ids.insert(std::this_thread::get_id());
      if (auto info = get_worker_info()) worker_ids.insert(info->id);
    }
    if (delay) std::this_thread::sleep_for(delay(index));
    if (index == fail_at) throw std::runtime_error("boom at " + std::to_string(index));
    return {full({2}, static_cast<double>(index)), scalar_tensor(index, TensorOptions(kInt64))};
  }

  int64_t n_;
  int64_t fail_at = -1;
  std::function<std::chrono::microseconds(int64_t)> delay;
  mutable std::atomic<int64_t> loads{0};
  mutable std::mutex mu;
  mutable std::set<std::thread::id> thread_ids;
  mutable std::set<int> worker_ids;
};

// The dataset's load count once it reaches `expected` (or 2 s pass), checked again 50 ms later so
// a count overshooting `expected` is seen.
int64_t loads_settled(const CountingDataset& ds, int64_t expected) {
  for (int i = 0; i < 400 && ds.loads.load() < expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return ds.loads.load();
}

std::vector<int64_t> targets_of(DataLoader& loader) {
  std::vector<int64_t> out;
  for (auto& batch : loader) {
    for (int64_t t : batch.target.to_vector<int64_t>()) out.push_back(t);
  }
  return out;
}

std::vector<int64_t> iota_vec(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

bool is_permutation_of_range(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  return v == iota_vec(n);
}

}  // namespace

// ---- IDX ----------------------------------------------------------------------------------------

TEST(Idx, ReadsHandWrittenUint8AnyRank) {
  TempDir dir;
  std::vector<uint8_t> b = idx_header(0x08, {2, 3, 2});
  for (int i = 0; i < 12; ++i) b.push_back(static_cast<uint8_t>(i * 20));
  write_bytes(dir.file("a.idx"), b);
  Tensor t = read_idx(dir.file("a.idx"));
  EXPECT_EQ(t.dtype(), kUInt8);
  EXPECT_EQ(t.sizes(), Shape({2, 3, 2}));
  std::vector<uint8_t> want;
  for (int i = 0; i < 12; ++i) want.push_back(static_cast<uint8_t>(i * 20));
  EXPECT_EQ(t.to_vector<uint8_t>(), want);

  write_bytes(dir.file("r1.idx"), [] {
    auto v = idx_header(0x08, {4});
    v.insert(v.end(), {9, 8, 7, 6});
    return v;
  }());
  EXPECT_EQ(read_idx(dir.file("r1.idx")).sizes(), Shape({4}));
}

TEST(Idx, ReadsEveryElementTypeBigEndian) {
  TempDir dir;
  auto b = idx_header(0x09, {3});
  b.insert(b.end(), {0xFD, 0x00, 0x7F});  // -3, 0, 127
  write_bytes(dir.file("i8"), b);
  EXPECT_EQ(read_idx(dir.file("i8")).to_vector<int64_t>(), (std::vector<int64_t>{-3, 0, 127}));
  EXPECT_EQ(read_idx(dir.file("i8")).dtype(), kInt8);

  b = idx_header(0x0B, {3});
  for (int16_t v : {int16_t{-2}, int16_t{300}, int16_t{-32768}}) append_big_endian(b, v);
  write_bytes(dir.file("i16"), b);
  Tensor i16 = read_idx(dir.file("i16"));
  EXPECT_EQ(i16.dtype(), kInt32);  // widened: ember has no int16
  EXPECT_EQ(i16.to_vector<int64_t>(), (std::vector<int64_t>{-2, 300, -32768}));

  b = idx_header(0x0C, {2});
  append_big_endian(b, int32_t{-70000});
  append_big_endian(b, int32_t{0x01020304});
  write_bytes(dir.file("i32"), b);
  EXPECT_EQ(read_idx(dir.file("i32")).to_vector<int64_t>(),
            (std::vector<int64_t>{-70000, 0x01020304}));

  b = idx_header(0x0D, {1, 2});
  append_big_endian(b, 1.5f);
  append_big_endian(b, -0.25f);
  write_bytes(dir.file("f32"), b);
  Tensor f = read_idx(dir.file("f32"));
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(f.sizes(), Shape({1, 2}));
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.5f, -0.25f}));

  b = idx_header(0x0E, {1});
  append_big_endian(b, 3.141592653589793);
  write_bytes(dir.file("f64"), b);
  EXPECT_EQ(read_idx(dir.file("f64")).to_vector<double>(), std::vector<double>{3.141592653589793});
}

TEST(Idx, WriteReadRoundTripPlainAndGzip) {
  TempDir dir;
  Tensor bytes =
      arange(0, 240, 1, TensorOptions(kInt64)).remainder(7).to(kUInt8).reshape({4, 6, 10});
  Tensor floats = randn({3, 5}, TensorOptions(kFloat32));
  Tensor doubles = randn({7}, TensorOptions(kFloat64));
  Tensor ints = randint(-100000, 100000, {2, 2, 2}, TensorOptions(kInt32));
  for (bool gz : {false, true}) {
    for (const Tensor& t : {bytes, floats, doubles, ints}) {
      const std::string path = dir.file(gz ? "t.idx.gz" : "t.idx");
      write_idx(path, t, gz);
      const std::vector<uint8_t> raw = read_bytes(path);
      ASSERT_GE(raw.size(), 2u);
      EXPECT_EQ(raw[0] == 0x1F && raw[1] == 0x8B, gz) << "gzip magic iff compressed";
      Tensor back = read_idx(path);
      EXPECT_EQ(back.dtype(), t.dtype());
      EXPECT_EQ(back.sizes(), t.sizes());
      EXPECT_TRUE(equal(back, t));
    }
  }
  // A compressible file really is smaller when gzipped.
  write_idx(dir.file("z.idx"), zeros({100, 100}, TensorOptions(kUInt8)), false);
  write_idx(dir.file("z.idx.gz"), zeros({100, 100}, TensorOptions(kUInt8)), true);
  EXPECT_LT(fs::file_size(dir.file("z.idx.gz")) * 10, fs::file_size(dir.file("z.idx")));
  // Non-contiguous input is written in logical order.
  Tensor m = arange(0, 6, 1, TensorOptions(kFloat64)).reshape({2, 3});
  write_idx(dir.file("t.idx"), m.t());
  EXPECT_TRUE(equal(read_idx(dir.file("t.idx")), m.t().contiguous()));
  EXPECT_TRUE(contains(error_of([&] { write_idx(dir.file("b.idx"), ones({2}, kBool)); }),
                       "cannot write dtype"));
}

TEST(Idx, ErrorsNameTheFile) {
  TempDir dir;
  const std::string bad = dir.file("bad.idx");
  write_bytes(bad, {0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1, 5});
  std::string e = error_of([&] { read_idx(bad); });
  EXPECT_TRUE(contains(e, "[idx] " + bad + ": bad magic 0x12345678")) << e;

  write_bytes(bad, {0x00, 0x00, 0x07, 0x01, 0, 0, 0, 1, 5});  // unknown type 0x07
  EXPECT_TRUE(contains(error_of([&] { read_idx(bad); }), "bad magic 0x00000701"));

  auto b = idx_header(0x08, {10});
  b.insert(b.end(), {1, 2, 3});
  write_bytes(bad, b);
  e = error_of([&] { read_idx(bad); });
  EXPECT_TRUE(contains(e, "[idx] " + bad + ": truncated file")) << e;

  write_bytes(bad, {0x00, 0x00, 0x08, 0x03, 0, 0, 0, 2});  // header cut inside the dims
  EXPECT_TRUE(contains(error_of([&] { read_idx(bad); }), "truncated file"));
  write_bytes(bad, {0x00, 0x00});
  EXPECT_TRUE(contains(error_of([&] { read_idx(bad); }), "truncated file"));

  b = idx_header(0x08, {2});
  b.insert(b.end(), {1, 2, 3});
  write_bytes(bad, b);
  e = error_of([&] { read_idx(bad); });
  EXPECT_TRUE(contains(e, "[idx] " + bad + ": size mismatch")) << e;

  // A gzip stream cut short.
  write_idx(dir.file("c.gz"), randint(0, 255, {64, 64}, TensorOptions(kUInt8)), true);
  std::vector<uint8_t> gz = read_bytes(dir.file("c.gz"));
  gz.resize(gz.size() / 2);
  write_bytes(dir.file("c.gz"), gz);
  e = error_of([&] { read_idx(dir.file("c.gz")); });
  EXPECT_TRUE(contains(e, "[idx] " + dir.file("c.gz") + ": truncated")) << e;

  e = error_of([&] { read_idx(dir.file("missing.idx")); });
  EXPECT_TRUE(contains(e, "[idx] " + dir.file("missing.idx") + ": cannot open")) << e;
}

// ---- Fashion-MNIST -----------------------------------------------------------------------------

namespace {
// Writes a tiny Fashion-MNIST directory: n images whose pixel p of image i is (i * 31 + p) % 256.
void write_tiny_fashion(const TempDir& dir, const std::string& prefix, int64_t n, bool gz,
                        const std::vector<uint8_t>& labels) {
  Tensor images = arange(0, n * 784, 1, TensorOptions(kInt64)).reshape({n, 784});
  images = (images.remainder(784) + arange(0, n, 1, TensorOptions(kInt64)).unsqueeze(1) * 31)
               .remainder(256)
               .to(kUInt8)
               .reshape({n, 28, 28});
  const std::string ext = gz ? ".gz" : "";
  write_idx(dir.file(prefix + "-images-idx3-ubyte" + ext), images, gz);
  write_idx(dir.file(prefix + "-labels-idx1-ubyte" + ext),
            tensor(labels, {static_cast<int64_t>(labels.size())}, TensorOptions(kUInt8)), gz);
}
}  // namespace

TEST(FashionMNIST, ReadsPlainAndGzipDirectories) {
  TempDir dir;
  write_tiny_fashion(dir, "train", 3, false, {9, 0, 4});
  write_tiny_fashion(dir, "t10k", 2, true, {1, 7});
  FashionMNIST train(dir.path.string(), true);
  FashionMNIST test(dir.path.string(), false);
  ASSERT_EQ(train.size(), 3);
  ASSERT_EQ(test.size(), 2);
  Example e = train.get(1);
  EXPECT_EQ(e.data.dtype(), kFloat32);
  EXPECT_EQ(e.data.sizes(), Shape({1, 28, 28}));
  EXPECT_EQ(e.target.dtype(), kInt64);
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.item<int64_t>(), 0);
  const std::vector<float> px = e.data.to_vector<float>();
  for (int p : {0, 5, 783}) EXPECT_FLOAT_EQ(px[p], static_cast<float>((31 + p) % 256) / 255.0f);
  EXPECT_EQ(test.get(1).target.item<int64_t>(), 7);
  EXPECT_EQ(train.images().sizes(), Shape({3, 28, 28}));
  EXPECT_EQ(train.targets().to_vector<int64_t>(), (std::vector<int64_t>{9, 0, 4}));
  EXPECT_EQ(FashionMNIST::classes().size(), 10u);
  EXPECT_EQ(FashionMNIST::classes()[0], "T-shirt/top");
  EXPECT_EQ(FashionMNIST::classes()[9], "Ankle boot");
  EXPECT_TRUE(contains(error_of([&] { train.get(3); }), "out of range"));

  // A transform applies to the image only.
  FashionMNIST scaled(dir.path.string(), true, [](const Tensor& x) { return x * 2.0; });
  EXPECT_FLOAT_EQ(scaled.get(1).data.to_vector<float>()[5], 2.0f * 36.0f / 255.0f);
}

TEST(FashionMNIST, MissingOrInconsistentFilesExplainThemselves) {
  TempDir dir;
  std::string e = error_of([&] { FashionMNIST(dir.path.string()); });
  EXPECT_TRUE(
      contains(e, "[FashionMNIST] train-images-idx3-ubyte(.gz) not found in " + dir.path.string()))
      << e;
  EXPECT_TRUE(contains(e, "dataset-fashion-mnist")) << e;

  write_tiny_fashion(dir, "train", 3, false, {1, 2});  // 3 images, 2 labels
  e = error_of([&] { FashionMNIST(dir.path.string()); });
  EXPECT_TRUE(contains(e, "holds 3 images but")) << e;
  write_tiny_fashion(dir, "train", 2, false, {1, 12});
  e = error_of([&] { FashionMNIST(dir.path.string()); });
  EXPECT_TRUE(contains(e, "label 12 at index 1")) << e;
}

TEST(FashionMNIST, RealDatasetFromDebianPackage) {
  if (!fs::exists(fs::path(FashionMNIST::kDefaultRoot) / "train-labels-idx1-ubyte.gz") &&
      !fs::exists(fs::path(FashionMNIST::kDefaultRoot) / "train-labels-idx1-ubyte")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  FashionMNIST train;
  FashionMNIST test(FashionMNIST::kDefaultRoot, false);
  ASSERT_EQ(train.size(), 60000);
  ASSERT_EQ(test.size(), 10000);
  // The classes are balanced: 6000 and 1000 of each.
  for (auto [set, per_class] : {std::pair{&train, 6000}, std::pair{&test, 1000}}) {
    std::vector<int64_t> count(10, 0);
    for (int64_t l : set->targets().to_vector<int64_t>()) {
      ASSERT_GE(l, 0);
      ASSERT_LT(l, 10);
      ++count[static_cast<size_t>(l)];
    }
    for (int64_t c : count) EXPECT_EQ(c, per_class);
  }
  Example e = train.get(0);
  EXPECT_EQ(e.target.item<int64_t>(), 9);  // the first training image is an ankle boot
  EXPECT_GE(e.data.min().item<float>(), 0.0f);
  EXPECT_LE(e.data.max().item<float>(), 1.0f);
  EXPECT_GT(e.data.max().item<float>(), 0.5f);
}

// ---- transforms ---------------------------------------------------------------------------------

TEST(Transforms, NormalizePerChannel) {
  Tensor x = tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 1, 2});
  Tensor y = Normalize({1.0, 2.0}, {2.0, 0.5})(x);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0.0f, 0.5f, 2.0f, 4.0f}));
  EXPECT_EQ(Normalize({1.0}, {2.0})(x).to_vector<float>(),
            (std::vector<float>{0.0f, 0.5f, 1.0f, 1.5f}));
  EXPECT_TRUE(contains(error_of([&] {
                         Normalize({0.1, 0.2, 0.3}, {1, 1, 1})(x);
                       }),
                       "[Normalize] 3 means for 2 channels"));
  EXPECT_TRUE(contains(error_of([] { Normalize({0.1}, {0.0}); }), "[Normalize]"));
}

TEST(Transforms, RandomCropVisitsEveryWindowOfThePaddedImage) {
  manual_seed(3);
  Tensor x = arange(1, 17, 1, TensorOptions(kFloat32)).reshape({1, 4, 4});
  Tensor padded = zeros({1, 8, 8});
  padded.narrow(1, 2, 4).narrow(2, 2, 4).copy_(x);
  std::set<std::pair<int64_t, int64_t>> seen;
  RandomCrop crop(4, 2);
  for (int i = 0; i < 400; ++i) {
    Tensor y = crop(x);
    ASSERT_EQ(y.sizes(), Shape({1, 4, 4}));
    bool found = false;
    for (int64_t top = 0; top <= 4 && !found; ++top) {
      for (int64_t left = 0; left <= 4 && !found; ++left) {
        if (equal(padded.narrow(1, top, 4).narrow(2, left, 4), y)) {
          seen.insert({top, left});
          found = true;
        }
      }
    }
    ASSERT_TRUE(found) << "the crop is not a window of the padded image";
  }
  EXPECT_EQ(seen.size(), 25u);              // all (2 * padding + 1)^2 offsets
  EXPECT_TRUE(equal(RandomCrop(4)(x), x));  // no padding, full size: the identity
  EXPECT_TRUE(contains(error_of([&] { RandomCrop(5)(x); }), "[RandomCrop] crop size (5, 5)"));
}

TEST(Transforms, RandomHorizontalFlipAndCompose) {
  manual_seed(4);
  Tensor x = tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {1, 2, 3});
  EXPECT_EQ(RandomHorizontalFlip(1.0)(x).to_vector<float>(),
            (std::vector<float>{3.0f, 2.0f, 1.0f, 6.0f, 5.0f, 4.0f}));
  EXPECT_TRUE(equal(RandomHorizontalFlip(0.0)(x), x));
  int flips = 0;
  RandomHorizontalFlip half(0.5);
  for (int i = 0; i < 1000; ++i) flips += equal(half(x), x) ? 0 : 1;
  EXPECT_GT(flips, 430);
  EXPECT_LT(flips, 570);
  Compose both({RandomHorizontalFlip(1.0), Normalize({1.0}, {0.5})});
  EXPECT_EQ(both(x).to_vector<float>(), (std::vector<float>{4.0f, 2.0f, 0.0f, 10.0f, 8.0f, 6.0f}));
}

TEST(Transforms, RandomTransformsReproducibleAcrossWorkerCounts) {
  // Batches draw from a generator seeded by (seed, epoch, batch): the same seed gives the same
  // crops whether batches are loaded inline or by any number of workers.
  auto images = randn({24, 1, 6, 6});
  struct Cropped : Dataset {
    Tensor images;
    Transform t = Compose({RandomCrop(6, 3), RandomHorizontalFlip()});
    int64_t size() const override { return images.size(0); }
    Example get(int64_t i) const override { return {t(images.select(0, i)), Tensor()}; }
  };
  auto run = [&](int workers, uint64_t seed) {
    Cropped ds;
    ds.images = images;
    DataLoaderOptions o = DataLoaderOptions().batch_size(5).shuffle(true).seed(seed);
    if (workers > 0) o.num_workers(workers);
    DataLoader loader(ds, o);
    std::vector<Tensor> out;
    for (int epoch = 0; epoch < 2; ++epoch) {
      for (auto& b : loader) out.push_back(b.data);
    }
    return cat(out);
  };
  Tensor ref = run(0, 11);
  EXPECT_TRUE(equal(run(3, 11), ref));
  EXPECT_TRUE(equal(run(1, 11), ref));
  EXPECT_FALSE(equal(run(0, 12), ref));
}

// ---- datasets -----------------------------------------------------------------------------------

TEST(Datasets, TensorDatasetSubsetConcat) {
  Tensor x = arange(0, 12, 1, TensorOptions(kFloat32)).reshape({6, 2});
  Tensor y = arange(0, 6, 1, TensorOptions(kInt64));
  auto ds = std::make_shared<TensorDataset>(x, y);
  EXPECT_EQ(ds->size(), 6);
  Example e = ds->get(2);
  EXPECT_EQ(e.data.to_vector<float>(), (std::vector<float>{4.0f, 5.0f}));
  EXPECT_EQ(e.target.item<int64_t>(), 2);
  EXPECT_FALSE(TensorDataset(x).get(0).target.defined());
  EXPECT_TRUE(
      contains(error_of([&] { TensorDataset(x, arange(5)); }), "[TensorDataset] size mismatch"));
  EXPECT_TRUE(contains(error_of([&] { ds->get(6); }), "[TensorDataset] index 6 is out of range"));

  Subset sub(ds, {5, 0, 3});
  EXPECT_EQ(sub.size(), 3);
  EXPECT_EQ(sub.get(0).target.item<int64_t>(), 5);
  EXPECT_EQ(sub.get(2).target.item<int64_t>(), 3);
  EXPECT_TRUE(contains(error_of([&] { Subset(ds, {6}); }), "[Subset] index 6"));

  ConcatDataset cat_ds({ds, std::make_shared<Subset>(sub)});
  EXPECT_EQ(cat_ds.size(), 9);
  EXPECT_EQ(cat_ds.get(5).target.item<int64_t>(), 5);
  EXPECT_EQ(cat_ds.get(6).target.item<int64_t>(), 5);
  EXPECT_EQ(cat_ds.get(8).target.item<int64_t>(), 3);
  EXPECT_TRUE(contains(error_of([&] { cat_ds.get(9); }), "[ConcatDataset]"));
}

TEST(Datasets, RandomSplitLengthsAndFractions) {
  auto ds = std::make_shared<TensorDataset>(arange(0, 11, 1, TensorOptions(kInt64)));
  auto ids = [](const Subset& s) { return s.indices(); };

  std::vector<Subset> parts = random_split(ds, {3, 8}, 5);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].size(), 3);
  EXPECT_EQ(parts[1].size(), 8);
  std::vector<int64_t> all = ids(parts[0]);
  all.insert(all.end(), parts[1].indices().begin(), parts[1].indices().end());
  EXPECT_TRUE(is_permutation_of_range(all, 11));
  EXPECT_EQ(ids(random_split(ds, {3, 8}, 5)[0]), ids(parts[0]));  // same seed, same split
  EXPECT_NE(ids(random_split(ds, {3, 8}, 6)[1]), ids(parts[1]));

  // Fractions: floor(11 * f) = 3, 3, 4 and the remaining 1 goes to the first subset.
  parts = random_split(ds, {0.3, 0.3, 0.4}, 1);
  EXPECT_EQ(parts[0].size(), 4);
  EXPECT_EQ(parts[1].size(), 3);
  EXPECT_EQ(parts[2].size(), 4);
  // floor(5 * 0.2) = 1 each, remainder 0.
  auto five = std::make_shared<TensorDataset>(arange(0, 5, 1, TensorOptions(kInt64)));
  for (const Subset& s : random_split(five, {0.2, 0.2, 0.2, 0.2, 0.2})) EXPECT_EQ(s.size(), 1);
  // Remainder 2 of 7 with halves: 3 + 1 and 3 + 1... split round-robin from the first.
  auto seven = std::make_shared<TensorDataset>(arange(0, 7, 1, TensorOptions(kInt64)));
  parts = random_split(seven, {0.25, 0.25, 0.5});  // floor: 1, 1, 3; remainder 2
  EXPECT_EQ(parts[0].size(), 2);
  EXPECT_EQ(parts[1].size(), 2);
  EXPECT_EQ(parts[2].size(), 3);
  // The subsets read through to the dataset.
  EXPECT_EQ(parts[2].get(0).data.item<int64_t>(), parts[2].indices()[0]);

  // A dataset object works too (moved into a shared handle).
  EXPECT_EQ(random_split(TensorDataset(arange(4)), {1, 3}, 0).size(), 2u);

  EXPECT_TRUE(contains(error_of([&] {
                         random_split(ds, {3, 7});
                       }),
                       "[random_split] sum of input lengths (10) does not equal"));
  EXPECT_TRUE(contains(error_of([&] { random_split(ds, {2.5, 8.5}); }), "[random_split]"));
}

// ---- samplers -----------------------------------------------------------------------------------

TEST(Samplers, SequentialAndRandomPerEpoch) {
  EXPECT_EQ(SequentialSampler(4).indices(), (std::vector<int64_t>{0, 1, 2, 3}));
  RandomSampler r(50, 7);
  const std::vector<int64_t> e0 = r.indices();
  EXPECT_TRUE(is_permutation_of_range(e0, 50));
  EXPECT_EQ(r.indices(), e0);
  r.set_epoch(1);
  EXPECT_NE(r.indices(), e0);
  EXPECT_TRUE(is_permutation_of_range(r.indices(), 50));
  r.set_epoch(0);
  EXPECT_EQ(r.indices(), e0);
  EXPECT_NE(RandomSampler(50, 8).indices(), e0);

  RandomSampler with(5, 1, true, 200);
  const std::vector<int64_t> draws = with.indices();
  EXPECT_EQ(draws.size(), 200u);
  EXPECT_EQ(std::set<int64_t>(draws.begin(), draws.end()).size(), 5u);
  EXPECT_TRUE(contains(error_of([] { RandomSampler(5, 1, false, 3); }), "[RandomSampler]"));
}

TEST(Samplers, DistributedCoversDatasetOnceWithPadding) {
  for (bool shuffle : {false, true}) {
    // 10 samples over 3 ranks: 4 each, the last 2 of the 12 repeat the order's first 2.
    std::vector<int64_t> all;
    std::vector<std::vector<int64_t>> per_rank;
    for (int64_t rank = 0; rank < 3; ++rank) {
      DistributedSampler s(10, 3, rank, shuffle, 42);
      EXPECT_EQ(s.size(), 4);
      per_rank.push_back(s.indices());
      EXPECT_EQ(per_rank.back().size(), 4u);
      all.insert(all.end(), per_rank.back().begin(), per_rank.back().end());
    }
    std::set<int64_t> distinct(all.begin(), all.end());
    EXPECT_EQ(distinct.size(), 10u);
    // Rebuild the padded order: position i belongs to rank i % 3.
    std::vector<int64_t> order(12);
    for (size_t i = 0; i < 12; ++i) order[i] = per_rank[i % 3][i / 3];
    EXPECT_EQ(order[10], order[0]);
    EXPECT_EQ(order[11], order[1]);
    EXPECT_TRUE(is_permutation_of_range({order.begin(), order.begin() + 10}, 10));
    if (!shuffle) {
      EXPECT_EQ(per_rank[1], (std::vector<int64_t>{1, 4, 7, 0}));
    }

    // drop_last: 3 each, 9 distinct indices.
    all.clear();
    for (int64_t rank = 0; rank < 3; ++rank) {
      DistributedSampler s(10, 3, rank, shuffle, 42, true);
      EXPECT_EQ(s.size(), 3);
      auto v = s.indices();
      all.insert(all.end(), v.begin(), v.end());
    }
    EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 9u);
  }
  // Padding longer than the dataset repeats it cyclically.
  std::vector<int64_t> all;
  for (int64_t rank = 0; rank < 5; ++rank) {
    auto v = DistributedSampler(2, 5, rank, false).indices();
    all.insert(all.end(), v.begin(), v.end());
  }
  EXPECT_EQ(all, (std::vector<int64_t>{0, 1, 0, 1, 0}));

  // Every epoch reshuffles, the same way on every rank.
  DistributedSampler a(20, 2, 0), b(20, 2, 1);
  auto a0 = a.indices();
  a.set_epoch(1);
  b.set_epoch(1);
  auto a1 = a.indices(), b1 = b.indices();
  EXPECT_NE(a0, a1);
  std::vector<int64_t> both = a1;
  both.insert(both.end(), b1.begin(), b1.end());
  EXPECT_TRUE(is_permutation_of_range(both, 20));

  EXPECT_EQ(error_of([] { DistributedSampler(10, 2, 2); }),
            "[DistributedSampler] invalid rank 2, rank should be in the interval [0, 1]");
  EXPECT_TRUE(contains(error_of([] { DistributedSampler(10, 0, 0); }), "num_replicas"));
}

// ---- DataLoader ---------------------------------------------------------------------------------

TEST(DataLoader, DefaultsAndBatching) {
  auto ds = std::make_shared<CountingDataset>(10);
  DataLoader one(ds);
  EXPECT_EQ(one.options().batch_size(), 1);
  EXPECT_FALSE(one.options().shuffle());
  EXPECT_EQ(one.options().num_workers(), 0);
  EXPECT_FALSE(one.options().pin_memory());
  EXPECT_FALSE(one.options().drop_last());
  EXPECT_EQ(one.options().timeout(), 0.0);
  EXPECT_EQ(one.options().prefetch_factor(), 2);
  EXPECT_FALSE(one.options().persistent_workers());
  EXPECT_EQ(one.size(), 10);
  int64_t n = 0;
  for (auto& batch : one) {
    EXPECT_EQ(batch.data.sizes(), Shape({1, 2}));
    EXPECT_EQ(batch.target.sizes(), Shape({1}));
    EXPECT_EQ(batch.target.item<int64_t>(), n++);
  }
  EXPECT_EQ(n, 10);

  DataLoader threes(ds, DataLoaderOptions().batch_size(3));
  EXPECT_EQ(threes.size(), 4);
  std::vector<int64_t> sizes;
  for (auto& batch : threes) sizes.push_back(batch.data.size(0));
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 3, 1}));

  DataLoader dropped(ds, DataLoaderOptions().batch_size(3).drop_last(true).num_workers(2));
  EXPECT_EQ(dropped.size(), 3);
  EXPECT_EQ(targets_of(dropped), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));

  // Datasets given by value and custom collation.
  DataLoader by_value(TensorDataset(arange(0, 5, 1, TensorOptions(kFloat32))),
                      DataLoaderOptions(2).collate([](std::vector<Example> ex) {
                        return Example{full({1}, static_cast<double>(ex.size())), Tensor()};
                      }));
  std::vector<float> counts;
  for (auto& b : by_value) counts.push_back(b.data.item<float>());
  EXPECT_EQ(counts, (std::vector<float>{2.0f, 2.0f, 1.0f}));
}

TEST(DataLoader, WorkersDeliverInOrderDespiteUnevenDelays) {
  auto ds = std::make_shared<CountingDataset>(48);
  ds->delay = [](int64_t i) { return std::chrono::microseconds((i * 7919) % 5 * 1500); };
  DataLoader loader(ds, DataLoaderOptions().batch_size(2).num_workers(3).seed(3));
  EXPECT_EQ(targets_of(loader), iota_vec(48));
  EXPECT_EQ(ds->worker_ids, (std::set<int>{0, 1, 2}));  // all three took part

  // Shuffled with workers: the same order as loading inline with the same seed.
  DataLoader shuffled(ds, DataLoaderOptions().batch_size(4).shuffle(true).num_workers(3).seed(9));
  DataLoader inline_(ds, DataLoaderOptions().batch_size(4).shuffle(true).seed(9));
  const std::vector<int64_t> got = targets_of(shuffled);
  EXPECT_EQ(got, targets_of(inline_));
  EXPECT_TRUE(is_permutation_of_range(got, 48));
  EXPECT_NE(got, iota_vec(48));
}

TEST(DataLoader, PrefetchIsBoundedByFactorTimesWorkers) {
  auto ds = std::make_shared<CountingDataset>(100);
  DataLoader loader(ds, DataLoaderOptions().num_workers(2).prefetch_factor(3));
  // Batch 0 delivered; 2 x 3 more may be loading or waiting, and no more than that.
  auto it = loader.begin();
  EXPECT_EQ(loads_settled(*ds, 7), 7);
  ++it;
  EXPECT_EQ(loads_settled(*ds, 8), 8);
  EXPECT_EQ((*it).target.item<int64_t>(), 1);
}

TEST(DataLoader, ShuffleIsDeterministicPerSeedAndEpoch) {
  auto ds = std::make_shared<CountingDataset>(30);
  auto opts = DataLoaderOptions().batch_size(4).shuffle(true).seed(123);
  DataLoader a(ds, opts), b(ds, opts);
  const auto a0 = targets_of(a), a1 = targets_of(a), a2 = targets_of(a);
  EXPECT_EQ(targets_of(b), a0);
  EXPECT_EQ(targets_of(b), a1);
  EXPECT_NE(a0, a1);
  EXPECT_NE(a1, a2);
  EXPECT_EQ(a.sampler().epoch(), 2);
  a.set_epoch(1);
  EXPECT_EQ(targets_of(a), a1);
  EXPECT_EQ(targets_of(a), a2);  // and on from there
  for (const auto& v : {a0, a1, a2}) EXPECT_TRUE(is_permutation_of_range(v, 30));
  DataLoader other(ds, DataLoaderOptions().batch_size(4).shuffle(true).seed(124));
  EXPECT_NE(targets_of(other), a0);

  // Without a seed, manual_seed makes the run reproducible.
  manual_seed(5);
  DataLoader c(ds, DataLoaderOptions().shuffle(true));
  manual_seed(5);
  DataLoader d(ds, DataLoaderOptions().shuffle(true));
  EXPECT_EQ(targets_of(c), targets_of(d));
}

TEST(DataLoader, WorkerExceptionNamesWorkerAndSample) {
  auto ds = std::make_shared<CountingDataset>(60);
  ds->fail_at = 37;
  DataLoader loader(ds, DataLoaderOptions().batch_size(4).num_workers(3));
  std::vector<int64_t> before;
  std::string e = error_of([&] {
    for (auto& batch : loader) {
      for (int64_t t : batch.target.to_vector<int64_t>()) before.push_back(t);
    }
  });
  EXPECT_TRUE(e.rfind("[DataLoader] worker ", 0) == 0) << e;
  EXPECT_TRUE(contains(e, " failed on sample 37: boom at 37")) << e;
  EXPECT_EQ(before, iota_vec(36));  // every batch before the failing one was delivered

  // Loading inline, the dataset's own exception reaches the caller unchanged.
  DataLoader inline_(ds, DataLoaderOptions().batch_size(4));
  EXPECT_THROW(targets_of(inline_), std::runtime_error);

  // Out-of-range indices from a user sampler are reported the same way.
  DataLoader bad(ds, DataLoaderOptions().sampler(std::vector<int64_t>{1, 99}).num_workers(1));
  e = error_of([&] { targets_of(bad); });
  EXPECT_TRUE(contains(e, "[DataLoader] worker 0 failed on sample 99: ")) << e;
}

TEST(DataLoader, EarlyBreakStopsWorkersWithoutWaitingForThePass) {
  const int baseline = baseline_threads();
  auto ds = std::make_shared<CountingDataset>(400);
  ds->delay = [](int64_t) { return std::chrono::microseconds(2000); };
  {
    DataLoader loader(ds, DataLoaderOptions().batch_size(2).num_workers(3));
    int seen = 0;
    for (auto& batch : loader) {
      EXPECT_EQ(batch.target.to_vector<int64_t>()[0], 2 * seen);
      if (++seen == 3) break;
    }
    EXPECT_EQ(threads_settled(baseline), baseline);  // the pass's threads ended with the loop
    // A second pass after the break starts cleanly from the beginning.
    auto it = loader.begin();
    EXPECT_EQ((*it).target.to_vector<int64_t>()[0], 0);
  }
  // Three batches consumed, then at most 2 x 3 claimed ahead, then a second pass's window:
  // (3 + 6) * 2 + (1 + 6) * 2 samples at most, far from the 400 of a full pass.
  EXPECT_LE(ds->loads.load(), 32);
  EXPECT_EQ(threads_settled(baseline), baseline);
}

TEST(DataLoader, PersistentWorkersKeepTheirThreads) {
  const int baseline = baseline_threads();
  auto ds = std::make_shared<CountingDataset>(40);
  ds->delay = [](int64_t) { return std::chrono::microseconds(500); };  // both workers get work
  {
    DataLoader loader(ds, DataLoaderOptions()
                              .batch_size(4)
                              .num_workers(2)
                              .persistent_workers(true)
                              .shuffle(true)
                              .seed(1));
    for (int epoch = 0; epoch < 4; ++epoch) {
      EXPECT_TRUE(is_permutation_of_range(targets_of(loader), 40));
      EXPECT_EQ(live_threads(), baseline + 2);
    }
    const std::set<std::thread::id> first = ds->thread_ids;
    EXPECT_EQ(first.size(), 2u);  // the same two threads served every epoch
    // Breaking out of a pass leaves the workers ready for the next one.
    for (auto& b : loader) {
      (void)b;
      break;
    }
    EXPECT_EQ(targets_of(loader).size(), 40u);
    EXPECT_EQ(ds->thread_ids, first);

    // A new pass ends the previous one, whose iterator then refuses to go on.
    auto old = loader.begin();
    auto fresh = loader.begin();
    EXPECT_TRUE(contains(error_of([&] { ++old; }), "ended by a newer pass"));
    ++fresh;
    EXPECT_EQ((*fresh).data.size(0), 4);
  }
  EXPECT_EQ(threads_settled(baseline), baseline);

  // Non-persistent workers end with each pass.
  DataLoader loader(ds, DataLoaderOptions().num_workers(3));
  for (int epoch = 0; epoch < 2; ++epoch) {
    targets_of(loader);
    EXPECT_EQ(threads_settled(baseline), baseline);
  }
}

TEST(DataLoader, TimeoutRaisesWhenABatchTakesTooLong) {
  // Sample 1 blocks until the test releases it (after the timeout has fired).
  struct Blocking : Dataset {
    std::shared_ptr<std::atomic<bool>> release = std::make_shared<std::atomic<bool>>(false);
    int64_t size() const override { return 4; }
    Example get(int64_t i) const override {
      for (int k = 0; i == 1 && !*release && k < 2000; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return {full({1}, static_cast<double>(i)), scalar_tensor(i, TensorOptions(kInt64))};
    }
  };
  Blocking ds;
  auto release = ds.release;
  DataLoader loader(ds, DataLoaderOptions().num_workers(1).timeout(0.25));
  {
    auto it = loader.begin();
    EXPECT_EQ((*it).target.item<int64_t>(), 0);
    const std::string e = error_of([&] { ++it; });
    *release = true;  // before the iterator's end joins the worker
    EXPECT_EQ(e, "[DataLoader] timed out after 0.25 s waiting for a batch");
  }
  // A generous timeout does not fire.
  DataLoader patient(ds, DataLoaderOptions().num_workers(2).timeout(30));
  EXPECT_EQ(targets_of(patient), iota_vec(4));
}

TEST(DataLoader, PinnedBatchesAreRecycledAndNeverOverwrittenWhileHeld) {
  auto ds = std::make_shared<CountingDataset>(64);
  DataLoader pinned(ds, DataLoaderOptions().batch_size(4).num_workers(2).pin_memory(true));
  DataLoader plain(ds, DataLoaderOptions().batch_size(4));
  EXPECT_EQ(targets_of(pinned), targets_of(plain));
  if (!cuda::is_available()) {
    // As PyTorch: nothing to pin for without a device; the batches are ordinary memory.
    for (auto& b : pinned) EXPECT_FALSE(b.data.is_pinned());
    return;
  }
  for (auto& b : pinned) EXPECT_TRUE(b.data.is_pinned());

  // Dropping each batch lets its buffers come back: few distinct addresses over 16 batches.
  std::set<const void*> addresses;
  for (auto& b : pinned) addresses.insert(b.data.data_ptr());
  EXPECT_LE(addresses.size(), 2u * (2 * 2 + 2));
  EXPECT_LT(addresses.size(), 16u);

  // Holding every batch: each keeps its own buffer and values, also after the loader is gone.
  std::vector<Example> held;
  {
    DataLoader short_lived(ds, DataLoaderOptions().batch_size(4).num_workers(2).pin_memory(true));
    for (auto& b : short_lived) held.push_back(b);
  }
  std::set<const void*> distinct;
  for (const Example& b : held) distinct.insert(b.data.data_ptr());
  EXPECT_EQ(distinct.size(), held.size());
  for (size_t k = 0; k < held.size(); ++k) {
    const int64_t first = static_cast<int64_t>(4 * k);
    EXPECT_EQ(held[k].target.to_vector<int64_t>(),
              (std::vector<int64_t>{first, first + 1, first + 2, first + 3}));
    EXPECT_EQ(held[k].data.to_vector<float>()[0], static_cast<float>(first));
  }
}

TEST(DataLoader, SamplersFromTheUser) {
  auto ds = std::make_shared<CountingDataset>(10);
  DataLoader listed(ds,
                    DataLoaderOptions().batch_size(2).sampler(std::vector<int64_t>{9, 3, 3, 0}));
  EXPECT_EQ(listed.size(), 2);
  EXPECT_EQ(targets_of(listed), (std::vector<int64_t>{9, 3, 3, 0}));

  DataLoader by_epoch(ds, DataLoaderOptions().num_workers(2).sampler([](int64_t epoch) {
    return std::vector<int64_t>{epoch, epoch + 1};
  }));
  EXPECT_EQ(targets_of(by_epoch), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(targets_of(by_epoch), (std::vector<int64_t>{1, 2}));

  // A DistributedSampler: the loader advances its epoch; an explicit set_epoch is honoured.
  auto dist = std::make_shared<DistributedSampler>(10, 2, 1, true, 3);
  DataLoader ranked(ds, DataLoaderOptions().batch_size(5).sampler(dist));
  const auto e0 = targets_of(ranked);
  EXPECT_EQ(e0, dist->indices());
  targets_of(ranked);
  EXPECT_EQ(dist->epoch(), 1);
  dist->set_epoch(0);
  EXPECT_EQ(targets_of(ranked), e0);
  EXPECT_EQ(dist->epoch(), 0);
}

TEST(DataLoader, OptionErrors) {
  auto ds = std::make_shared<CountingDataset>(4);
  EXPECT_TRUE(contains(error_of([&] { DataLoader(ds, DataLoaderOptions().batch_size(0)); }),
                       "[DataLoader] batch_size must be positive"));
  EXPECT_TRUE(
      contains(error_of([&] { DataLoader(ds, DataLoaderOptions().persistent_workers(true)); }),
               "[DataLoader] persistent_workers option needs num_workers > 0"));
  EXPECT_TRUE(contains(error_of([&] { DataLoader(ds, DataLoaderOptions().prefetch_factor(4)); }),
                       "[DataLoader] prefetch_factor option needs num_workers > 0"));
  EXPECT_TRUE(
      contains(error_of([&] {
                 DataLoader(ds, DataLoaderOptions().shuffle(true).sampler(std::vector<int64_t>{0}));
               }),
               "mutually exclusive"));
  EXPECT_TRUE(contains(error_of([&] { DataLoader(ds, DataLoaderOptions().num_workers(-1)); }),
                       "num_workers"));
  EXPECT_TRUE(
      contains(error_of([&] { DataLoader(ds, DataLoaderOptions().timeout(-1)); }), "timeout"));
}
