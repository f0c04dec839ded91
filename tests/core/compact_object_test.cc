#include "core/compact_object.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/hash.h"
#include "core/memory.h"

namespace dashkv {
namespace {

// Representation of a string, observed through the public API.
enum class Form { kInt, kInline, kHeap };

Form FormOf(const CompactObj& o) {
  if (o.IsIntEncoded()) return Form::kInt;
  return o.IsInline() ? Form::kInline : Form::kHeap;
}

// Checks every read accessor of `o` against the expected bytes `s`.
void ExpectHolds(const CompactObj& o, std::string_view s) {
  SCOPED_TRACE(testing::PrintToString(std::string(s)));
  ASSERT_TRUE(o.IsString());
  EXPECT_EQ(o.type(), ObjType::kString);
  EXPECT_EQ(o.StringSize(), s.size());
  std::string scratch;
  EXPECT_EQ(o.GetString(&scratch), s);
  EXPECT_EQ(o.ToString(), s);
  std::string out = "x";
  o.AppendTo(&out);
  EXPECT_EQ(out.substr(1), s);
  EXPECT_EQ(out[0], 'x');
  EXPECT_TRUE(o.EqualsString(s));
  EXPECT_EQ(o.Hash(), HashBytes(s));
  if (!s.empty()) {
    std::string other(s);
    other.back() = static_cast<char>(other.back() ^ 1);
    EXPECT_FALSE(o.EqualsString(other));
    EXPECT_FALSE(o.EqualsString(s.substr(0, s.size() - 1)));
  }
  std::string longer(s);
  longer.push_back('a');
  EXPECT_FALSE(o.EqualsString(longer));
}

// Strings of every boundary and the form each must take.
std::vector<std::pair<std::string, Form>> BoundaryCases() {
  std::vector<std::pair<std::string, Form>> cases = {
      {"", Form::kInline},
      {"a", Form::kInline},
      {std::string(15, 'x'), Form::kInline},
      {std::string(16, 'x'), Form::kInline},  // packed
      {std::string(17, 'x'), Form::kInline},  // packed
      {std::string(18, 'x'), Form::kHeap},
      {std::string(15, '\xff'), Form::kInline},
      {std::string(16, '\xff'), Form::kHeap},  // not ASCII: cannot pack
      {std::string(16, 'x').append(1, '\x80'), Form::kHeap},
      {std::string(1, '\x80').append(15, 'x'), Form::kHeap},
      {std::string("value:12\0\0\0\0\0\0\0\0", 16), Form::kInline},
      {std::string(16, '\x7f'), Form::kInline},
      {std::string(17, '\0'), Form::kInline},
      {std::string(100, 'q'), Form::kHeap},
      {std::string(5000, 'z'), Form::kHeap},
      {"0", Form::kInt},
      {"-1", Form::kInt},
      {"123456789", Form::kInt},
      {"9223372036854775807", Form::kInt},
      {"-9223372036854775808", Form::kInt},
      {"9223372036854775808", Form::kHeap},   // 19 digits, overflows: 19 > 17
      {"-9223372036854775809", Form::kHeap},  // 20 chars, overflows
      {"-0", Form::kInline},
      {"007", Form::kInline},
      {"00", Form::kInline},
      {"+1", Form::kInline},
      {" 1", Form::kInline},
      {"1 ", Form::kInline},
      {"-", Form::kInline},
      {"1a", Form::kInline},
      {"12345678901234567", Form::kInt},
  };
  std::string mixed;
  for (int i = 0; i < 17; ++i) mixed.push_back(static_cast<char>(i * 7 + 1));
  cases.push_back({mixed, Form::kInline});
  return cases;
}

TEST(CompactObjTest, Layout) {
  static_assert(sizeof(CompactObj) == 16);
  static_assert(alignof(CompactObj) <= 8);
  static_assert(!std::is_copy_constructible_v<CompactObj>);
  static_assert(std::is_nothrow_move_constructible_v<CompactObj>);
  CompactObj empty;
  ExpectHolds(empty, "");
  EXPECT_EQ(empty.MallocUsed(), 0u);
}

TEST(CompactObjTest, BoundariesAndHash) {
  for (const auto& [s, form] : BoundaryCases()) {
    SCOPED_TRACE(s.size());
    CompactObj o = CompactObj::FromString(s);
    ExpectHolds(o, s);
    EXPECT_EQ(FormOf(o), form) << testing::PrintToString(s);
    EXPECT_EQ(o.MallocUsed() > 0, form == Form::kHeap);
    if (form == Form::kHeap) {
      EXPECT_GE(o.MallocUsed(), s.size());
    }
    CompactObj set;
    set.SetString(s);
    ExpectHolds(set, s);
  }
}

TEST(CompactObjTest, KeysAreNotIntEncoded) {
  for (const auto& [s, form] : BoundaryCases()) {
    CompactObj key = CompactObj::FromKey(s);
    ExpectHolds(key, s);
    EXPECT_EQ(key.IsIntEncoded(), form == Form::kInt && s.size() > CompactObj::kPackedMax);
    EXPECT_EQ(FormOf(key), form == Form::kInt && !key.IsIntEncoded() ? Form::kInline : form);
    EXPECT_TRUE(key.Equals(CompactObj::FromString(s)));
    EXPECT_EQ(key.Hash(), CompactObj::FromString(s).Hash());
  }
}

TEST(CompactObjTest, IntegersAndTryGetInt) {
  int64_t v = 0;
  for (int64_t x : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{42}, int64_t{-1000000},
                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    CompactObj o = CompactObj::FromInt(x);
    ExpectHolds(o, std::to_string(x));
    ASSERT_TRUE(o.TryGetInt(&v));
    EXPECT_EQ(v, x);
    EXPECT_EQ(o.EncodingName(), "int");
  }
  for (const char* bad : {"-0", "007", "+1", " 1", "1 ", "", "-", "9223372036854775808", "1.5"}) {
    CompactObj o = CompactObj::FromString(bad);
    EXPECT_FALSE(o.IsIntEncoded()) << bad;
    EXPECT_FALSE(o.TryGetInt(&v)) << bad;
  }
  // A canonical integer left as raw bytes by an in-place edit still parses.
  CompactObj o = CompactObj::FromString("12");
  o.AppendString("3");
  EXPECT_FALSE(o.IsIntEncoded());
  ASSERT_TRUE(o.TryGetInt(&v));
  EXPECT_EQ(v, 123);
  EXPECT_EQ(o.EncodingName(), "raw");
}

TEST(CompactObjTest, IntLengthsAtPowersOfTen) {
  int64_t p = 1;
  for (int digits = 1; digits <= 18; ++digits, p *= 10) {
    for (int64_t x : {p - 1, p, p + 1, -p + 1, -p, -p - 1}) {
      std::string s = std::to_string(x);
      CompactObj o = CompactObj::FromString(s);
      EXPECT_TRUE(o.IsIntEncoded()) << s;
      ExpectHolds(o, s);
      EXPECT_FALSE(o.EqualsString(std::to_string(x + 1)));
    }
  }
}

// DEBUG POPULATE n key 16 creates "key:<i>" keys and "value:<i>" values zero-padded to 16
// bytes: both must fit in their 16 bytes with no allocation.
TEST(CompactObjTest, PopulateShapesNeedNoAllocation) {
  std::vector<CompactObj> objs;
  objs.reserve(2000);
  int64_t before = ThreadUsedMemory();
  for (int64_t i : {int64_t{0}, int64_t{9999999}, int64_t{99999999999}}) {
    for (int j = 0; j < 1000; ++j) {
      std::string key = "key:" + std::to_string(i + j);
      std::string value = "value:" + std::to_string(i + j);
      value.resize(16, '\0');
      CompactObj k = CompactObj::FromString(key);
      CompactObj v = CompactObj::FromString(value);
      EXPECT_TRUE(k.IsInline());
      EXPECT_TRUE(v.IsInline());
      EXPECT_EQ(v.EncodingName(), "embstr");
      EXPECT_EQ(v.Hash(), HashBytes(value));
      if (i == 0) {
        objs.push_back(std::move(k));
        objs.push_back(std::move(v));
      }
    }
  }
  EXPECT_EQ(ThreadUsedMemory() - before, 0);  // the temporary std::strings were freed
}

TEST(CompactObjTest, EqualityAcrossForms) {
  auto cases = BoundaryCases();
  for (const auto& [a, fa] : cases) {
    CompactObj oa = CompactObj::FromString(a);
    for (const auto& [b, fb] : cases) {
      CompactObj ob = CompactObj::FromString(b);
      EXPECT_EQ(oa.Equals(ob), a == b);
      EXPECT_EQ(oa.EqualsString(b), a == b);
    }
  }
  // The same bytes in different forms are equal.
  CompactObj packed = CompactObj::FromString(std::string(16, 'k'));
  CompactObj heap = CompactObj::FromString(std::string(16, 'k'));
  heap.SetExpireTimeMs(5);
  EXPECT_TRUE(packed.Equals(heap));
  EXPECT_TRUE(heap.Equals(packed));
  CompactObj as_int = CompactObj::FromInt(77);
  CompactObj raw = CompactObj::FromString("7");
  raw.AppendString("7");
  EXPECT_TRUE(as_int.Equals(raw));
  EXPECT_EQ(as_int.Hash(), raw.Hash());
}

TEST(CompactObjTest, EncodingNames) {
  EXPECT_EQ(CompactObj::FromString("hello").EncodingName(), "embstr");
  EXPECT_EQ(CompactObj::FromString(std::string(44, 'a')).EncodingName(), "embstr");
  EXPECT_EQ(CompactObj::FromString(std::string(45, 'a')).EncodingName(), "raw");
  EXPECT_EQ(CompactObj::FromString("-5").EncodingName(), "int");
  CompactObj o = CompactObj::FromString("abc");
  o.MarkRaw();
  EXPECT_TRUE(o.IsRaw());
  EXPECT_EQ(o.EncodingName(), "raw");
  o.SetString("abc");  // SET makes a fresh embstr
  EXPECT_EQ(o.EncodingName(), "embstr");
  o.MarkRaw();
  o.SetInt(3);
  EXPECT_EQ(o.EncodingName(), "int");
}

TEST(CompactObjTest, SetStringMayAliasItself) {
  for (const auto& [s, form] : BoundaryCases()) {
    CompactObj o = CompactObj::FromString(s);
    std::string scratch;
    std::string_view view = o.GetString(&scratch);
    o.SetString(view.substr(view.size() / 2));
    ExpectHolds(o, std::string_view(s).substr(s.size() / 2));
  }
}

TEST(CompactObjTest, MoveAndClone) {
  CompactObj a = CompactObj::FromString(std::string(300, 'm'));
  a.set_user_flags(2);
  CompactObj b(std::move(a));
  ExpectHolds(b, std::string(300, 'm'));
  ExpectHolds(a, "");  // NOLINT(bugprone-use-after-move): moved-from is the empty string
  EXPECT_EQ(b.user_flags(), 2);
  CompactObj c = CompactObj::FromString("short");
  c = std::move(b);  // frees "short"; takes the heap block
  ExpectHolds(c, std::string(300, 'm'));
  c = std::move(c);  // self-move keeps the value
  ExpectHolds(c, std::string(300, 'm'));
  CompactObj d = c.Clone();
  EXPECT_EQ(d.user_flags(), 2);
  ExpectHolds(d, std::string(300, 'm'));
  d.AppendString("x");
  ExpectHolds(c, std::string(300, 'm'));  // deep copy
  c.SetExpireTimeMs(99);
  CompactObj e = c.Clone();
  EXPECT_TRUE(e.HasExpire());
  EXPECT_EQ(e.ExpireTimeMs(), 99);
  ExpectHolds(e, std::string(300, 'm'));
}

TEST(CompactObjTest, RelocateByMemcpy) {
  alignas(8) unsigned char raw[sizeof(CompactObj)];
  {
    CompactObj src = CompactObj::FromString(std::string(40, 'r'));
    std::memcpy(raw, &src, sizeof(src));
    new (&src) CompactObj();  // forget the source without freeing the block
  }
  auto* moved = std::launder(reinterpret_cast<CompactObj*>(raw));
  ExpectHolds(*moved, std::string(40, 'r'));
  moved->~CompactObj();
}

TEST(CompactObjTest, ExpiryKeepsStringAndHash) {
  for (const auto& [s, form] : BoundaryCases()) {
    CompactObj o = CompactObj::FromString(s);
    o.set_user_flags(3);
    EXPECT_FALSE(o.HasExpire());
    o.SetExpireTimeMs(1234567890123);
    EXPECT_TRUE(o.HasExpire());
    EXPECT_EQ(o.ExpireTimeMs(), 1234567890123);
    ExpectHolds(o, s);
    o.SetExpireTimeMs(-5);
    EXPECT_EQ(o.ExpireTimeMs(), -5);
    ExpectHolds(o, s);
    EXPECT_GT(o.MallocUsed(), 0u);
    o.ClearExpire();
    EXPECT_FALSE(o.HasExpire());
    ExpectHolds(o, s);
    EXPECT_EQ(FormOf(o), FormOf(CompactObj::FromKey(s)));
    EXPECT_EQ(o.user_flags(), 3);
    o.ClearExpire();  // no-op
    ExpectHolds(o, s);
  }
}

TEST(CompactObjTest, SetStringDropsExpiryKeepsFlags) {
  CompactObj o = CompactObj::FromString("key");
  o.set_user_flags(1);
  o.SetExpireTimeMs(10);
  o.SetString("other");
  EXPECT_FALSE(o.HasExpire());
  EXPECT_EQ(o.user_flags(), 1);
  ExpectHolds(o, "other");
}

TEST(CompactObjTest, ResizeAndAppend) {
  CompactObj o = CompactObj::FromString("ab");
  o.AppendString("cd");
  ExpectHolds(o, "abcd");
  EXPECT_TRUE(o.IsInline());
  EXPECT_EQ(o.EncodingName(), "raw");
  std::string expect = "abcd";
  for (int i = 0; i < 2000; ++i) {
    std::string piece(i % 7 + 1, static_cast<char>('a' + i % 26));
    o.AppendString(piece);
    expect += piece;
  }
  ExpectHolds(o, expect);
  EXPECT_GE(o.MallocUsed(), expect.size());
  EXPECT_LE(o.MallocUsed(), 3 * expect.size());

  // SETRANGE-style: grow with zero fill, write in the middle.
  CompactObj r = CompactObj::FromString(std::string(16, 'p'));  // packed
  absl::Span<char> bytes = r.ResizeString(20);
  bytes[18] = 'Z';
  ExpectHolds(r, std::string(16, 'p') + std::string("\0\0Z\0", 4));
  // SETBIT-style on an int: becomes raw bytes.
  CompactObj i = CompactObj::FromInt(9);
  absl::Span<char> ib = i.ResizeString(3);
  ib[0] = 'A';
  ExpectHolds(i, std::string("A\0\0", 3));
  EXPECT_EQ(i.EncodingName(), "raw");
  // Shrink.
  CompactObj s = CompactObj::FromString(std::string(17, 's'));
  s.ResizeString(5);
  ExpectHolds(s, "sssss");
  CompactObj h = CompactObj::FromString(std::string(50, 'h'));
  h.ResizeString(10);
  ExpectHolds(h, std::string(10, 'h'));
  h.ResizeString(0);
  ExpectHolds(h, "");
}

TEST(CompactObjTest, MutateString) {
  CompactObj o = CompactObj::FromString("hello");
  o.MutateString([](std::string* s) { s->append(" world"); });
  ExpectHolds(o, "hello world");
  EXPECT_EQ(o.EncodingName(), "raw");
}

class DummyObject : public ObjectBase {
 public:
  explicit DummyObject(int* live) : live_(live) { ++*live_; }
  ~DummyObject() override { --*live_; }
  size_t MallocUsed() const override { return 1000; }
  std::string_view EncodingName() const override { return "listpack"; }

 private:
  int* live_;
};

TEST(CompactObjTest, Objects) {
  int live = 0;
  {
    CompactObj o;
    o.set_user_flags(1);
    o.SetObject(ObjType::kList, 7, new DummyObject(&live));
    EXPECT_EQ(live, 1);
    EXPECT_FALSE(o.IsString());
    EXPECT_FALSE(o.IsInline());
    EXPECT_EQ(o.type(), ObjType::kList);
    EXPECT_EQ(o.object_encoding(), 7);
    o.set_object_encoding(8);
    EXPECT_EQ(o.object_encoding(), 8);
    EXPECT_EQ(o.type(), ObjType::kList);
    EXPECT_EQ(o.MallocUsed(), 1000u);
    EXPECT_EQ(o.EncodingName(), "listpack");
    EXPECT_EQ(o.user_flags(), 1);
    EXPECT_FALSE(o.EqualsString(""));
    int64_t v;
    EXPECT_FALSE(o.TryGetInt(&v));
    ASSERT_NE(o.GetObject(), nullptr);

    CompactObj moved(std::move(o));
    EXPECT_EQ(moved.type(), ObjType::kList);
    EXPECT_EQ(o.GetObject(), nullptr);  // NOLINT(bugprone-use-after-move)
    moved.SetObject(ObjType::kZset, 1, new DummyObject(&live));  // frees the first
    EXPECT_EQ(live, 1);
    ObjectBase* released = moved.ReleaseObject();
    ExpectHolds(moved, "");
    delete released;
    EXPECT_EQ(live, 0);
    moved.SetObject(ObjType::kHash, 0, new DummyObject(&live));
    moved.SetString("now a string");  // frees the object
    EXPECT_EQ(live, 0);
    moved.SetObject(ObjType::kSet, 0, new DummyObject(&live));
  }
  EXPECT_EQ(live, 0);  // destructor freed it
}

TEST(CompactObjTest, UserFlags) {
  CompactObj o = CompactObj::FromString(std::string(17, 'u'));
  for (uint8_t f = 0; f <= CompactObj::kUserFlagsMask; ++f) {
    o.set_user_flags(f);
    EXPECT_EQ(o.user_flags(), f);
    ExpectHolds(o, std::string(17, 'u'));
  }
  o.MarkRaw();
  o.set_user_flags(0);
  EXPECT_TRUE(o.IsRaw());
}

TEST(CompactObjTest, RandomRoundTrip) {
  uint64_t state = 88172645463325252ULL;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int i = 0; i < 20000; ++i) {
    size_t len = next() % 24;
    bool ascii = next() % 2 == 0;
    std::string s;
    for (size_t j = 0; j < len; ++j) {
      s.push_back(static_cast<char>(ascii ? next() % 128 : next() % 256));
    }
    CompactObj o = CompactObj::FromString(s);
    ExpectHolds(o, s);
    if (ascii && (len == 16 || len == 17)) {
      EXPECT_TRUE(o.IsInline());
    }
  }
}

// The spare bytes 12..14: which forms have them, and that no form reads them as string bytes.
TEST(CompactObjTest, AuxRoomPerForm) {
  struct Case {
    std::string s;
    bool room;
  };
  const std::vector<Case> cases = {
      {"", true},
      {"abc", true},
      {std::string(12, 'a'), true},            // inline raw, <= 12
      {std::string(13, 'a'), false},           // inline raw 13..15
      {std::string(15, 'a'), false},
      {std::string(16, 'a'), false},           // packed
      {std::string(17, 'a'), false},
      {std::string(16, '\xe9'), true},         // non-ASCII 16: heap
      {std::string(18, 'a'), true},            // heap
      {"12345", true},                         // int
      {"-9223372036854775808", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.s.size());
    CompactObj o = CompactObj::FromString(c.s);
    EXPECT_EQ(o.HasAuxRoom(), c.room);
    EXPECT_EQ(o.aux(), 0u);
    o.set_aux(0xabcdef);
    EXPECT_EQ(o.aux(), c.room ? 0xabcdefu : 0u);
    ExpectHolds(o, c.s);  // bytes, Hash() and EqualsString() ignore the spare bytes
    CompactObj plain = CompactObj::FromString(c.s);
    EXPECT_TRUE(o.Equals(plain));
    EXPECT_TRUE(plain.Equals(o));
    CompactObj moved(std::move(o));
    EXPECT_EQ(moved.aux(), c.room ? 0xabcdefu : 0u);
    EXPECT_EQ(moved.Clone().aux(), moved.aux());
  }
}

TEST(CompactObjTest, AuxKeptBySettersWhenBothFormsHaveRoom) {
  CompactObj o = CompactObj::FromString("short");
  o.set_aux(0x123456);
  o.SetString(std::string(100, 'x'));  // inline -> heap
  EXPECT_EQ(o.aux(), 0x123456u);
  o.SetInt(42);  // heap -> int
  EXPECT_EQ(o.aux(), 0x123456u);
  o.SetString("abc");  // int -> inline
  EXPECT_EQ(o.aux(), 0x123456u);
  o.AppendString("defgh");  // inline stays inline (8 bytes)
  EXPECT_EQ(o.aux(), 0x123456u);
  o.AppendString(std::string(40, 'y'));  // inline -> heap in place growth
  EXPECT_EQ(o.aux(), 0x123456u);
  ExpectHolds(o, "abcdefgh" + std::string(40, 'y'));
  o.ResizeString(3);  // heap stays heap
  EXPECT_EQ(o.aux(), 0x123456u);
  struct Dummy : ObjectBase {
    size_t MallocUsed() const override { return sizeof(*this); }
  };
  o.SetObject(ObjType::kList, 0, new Dummy());
  EXPECT_TRUE(o.HasAuxRoom());
  EXPECT_EQ(o.aux(), 0x123456u);
  delete o.ReleaseObject();
  EXPECT_EQ(o.aux(), 0x123456u);
  // A form without room loses them; regaining room starts at 0.
  o.SetString(std::string(14, 'z'));
  EXPECT_FALSE(o.HasAuxRoom());
  o.SetString(std::string(30, 'z'));
  EXPECT_EQ(o.aux(), 0u);
  // In-place growth into the 13..15 range loses them too.
  o.SetString("ab");
  o.set_aux(7);
  o.ResizeString(13);
  EXPECT_EQ(o.aux(), 0u);
  ExpectHolds(o, std::string("ab") + std::string(11, '\0'));
}

TEST(CompactObjTest, AuxKeptAcrossExpiry) {
  for (size_t len : {5, 12, 20, 40}) {
    SCOPED_TRACE(len);
    std::string k(len, 'k');
    CompactObj key = CompactObj::FromKey(k);
    key.set_aux(0x00beef);
    key.SetExpireTimeMs(1000);
    EXPECT_EQ(key.aux(), 0x00beefu);
    key.SetExpireTimeMs(2000);
    EXPECT_EQ(key.aux(), 0x00beefu);
    key.ClearExpire();
    EXPECT_EQ(key.aux(), 0x00beefu);
    EXPECT_EQ(key.Hash(), HashBytes(k));
  }
  // A 15-byte key has no room without an expiry, and room with one.
  CompactObj key = CompactObj::FromKey(std::string(15, 'k'));
  EXPECT_FALSE(key.HasAuxRoom());
  key.SetExpireTimeMs(1000);
  EXPECT_TRUE(key.HasAuxRoom());
  key.set_aux(99);
  key.ClearExpire();
  EXPECT_FALSE(key.HasAuxRoom());
  ExpectHolds(key, std::string(15, 'k'));
}

}  // namespace
}  // namespace dashkv
