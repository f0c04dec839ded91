#include "core/hyperloglog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/sha1.h"

namespace dashkv {
namespace {

using namespace std::string_view_literals;

constexpr size_t kSparseMax = 3000;  // hll-sparse-max-bytes' default

std::string Header(HllEncoding enc) {
  std::string s(kHllHeaderSize, '\0');
  s.replace(0, 4, "HYLL");
  s[4] = static_cast<char>(enc);
  return s;
}

// Returns a sparse value: the header, then `ops` verbatim.
std::string Sparse(std::string_view ops) { return Header(HllEncoding::kSparse) + std::string(ops); }

// Adds "e:<i>" for i in [0, n) as PFADD calls of up to 100 elements do.
std::string AddRange(std::string hll, int n) {
  for (int i = 0; i < n; ++i) {
    EXPECT_NE(HllAdd(&hll, absl::StrCat("e:", i), kSparseMax), HllUpdate::kCorrupt);
  }
  return hll;
}

// Returns register `i` of any valid value.
uint8_t Register(std::string_view hll, uint32_t i) {
  HllRegisters regs{};
  EXPECT_TRUE(HllMergeInto(hll, &regs));
  return regs[i];
}

TEST(HyperLogLogTest, MurmurHash64A) {
  EXPECT_EQ(MurmurHash64A("", 0), 0u);  // every step maps 0 to 0
  // Where Redis 7.0.15 puts single elements (PFADD, then PFDEBUG DECODE): the register is the
  // first run's length, the count the VAL's value. Covers empty, tail-only, one block, block
  // plus tail and 15 bytes.
  struct Case {
    std::string_view element;
    uint32_t index;
    uint8_t count;
  };
  const Case cases[] = {{"a", 12711, 2},         {"", 5938, 2},
                        {"hello world", 9399, 4}, {"abcdefgh", 1383, 1},
                        {"abcdefghi", 6903, 1},   {"0123456789abcde", 15725, 4},
                        {"x", 16374, 2}};
  for (const Case& c : cases) {
    HllPoint pt = HllHashElement(c.element);
    EXPECT_EQ(pt.index, c.index) << c.element;
    EXPECT_EQ(pt.count, c.count) << c.element;
  }
}

TEST(HyperLogLogTest, NewSparseIsRedisEmptyValue) {
  std::string s = HllNewSparse();
  EXPECT_EQ(s, Sparse("\x7f\xff"));
  EXPECT_TRUE(HllIsValid(s));
  EXPECT_EQ(HllCachedCardinality(s), 0u);
  EXPECT_EQ(HllCount(s), 0u);
  EXPECT_EQ(HllDecodeSparse(s), "Z:16384");
}

TEST(HyperLogLogTest, Validity) {
  EXPECT_FALSE(HllIsValid(""));
  EXPECT_FALSE(HllIsValid("HYLL"));
  EXPECT_FALSE(HllIsValid(Header(HllEncoding::kSparse).substr(0, 15)));
  EXPECT_TRUE(HllIsValid(Header(HllEncoding::kSparse)));  // no opcodes: corrupt, found on read
  std::string bad_magic = HllNewSparse();
  bad_magic[0] = 'h';
  EXPECT_FALSE(HllIsValid(bad_magic));
  std::string bad_enc = HllNewSparse();
  bad_enc[4] = 2;
  EXPECT_FALSE(HllIsValid(bad_enc));
  std::string dense = Header(HllEncoding::kDense);
  EXPECT_FALSE(HllIsValid(dense));
  dense.resize(kHllDenseSize);
  EXPECT_TRUE(HllIsValid(dense));
  dense.push_back('\0');
  EXPECT_FALSE(HllIsValid(dense));
}

TEST(HyperLogLogTest, SparseLayoutMatchesRedis) {
  // PFADD k a b c on Redis 7.0.15, then GET k.
  std::string hll = HllNewSparse();
  for (std::string_view e : {"a", "b", "c"}) {
    EXPECT_EQ(HllAdd(&hll, e, kSparseMax), HllUpdate::kChanged);
  }
  std::string expected = Sparse("\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a");
  expected[15] = '\x80';  // stale cache
  EXPECT_EQ(hll, expected);
  EXPECT_EQ(HllDecodeSparse(hll), "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
  EXPECT_EQ(HllCachedCardinality(hll), std::nullopt);
  EXPECT_EQ(HllCount(hll), 3u);
  EXPECT_EQ(HllAdd(&hll, "a", kSparseMax), HllUpdate::kUnchanged);
}

// SHA1 of GET after adding "e:0".."e:<n-1>" on Redis 7.0.15, and PFCOUNT's answer.
struct Vector {
  int n;
  size_t size;
  HllEncoding encoding;
  std::string_view sha1;
  uint64_t count;
  std::string_view sha1_after_count;  // the cached cardinality written
};

TEST(HyperLogLogTest, BytesAndCountsMatchRedis) {
  const Vector vectors[] = {
      {10, 48, HllEncoding::kSparse, "9f5c5379dd4b60a9673de60464adaa90296b6e31", 10,
       "975098cf01a625671e3b6097cfaeed4d6a7d1b96"},
      {200, 499, HllEncoding::kSparse, "a9ecfe01f6a48f7d80e7d038b5035d060ccb5fac", 199,
       "f63d9a6e7c08c094878dd0b47952e56d29d3bff6"},
      {1500, 2683, HllEncoding::kSparse, "8cc7cf129381c9bb96fba05d8c6a515f96a3854f", 1484,
       "8a2e77945df4de6b0758c6eb89cbbe85e2a5f5d0"},
      {5000, kHllDenseSize, HllEncoding::kDense, "2afb38e66e5d108dc2b0733c03f30f9194563a49",
       5027, "745f95175ae4ea138e625fb1da5bbf3cd150b5d0"},
      {100000, kHllDenseSize, HllEncoding::kDense, "97c71b17a4e06c30db3300be306782d78fbb6326",
       100342, "f8ffa71d1533a91d033b530e75bbf6f1bf648590"},
  };
  for (const Vector& v : vectors) {
    std::string hll = AddRange(HllNewSparse(), v.n);
    ASSERT_EQ(hll.size(), v.size) << v.n;
    EXPECT_EQ(HllEncodingOf(hll), v.encoding) << v.n;
    EXPECT_EQ(Sha1Hex(hll), v.sha1) << v.n;
    std::optional<uint64_t> count = HllCount(hll);
    ASSERT_TRUE(count);
    EXPECT_EQ(*count, v.count) << v.n;
    HllStoreCardinality(absl::MakeSpan(hll), *count);
    EXPECT_EQ(HllCachedCardinality(hll), v.count);
    EXPECT_EQ(Sha1Hex(hll), v.sha1_after_count) << v.n;
  }
}

TEST(HyperLogLogTest, MergeAsPfmergeMatchesRedis) {
  // PFADD m1 a0..a299; PFADD m2 b0..b299; PFMERGE m3 m1 m2 on Redis 7.0.15: each non-zero
  // register of the union set into a new sparse value, in register order.
  std::string m1 = HllNewSparse(), m2 = HllNewSparse();
  for (int i = 0; i < 300; ++i) {
    ASSERT_NE(HllAdd(&m1, absl::StrCat("a", i), kSparseMax), HllUpdate::kCorrupt);
    ASSERT_NE(HllAdd(&m2, absl::StrCat("b", i), kSparseMax), HllUpdate::kCorrupt);
  }
  HllRegisters max{};
  ASSERT_TRUE(HllMergeInto(m1, &max));
  ASSERT_TRUE(HllMergeInto(m2, &max));
  EXPECT_EQ(HllCountRegisters(max), 603u);
  std::string m3 = HllNewSparse();
  for (uint32_t i = 0; i < kHllRegisters; ++i) {
    if (max[i] != 0) {
      ASSERT_EQ(HllSet(&m3, i, max[i], kSparseMax), HllUpdate::kChanged);
    }
  }
  HllInvalidateCache(absl::MakeSpan(m3));
  EXPECT_EQ(m3.size(), 1218u);
  EXPECT_EQ(Sha1Hex(m3), "bb3e2931b69e60394e49c40ca237aed6d1d71159");
  EXPECT_EQ(HllCount(m3), 603u);
}

TEST(HyperLogLogTest, DenseRegistersKeepNeighbours) {
  std::string dense = Header(HllEncoding::kDense);
  dense.resize(kHllDenseSize);
  std::mt19937_64 rng(7);
  std::vector<uint8_t> want(kHllRegisters);
  for (uint32_t i = 0; i < kHllRegisters; ++i) {
    want[i] = static_cast<uint8_t>(rng() % 64);
    if (want[i] > 0) {
      EXPECT_TRUE(HllDenseSet(absl::MakeSpan(dense), i, want[i]));
    }
  }
  for (uint32_t i = 0; i < kHllRegisters; ++i) ASSERT_EQ(HllDenseGet(dense, i), want[i]) << i;
  HllRegisters merged;
  merged.fill(20);
  ASSERT_TRUE(HllMergeInto(dense, &merged));
  for (uint32_t i = 0; i < kHllRegisters; ++i) {
    ASSERT_EQ(merged[i], std::max<uint8_t>(want[i], 20)) << i;
  }
  // Lowering is refused; the last register ends inside the last byte.
  EXPECT_FALSE(HllDenseSet(absl::MakeSpan(dense), 5, want[5]));
  EXPECT_EQ(dense.size(), kHllDenseSize);
  EXPECT_EQ(std::string_view(dense).substr(0, 16), Header(HllEncoding::kDense));
}

TEST(HyperLogLogTest, PromotesOnLargeValueKeepingHeader) {
  std::string hll = HllNewSparse();
  hll[5] = 'x';  // unused bytes travel with the value, as Redis copies the whole header
  ASSERT_EQ(HllSet(&hll, 100, 7, kSparseMax), HllUpdate::kChanged);
  ASSERT_EQ(HllEncodingOf(hll), HllEncoding::kSparse);
  ASSERT_EQ(HllSet(&hll, 200, 33, kSparseMax), HllUpdate::kChanged);  // VAL holds up to 32
  ASSERT_EQ(HllEncodingOf(hll), HllEncoding::kDense);
  ASSERT_EQ(hll.size(), kHllDenseSize);
  EXPECT_EQ(hll[5], 'x');
  EXPECT_EQ(HllCachedCardinality(hll), std::nullopt);
  EXPECT_EQ(HllDenseGet(hll, 100), 7);
  EXPECT_EQ(HllDenseGet(hll, 200), 33);
  EXPECT_EQ(HllCount(hll), 2u);
}

TEST(HyperLogLogTest, PromotesAtSparseLimit) {
  std::string hll = HllNewSparse();
  // Splitting the XZERO in the middle needs 5 bytes instead of 2: 21 > 20.
  ASSERT_EQ(HllSet(&hll, 1000, 3, 20), HllUpdate::kChanged);
  EXPECT_EQ(HllEncodingOf(hll), HllEncoding::kDense);
  hll = HllNewSparse();
  ASSERT_EQ(HllSet(&hll, 1000, 3, 21), HllUpdate::kChanged);
  EXPECT_EQ(HllEncodingOf(hll), HllEncoding::kSparse);
  EXPECT_EQ(HllDecodeSparse(hll), "Z:1000 v:3,1 Z:15383");
  // Shrinking or same-size writes never promote, whatever the limit.
  ASSERT_EQ(HllSet(&hll, 1000, 5, 0), HllUpdate::kChanged);
  EXPECT_EQ(HllEncodingOf(hll), HllEncoding::kSparse);
}

TEST(HyperLogLogTest, SplitsAndMergesValRuns) {
  // v:2,4 covering registers 0..3, then the rest zero.
  std::string hll = Sparse(std::string("\x87\x7f\xfb", 3));
  ASSERT_EQ(HllCount(hll).has_value(), true);
  ASSERT_EQ(HllSet(&hll, 2, 5, kSparseMax), HllUpdate::kChanged);
  EXPECT_EQ(HllDecodeSparse(hll), "v:2,2 v:5,1 v:2,1 Z:16380");
  EXPECT_EQ(HllSet(&hll, 1, 2, kSparseMax), HllUpdate::kUnchanged);
  ASSERT_EQ(HllSet(&hll, 3, 5, kSparseMax), HllUpdate::kChanged);  // in place, then merged
  EXPECT_EQ(HllDecodeSparse(hll), "v:2,2 v:5,2 Z:16380");
  ASSERT_EQ(HllSet(&hll, 4, 5, kSparseMax), HllUpdate::kChanged);
  EXPECT_EQ(HllDecodeSparse(hll), "v:2,2 v:5,3 Z:16379");
  EXPECT_EQ(Register(hll, 0), 2);
  EXPECT_EQ(Register(hll, 4), 5);
  EXPECT_EQ(Register(hll, 5), 0);
}

TEST(HyperLogLogTest, CorruptSparseValues) {
  const std::string corrupt[] = {
      Sparse(""),                    // no opcodes
      Sparse("\x7f\xfe"),            // 16383 registers
      Sparse("\x7f\xff\x00"sv),      // 16385
      Sparse("\x40\x00\x7f\xff"sv),  // a run past the end
      Sparse("\x7f\xfe\x81"),        // VAL run of 2 past the end
      Sparse("\x7f"),                // a cut XZERO: 16129 registers
  };
  for (const std::string& s : corrupt) {
    SCOPED_TRACE(HllDecodeSparse(s));
    ASSERT_TRUE(HllIsValid(s));
    EXPECT_EQ(HllCount(s), std::nullopt);
    HllRegisters regs{};
    EXPECT_FALSE(HllMergeInto(s, &regs));
    EXPECT_FALSE(HllSparseToDense(s).has_value());
  }
  // Writes fail where no opcode covers the register, and on promotion of a corrupt value.
  std::string short_one = Sparse("\x7f\xfe");
  EXPECT_EQ(HllSet(&short_one, 16383, 1, kSparseMax), HllUpdate::kCorrupt);
  EXPECT_EQ(short_one, Sparse("\x7f\xfe"));
  EXPECT_EQ(HllSet(&short_one, 0, 40, kSparseMax), HllUpdate::kCorrupt);
  std::string empty = Sparse("");
  EXPECT_EQ(HllSet(&empty, 0, 1, kSparseMax), HllUpdate::kCorrupt);
  // A VAL past the registers after runs that cover them all.
  std::string over = Sparse("\x7f\xff\xa8"sv);
  HllRegisters regs{};
  EXPECT_FALSE(HllMergeInto(over, &regs));
  EXPECT_FALSE(HllSparseToDense(over).has_value());
  EXPECT_FALSE(HllCount(over).has_value());
  // A write inside the covered part of an over-long value succeeds, as on Redis.
  std::string long_one = Sparse("\x7f\xff\x00"sv);
  EXPECT_EQ(HllSet(&long_one, 5, 1, kSparseMax), HllUpdate::kChanged);
}

TEST(HyperLogLogTest, CutXZeroReadsAsRedisDoes) {
  // XZERO 255, then an XZERO cut after its first byte: Redis reads its NUL terminator as the
  // second byte (16129 registers), so the runs add up to 16384 and the value counts.
  std::string s = Sparse("\x40\xfe\x7f");
  EXPECT_EQ(HllDecodeSparse(s), "Z:255 Z:16129");
  EXPECT_EQ(HllCount(s), 0u);
  HllRegisters regs{};
  EXPECT_TRUE(HllMergeInto(s, &regs));
  EXPECT_TRUE(HllSparseToDense(s).has_value());
  // Writing inside the cut opcode: Redis writes ZERO(45) VAL XZERO(16083) in its place but
  // counts the old opcode as two bytes, so the value ends one byte short: the new XZERO's
  // second byte is lost, and the value is corrupt. (Redis's live object still holds that byte
  // past its end, where its next reads find it; a copy of the value (GET/SET, DUMP/RESTORE, a
  // reload) does not, and reads as here.)
  ASSERT_EQ(HllSet(&s, 300, 1, kSparseMax), HllUpdate::kChanged);
  std::string want = Sparse("\x40\xfe\x2c\x80\x7e");
  want[15] = '\x80';
  EXPECT_EQ(s, want);
  EXPECT_EQ(HllCount(s), std::nullopt);
}

TEST(HyperLogLogTest, EstimatorEdges) {
  HllRegisters regs{};
  EXPECT_EQ(HllCountRegisters(regs), 0u);
  regs.fill(63);  // no register in the estimator's range: an infinite estimate, as llroundl
  EXPECT_EQ(HllCountRegisters(regs), uint64_t{1} << 63);
  std::string dense = Header(HllEncoding::kDense);
  dense.resize(kHllDenseSize, '\xff');
  EXPECT_EQ(HllCount(dense), uint64_t{1} << 63);
  // Such a count cached reads as stale (its top bit is the stale bit), as on Redis.
  HllStoreCardinality(absl::MakeSpan(dense), uint64_t{1} << 63);
  EXPECT_EQ(HllCachedCardinality(dense), std::nullopt);
}

TEST(HyperLogLogTest, HostileBytesNeverReadOutOfBounds) {
  // Random opcodes after a valid header: every reader stays inside the string (the ASan build
  // checks), every writer keeps a valid header.
  std::mt19937_64 rng(42);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s = Header(HllEncoding::kSparse);
    const size_t n = rng() % 40;
    for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(rng()));
    HllRegisters regs{};
    (void)HllMergeInto(s, &regs);
    (void)HllCount(s);
    (void)HllSparseToDense(s);
    (void)HllDecodeSparse(s);
    const auto index = static_cast<uint32_t>(rng() % kHllRegisters);
    const auto count = static_cast<uint8_t>(1 + rng() % 51);
    if (HllSet(&s, index, count, 1 + rng() % 64) != HllUpdate::kCorrupt) {
      ASSERT_TRUE(HllIsValid(s));
    }
  }
}

TEST(HyperLogLogTest, SelfTestPasses) { EXPECT_EQ(HllSelfTest(12345, kSparseMax), ""); }

}  // namespace
}  // namespace dashkv
