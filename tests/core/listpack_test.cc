#include "core/listpack.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace dashkv {
namespace {

std::string Hex(std::string_view b) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Unhex(std::string_view h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

Listpack Build(const std::vector<std::string>& elems) {
  Listpack lp;
  for (const auto& e : elems) lp.Push(e, ListEnd::kTail);
  return lp;
}

std::vector<std::string> Contents(const Listpack& lp) {
  std::vector<std::string> out;
  for (auto p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) out.push_back(lp.Get(p).ToString());
  return out;
}

std::vector<std::string> ContentsBackward(const Listpack& lp) {
  std::vector<std::string> out;
  for (auto p = lp.Last(); p != Listpack::kNoPos; p = lp.Prev(p)) out.push_back(lp.Get(p).ToString());
  return out;
}

TEST(ListpackTest, EmptyLayout) {
  Listpack lp;
  EXPECT_EQ(Hex(lp.bytes()), "070000000000ff");
  EXPECT_TRUE(lp.empty());
  EXPECT_EQ(lp.size(), 0u);
  EXPECT_EQ(lp.First(), Listpack::kNoPos);
  EXPECT_EQ(lp.Last(), Listpack::kNoPos);
  EXPECT_EQ(lp.Seek(0), Listpack::kNoPos);
  EXPECT_EQ(lp.Seek(-1), Listpack::kNoPos);
}

// The expected bytes below come from redis-server 7.0.15 (RPUSH then DUMP, rdbcompression no).
TEST(ListpackTest, IntegerWidthsMatchRedis) {
  std::vector<std::string> v = {"0",
                                "1",
                                "127",
                                "128",
                                "-1",
                                "-4096",
                                "4095",
                                "4096",
                                "-4097",
                                "32767",
                                "-32768",
                                "32768",
                                "-32769",
                                "8388607",
                                "-8388608",
                                "8388608",
                                "-8388609",
                                "2147483647",
                                "-2147483648",
                                "2147483648",
                                "-2147483649",
                                "9223372036854775807",
                                "-9223372036854775808"};
  Listpack lp = Build(v);
  EXPECT_EQ(Hex(lp.bytes()),
            "7d0000001700000101017f01c08002dfff02d00002cfff02f1001003f1ffef03f1ff7f03f1008003f2"
            "00800004f2ff7fff04f2ffff7f04f200008004f30000800005f3ffff7fff05f3ffffff7f05f3000000"
            "8005f4000000800000000009f4ffffff7fffffffff09f4ffffffffffffff7f09f40000000000000080"
            "09ff");
  for (auto p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) EXPECT_TRUE(lp.Get(p).is_int());
  EXPECT_EQ(Contents(lp), v);
  EXPECT_EQ(lp.Get(lp.Seek(-1)).int_value(), INT64_MIN);
  EXPECT_EQ(lp.Get(lp.Seek(-2)).int_value(), INT64_MAX);
}

TEST(ListpackTest, NonCanonicalIntegersStayStringsLikeRedis) {
  std::vector<std::string> v = {"-0", "01", "+1", " 1", "1 ", "9223372036854775808",
                                "-9223372036854775809", "", "a", "12a", "00"};
  Listpack lp = Build(v);
  EXPECT_EQ(Hex(lp.bytes()),
            "540000000b00822d300382303103822b31038220310382312003933932323333373230333638353437"
            "373538303814942d39323233333732303336383534373735383039158001816102833132610482303003"
            "ff");
  for (auto p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) EXPECT_FALSE(lp.Get(p).is_int());
  EXPECT_EQ(Contents(lp), v);
}

TEST(ListpackTest, StringLengthClassesMatchRedis) {
  Listpack lp = Build({std::string(63, 'x'), std::string(64, 'y')});
  EXPECT_EQ(Hex(lp.bytes()), "8b0000000200bf" + Hex(std::string(63, 'x')) + "40e040" +
                                 Hex(std::string(64, 'y')) + "42ff");
  struct Case {
    size_t len;
    char c;
    size_t total;
    std::string head, tail;
  };
  // Heads and tails of single-element listpacks dumped by redis-server 7.0.
  for (const Case& k : {Case{4095, 'x', 4106, "0a1000000100efff78787878", "7878782081ff"},
                        Case{4096, 'y', 4110, "0e1000000100f00010000079", "7979792085ff"},
                        Case{20000, 'z', 20015, "2f4e00000100f0204e00007a", "7a7a019ca5ff"},
                        Case{70000, 'w', 70015, "7f1101000100f07011010077", "777704a2f5ff"}}) {
    Listpack one = Build({std::string(k.len, k.c)});
    std::string h = Hex(one.bytes());
    EXPECT_EQ(one.total_bytes(), k.total);
    EXPECT_EQ(h.substr(0, 24), k.head) << k.len;
    EXPECT_EQ(h.substr(h.size() - 12), k.tail) << k.len;
    EXPECT_EQ(one.Get(one.First()).str_value(), std::string(k.len, k.c));
    EXPECT_EQ(one.Get(one.Last()).str_value().size(), k.len);
    EXPECT_TRUE(ListpackView::Validate(one.bytes()));
  }
}

TEST(ListpackTest, EncodedSizeBoundaries) {
  EXPECT_EQ(ListpackView::EncodedSize("127"), 2u);
  EXPECT_EQ(ListpackView::EncodedSize("128"), 3u);
  EXPECT_EQ(ListpackView::EncodedSize(std::string(63, 'a')), 65u);
  EXPECT_EQ(ListpackView::EncodedSize(std::string(64, 'a')), 67u);   // 2 + 64 + 1
  EXPECT_EQ(ListpackView::EncodedSize(std::string(125, 'a')), 128u);  // entry 127: 1-byte backlen
  EXPECT_EQ(ListpackView::EncodedSize(std::string(126, 'a')), 130u);  // entry 128: 2-byte backlen
  EXPECT_EQ(ListpackView::EncodedSize(std::string(4095, 'a')), 4099u);
  EXPECT_EQ(ListpackView::EncodedSize(std::string(4096, 'a')), 4103u);
  EXPECT_EQ(ListpackView::EncodedSize(std::string(16377, 'a')), 16384u);  // entry 16382: 2 bytes
  EXPECT_EQ(ListpackView::EncodedSize(std::string(16378, 'a')), 16386u);  // entry 16383: 3 bytes
}

TEST(ListpackTest, PushBothEndsAndBackwardTraversal) {
  Listpack lp;
  std::deque<std::string> ref;
  for (int i = 0; i < 300; ++i) {
    std::string v = i % 3 == 0 ? std::to_string(i * 1000 - 7000) : std::string(i % 200, 'a' + i % 26);
    if (i % 2) {
      lp.Push(v, ListEnd::kHead);
      ref.push_front(v);
    } else {
      lp.Push(v, ListEnd::kTail);
      ref.push_back(v);
    }
  }
  EXPECT_EQ(lp.size(), ref.size());
  EXPECT_EQ(Contents(lp), std::vector<std::string>(ref.begin(), ref.end()));
  EXPECT_EQ(ContentsBackward(lp), std::vector<std::string>(ref.rbegin(), ref.rend()));
  for (long i = 0; i < static_cast<long>(ref.size()); ++i) {
    EXPECT_EQ(lp.Get(lp.Seek(i)).ToString(), ref[i]);
    EXPECT_EQ(lp.Get(lp.Seek(i - static_cast<long>(ref.size()))).ToString(), ref[i]);
  }
  EXPECT_EQ(lp.Seek(300), Listpack::kNoPos);
  EXPECT_EQ(lp.Seek(-301), Listpack::kNoPos);
  EXPECT_TRUE(ListpackView::Validate(lp.bytes()));
}

TEST(ListpackTest, InsertReplaceDeleteInTheMiddle) {
  Listpack lp = Build({"a", "b", "c", "d"});
  auto p = lp.Seek(1);
  lp.Insert(p, Where::kBefore, "x");                     // a x b c d
  lp.Insert(lp.Seek(2), Where::kAfter, std::string(5000, 'L'));  // a x b L c d
  EXPECT_EQ(Contents(lp), (std::vector<std::string>{"a", "x", "b", std::string(5000, 'L'), "c", "d"}));
  lp.Replace(lp.Seek(3), "42");  // shrink
  lp.Replace(lp.Seek(0), std::string(200, 'A'));  // grow: 2-byte backlen
  EXPECT_EQ(Contents(lp), (std::vector<std::string>{std::string(200, 'A'), "x", "b", "42", "c", "d"}));
  EXPECT_EQ(ContentsBackward(lp).front(), "d");
  auto next = lp.Delete(lp.Seek(2));
  EXPECT_EQ(lp.Get(next).ToString(), "42");
  EXPECT_EQ(lp.Delete(lp.Seek(-1)), Listpack::kNoPos);
  EXPECT_EQ(Contents(lp), (std::vector<std::string>{std::string(200, 'A'), "x", "42", "c"}));
  EXPECT_EQ(lp.DeleteRange(1L, 2), 2u);
  EXPECT_EQ(Contents(lp), (std::vector<std::string>{std::string(200, 'A'), "c"}));
  EXPECT_EQ(lp.DeleteRange(-1L, 10), 1u);
  EXPECT_EQ(lp.size(), 1u);
  EXPECT_EQ(lp.DeleteRange(5L, 1), 0u);
  EXPECT_TRUE(ListpackView::Validate(lp.bytes()));
}

TEST(ListpackTest, FindAndRemoveMatches) {
  Listpack lp = Build({"1", "a", "1", "b", "01", "1", "a"});
  EXPECT_EQ(lp.Find("1", lp.First()), lp.Seek(0));
  EXPECT_EQ(lp.Find("01", lp.First()), lp.Seek(4));
  EXPECT_EQ(lp.Find("zz", lp.First()), Listpack::kNoPos);
  // skip=1: look at fields 0, 2, 4, 6 only.
  EXPECT_EQ(lp.Find("b", lp.First(), 1), Listpack::kNoPos);
  EXPECT_EQ(lp.Find("a", lp.First(), 1), lp.Seek(6));
  Listpack a = Build({"1", "a", "1", "b", "01", "1", "a"});
  EXPECT_EQ(a.RemoveMatches("1", 2, ListEnd::kTail), 2u);
  EXPECT_EQ(Contents(a), (std::vector<std::string>{"1", "a", "b", "01", "a"}));
  EXPECT_EQ(a.RemoveMatches("a", 0, ListEnd::kHead), 2u);
  EXPECT_EQ(Contents(a), (std::vector<std::string>{"1", "b", "01"}));
  EXPECT_EQ(a.RemoveMatches("1", 1, ListEnd::kHead), 1u);
  EXPECT_EQ(a.RemoveMatches("nope", 0, ListEnd::kHead), 0u);
  EXPECT_EQ(Contents(a), (std::vector<std::string>{"b", "01"}));
  EXPECT_TRUE(ListpackView::Validate(a.bytes()));
}

TEST(ListpackTest, ValueEquals) {
  EXPECT_TRUE(ListpackValue::Int(-12).Equals("-12"));
  EXPECT_FALSE(ListpackValue::Int(12).Equals("012"));
  EXPECT_TRUE(ListpackValue::Str("x").Equals("x"));
  EXPECT_EQ(ListpackValue::Int(INT64_MIN).ToString(), "-9223372036854775808");
}

TEST(ListpackTest, SplitAndAppend) {
  std::vector<std::string> v;
  for (int i = 0; i < 50; ++i) v.push_back(i % 2 ? std::to_string(i) : absl::StrCat("s", i));
  Listpack lp = Build(v);
  Listpack right = lp.SplitAt(lp.Seek(20));
  EXPECT_EQ(lp.size(), 20u);
  EXPECT_EQ(right.size(), 30u);
  EXPECT_TRUE(ListpackView::Validate(lp.bytes()));
  EXPECT_TRUE(ListpackView::Validate(right.bytes()));
  lp.Append(right.view());
  EXPECT_EQ(Contents(lp), v);
  EXPECT_EQ(lp.bytes(), Build(v).bytes());
}

TEST(ListpackTest, SaturatedCount) {
  Listpack lp;
  for (int i = 0; i < 70000; ++i) lp.Push(std::to_string(i % 100), ListEnd::kTail);
  EXPECT_EQ(lp.size(), 70000u);
  EXPECT_EQ(Hex(lp.bytes().substr(4, 2)), "ffff");
  EXPECT_TRUE(ListpackView::Validate(lp.bytes()));
  EXPECT_EQ(lp.Get(lp.Seek(-1)).int_value(), 99);
  lp.DeleteRange(0L, 10000);
  EXPECT_EQ(lp.size(), 60000u);
  EXPECT_EQ(Hex(lp.bytes().substr(4, 2)), "60ea");  // count known again: 60000
  EXPECT_TRUE(ListpackView::Validate(lp.bytes()));
}

TEST(ListpackTest, AdoptCopyRelease) {
  Listpack lp = Build({"a", "1"});
  Listpack copy = Listpack::Copy(lp.bytes());
  EXPECT_EQ(copy.bytes(), lp.bytes());
  uint8_t* raw = copy.Release();
  Listpack back = Listpack::Adopt(raw);
  EXPECT_EQ(Contents(back), (std::vector<std::string>{"a", "1"}));
  EXPECT_GE(back.MallocUsage(), back.total_bytes());
}

TEST(ListpackTest, ValidateRejectsCorruption) {
  Listpack lp = Build({"a", "12345", std::string(100, 'q'), "-7", std::string(5000, 'z')});
  std::string good(lp.bytes());
  ASSERT_TRUE(ListpackView::Validate(good));
  EXPECT_FALSE(ListpackView::Validate(""));
  EXPECT_FALSE(ListpackView::Validate(Unhex("0700000000ff")));
  EXPECT_FALSE(ListpackView::Validate(Unhex("07000000000000")));  // no terminator
  EXPECT_FALSE(ListpackView::Validate(Unhex("08000000000000ff")));  // size mismatch
  EXPECT_FALSE(ListpackView::Validate(Unhex("0a0000000200816102ff")));
  // Wrong count.
  std::string bad = good;
  bad[4] = 9;
  EXPECT_FALSE(ListpackView::Validate(bad));
  // Every truncation (with a fixed-up header and terminator) must fail, never crash.
  for (size_t n = 7; n < good.size(); ++n) {
    std::string t = good.substr(0, n);
    uint32_t sz = static_cast<uint32_t>(n);
    std::memcpy(t.data(), &sz, 4);
    t.back() = '\xff';
    EXPECT_FALSE(ListpackView::Validate(t)) << n;
  }
  // Random byte flips: must not crash; when accepted, the contents must be walkable.
  std::mt19937 rng(7);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string c = good;
    int flips = 1 + rng() % 3;
    for (int f = 0; f < flips; ++f) c[rng() % c.size()] = static_cast<char>(rng());
    if (ListpackView::Validate(c)) {
      ++accepted;
      ListpackView v(reinterpret_cast<const uint8_t*>(c.data()));
      size_t n = 0;
      for (auto p = v.First(); p != ListpackView::kNoPos; p = v.Next(p)) {
        v.Get(p).ToString();
        ++n;
      }
      size_t back = 0;
      for (auto p = v.Last(); p != ListpackView::kNoPos; p = v.Prev(p)) ++back;
      EXPECT_EQ(n, back);
    }
  }
  EXPECT_LT(accepted, 20000);
}

TEST(ListpackTest, ValidateCallbackCanReject) {
  Listpack lp = Build({"a", "b", "a"});
  int seen = 0;
  EXPECT_TRUE(ListpackView::Validate(lp.bytes(), [&](ListpackValue) { return ++seen > 0; }));
  EXPECT_EQ(seen, 3);
  EXPECT_FALSE(ListpackView::Validate(lp.bytes(), [](ListpackValue v) { return !v.Equals("b"); }));
}

TEST(ListpackTest, RandomDifferential) {
  std::mt19937 rng(42);
  Listpack lp;
  std::vector<std::string> ref;
  auto rand_val = [&]() -> std::string {
    switch (rng() % 5) {
      case 0:
        return std::to_string(static_cast<int64_t>(rng()) - (1LL << 31));
      case 1:
        return std::to_string(static_cast<int64_t>(rng() % 300) - 150);
      case 2:
        return std::string(rng() % 70, 'a' + rng() % 26);
      case 3:
        return std::string(rng() % 5000, 'A' + rng() % 26);
      default:
        return std::to_string((static_cast<int64_t>(rng()) << 32) | rng());
    }
  };
  for (int step = 0; step < 20000; ++step) {
    unsigned op = rng() % 6;
    long n = static_cast<long>(ref.size());
    if (op <= 1 || n == 0) {
      std::string v = rand_val();
      ListEnd end = rng() % 2 ? ListEnd::kHead : ListEnd::kTail;
      lp.Push(v, end);
      if (end == ListEnd::kHead) ref.insert(ref.begin(), v); else ref.push_back(v);
    } else if (op == 2) {
      long i = rng() % n;
      std::string v = rand_val();
      Where w = rng() % 2 ? Where::kBefore : Where::kAfter;
      lp.Insert(lp.Seek(i), w, v);
      ref.insert(ref.begin() + i + (w == Where::kAfter ? 1 : 0), v);
    } else if (op == 3) {
      long i = rng() % n;
      std::string v = rand_val();
      lp.Replace(lp.Seek(i), v);
      ref[i] = v;
    } else if (op == 4) {
      long i = rng() % n;
      size_t c = rng() % 4;
      size_t d = lp.DeleteRange(i, c);
      size_t expect = std::min<size_t>(c, n - i);
      EXPECT_EQ(d, expect);
      ref.erase(ref.begin() + i, ref.begin() + i + expect);
    } else {
      long i = rng() % n;
      EXPECT_EQ(lp.Get(lp.Seek(i)).ToString(), ref[i]);
    }
    if (ref.size() > 400) {
      lp.DeleteRange(0L, 200);
      ref.erase(ref.begin(), ref.begin() + 200);
    }
    ASSERT_EQ(lp.size(), ref.size());
    if (step % 500 == 0) {
      ASSERT_TRUE(ListpackView::Validate(lp.bytes()));
      ASSERT_EQ(Contents(lp), ref);
      std::vector<std::string> rev(ref.rbegin(), ref.rend());
      ASSERT_EQ(ContentsBackward(lp), rev);
    }
  }
}

}  // namespace
}  // namespace dashkv
