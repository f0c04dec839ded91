// DUMP payloads: the serializer and the loader (server/persistence) together, against payloads
// taken from Redis 7.0.15 and hand-made legacy encodings.
#include "server/persistence/dump_payload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/crc64.h"
#include "core/rdb_encoding.h"
#include "core/score.h"
#include "server/values/stream_value.h"

namespace dashkv {
namespace {

std::string Hex(std::string_view hex) {
  return absl::HexStringToBytes(absl::string_view(hex.data(), hex.size()));
}

// Wraps a value body into a payload with a version and a correct CRC.
std::string Wrap(std::string_view body, uint16_t version = kRdbVersion) {
  std::string p(body);
  p.push_back(static_cast<char>(version & 0xff));
  p.push_back(static_cast<char>(version >> 8));
  uint64_t crc = Crc64(0, p);
  for (int i = 0; i < 8; ++i) p.push_back(static_cast<char>(crc >> (8 * i)));
  return p;
}

// A canonical description of a value's content: type, then elements (sorted for sets and
// hashes), independent of the encoding.
std::string Describe(const CompactObj& v) {
  std::string out;
  std::vector<std::string> items;
  switch (v.type()) {
    case ObjType::kString:
      return "string:" + v.ToString();
    case ObjType::kList:
      GetList(v)->Walk(0, ListEnd::kTail, [&](const ListpackValue& e) {
        items.push_back(e.ToString());
        return true;
      });
      out = "list:";
      break;
    case ObjType::kHash:
      static_cast<const HashValue*>(v.GetObject())->ForEach([&](std::string_view f, std::string_view x) {
        items.push_back(std::string(f) + "=" + std::string(x));
      });
      std::sort(items.begin(), items.end());
      out = "hash:";
      break;
    case ObjType::kSet:
      AsSet(v).ForEach([&](std::string_view m) { items.emplace_back(m); });
      std::sort(items.begin(), items.end());
      out = "set:";
      break;
    case ObjType::kZset:
      AsZset(v).Range(0, AsZset(v).size(), false, [&](std::string_view m, double s) {
        items.push_back(std::string(m) + "@" + FormatScoreShortest(s));
      });
      out = "zset:";
      break;
    case ObjType::kStream:
      AsStream(v).Range(StreamID{}, StreamID::Max(), false, 0, [&](const StreamValue::Entry& e) {
        items.push_back(e.id.ToString());
      });
      out = "stream:";
      break;
  }
  for (const std::string& i : items) absl::StrAppend(&out, i, ",");
  return out;
}

absl::StatusOr<CompactObj> Decode(std::string_view payload, const ValueLimits& limits = {}) {
  if (!VerifyDumpPayload(payload)) return absl::DataLossError("footer");
  return DecodeDumpPayload(payload, limits);
}

std::string DescribePayload(std::string_view payload, const ValueLimits& limits = {}) {
  absl::StatusOr<CompactObj> v = Decode(payload, limits);
  if (!v.ok()) return "error:" + std::string(v.status().message());
  return Describe(*v);
}

CompactObj MakeList(const std::vector<std::string>& items, int fill = -2) {
  auto list = std::make_unique<ListValue>();
  ListValue::Options opts;
  opts.fill = fill;
  for (const std::string& s : items) list->Push(s, ListEnd::kTail, opts);
  CompactObj obj;
  uint8_t enc = list->encoding();
  obj.SetObject(ObjType::kList, enc, list.release());
  return obj;
}

CompactObj MakeHash(const std::vector<std::pair<std::string, std::string>>& pairs) {
  auto hash = std::make_unique<HashValue>();
  for (const auto& [f, v] : pairs) hash->Set(f, v, HashValue::Limits{});
  CompactObj obj;
  uint8_t enc = hash->encoding();
  obj.SetObject(ObjType::kHash, enc, hash.release());
  return obj;
}

CompactObj MakeSet(const std::vector<std::string>& members) {
  std::unique_ptr<SetValue> set = SetValue::Create(members[0], members.size(), SetLimits{});
  for (const std::string& m : members) set->Add(m, SetLimits{});
  CompactObj obj;
  obj.SetObject(ObjType::kSet, 0, set.release());
  return obj;
}

CompactObj MakeZset(const std::vector<std::pair<std::string, double>>& elems) {
  std::unique_ptr<ZsetValue> z = ZsetValue::Create(elems.size(), 0, ZsetLimits{});
  for (const auto& [m, s] : elems) z->Set(m, s, ZsetLimits{});
  CompactObj obj;
  obj.SetObject(ObjType::kZset, 0, z.release());
  return obj;
}

TEST(DumpPayloadTest, WritesWhatRedisWrites) {
  // Payloads from Redis 7.0.15 DUMP.
  EXPECT_EQ(MakeDumpPayload(CompactObj::FromString("hello"), {}),
            Hex("000568656c6c6f0a006372df766534200a"));
  EXPECT_EQ(MakeDumpPayload(CompactObj::FromString("12345"), {}),
            Hex("00c139300a009d94ea2793fc08b9"));
  EXPECT_EQ(MakeDumpPayload(CompactObj::FromString("123456789012"), {}),
            Hex("000c3132333435363738393031320a00911001b1d116e7ac"));
  EXPECT_EQ(MakeDumpPayload(MakeList({"a", "b", "c", "1", "2", "3"}), {}),
            Hex("12010216160000000600816102816202816302010102010301ff0a0092f8c1523a0e16df"));
  EXPECT_EQ(MakeDumpPayload(MakeHash({{"f1", "v1"}, {"f2", "2"}}), {}),
            Hex("10151500000004008266310382763103826632030201ff0a005c5ea813feec1ff5"));
  EXPECT_EQ(MakeDumpPayload(MakeSet({"1", "2", "300"}), {}),
            Hex("0b0e0200000003000000010002002c010a00e510b28e7b9529aa"));
  EXPECT_EQ(MakeDumpPayload(MakeZset({{"a", 1}, {"b", 2.5}}), {}),
            Hex("1114140000000400816102010181620283322e3504ff0a00d44c6ea4f644d9d7"));
}

TEST(DumpPayloadTest, ReadsRedisPayloads) {
  EXPECT_EQ(DescribePayload(Hex("000568656c6c6f0a006372df766534200a")), "string:hello");
  EXPECT_EQ(DescribePayload(Hex("00c0f90a005e26d130d7a242ab")), "string:-7");
  EXPECT_EQ(DescribePayload(Hex("00c30928016161e01b000161610a00cf092faaae25831d")),
            "string:" + std::string(40, 'a'));
  EXPECT_EQ(DescribePayload(Hex("0202016201610a0075d99d835ef85f65")), "set:a,b,");
  EXPECT_EQ(DescribePayload(Hex("0b0e0200000003000000010002002c010a00e510b28e7b9529aa")),
            "set:1,2,300,");
  EXPECT_EQ(DescribePayload(Hex("1114140000000400816102010181620283322e3504ff0a00d44c6ea4f644d9d7")),
            "zset:a@1,b@2.5,");
}

TEST(DumpPayloadTest, RoundTripsEveryTypeAndEncoding) {
  std::string binary("k\0\xff\x80", 4);
  std::vector<std::string> many;
  for (int i = 0; i < 3000; ++i) many.push_back(absl::StrCat("member:", i, std::string(i % 7, 'x')));
  std::vector<std::string> ints;
  for (int i = 0; i < 600; ++i) ints.push_back(absl::StrCat(i * 100003 - 5000000));
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 0; i < 700; ++i) pairs.emplace_back(absl::StrCat("f", i), std::string(i % 90, 'v'));
  std::vector<std::pair<std::string, double>> scores;
  for (int i = 0; i < 300; ++i) scores.emplace_back(absl::StrCat("m", i), i * 0.37 - 20);
  scores.emplace_back("inf", std::numeric_limits<double>::infinity());
  scores.emplace_back("-inf", -std::numeric_limits<double>::infinity());
  scores.emplace_back("negzero", -0.0);
  std::vector<CompactObj> values;
  values.push_back(CompactObj::FromString(""));
  values.push_back(CompactObj::FromString(binary));
  values.push_back(CompactObj::FromString("-9223372036854775808"));
  values.push_back(CompactObj::FromString(std::string(200000, 'z')));  // written in pieces
  values.push_back(MakeList({binary, "1", "-1", std::string(10000, 'e')}));
  values.push_back(MakeList(many, 5));                                  // many nodes
  values.push_back(MakeHash({{binary, "v"}, {"n", "12"}}));
  values.push_back(MakeHash(pairs));                                    // hashtable
  values.push_back(MakeSet({"5", "-70000", "9000000000"}));             // intset, 64-bit
  values.push_back(MakeSet({"a", binary}));                             // listpack -> type 2
  values.push_back(MakeSet(many));                                      // hashtable
  values.push_back(MakeSet(ints));                                      // past the intset limit
  values.push_back(MakeZset({{"a", 1.5}, {binary, -3}}));
  values.push_back(MakeZset(scores));                                   // skiplist
  for (bool compress : {true, false}) {
    for (const CompactObj& v : values) {
      std::string payload = MakeDumpPayload(v, RdbWriteOptions{compress});
      EXPECT_EQ(DescribePayload(payload), Describe(v)) << Describe(v).substr(0, 60);
    }
  }
}

TEST(DumpPayloadTest, TypesFollowTheEncoding) {
  EXPECT_EQ(RdbTypeOf(MakeSet({"a"})), kRdbSet);  // Redis 7.0 has no set listpack
  EXPECT_EQ(RdbTypeOf(MakeSet({"1"})), kRdbSetIntset);
  EXPECT_EQ(RdbTypeOf(MakeHash({{"a", std::string(100, 'x')}})), kRdbHash);
  EXPECT_EQ(RdbTypeOf(MakeHash({{"a", "b"}})), kRdbHashListpack);
  EXPECT_EQ(RdbTypeOf(MakeZset({{"a", 1}})), kRdbZsetListpack);
  EXPECT_EQ(RdbTypeOf(MakeList({"a"})), kRdbListQuicklist2);
}

TEST(DumpPayloadTest, ChecksTheFooter) {
  std::string p = MakeDumpPayload(CompactObj::FromString("hello"), {});
  EXPECT_TRUE(VerifyDumpPayload(p));
  EXPECT_FALSE(VerifyDumpPayload(p.substr(0, 9)));
  std::string flipped = p;
  flipped[2] ^= 1;
  EXPECT_FALSE(VerifyDumpPayload(flipped));
  EXPECT_FALSE(VerifyDumpPayload(Wrap(Hex("000568656c6c6f"), 11)));
  EXPECT_TRUE(VerifyDumpPayload(Wrap(Hex("000568656c6c6f"), 0)));  // older versions are fine
}

TEST(DumpPayloadTest, ReadsIntoTheFooterLikeRedis) {
  // Redis reads the value from the whole payload: a string claiming one byte more takes the
  // version's first byte, one claiming less leaves bytes unread.
  EXPECT_EQ(DescribePayload(Wrap(Hex("000668656c6c6f"))), "string:hello\n");
  EXPECT_EQ(DescribePayload(Wrap(Hex("000468656c6c6f"))), "string:hell");
}

TEST(DumpPayloadTest, ReadsLegacyEncodings) {
  // Type 1 (linked list), 3 (zset with text scores), 4 (hash), 2 with an int-encoded member.
  EXPECT_EQ(DescribePayload(Wrap(Hex("010201610162"))), "list:a,b,");
  EXPECT_EQ(DescribePayload(Wrap(Hex("03020161" "03312e35" "0162fe"))), "zset:a@1.5,b@inf,");
  EXPECT_EQ(DescribePayload(Wrap(Hex("040101610162"))), "hash:a=b,");
  EXPECT_EQ(DescribePayload(Wrap(Hex("0202c0070161"))), "set:7,a,");
  // Type 10: a ziplist of "a", 12, "bc".
  std::string zl3 = Hex("14000000" "0f000000" "0300" "000161" "03fd" "02026263" "ff");
  EXPECT_EQ(DescribePayload(Wrap(Hex("0a14") + zl3)), "list:a,12,bc,");
  // Type 14: quicklist v1 with the same ziplist as its only node.
  EXPECT_EQ(DescribePayload(Wrap(Hex("0e0114") + zl3)), "list:a,12,bc,");
  // Type 13 / 12: a ziplist of a, 12 (field/value or member/score).
  std::string zl2 = Hex("10000000" "0d000000" "0200" "000161" "03fd" "ff");
  EXPECT_EQ(DescribePayload(Wrap(Hex("0d10") + zl2)), "hash:a=12,");
  EXPECT_EQ(DescribePayload(Wrap(Hex("0c10") + zl2)), "zset:a@12,");
  // Type 9: a zipmap {"f" => "vv"} with one free byte.
  EXPECT_EQ(DescribePayload(Wrap(Hex("0909" "0101" "6602" "01" "7676" "00" "ff"))), "hash:f=vv,");
  // Type 18 with a plain node.
  EXPECT_EQ(DescribePayload(Wrap(Hex("1201" "01" "03616263"))), "list:abc,");
}

TEST(DumpPayloadTest, RefusesBadValues) {
  auto refused = [](std::string_view body) {
    absl::StatusOr<CompactObj> v = Decode(Wrap(body));
    return !v.ok() && !absl::IsUnimplemented(v.status());
  };
  EXPECT_TRUE(refused(Hex("020201610161")));                 // duplicate set member
  EXPECT_TRUE(refused(Hex("0402016101620161" "0163")));          // duplicate hash field
  EXPECT_TRUE(refused(Hex("05010161" "000000000000f87f")));  // NaN
  EXPECT_TRUE(refused(Hex("0200")));                            // empty set
  EXPECT_TRUE(IsEmptyValue(Decode(Wrap(Hex("0200"))).status()));
  EXPECT_TRUE(refused(Hex("1200")));                            // empty list
  EXPECT_TRUE(refused(Hex("1201" "03" "0161")));                 // unknown node container
  EXPECT_TRUE(refused(Hex("1202" "01" "0161" "01" "00")));        // an empty plain node
  EXPECT_TRUE(refused(Hex("08")));                              // no type 8
  EXPECT_TRUE(refused(Hex("14")));                              // 7.2's set listpack
  EXPECT_TRUE(refused(Hex("0281100000000000000001")));         // 2^60 members
  EXPECT_TRUE(refused(Hex("0081100000000000000061")));         // a 2^60-byte string
  // A zset listpack whose score is NaN.
  std::string lp = Hex("0f000000" "0200" "816102" "836e616e04" "ff");
  EXPECT_TRUE(refused(Hex("11") + std::string(1, static_cast<char>(lp.size())) + lp));
  // Text scores are read as Redis reads them: the leading number, else 0.
  std::string lp2 = Hex("15000000" "0400" "816102" "8378797a04" "816202" "813202" "ff");
  EXPECT_EQ(DescribePayload(Wrap(Hex("11") + std::string(1, static_cast<char>(lp2.size())) + lp2)),
            "zset:a@0,b@2,");
  // A stream cut short is corrupt (also in its group list); an empty one (no nodes) loads, with
  // a group too.
  EXPECT_TRUE(absl::IsDataLoss(Decode(Wrap(Hex("130000"))).status()));
  EXPECT_EQ(DescribePayload(Wrap(Hex("1300000000000000000000"))).substr(0, 6), "stream");
  EXPECT_TRUE(absl::IsDataLoss(Decode(Wrap(Hex("1300000000000000000001"))).status()));
  // One group "g", last id 0-0, entries-read 0, no PEL, no consumers.
  absl::StatusOr<CompactObj> stream = Decode(Wrap(Hex("1300000000000000000001" "0167" "0000" "00"
                                                       "00" "00")));
  ASSERT_TRUE(stream.ok()) << stream.status();
  // Type 15 (Redis 6.2) has no entries-read: the group loads with it estimated.
  EXPECT_TRUE(Decode(Wrap(Hex("0f00" "00" "0500" "01" "0167" "0000" "00" "00"))).ok());
  // The same group twice.
  EXPECT_TRUE(absl::IsDataLoss(Decode(Wrap(Hex("1300000000000000000002" "01670000000000"
                                               "01670000000000"))).status()));
  EXPECT_TRUE(absl::IsUnimplemented(Decode(Wrap(Hex("07"))).status()));
}

TEST(DumpPayloadTest, HostileInputNeverCrashes) {
  std::vector<CompactObj> samples;
  samples.push_back(MakeList({"a", "bb", "1", std::string(100, 'l')}));
  samples.push_back(MakeHash({{"f", "v"}, {"g", "12"}}));
  samples.push_back(MakeSet({"1", "2", "70000"}));
  samples.push_back(MakeSet({"x", "y"}));
  samples.push_back(MakeZset({{"a", 1}, {"b", 2.25}}));
  std::vector<std::pair<std::string, double>> big;
  for (int i = 0; i < 200; ++i) big.emplace_back(absl::StrCat("m", i), i);
  samples.push_back(MakeZset(big));
  samples.push_back(CompactObj::FromString(std::string(100, 'c') + "tail"));
  std::mt19937_64 gen(5);
  for (const CompactObj& v : samples) {
    std::string body = MakeDumpPayload(v, {});
    body.resize(body.size() - kDumpFooterSize);
    for (size_t cut = 0; cut < body.size(); ++cut) {  // truncations, re-signed
      (void)Decode(Wrap(std::string_view(body).substr(0, cut)));
    }
    for (int i = 0; i < 2000; ++i) {  // bit flips, re-signed
      std::string damaged = body;
      damaged[gen() % damaged.size()] ^= static_cast<char>(1 << (gen() % 8));
      (void)Decode(Wrap(damaged));
    }
  }
}

}  // namespace
}  // namespace dashkv
