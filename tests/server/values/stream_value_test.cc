#include "server/values/stream_value.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace dashkv {
namespace {

using Fields = std::vector<std::string>;

std::vector<std::pair<StreamID, Fields>> All(const StreamValue& s, bool reverse = false,
                                             StreamID start = {}, StreamID end = StreamID::Max(),
                                             size_t count = 0) {
  std::vector<std::pair<StreamID, Fields>> out;
  s.Range(start, end, reverse, count, [&](const StreamValue::Entry& e) {
    Fields f;
    for (const ListpackValue& v : e.fields) f.push_back(v.ToString());
    out.emplace_back(e.id, f);
  });
  return out;
}

void Add(StreamValue& s, StreamID id, const Fields& fields, const StreamLimits& limits = {}) {
  std::vector<std::string_view> views(fields.begin(), fields.end());
  s.Append(id, views, limits);
}

TEST(StreamIDTest, ParseAsRedis) {
  EXPECT_EQ(ParseStreamID("5", 0, true), (StreamID{5, 0}));
  EXPECT_EQ(ParseStreamID("5", UINT64_MAX, true), (StreamID{5, UINT64_MAX}));
  EXPECT_EQ(ParseStreamID("5-7", 0, true), (StreamID{5, 7}));
  EXPECT_EQ(ParseStreamID("-", 0, false), (StreamID{0, 0}));
  EXPECT_EQ(ParseStreamID("+", 0, false), StreamID::Max());
  EXPECT_FALSE(ParseStreamID("-", 0, true));
  EXPECT_FALSE(ParseStreamID("+", 0, true));
  EXPECT_EQ(ParseStreamID("18446744073709551615-18446744073709551615", 0, true), StreamID::Max());
  EXPECT_FALSE(ParseStreamID("18446744073709551616", 0, true));
  EXPECT_FALSE(ParseStreamID("-1", 0, true));
  EXPECT_FALSE(ParseStreamID("1--1", 0, true));
  EXPECT_FALSE(ParseStreamID("", 0, true));
  EXPECT_FALSE(ParseStreamID("1-", 0, true));
  EXPECT_FALSE(ParseStreamID(std::string(128, '1'), 0, true));
  EXPECT_EQ(ParseStreamID("007", 0, true), (StreamID{7, 0}));  // strtoull takes it, as Redis
  bool seq_auto = false;
  EXPECT_EQ(ParseStreamID("9-*", 0, true, &seq_auto), (StreamID{9, 0}));
  EXPECT_TRUE(seq_auto);
  EXPECT_FALSE(ParseStreamID("9-*", 0, true));
}

TEST(StreamIDTest, IncrDecrAndBigEndian) {
  StreamID id{1, UINT64_MAX};
  EXPECT_TRUE(id.Incr());
  EXPECT_EQ(id, (StreamID{2, 0}));
  EXPECT_TRUE(id.Decr());
  EXPECT_EQ(id, (StreamID{1, UINT64_MAX}));
  StreamID max = StreamID::Max();
  EXPECT_FALSE(max.Incr());
  StreamID zero;
  EXPECT_FALSE(zero.Decr());
  char buf[16];
  StreamID{0x0102030405060708, 0x1112131415161718}.EncodeBigEndian(buf);
  EXPECT_EQ(buf[0], 1);
  EXPECT_EQ(buf[15], 0x18);
  EXPECT_EQ(StreamID::DecodeBigEndian(buf), (StreamID{0x0102030405060708, 0x1112131415161718}));
}

TEST(StreamValueTest, SameFieldsStoreOnlyValues) {
  StreamValue a, b;
  for (uint64_t i = 1; i <= 50; ++i) Add(a, {i, 0}, {"field-one", "v", "field-two", "w"});
  for (uint64_t i = 1; i <= 50; ++i) {
    Add(b, {i, 0}, {i % 2 ? "field-one" : "field-uno", "v", "field-two", "w"});
  }
  size_t a_bytes = 0, b_bytes = 0;
  a.ForEachNode([&](StreamID, std::string_view lp) { a_bytes += lp.size(); });
  b.ForEachNode([&](StreamID, std::string_view lp) { b_bytes += lp.size(); });
  EXPECT_LT(a_bytes + 25 * 20, b_bytes);
  EXPECT_EQ(All(a).size(), 50u);
  EXPECT_EQ(All(b)[1].second, (Fields{"field-uno", "v", "field-two", "w"}));
}

TEST(StreamValueTest, NodesSplitByEntriesAndBytes) {
  StreamValue s;
  StreamLimits limits;
  limits.node_max_entries = 10;
  for (uint64_t i = 1; i <= 95; ++i) Add(s, {i, 0}, {"f", std::to_string(i)}, limits);
  EXPECT_EQ(s.node_count(), 10u);
  StreamValue t;
  limits.node_max_entries = 0;
  limits.node_max_bytes = 100;
  for (uint64_t i = 1; i <= 20; ++i) Add(t, {i, 0}, {"f", std::string(40, 'x')}, limits);
  EXPECT_GE(t.node_count(), 10u);
  EXPECT_EQ(All(t).size(), 20u);
}

// Compares every operation with a std::map model under random appends, deletes and trims.
TEST(StreamValueTest, RandomOperationsMatchAModel) {
  std::mt19937_64 rng(21);
  for (int64_t node_entries : {3, 10, 100}) {
    StreamValue s;
    StreamLimits limits;
    limits.node_max_entries = node_entries;
    std::map<StreamID, Fields> model;
    StreamID last;
    for (int step = 0; step < 3000; ++step) {
      uint64_t op = rng() % 100;
      if (op < 70) {
        StreamID id{last.ms + rng() % 3, rng() % 4};
        if (id <= last) id = {last.ms, last.seq + 1};
        Fields f = {"f" + std::to_string(rng() % 3), std::to_string(rng() % 1000)};
        if (rng() % 3 == 0) f.insert(f.end(), {"g", std::string(rng() % 70, 'x')});
        Add(s, id, f, limits);
        model[id] = f;
        last = id;
      } else if (op < 85 && !model.empty()) {
        StreamID id{rng() % (last.ms + 1), rng() % 4};
        EXPECT_EQ(s.Delete(id), model.erase(id) == 1);
      } else if (op < 92) {
        uint64_t maxlen = rng() % 50;
        bool approx = rng() % 2;
        uint64_t removed = s.TrimMaxLen(maxlen, approx, 0);
        EXPECT_GE(model.size() - removed, std::min<uint64_t>(maxlen, model.size()));
        for (uint64_t i = 0; i < removed; ++i) model.erase(model.begin());
        if (!approx) {
          EXPECT_LE(model.size(), maxlen);
        }
      } else {
        StreamID minid{rng() % (last.ms + 2), rng() % 4};
        bool approx = rng() % 2;
        uint64_t removed = s.TrimMinId(minid, approx, 0);
        for (uint64_t i = 0; i < removed; ++i) {
          ASSERT_LT(model.begin()->first, minid);
          model.erase(model.begin());
        }
        if (!approx && !model.empty()) {
          EXPECT_GE(model.begin()->first, minid);
        }
      }
      ASSERT_EQ(s.length(), model.size());
      if (step % 50 == 0) {
        std::vector<std::pair<StreamID, Fields>> want(model.begin(), model.end());
        ASSERT_EQ(All(s), want);
        std::vector<std::pair<StreamID, Fields>> rev(want.rbegin(), want.rend());
        ASSERT_EQ(All(s, true), rev);
        StreamID a{rng() % (last.ms + 1), rng() % 4}, b{rng() % (last.ms + 1), rng() % 4};
        size_t count = rng() % 5;
        std::vector<std::pair<StreamID, Fields>> sub;
        for (const auto& e : want) {
          if (e.first >= a && e.first <= b && (count == 0 || sub.size() < count)) sub.push_back(e);
        }
        ASSERT_EQ(All(s, false, a, b, count), sub);
        StreamID first = model.empty() ? StreamID{} : model.begin()->first;
        ASSERT_EQ(s.first_id(), first);
        // Every node passes the loader's check, and a copy matches.
        std::optional<StreamID> prev;
        uint64_t live = 0;
        s.ForEachNode([&](StreamID master, std::string_view lp) {
          auto check = StreamValue::CheckNode(master, lp, prev);
          ASSERT_TRUE(check.has_value());
          prev = check->last_id;
          live += check->live;
        });
        ASSERT_EQ(live, model.size());
        ASSERT_EQ(All(*s.Clone()), want);
      }
    }
  }
}

TEST(StreamValueTest, CheckNodeRefusesDamage) {
  StreamValue s;
  Add(s, {5, 1}, {"a", "1"});
  Add(s, {6, 1}, {"b", "2"});
  std::string bytes;
  StreamID master;
  s.ForEachNode([&](StreamID m, std::string_view lp) {
    master = m;
    bytes = std::string(lp);
  });
  ASSERT_TRUE(StreamValue::CheckNode(master, bytes, std::nullopt));
  EXPECT_FALSE(StreamValue::CheckNode(master, bytes, StreamID{6, 1}));  // not above the previous
  EXPECT_FALSE(StreamValue::CheckNode(master, bytes, StreamID{5, 1}));  // equal to the previous
  EXPECT_TRUE(StreamValue::CheckNode(master, bytes, StreamID{5, 0}));
  for (size_t i = 6; i + 1 < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x01);
    // Never crashes; a change of a value byte may still be a valid node.
    (void)StreamValue::CheckNode(master, damaged, std::nullopt);
  }
  EXPECT_FALSE(StreamValue::CheckNode(master, bytes.substr(0, bytes.size() - 1), std::nullopt));
}

}  // namespace
}  // namespace dashkv
