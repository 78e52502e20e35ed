// GEMM against an FP64 Eigen reference on the same BF16-rounded inputs. Inputs
// are exact in BF16, so the only errors are FP32 accumulation (~k * 2^-24
// relative to sum |a||b|) and one final BF16 rounding (2^-8 relative): the
// tolerance is 2^-8 |ref| + 1e-5 * k * sum|a||b| per element.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/gemm.h"

using namespace trainplan::kernels;

namespace {

// c_offset < 0: C rows n + 2 apart (every row in another phase of the cache lines). Else
// rows a multiple of 32 elements (64 bytes) apart and C c_offset elements past a 64-byte
// boundary, with guard elements before it that must stay untouched.
void check_gemm(Trans ta, Trans tb, long m, long n, long k, Isa isa, int threads, bool accumulate = false,
                long c_offset = -1) {
  std::mt19937 rng(unsigned(m * 131 + n * 7 + k));
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  const long lda = (ta == Trans::no ? k : m) + 3, ldb = (tb == Trans::no ? n : k) + 5;  // strided
  const long ldc = c_offset < 0 ? n + 2 : (n + 31) / 32 * 32;
  const long a_rows = ta == Trans::no ? m : k, b_rows = tb == Trans::no ? k : n;
  std::vector<bf16> a(static_cast<size_t>(a_rows * lda)), b(static_cast<size_t>(b_rows * ldb));
  std::vector<bf16> c_buffer(static_cast<size_t>(m * ldc + 64));
  for (auto& x : a) x = to_bf16(d(rng));
  for (auto& x : b) x = to_bf16(d(rng));
  for (auto& x : c_buffer) x = to_bf16(d(rng));
  const std::vector<bf16> c_buffer0 = c_buffer;
  long c_start = 0;  // C's first element in c_buffer
  if (c_offset >= 0) {
    const auto address = reinterpret_cast<std::uintptr_t>(c_buffer.data());
    c_start = long((64 - address % 64) % 64 / sizeof(bf16)) + c_offset;
  }
  bf16* const c_base = c_buffer.data() + c_start;
  std::vector<bf16> c(c_base, c_base + m * ldc);
  const std::vector<bf16> c0 = c;
  Eigen::MatrixXd A(m, k), B(k, n);
  for (long i = 0; i < m; ++i)
    for (long p = 0; p < k; ++p) A(i, p) = to_float(ta == Trans::no ? a[static_cast<size_t>(i * lda + p)] : a[static_cast<size_t>(p * lda + i)]);
  for (long p = 0; p < k; ++p)
    for (long j = 0; j < n; ++j) B(p, j) = to_float(tb == Trans::no ? b[static_cast<size_t>(p * ldb + j)] : b[static_cast<size_t>(j * ldb + p)]);
  Eigen::MatrixXd ref = A * B, mag = A.cwiseAbs() * B.cwiseAbs();
  GemmOptions o;
  o.isa = isa;
  o.threads = threads;
  o.accumulate = accumulate;
  gemm_bf16(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, c_base, ldc, o);
  for (long i = 0; i < c_start; ++i) ASSERT_EQ(c_buffer[size_t(i)].bits, c_buffer0[size_t(i)].bits) << "wrote before C";
  c.assign(c_base, c_base + m * ldc);
  for (long i = 0; i < m; ++i) {
    for (long j = 0; j < n; ++j) {
      const double want = ref(i, j) + (accumulate ? to_float(c0[static_cast<size_t>(i * ldc + j)]) : 0.0);
      const double tol = std::abs(want) / 256 + 1e-5 * double(k) * mag(i, j) / double(std::max(k, 1l)) * 8 + 1e-6;
      ASSERT_NEAR(to_float(c[static_cast<size_t>(i * ldc + j)]), want, tol)
          << "at " << i << "," << j << " shape " << m << "x" << n << "x" << k << " isa " << to_string(isa);
    }
    for (long j = n; j < ldc; ++j) ASSERT_EQ(c[static_cast<size_t>(i * ldc + j)].bits, c0[static_cast<size_t>(i * ldc + j)].bits) << "wrote past n";
  }
}

}  // namespace

TEST(Gemm, OddShapesAllTransposesEveryIsa) {
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::amx_bf16}) {
    if (!cpu_has(isa)) continue;
    for (long m : {1l, 7l, 33l})
      for (long n : {1l, 7l, 33l})
        for (long k : {1l, 7l, 33l})
          for (Trans ta : {Trans::no, Trans::yes})
            for (Trans tb : {Trans::no, Trans::yes}) check_gemm(ta, tb, m, n, k, isa, 1);
  }
}

TEST(Gemm, TailsAcrossBlockingBoundaries) {
  // 1023 crosses the K blocks (128, 256), M block (192), leaves tails in every tile and an odd
  // last K pair for the BF16-pair kernel; 301 is odd in K inside one block.
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::amx_bf16}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::no, Trans::no, 200, 70, 1023, isa, 1);
    check_gemm(Trans::yes, Trans::no, 33, 1023, 41, isa, 2);
    check_gemm(Trans::no, Trans::yes, 1023, 33, 301, isa, 2);
    check_gemm(Trans::yes, Trans::yes, 61, 130, 257, isa, 1);
  }
}

TEST(Gemm, EvenDepthAcrossBlocksEveryIsa) {
  // Even K: the BF16 tile kernel reads untransposed A in place (odd lda here, so pairs sit
  // at odd offsets), sums several K blocks (512, 1024) and rounds straight into C; 70 and
  // 100 columns leave partial 16-column blocks of the B^T word transposes, 37 a partial tile.
  for (Isa isa : {Isa::avx2, Isa::avx512, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::no, Trans::no, 200, 130, 1024, isa, 1);
    check_gemm(Trans::no, Trans::yes, 37, 70, 610, isa, 2);
    check_gemm(Trans::yes, Trans::yes, 50, 100, 96, isa, 1);
    check_gemm(Trans::no, Trans::no, 13, 64, 512, isa, 1, true);
    // K >= 2048 with up to three MC blocks of rows: all rows as one block, B packed per K block.
    check_gemm(Trans::no, Trans::yes, 400, 100, 2050, isa, 1);
    check_gemm(Trans::yes, Trans::no, 301, 70, 2048, isa, 1, true);
  }
}

TEST(Gemm, DeepKManyRowsInDeepBlocks) {
  // K from 1024 over at least 256 rows, A in place: K blocks of 2048 (one at K = 1024 and
  // 1500, a short last one after at 2100 and 3000, three at 4200), and from K 2048 all rows
  // as one block with B packed per K block in blocks of at most 256 columns (600 as 256 +
  // 256 + 88, a partial last tile), on 1 thread and as column tasks on 2; A transposed
  // keeps its K blocks of 512.
  for (Isa isa : {Isa::avx2, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::no, Trans::yes, 300, 600, 2100, isa, 1);
    check_gemm(Trans::no, Trans::no, 260, 300, 3000, isa, 2, true);
    check_gemm(Trans::no, Trans::no, 400, 200, 1024, isa, 2);
    check_gemm(Trans::no, Trans::yes, 256, 130, 1500, isa, 1, true);
    check_gemm(Trans::no, Trans::yes, 256, 100, 4200, isa, 2);
    check_gemm(Trans::yes, Trans::yes, 400, 330, 2050, isa, 1);
  }
}

TEST(Gemm, Fp32PanelsDeepKAllRowsAndWideColumnTasks) {
  // FP32 panels (AVX2, AVX-512F): from K 2048 up to three MC blocks of rows as one, in column
  // blocks of 528 (512 rounded to 24-column tiles; 1100 as 528 + 528 + 44), the accumulate
  // flag across K blocks; on 2 threads, column tasks of 192 columns over op(A) packed once.
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::no, Trans::yes, 400, 1100, 2100, isa, 1);
    check_gemm(Trans::no, Trans::no, 500, 1100, 2048, isa, 1, true);
    check_gemm(Trans::no, Trans::no, 300, 1000, 600, isa, 2);
    check_gemm(Trans::yes, Trans::no, 150, 777, 2049, isa, 2, true);
  }
}

TEST(Gemm, OnePackingOfAPerCall) {
  // op(A) packed (transposed, or odd K) once per call: on 2 threads shared by column tasks,
  // pieces of 8 tiles' rows by one K block packed by whichever task gets there first (rows
  // and K both cross pieces and blocks, with tails); on 1 thread reused across NC blocks.
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_bf16, Isa::amx_bf16}) {
    if (isa != Isa::portable && !cpu_has(isa)) continue;
    check_gemm(Trans::yes, Trans::no, 301, 700, 601, isa, 2);
    check_gemm(Trans::yes, Trans::yes, 100, 1100, 520, isa, 2, true);
    check_gemm(Trans::no, Trans::no, 70, 900, 515, isa, 2);
    check_gemm(Trans::yes, Trans::no, 50, 2100, 300, isa, 1);
  }
}

TEST(Gemm, WholeBInNarrowBlocksForFewRowBlocks) {
  // Two or three MC blocks of rows with B packed whole: NC blocks of about 512 columns
  // (1100 as 576 + 524, 700 as 384 + 316), A in place or packed once, K blocks with tails.
  for (Isa isa : {Isa::avx2, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::no, Trans::no, 400, 1100, 1030, isa, 1);
    check_gemm(Trans::no, Trans::yes, 250, 1100, 600, isa, 1, true);
    check_gemm(Trans::yes, Trans::no, 300, 700, 600, isa, 1);
  }
}

TEST(Gemm, FewRowsWideColumnTasksOnTwoThreads) {
  // Few rows, B packed per K block by each task from too many rows for the tile kernel:
  // column tasks of three tiles (1400 columns: 22 tiles, the last partial), A packed once
  // and shared or read in place.
  for (Isa isa : {Isa::avx2, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::yes, Trans::no, 100, 1400, 1100, isa, 2);
    check_gemm(Trans::no, Trans::no, 50, 1300, 1030, isa, 2, true);
  }
}

TEST(Gemm, ManyRowsColumnTasksOfFourTiles) {
  // From 1024 rows with A in place (over 512 KiB of it), 2 threads: column tasks of four
  // tiles (600 columns: ten tiles as two tasks of five), and a partial last tile.
  for (Isa isa : {Isa::avx2, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::no, Trans::no, 1030, 600, 300, isa, 2);
    check_gemm(Trans::no, Trans::yes, 1100, 700, 330, isa, 2, true);
  }
}

TEST(Gemm, ShortRowAndHalfWidthTiles) {
  // A in place with 7 or 8 rows left (tiles of 4 + 3 or 4 + 4), and last column tiles of
  // at most 32 columns (half-width tiles), across K blocks and with accumulate.
  for (Isa isa : {Isa::avx2, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::no, Trans::no, 32, 96, 130, isa, 1);
    check_gemm(Trans::no, Trans::no, 37, 20, 1100, isa, 1, true);
    check_gemm(Trans::no, Trans::yes, 8, 1376, 600, isa, 1);
    check_gemm(Trans::yes, Trans::no, 14, 800, 64, isa, 1, true);
  }
}

TEST(Gemm, MisalignedCInTilesFromItsFirstLine) {
  // C 2 to 62 bytes past a cache line, rows whole lines apart: tiles from the first line
  // boundary behind a narrow first block, on 1 and 2 threads (column tasks split at those
  // boundaries), with op(A) packed once (TN) or read in place (NN), over one and several K
  // blocks, with accumulate.
  for (Isa isa : {Isa::avx2, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    for (long offset : {0l, 1l, 8l, 16l, 24l, 31l})
      for (int threads : {1, 2}) {
        check_gemm(Trans::yes, Trans::no, 70, 300, 64, isa, threads, false, offset);
        check_gemm(Trans::no, Trans::no, 33, 200, 600, isa, threads, true, offset);
        check_gemm(Trans::no, Trans::yes, 13, 40, 30, isa, threads, false, offset);
      }
  }
}

TEST(Gemm, DeepSkinnyShapesInColumnTasks) {
  // Few rows, K deep against N, 2 threads: column tasks of unequal tile counts, B packed a
  // K block at a time; odd K packs A, and accumulate adds C once, after the last K block.
  for (Isa isa : {Isa::avx2, Isa::avx512_bf16}) {
    if (!cpu_has(isa)) continue;
    check_gemm(Trans::no, Trans::no, 33, 70, 4100, isa, 2);
    check_gemm(Trans::yes, Trans::no, 40, 100, 3001, isa, 2, true);
    check_gemm(Trans::no, Trans::yes, 7, 130, 2304, isa, 2);
    check_gemm(Trans::no, Trans::no, 20, 600, 3200, isa, 2, true);
    check_gemm(Trans::no, Trans::yes, 9, 300, 2304, isa, 2);
    // Four tasks of 4 tiles, and 11 tiles as 6 + 5.
    check_gemm(Trans::no, Trans::no, 32, 1000, 4096, isa, 2, true);
    check_gemm(Trans::yes, Trans::no, 17, 700, 2048, isa, 2);
  }
}

TEST(Gemm, Bf16DotFlushesDenormalInputs) {
  // VDPBF16PS reads denormal BF16 inputs as zero (Intel SDM, "DAZ" semantics, MXCSR ignored);
  // the FP32-FMA kernels keep them. 0x0040 is the BF16 denormal 2^-127 (FP32 bits 0x00400000).
  if (!cpu_has(Isa::avx512_bf16)) GTEST_SKIP() << "no avx512_bf16";
  const bf16 tiny{0x0040}, one = to_bf16(1.f);
  bf16 c{};
  GemmOptions o;
  o.isa = Isa::avx512_bf16;
  gemm_bf16(Trans::no, Trans::no, 1, 1, 1, &tiny, 1, &one, 1, &c, 1, o);
  EXPECT_EQ(c.bits, 0);
  o.isa = Isa::avx512;
  gemm_bf16(Trans::no, Trans::no, 1, 1, 1, &tiny, 1, &one, 1, &c, 1, o);
  EXPECT_EQ(c.bits, 0x0040);
}

TEST(Gemm, AccumulateAddsToC) { check_gemm(Trans::no, Trans::no, 37, 45, 300, best_isa(), 2, true); }

TEST(Gemm, ZeroDepthGivesZeros) {
  std::vector<bf16> c(6, to_bf16(3.f));
  gemm_bf16(Trans::no, Trans::no, 2, 3, 0, nullptr, 1, nullptr, 3, c.data(), 3);
  for (bf16 x : c) EXPECT_EQ(to_float(x), 0.f);
}

TEST(Gemm, AmxTilesAcrossBlocksAndTransposes) {
  // The AMX kernel: 32x32 C tiles from 16x16 tiles, K in steps of 32 (padded), A and B
  // transposed through the 16x16 word transpose; 257 and 65 leave a tail of every kind.
  if (!cpu_has(Isa::amx_bf16)) GTEST_SKIP() << "no AMX-BF16 on this CPU (or Linux refused the tile state)";
  for (Trans ta : {Trans::no, Trans::yes})
    for (Trans tb : {Trans::no, Trans::yes}) {
      check_gemm(ta, tb, 65, 257, 300, Isa::amx_bf16, 1);
      check_gemm(ta, tb, 300, 33, 513, Isa::amx_bf16, 2);
      check_gemm(ta, tb, 16, 16, 32, Isa::amx_bf16, 1);
    }
  check_gemm(Trans::no, Trans::no, 97, 70, 1000, Isa::amx_bf16, 2, true);
}
