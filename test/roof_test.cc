// Tests of the bench's roof kernels (bench/roof.h): every instruction-set build the host runs
// moves the right bytes (a roof that skipped bytes would make every ratio look better), and
// the dispatcher picks the widest one.
#include "bench/roof.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace dvejit::roof {
namespace {

std::vector<RoofKernels> HostKernels() {
  __builtin_cpu_init();
  std::vector<RoofKernels> out{Sse2Kernels()};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back(Avx2Kernels());
  if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")) out.push_back(Avx512Kernels());
  return out;
}

// Rows of 4 · 37 + 3 bytes' worth of floats (not a multiple of any vector: the tails run too),
// `pitch` apart with a gap that must stay untouched.
constexpr int kRows = 5;
constexpr size_t kFloats = 4 * 37 + 3, kPitchFloats = kFloats + 16;

TEST(RoofTest, ReadRowsSumsEveryByteOnce) {
  std::vector<float> in(kRows * kPitchFloats, 1000.0f);  // the gaps would show in the sum
  float expected = 0;
  for (int r = 0; r < kRows; ++r)
    for (size_t i = 0; i < kFloats; ++i) expected += (in[r * kPitchFloats + i] = static_cast<float>((r * 7 + i) % 4));
  for (const RoofKernels& k : HostKernels()) {
    SCOPED_TRACE(k.isa);
    EXPECT_EQ(k.read_rows(reinterpret_cast<const uint8_t*>(in.data()), kPitchFloats * 4, kRows, kFloats * 4), expected);
  }
}

TEST(RoofTest, WritesEveryElementAndNothingElse) {
  std::vector<float> a(kRows * kPitchFloats), b(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i), b[i] = static_cast<float>(3 * i);
  for (const RoofKernels& k : HostKernels()) {
    SCOPED_TRACE(k.isa);
    for (int variant = 0; variant < 2; ++variant) {
      std::vector<float> out(a.size(), -1.0f);
      auto* o = reinterpret_cast<uint8_t*>(out.data());
      const auto* pa = reinterpret_cast<const uint8_t*>(a.data());
      if (variant == 0) k.read_two_write_one(pa, reinterpret_cast<const uint8_t*>(b.data()), o, kPitchFloats * 4, kRows, kFloats * 4);
      else k.read_one_write_one(pa, o, kPitchFloats * 4, kRows, kFloats * 4);
      for (size_t i = 0; i < out.size(); ++i) {
        const bool in_row = i % kPitchFloats < kFloats;
        const float want = !in_row ? -1.0f : variant == 0 ? a[i] + b[i] : 2 * a[i];
        ASSERT_EQ(out[i], want) << "variant " << variant << " element " << i;
      }
    }
  }
}

// `dvejit bench --cold` evicts rows between timed runs: the rows' bytes, dirty lines included,
// must come back unchanged (clflush writes a modified line back before it drops it), rows that
// start and end inside a line too, and zero-byte rows are no work.
TEST(RoofTest, EvictRowsKeepsEveryByte) {
  std::vector<uint8_t> mem(kRows * 1000 + 64);
  for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<uint8_t>(i * 13 + 5);  // dirty lines
  const std::vector<uint8_t> before = mem;
  for (size_t offset : {size_t{0}, size_t{3}, size_t{61}})
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{64}, size_t{130}, size_t{999}}) {
      EvictRows(mem.data() + offset, 1000, kRows, bytes);
      ASSERT_EQ(mem, before) << "offset " << offset << " bytes " << bytes;
    }
}

TEST(RoofTest, RunsTheWidestBuildTheHostHas) {
  EXPECT_STREQ(Isa(), HostKernels().back().isa);
}

}  // namespace
}  // namespace dvejit::roof
