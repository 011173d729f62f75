// The CUDA element-wise and copy kernels on the SIMT emulator, compared bit for bit with the CPU
// backend: vector and strided paths on odd sizes and misaligned views, broadcasting, grid-stride
// loops, transposing copies, casts between every pair of dtypes, in-place ops on views.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/elementwise.h"
#include "ember/ember.h"

using namespace ember;

namespace {

// Two emulated devices, set before the runtime is first used.
const bool kEnvSet = [] { return setenv("EMBER_SIM_DEVICES", "2", 1) == 0; }();

const DType kAllDTypes[] = {kBool,    kUInt8,    kInt8,    kInt32,  kInt64,
                            kFloat16, kBFloat16, kFloat32, kFloat64};

// got (any device) has want's dtype, shape and bytes.
void expect_bits(const Tensor& got, const Tensor& want, const std::string& what = "") {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  Tensor g = got.cpu().contiguous(), w = want.cpu().contiguous();
  const size_t es = g.element_size();
  for (int64_t i = 0; i < g.numel(); ++i) {
    const char* a = static_cast<const char*>(g.data_ptr()) + i * es;
    const char* b = static_cast<const char*>(w.data_ptr()) + i * es;
    if (std::memcmp(a, b, es) != 0) {
      ADD_FAILURE() << what << ": element " << i
                    << " differs: " << g.reshape({-1}).select(0, i).item<double>() << " vs "
                    << w.reshape({-1}).select(0, i).item<double>();
      return;
    }
  }
}

// got matches want within rtol * (1 + |want|), for results that go through the device's
// transcendentals (not libm: a GPU's expf differs from the host's in the last bit) or a*b + c
// (which nvcc, and the emulator, fuse into one FMA). A misplaced or missing write is still caught.
void expect_near(const Tensor& got, const Tensor& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const Tensor g = got.cpu().to(kFloat64).contiguous(), w = want.to(kFloat64).contiguous();
  const double* a = g.data_ptr<double>();
  const double* b = w.data_ptr<double>();
  for (int64_t i = 0; i < g.numel(); ++i) {
    if (!(std::fabs(a[i] - b[i]) <= rtol * (1.0 + std::fabs(b[i])))) {
      ADD_FAILURE() << what << ": element " << i << " differs: " << a[i] << " vs " << b[i];
      return;
    }
  }
}

// Limits the element-wise grid for one scope, so small tensors reach the grid-stride loops.
struct GridLimit {
  explicit GridLimit(int64_t blocks) { cuda_kernels::set_elementwise_grid_limit(blocks); }
  ~GridLimit() { cuda_kernels::set_elementwise_grid_limit(0); }
};

Tensor randn_cpu(const Shape& s, uint64_t seed) {
  manual_seed(seed);
  return randn(s);
}

}  // namespace

TEST(CudaElementwise, VectorAndStridedPathsAgreeOnOddSizesAndMisalignedViews) {
  for (int64_t n : {1, 2, 3, 5, 7, 33, 255, 257, 1029}) {
    const std::string what = "n=" + std::to_string(n);
    Tensor x = randn_cpu({n + 1}, 1), y = randn_cpu({n + 1}, 2);
    Tensor xs = x.narrow(0, 1, n), ys = y.narrow(0, 1, n);  // misaligned by one element
    Tensor xd = x.cuda(), yd = y.cuda();
    Tensor xa = xs.contiguous().cuda(), ya = ys.contiguous().cuda();  // aligned copies
    Tensor xm = xd.narrow(0, 1, n), ym = yd.narrow(0, 1, n);
    expect_bits(add(xa, ya), add(xs, ys), what + " add aligned");
    expect_bits(add(xm, ym), add(xs, ys), what + " add misaligned");
    expect_bits(add(xa, ym), add(xs, ys), what + " add mixed");
    expect_bits(mul(xm, 3.0), mul(xs, 3.0), what + " mul");
    expect_bits(relu(xm), relu(xs), what + " relu");
    expect_bits(lt(xa, ym), lt(xs, ys), what + " lt");
    expect_bits(where(lt(xa, ya), xa, ya), where(lt(xs, ys), xs, ys), what + " where");
    expect_bits(where(lt(xm, ym), xm, ym), where(lt(xs, ys), xs, ys), what + " where strided");
    // 16-bit and 1-byte element types use wider vectors.
    Tensor hs = xs.to(kFloat16), ha = hs.cuda(), hm = xd.to(kFloat16).narrow(0, 1, n);
    expect_bits(add(ha, hm), add(hs, hs), what + " half add");
    Tensor bs = randint(0, 200, {n + 1}, TensorOptions().dtype(kUInt8));
    expect_bits(add(bs.cuda().narrow(0, 1, n), bs.narrow(0, 1, n).contiguous().cuda()),
                add(bs.narrow(0, 1, n), bs.narrow(0, 1, n)), what + " uint8 add");
  }
}

TEST(CudaElementwise, BroadcastingBothWays) {
  Tensor a = randn_cpu({4, 1, 5}, 3), b = randn_cpu({1, 3, 1}, 4);
  expect_bits(add(a.cuda(), b.cuda()), add(a, b), "(4,1,5) + (1,3,1)");
  expect_bits(sub(b.cuda(), a.cuda(), 2), sub(b, a, 2), "(1,3,1) - 2 * (4,1,5)");
  Tensor row = randn_cpu({7}, 5), col = randn_cpu({6, 1}, 6);
  expect_bits(mul(row.cuda(), col.cuda()), mul(row, col), "row * col");
  expect_bits(mul(col.cuda(), row.cuda()), mul(col, row), "col * row");
  Tensor s = tensor({2.5f});
  Tensor x = randn_cpu({3, 37}, 7);
  expect_bits(mul(s.cuda().reshape({}), x.cuda()), mul(s.reshape({}), x), "scalar * x");
  expect_bits(mul(x.cuda(), s.cuda().reshape({})), mul(x, s.reshape({})), "x * scalar");
  Tensor c = lt(randn_cpu({3, 1}, 8), 0.0);
  expect_bits(where(c.cuda(), x.cuda(), s.cuda().reshape({})), where(c, x, s.reshape({})),
              "where broadcast");
  Tensor lo = randn_cpu({1, 37}, 9), hi = add(lo, 1.0);
  expect_bits(clamp(x.cuda(), std::optional<Tensor>(lo.cuda()), std::optional<Tensor>(hi.cuda())),
              clamp(x, std::optional<Tensor>(lo), std::optional<Tensor>(hi)), "clamp tensor");
}

TEST(CudaElementwise, LargeTensorsUseSeveralBlocksAndTheGridStrideLoop) {
  const int64_t n = 70001;  // several blocks at the default grid
  Tensor x = randn_cpu({n}, 10), y = randn_cpu({n}, 11);
  expect_bits(add(x.cuda(), y.cuda()), add(x, y), "default grid");
  GridLimit limit(3);  // 3 blocks: every thread loops
  expect_bits(add(x.cuda(), y.cuda()), add(x, y), "vector path, 3 blocks");
  expect_near(exp(x.cuda()), exp(x), 1e-6, "exp, 3 blocks");
  Tensor m = randn_cpu({300, 233}, 12);
  expect_bits(mul(m.cuda().t(), 2.0), mul(m.t(), 2.0), "strided path, 3 blocks");
  expect_bits(m.cuda().t().contiguous(), m.t().contiguous(), "transpose copy, 3 blocks");
  expect_bits(m.cuda().to(kBFloat16), m.to(kBFloat16), "cast, 3 blocks");
  Tensor f = empty({n}, TensorOptions().device(kCUDA));
  f.fill_(1.5);
  expect_bits(f, full({n}, 1.5), "fill, 3 blocks");
}

TEST(CudaElementwise, TransposeCopy) {
  Tensor m = randn_cpu({67, 45}, 13);
  expect_bits(m.cuda().t().contiguous(), m.t().contiguous(), "2-d");
  Tensor b = randn_cpu({3, 40, 50}, 14);
  expect_bits(b.cuda().permute({0, 2, 1}).contiguous(), b.permute({0, 2, 1}).contiguous(),
              "batched");
  expect_bits(b.cuda().permute({2, 0, 1}).contiguous(), b.permute({2, 0, 1}).contiguous(),
              "batch inside");
  // A transposing copy that converts: dst float16 dense, src float32 transposed.
  Tensor d = empty({45, 67}, TensorOptions().dtype(kFloat16).device(kCUDA));
  d.copy_(m.cuda().t());
  expect_bits(d, m.t().to(kFloat16), "with cast");
  // Into a dense-inner but padded destination.
  Tensor wide = zeros({45, 70}, TensorOptions().device(kCUDA));
  wide.narrow(1, 0, 67).copy_(m.cuda().t());
  Tensor want = zeros({45, 70});
  want.narrow(1, 0, 67).copy_(m.t());
  expect_bits(wide, want, "padded destination");
}

TEST(CudaElementwise, CastsMatchTheCpuBitForBitForEveryPair) {
  ASSERT_TRUE(kEnvSet);
  const std::vector<double> values = {0.0,       -0.0,  1.0,   -1.0,   2.5,    -2.5,   0.1,
                                      127.7,     128.5, 255.9, -129.0, 300.25, 65504., 70000.,
                                      1e10,      -1e10, 3e38,  1e-8,   -1e-40, NAN,    INFINITY,
                                      -INFINITY, 1e19,  -1e19, 0.5,    1.5,    2.5e-5};
  Tensor base =
      tensor(values, {static_cast<int64_t>(values.size())}, TensorOptions().dtype(kFloat64));
  for (DType s : kAllDTypes) {
    Tensor src = base.to(s);
    Tensor src_d = src.cuda();
    for (DType d : kAllDTypes) {
      const std::string what = std::string(dtype_name(s)) + " -> " + std::string(dtype_name(d));
      expect_bits(src_d.to(d), src.to(d), what);
      // Strided source and destination, and a broadcast source.
      Tensor out =
          empty({static_cast<int64_t>(values.size()), 2}, TensorOptions().dtype(d).device(kCUDA));
      out.select(1, 1).copy_(src_d);
      expect_bits(out.select(1, 1), src.to(d), what + " strided");
      out.copy_(src_d.narrow(0, 3, 1).reshape({1, 1}));
      expect_bits(out, src.narrow(0, 3, 1).to(d).reshape({1, 1}).expand(out.sizes()),
                  what + " broadcast");
    }
  }
  // Between devices with a conversion, and device to host narrowing on the device.
  Tensor x = randn_cpu({5, 7}, 15);
  expect_bits(x.cuda().to(Device(kCUDA, 1), kFloat16), x.to(kFloat16), "cuda:0 -> cuda:1");
  expect_bits(x.to(kFloat64).cuda().t().to(Device(kCPU), kFloat16), x.to(kFloat64).t().to(kFloat16),
              "cuda -> cpu");
  expect_bits(x.to(kUInt8).t().to(Device(kCUDA), kFloat64), x.to(kUInt8).t().to(kFloat64),
              "cpu -> cuda");
}

TEST(CudaElementwise, InPlaceOpsOnNonContiguousViews) {
  Tensor h = randn_cpu({6, 8}, 16), other = randn_cpu({6, 3}, 17);
  Tensor d = h.cuda();
  for (Tensor* t : {&h, &d}) {
    t->t().narrow(0, 1, 3).add_(other.to(t->device()).t(), 2);  // rows 1..3 of the transpose
    t->slice(1, 0, 8, 2).mul_(-1.5);                            // every other column
    t->narrow(0, 2, 3).exp_();
    t->select(1, 7).fill_(4.0);
    t->slice(0, 1, 6, 2).zero_();
  }
  expect_near(d, h, 1e-6, "views");  // exp_ and add_'s x + 2 * other
  Tensor x = randn_cpu({5, 6}, 18), y = x.cuda();
  Tensor u = randn_cpu({6, 5}, 19), v = randn_cpu({5}, 20);
  x.t().addcmul_(u, v, 0.5);  // a transposed destination, a broadcast operand
  y.t().addcmul_(u.cuda(), v.cuda(), 0.5);
  expect_near(y, x, 1e-6, "addcmul_");
}

TEST(CudaElementwise, EveryOpFamilyOnEveryDType) {
  // Each supported (op, dtype) instantiation runs; unsupported pairs raise by name.
  Tensor x = randn_cpu({9}, 19), y = randn_cpu({9}, 20);
  for (DType t : kAllDTypes) {
    Tensor a = (t == kBool) ? lt(x, 0.0) : mul(x, 5.0).to(t);
    Tensor b = (t == kBool) ? lt(y, 0.0) : mul(y, 5.0).to(t);
    const std::string what(dtype_name(t));
    expect_bits(eq(a.cuda(), b.cuda()), eq(a, b), what + " eq");
    expect_bits(maximum(a.cuda(), b.cuda()), maximum(a, b), what + " maximum");
    expect_bits(logical_xor(a.cuda(), b.cuda()), logical_xor(a, b), what + " logical_xor");
    expect_bits(abs(a.cuda().to(t == kBool ? kInt8 : t)), abs(a.to(t == kBool ? kInt8 : t)),
                what + " abs");
  }
  Tensor f = empty({4}, TensorOptions().device(kCUDA));
  try {
    backend(kCUDA).unary(UnaryOp::BitwiseNot, f, f, {});
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[unary] has no CUDA kernel", 0), 0u) << e.what();
  }
  try {
    backend(kCUDA).binary(BinaryOp::Shl, f, f, f, {});
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[binary] has no CUDA kernel", 0), 0u) << e.what();
  }
}

TEST(CudaElementwise, OffsetsBeyond32BitsAreSplitIntoPieces) {
  // A view whose offsets pass 2^31 (2 GiB of uint8 storage): the strided path halves it along the
  // outer dim until each piece fits 32-bit index math.
  const int64_t big = (int64_t{1} << 31) + 8;
  Tensor storage = empty({big}, TensorOptions().dtype(kUInt8).device(kCUDA));
  Tensor view = storage.as_strided({3, 5}, {int64_t{1} << 30, 1}, 0);
  Tensor src = arange(15, TensorOptions().dtype(kUInt8)).reshape({3, 5});
  view.copy_(src.cuda().t().contiguous().t());  // strided source: the strided path
  expect_bits(view, src, "copy");
  view.add_(view);
  expect_bits(view, add(src, src), "add_");
}
