#include "core/rdb_encoding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace dashkv {
namespace {

std::string Len(uint64_t n) {
  std::string out;
  AppendRdbLen(&out, n);
  return out;
}

std::string Str(std::string_view s, bool compress = true) {
  std::string out;
  AppendRdbString(&out, s, compress);
  return out;
}

TEST(RdbEncodingTest, LengthForms) {
  EXPECT_EQ(Len(0), std::string("\x00", 1));
  EXPECT_EQ(Len(63), "\x3f");
  EXPECT_EQ(Len(64), "\x40\x40");
  EXPECT_EQ(Len(16383), "\x7f\xff");
  EXPECT_EQ(Len(16384), std::string("\x80\x00\x00\x40\x00", 5));
  EXPECT_EQ(Len(0xffffffffULL), "\x80\xff\xff\xff\xff");
  EXPECT_EQ(Len(0x100000000ULL), std::string("\x81\x00\x00\x00\x01\x00\x00\x00\x00", 9));
  for (uint64_t n : {0ULL, 1ULL, 63ULL, 64ULL, 300ULL, 16383ULL, 16384ULL, 1ULL << 40}) {
    std::string enc = Len(n);
    RdbReader r(enc);
    absl::StatusOr<uint64_t> back = r.ReadLen();
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, n);
    EXPECT_EQ(r.remaining(), 0u);
  }
}

TEST(RdbEncodingTest, StringFormsMatchRedis) {
  // From Redis 7.0.15 DUMP payloads.
  EXPECT_EQ(Str("hello"), "\x05hello");
  EXPECT_EQ(Str("12345"), "\xc1\x39\x30");
  EXPECT_EQ(Str("-7"), "\xc0\xf9");
  EXPECT_EQ(Str("123456789012"), "\x0c" "123456789012");  // beyond 32 bits: text
  EXPECT_EQ(Str("2147483647"), "\xc2\xff\xff\xff\x7f");
  EXPECT_EQ(Str("007"), "\x03" "007");  // not canonical
  EXPECT_EQ(Str("+1"), "\x02+1");
  EXPECT_EQ(Str(std::string(40, 'a'), false), "\x28" + std::string(40, 'a'));
  std::string lzf = Str(std::string(40, 'a'));
  EXPECT_EQ(static_cast<uint8_t>(lzf[0]), 0xc3);
  EXPECT_LT(lzf.size(), 20u);
}

TEST(RdbEncodingTest, ProbedLzfCompressesWhatShrinksAndSkipsRandomHeads) {
  std::string json = "[";
  for (int i = 0; json.size() < 1000; ++i) {
    json += "{\"id\":" + std::to_string(i) + ",\"tag\":\"t" + std::to_string(i % 7) + "\"},";
  }
  for (const std::string& s : {std::string(1000, 'x'), json}) {
    std::string full, probed;
    AppendRdbString(&full, s, RdbLzf::kFull);
    AppendRdbString(&probed, s, RdbLzf::kProbe);
    EXPECT_EQ(static_cast<uint8_t>(probed[0]), 0xc3);  // LZF
    EXPECT_EQ(probed, full);
  }
  std::mt19937 rng(3);
  std::string head(kRdbLzfProbeBytes, '\0');
  for (char& c : head) c = static_cast<char>(rng());
  const std::string random_head = head + std::string(1000, 'y');
  std::string full, probed;
  AppendRdbString(&full, random_head, RdbLzf::kFull);
  AppendRdbString(&probed, random_head, RdbLzf::kProbe);
  EXPECT_EQ(static_cast<uint8_t>(full[0]), 0xc3);
  EXPECT_EQ(probed, Str(random_head, false));  // raw, with its length
  std::string off;
  AppendRdbString(&off, json, RdbLzf::kOff);
  EXPECT_EQ(off, Str(json, false));
}

TEST(RdbEncodingTest, StringsRoundTrip) {
  std::string binary("a\0b\xff", 4);
  for (std::string s : {std::string(), std::string("x"), std::string("-128"), std::string("127"),
                        std::string("-32768"), std::string("65536"), std::string("-2147483648"),
                        binary, std::string(5000, 'q'), std::string("0"),
                        // LZF into the thread's kept buffer (64 KB), and past it
                        std::string(64 * 1024 + 4, 'k'), std::string(200 * 1024, 'm')}) {
    std::string enc = Str(s);
    if (s.size() > 60000) {
      EXPECT_LT(enc.size(), s.size() / 10);  // LZF-compressed
    }
    RdbReader r(enc);
    absl::StatusOr<std::string> back = r.ReadString();
    ASSERT_TRUE(back.ok()) << s.substr(0, 20);
    EXPECT_EQ(*back, s);
    EXPECT_EQ(r.remaining(), 0u);
  }
}

TEST(RdbEncodingTest, RefusesLengthsBeyondTheInput) {
  // A raw string claiming 2^60 bytes.
  std::string absurd("\x81\x10\x00\x00\x00\x00\x00\x00\x00" "abc", 12);
  RdbReader r(absurd);
  EXPECT_TRUE(absl::IsDataLoss(r.ReadString().status()));
  // An LZF string claiming 2^60 bytes from 3 compressed bytes.
  std::string lzf("\xc3\x03\x81\x10\x00\x00\x00\x00\x00\x00\x00" "\x00" "ab", 14);
  RdbReader r2(lzf);
  EXPECT_TRUE(absl::IsDataLoss(r2.ReadString().status()));
  // An LZF string whose stream yields fewer bytes than claimed.
  std::string short_lzf("\xc3\x02\x05\x00" "a", 5);
  RdbReader r3(short_lzf);
  EXPECT_TRUE(absl::IsDataLoss(r3.ReadString().status()));
  // Every truncation of a valid encoding fails cleanly.
  std::string full = Str(std::string(300, 'b') + "tail");
  for (size_t cut = 0; cut < full.size(); ++cut) {
    RdbReader t(std::string_view(full).substr(0, cut));
    EXPECT_FALSE(t.ReadString().ok()) << cut;
  }
  // Unknown length and string encodings.
  std::string bad_len_text("\x82", 1);
  RdbReader bad_len(bad_len_text);
  EXPECT_FALSE(bad_len.ReadLen().ok());
  std::string bad_enc_text("\xc4", 1);
  RdbReader bad_enc(bad_enc_text);
  EXPECT_FALSE(bad_enc.ReadString().ok());
}

TEST(RdbEncodingTest, Doubles) {
  std::string out;
  AppendRdbBinaryDouble(&out, 2.5);
  EXPECT_EQ(out, std::string("\x00\x00\x00\x00\x00\x00\x04\x40", 8));
  RdbReader r(out);
  EXPECT_EQ(*r.ReadBinaryDouble(), 2.5);
  std::string text("\x03" "1.5" "\xfe" "\xff" "\xfd", 7);
  RdbReader t(text);
  EXPECT_EQ(*t.ReadTextDouble(), 1.5);
  EXPECT_EQ(*t.ReadTextDouble(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(*t.ReadTextDouble(), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*t.ReadTextDouble()));
  std::string garbage_text("\x02" "zz", 3);
  RdbReader garbage(garbage_text);
  EXPECT_FALSE(garbage.ReadTextDouble().ok());
  std::string prefix_text("\x04" " 1*5", 5);  // sscanf's reading: the leading number
  RdbReader prefix(prefix_text);
  EXPECT_EQ(*prefix.ReadTextDouble(), 1.0);
}

}  // namespace
}  // namespace dashkv
