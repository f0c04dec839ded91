#include "core/lzf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace dashkv {
namespace {

std::string Decompress(std::string_view in, size_t out_len) {
  std::string out(out_len, '\0');
  size_t n = LzfDecompress(in, out.data(), out.size());
  out.resize(n);
  return out;
}

// Returns the compressed form, or "" when it did not fit.
std::string Compress(std::string_view in, size_t out_len) {
  std::string out(out_len, '\0');
  size_t n = LzfCompress(in, out.data(), out.size());
  out.resize(n);
  return out;
}

// Returns the compressed form with a probe of `probe` bytes (room: input - 4, as
// AppendRdbString gives), or "" when it did not fit or the probe gave up.
std::string CompressProbed(std::string_view in, size_t probe) {
  std::string out(in.size() - 4, '\0');
  out.resize(LzfCompress(in, out.data(), out.size(), probe));
  return out;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// Records of a JSON array, the kind of value an application caches: the keys repeat.
std::string JsonLike(size_t n) {
  std::string s = "[";
  for (int i = 0; s.size() < n; ++i) {
    s += "{\"id\":" + std::to_string(1000 + i * 37) + ",\"name\":\"user" + std::to_string(i) +
         "\",\"active\":" + (i % 3 ? "true" : "false") + ",\"score\":" +
         std::to_string((i * 7919) % 1000) + "},";
  }
  s.resize(n);
  return s;
}

TEST(LzfTest, DecodesARedisStream) {
  // Redis 7.0.15 compressed 40 x 'a' as: literal "aa", a 36-byte reference at distance 1,
  // literal "aa".
  std::string stream("\x01" "aa" "\xe0\x1b\x00" "\x01" "aa", 9);
  EXPECT_EQ(Decompress(stream, 40), std::string(40, 'a'));
}

TEST(LzfTest, RefusesMalformedStreams) {
  std::string out(64, '\0');
  // A literal run cut short.
  EXPECT_EQ(LzfDecompress(std::string("\x05" "ab", 3), out.data(), out.size()), 0u);
  // A reference before the start of the output.
  EXPECT_EQ(LzfDecompress(std::string("\x00" "a" "\x20\x05", 4), out.data(), out.size()), 0u);
  // A reference missing its offset byte, or its length byte.
  EXPECT_EQ(LzfDecompress(std::string("\x00" "a" "\x20", 3), out.data(), out.size()), 0u);
  EXPECT_EQ(LzfDecompress(std::string("\x00" "a" "\xe0", 3), out.data(), out.size()), 0u);
  EXPECT_EQ(LzfDecompressedSize(std::string("\x05" "ab", 3)), 0u);
  EXPECT_EQ(LzfDecompressedSize(std::string("\x00" "a" "\x20\x05", 4)), 0u);
  EXPECT_EQ(LzfDecompressedSize(std::string("\x00" "a" "\x20", 3)), 0u);
  EXPECT_EQ(LzfDecompressedSize(std::string("\x01" "aa" "\xe0\x1b\x00", 6)), 38u);
  // More output than room.
  EXPECT_EQ(LzfDecompress(std::string("\x01" "aa" "\xe0\x1b\x00", 6), out.data(), 10), 0u);
}

TEST(LzfTest, RoundTripsRandomDataAndRuns) {
  std::mt19937_64 gen(11);
  for (int round = 0; round < 200; ++round) {
    size_t len = 1 + gen() % 20000;
    std::string data(len, '\0');
    size_t i = 0;
    while (i < len) {  // alternating random bytes, runs and repeats of earlier text
      size_t chunk = std::min<size_t>(len - i, 1 + gen() % 300);
      int kind = static_cast<int>(gen() % 3);
      for (size_t j = 0; j < chunk; ++j) {
        if (kind == 0) data[i + j] = static_cast<char>(gen());
        else if (kind == 1) data[i + j] = 'x';
        else data[i + j] = i + j >= 100 ? data[i + j - 100] : 'q';
      }
      i += chunk;
    }
    std::string packed = Compress(data, len + len / 16 + 64);
    ASSERT_FALSE(packed.empty());
    EXPECT_EQ(Decompress(packed, len), data) << round;
    EXPECT_EQ(LzfDecompressedSize(packed), len) << round;
    std::string small(len - 1, '\0');  // one byte short of room: refused
    EXPECT_EQ(LzfDecompress(packed, small.data(), small.size()), 0u) << round;
  }
}

TEST(LzfTest, CompressReportsNoRoom) {
  std::mt19937_64 gen(3);
  std::string noise(1000, '\0');
  for (char& c : noise) c = static_cast<char>(gen());
  EXPECT_TRUE(Compress(noise, noise.size() - 4).empty());
  std::string runs(1000, 'z');
  std::string packed = Compress(runs, runs.size() - 4);
  ASSERT_FALSE(packed.empty());
  EXPECT_LT(packed.size(), 30u);
  EXPECT_EQ(Decompress(packed, runs.size()), runs);
}

TEST(LzfTest, FindsMatchesAfterALongStretchWithout) {
  // The compressor steps faster through input without matches; the step must fall back to one
  // byte at the first match, so a run after 4000 random bytes still compresses to a few
  // references (before the run: literals, 33 bytes per 32).
  std::mt19937_64 gen(5);
  std::string data(4000, '\0');
  for (char& c : data) c = static_cast<char>(gen());
  data += std::string(4000, 'r');
  std::string packed = Compress(data, data.size());
  ASSERT_FALSE(packed.empty());
  EXPECT_LT(packed.size(), 4000u * 33 / 32 + 200);
  EXPECT_EQ(Decompress(packed, data.size()), data);
}

TEST(LzfTest, ManyInputsInARowCompressAsAlone) {
  // The match table is reused across calls on a thread: what earlier inputs left in it must
  // not change the output of a later one. Compressing the pieces again in the reverse order
  // (so a different input ran before each) must give the same bytes.
  std::mt19937_64 gen(6);
  std::string text;
  while (text.size() < 30000) text += "key:" + std::to_string(gen() % 5000) + " value ";
  std::vector<std::string_view> pieces;
  std::vector<std::string> packed;
  for (int i = 0; i < 50; ++i) {
    pieces.emplace_back(text.data() + gen() % 20000, 1 + gen() % 9000);
    packed.push_back(Compress(pieces.back(), pieces.back().size() * 2 + 64));
    ASSERT_FALSE(packed.back().empty());
    EXPECT_EQ(Decompress(packed.back(), pieces.back().size()), pieces.back());
  }
  for (int i = 49; i >= 0; --i) {
    EXPECT_EQ(Compress(pieces[i], pieces[i].size() * 2 + 64), packed[i]) << i;
  }
}

TEST(LzfTest, ProbeGivesUpWhenTheFirstBytesDoNotShrink) {
  // A random head, then a run: a whole attempt pays for the head with the run, a probe of the
  // head's size gives up before it reaches the run.
  const std::string in = RandomBytes(256, 5) + std::string(768, 'y');
  EXPECT_NE(CompressProbed(in, 0), "");
  EXPECT_EQ(CompressProbed(in, 256), "");
  // Random bytes alone give up either way (the probe only gives up sooner).
  const std::string random = RandomBytes(1024, 6);
  EXPECT_EQ(CompressProbed(random, 0), "");
  EXPECT_EQ(CompressProbed(random, 256), "");
}

TEST(LzfTest, ProbeKeepsWhatCompressesAsWithout) {
  for (const std::string& in : {std::string(1000, 'x'), JsonLike(1000), JsonLike(5000),
                                RandomBytes(200, 7) + std::string(800, 'z')}) {
    const std::string whole = CompressProbed(in, 0);
    ASSERT_NE(whole, "") << in.substr(0, 40);
    EXPECT_EQ(CompressProbed(in, 256), whole) << in.substr(0, 40);
    EXPECT_EQ(Decompress(whole, in.size()), in);
  }
}

TEST(LzfTest, ProbeDoesNotApplyToInputNoLongerThanIt) {
  // 230 random bytes and 26 a's: the a's pay for the random bytes' control bytes, but only
  // once the end is reached; a probe as long as the input is never due.
  const std::string in = RandomBytes(230, 8) + std::string(26, 'a');
  const std::string whole = CompressProbed(in, 0);
  ASSERT_NE(whole, "");
  EXPECT_EQ(CompressProbed(in, in.size()), whole);
}

}  // namespace
}  // namespace dashkv
