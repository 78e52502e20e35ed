// Packing against the layout written out element by element (gemm_pack.h): stored B^T into
// BF16 pair words and FP32 panels, A, stored A^T and untransposed B into FP32 panels; odd sizes,
// offsets and tails, whichever of the vector and scalar paths this CPU takes; and the 16x16
// word transpose on its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/gemm_micro.h"
#include "kernels/gemm_pack.h"

using namespace trainplan::kernels;
using namespace trainplan::kernels::detail;

namespace {

std::vector<bf16> random_words(long count, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<bf16> v(static_cast<size_t>(count));
  for (auto& x : v) x.bits = static_cast<unsigned short>(rng());
  return v;
}

// A random stored B^T, n rows of k values ldb = k + pad apart, and the Problem reading it as op(B).
struct StoredBt {
  long n, k, ldb;
  std::vector<bf16> b;
  Problem problem() const { return {Trans::no, Trans::yes, k, nullptr, 0, b.data(), ldb, nullptr, 0, false, n}; }
};

StoredBt stored_bt(long n, long k, long pad, unsigned seed) { return {n, k, k + pad, random_words(n * (k + pad), seed)}; }

// FP32 panels `width` (MR or NR) wide over depth kc, as pack_a and pack_b write them: value
// (p, x) of the panel starting at xr is want(p, xr + x) for xr + x < count, else 0.
template <class Want>
void expect_fp32_panels(const std::vector<float>& out, long count, long kc, int width, Want want, const std::string& what) {
  for (long xr = 0; xr < round_up(count, width); xr += width)
    for (long p = 0; p < kc; ++p)
      for (long x = 0; x < width; ++x) {
        const float expected = xr + x < count ? want(p, xr + x) : 0.f;
        const float got = out[size_t(xr * kc + p * width + x)];
        ASSERT_TRUE(got == expected || (got != got && expected != expected)) << what << " p " << p << " at " << xr + x;
      }
}

// Word (q, j) of the panel holding column j: op(B)[p0 + 2q][j] | op(B)[p0 + 2q + 1][j] << 16,
// op(B)[p][j] = b[j][p] (stored B^T), zero past kc and past nc.
std::uint32_t expected(const std::vector<bf16>& b, long ldb, long p0, long kc, long j0, long nc, long q, long j) {
  if (j >= nc) return 0;
  const bf16* row = b.data() + (j0 + j) * ldb + p0;
  const std::uint32_t lo = 2 * q < kc ? row[2 * q].bits : 0, hi = 2 * q + 1 < kc ? row[2 * q + 1].bits : 0;
  return lo | hi << 16;
}

TEST(GemmPack, StoredBtPairsPerBlockMatchLayout) {
  const int nr = 64;
  for (long n : {16l, 64l, 97l, 200l})
    for (long k : {31l, 64l, 515l}) {
      const StoredBt bt = stored_bt(n, k, 3, unsigned(n * 1000 + k));
      const Problem pr = bt.problem();
      for (long p0 : {0l, 2l}) {
        const long kc = std::min(k - p0, 480l), pairs = (kc + 1) / 2;
        for (long j0 : {0l, n / 3}) {
          const long nc = n - j0, nc_pad = round_up(nc, nr);
          std::vector<std::uint32_t> out(static_cast<size_t>(nc_pad * pairs), 0xdeadbeef);
          pack_b_pairs(pr, p0, kc, j0, nc, nr, out.data());
          for (long jr = 0; jr < nc_pad; jr += nr)
            for (long q = 0; q < pairs; ++q)
              for (long j = 0; j < nr; ++j)
                ASSERT_EQ(out[size_t(jr * pairs + q * nr + j)], expected(bt.b, bt.ldb, p0, kc, j0, nc, q, jr + j))
                    << "n " << n << " k " << k << " p0 " << p0 << " j0 " << j0 << " q " << q << " col " << jr + j;
        }
      }
    }
}

TEST(GemmPack, StoredBtAsFp32PanelsMatchLayout) {
  // FP32 panels of NR columns (the AVX2 kernel's 24), value (p, j) = op(B)[p0 + p][j0 + j]
  // = b[j0 + j][p0 + p], zero past nc: eight stored rows at a time by a vector transpose
  // where the CPU has AVX2, the rest one by one; depths off a multiple of 8, partial panels.
  const int nr = 24;
  for (long n : {8l, 24l, 45l, 70l})
    for (long k : {7l, 64l, 131l}) {
      const StoredBt bt = stored_bt(n, k, 5, unsigned(n * 100 + k));
      const Problem pr = bt.problem();
      for (long p0 : {0l, 3l}) {
        const long kc = k - p0, j0 = n / 4, nc = n - j0, nc_pad = round_up(nc, nr);
        std::vector<float> out(static_cast<size_t>(nc_pad * kc), -1.f);
        pack_b(pr, p0, kc, j0, nc, nr, out.data());
        expect_fp32_panels(out, nc, kc, nr, [&](long p, long j) { return to_float(bt.b[size_t((j0 + j) * bt.ldb + p0 + p)]); },
                           "n " + std::to_string(n) + " k " + std::to_string(k) + " p0 " + std::to_string(p0));
      }
    }
}

TEST(GemmPack, UntransposedBAsFp32PanelsMatchLayout) {
  // FP32 panels from op(B) = B (k x n, ldb = n + pad): value (p, j) = b[p0 + p][j0 + j], zero
  // past nc; eight source rows at a time panel by panel where the CPU has AVX2, so depths off
  // a multiple of 8 leave a short last group, and nc a partial last panel.
  for (int nr : {24, 64})
    for (long n : {8l, 24l, 53l, 150l})
      for (long k : {5l, 16l, 37l}) {
        const long ldb = n + 3;
        const std::vector<bf16> b = random_words(k * ldb, unsigned(n * 100 + k + nr));
        const Problem pr{Trans::no, Trans::no, k, nullptr, 0, b.data(), ldb, nullptr, 0, false, n};
        for (long p0 : {0l, 2l}) {
          const long kc = k - p0, j0 = n / 5, nc = n - j0, nc_pad = round_up(nc, nr);
          std::vector<float> out(static_cast<size_t>(nc_pad * kc), -1.f);
          pack_b(pr, p0, kc, j0, nc, nr, out.data());
          expect_fp32_panels(out, nc, kc, nr, [&](long p, long j) { return to_float(b[size_t((p0 + p) * ldb + j0 + j)]); },
                             "nr " + std::to_string(nr) + " n " + std::to_string(n) + " k " + std::to_string(k) +
                                 " p0 " + std::to_string(p0));
        }
      }
}

TEST(GemmPack, StoredAtAsFp32PanelsMatchLayout) {
  // FP32 panels of MR rows from stored A^T (k x m, lda = m + pad): value (p, i) of panel ir =
  // a[p0 + p][i0 + ir + i], zero past mc; on AVX2 with MR 4, eight k and eight rows at a time,
  // so mc off a multiple of 8 and kc off a multiple of 8 leave tails.
  for (int mr : {4, 6})
    for (long m : {4l, 13l, 40l, 101l})
      for (long k : {3l, 16l, 45l}) {
        const long lda = m + 2;
        const std::vector<bf16> a = random_words(k * lda, unsigned(m * 100 + k + mr));
        const Problem pr{Trans::yes, Trans::no, k, a.data(), lda, nullptr, 0, nullptr, 0, false, 1};
        for (long p0 : {0l, 1l}) {
          const long kc = k - p0, i0 = m / 4, mc = m - i0, mc_pad = round_up(mc, mr);
          std::vector<float> out(static_cast<size_t>(mc_pad * kc), -1.f);
          pack_a(pr, i0, mc, p0, kc, mr, out.data());
          expect_fp32_panels(out, mc, kc, mr, [&](long p, long i) { return to_float(a[size_t((p0 + p) * lda + i0 + i)]); },
                             "mr " + std::to_string(mr) + " m " + std::to_string(m) + " k " + std::to_string(k) +
                                 " p0 " + std::to_string(p0));
        }
      }
}

TEST(GemmPack, UntransposedAAsFp32PanelsMatchLayout) {
  // FP32 panels of MR rows from op(A) = A (m x k, lda = k + pad): value (p, i) of panel ir =
  // a[i0 + ir + i][p0 + p], zero past mc; on AVX2 with MR 4, four rows by eight depths at a
  // time by a vector transpose, depth tails one by one.
  for (int mr : {4, 6})
    for (long m : {4l, 13l, 40l})
      for (long k : {3l, 16l, 45l}) {
        const long lda = k + 3;
        const std::vector<bf16> a = random_words(m * lda, unsigned(m * 10 + k + mr));
        const Problem pr{Trans::no, Trans::no, k, a.data(), lda, nullptr, 0, nullptr, 0, false, 1};
        for (long p0 : {0l, 1l}) {
          const long kc = k - p0, i0 = m / 3, mc = m - i0, mc_pad = round_up(mc, mr);
          std::vector<float> out(static_cast<size_t>(mc_pad * kc), -1.f);
          pack_a(pr, i0, mc, p0, kc, mr, out.data());
          expect_fp32_panels(out, mc, kc, mr, [&](long p, long i) { return to_float(a[size_t((i0 + i) * lda + p0 + p)]); },
                             "mr " + std::to_string(mr) + " m " + std::to_string(m) + " k " + std::to_string(k) +
                                 " p0 " + std::to_string(p0));
        }
      }
}

TEST(GemmPack, StoredBtPairsWholeDepthMatchLayout) {
  const int nr = 64;
  const long kc_block = 512;
  for (long n : {16l, 80l, 131l})
    for (long k : {33l, 512l, 1100l}) {
      const StoredBt bt = stored_bt(n, k, 1, unsigned(n * 7 + k));
      const Problem pr = bt.problem();
      const long j0 = n > 16 ? 16 : 0, nc = n - j0, nc_pad = round_up(nc, nr);
      std::vector<std::uint32_t> out(static_cast<size_t>(nc_pad * round_up(k, 2) / 2), 0xdeadbeef);
      pack_bt_pairs_all(pr, kc_block, j0, nc, nr, out.data());
      for (long pc = 0; pc < k; pc += kc_block) {
        const long kc = std::min(kc_block, k - pc), pairs = (kc + 1) / 2;
        const std::uint32_t* block = out.data() + nc_pad * (pc / 2);
        for (long jr = 0; jr < nc_pad; jr += nr)
          for (long q = 0; q < pairs; ++q)
            for (long j = 0; j < nr; ++j)
              ASSERT_EQ(block[jr * pairs + q * nr + j], expected(bt.b, bt.ldb, pc, kc, j0, nc, q, jr + j))
                  << "n " << n << " k " << k << " pc " << pc << " q " << q << " col " << jr + j;
      }
    }
}

TEST(GemmPack, Transpose16x16WordsAtAnyOffset) {
  if (!cpu_has(Isa::avx512)) GTEST_SKIP() << "no AVX-512";
  for (long offset : {0l, 1l, 2l})  // in 16-bit words: rows of stored B^T start at any BF16
    for (long ld : {16l * 2, 16l * 2 + 1, 100l}) {
      const auto in = random_words(16 * ld + offset + 32, unsigned(offset * 10 + ld));
      const long out_stride = 48;
      std::vector<unsigned> out(static_cast<size_t>(16 * out_stride), 0xdeadbeef);
      transpose_16x16_words_avx512(in.data() + offset, long(sizeof(bf16)) * ld, out.data(), out_stride);
      for (long c = 0; c < 16; ++c)
        for (long r = 0; r < out_stride; ++r) {
          const bf16* row = in.data() + offset + r * ld;
          const unsigned want = r < 16 ? unsigned(row[2 * c].bits) | unsigned(row[2 * c + 1].bits) << 16 : 0xdeadbeef;
          ASSERT_EQ(out[size_t(c * out_stride + r)], want) << "offset " << offset << " ld " << ld << " word " << c << "," << r;
        }
    }
}

}  // namespace
