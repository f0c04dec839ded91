// GEO command tests against a real 2-shard server: the STORE forms with source and destination
// on different shards (and inside one pipeline), and a differential test of GEOSEARCH against
// GEODIST over every member, on both sorted-set encodings. Exact replies and error texts are
// compared with redis-server in tests/integration/test_geo.py.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "server/server.h"
#include "server/storage/shard_set.h"
#include "tests/testing/test_server.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using testing::RespValue;
using testing::TestServer;

class GeoCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { c_ = srv_.Connect(); }
  RespValue Run(std::initializer_list<std::string_view> args) { return c_->Run(args); }
  RespValue Run(const std::vector<std::string>& args) { return c_->Run(args); }
  // Returns a key on the other shard than `key`.
  std::string OtherShard(const std::string& key) {
    ShardSet& ss = srv_.server().shard_set();
    for (int i = 0;; ++i) {
      std::string k = "dst" + std::to_string(i);
      if (ss.ShardOf(k) != ss.ShardOf(key)) return k;
    }
  }
  std::string SameShard(const std::string& key) {
    ShardSet& ss = srv_.server().shard_set();
    for (int i = 0;; ++i) {
      std::string k = "dst" + std::to_string(i);
      if (ss.ShardOf(k) == ss.ShardOf(key)) return k;
    }
  }

  TestServer srv_{2};
  std::unique_ptr<testing::RespClient> c_;
};

TEST_F(GeoCommandsTest, StoreFormsOnOneAndTwoShards) {
  ASSERT_EQ(Run({"GEOADD", "src", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
                 "Catania"}),
            2);
  for (const std::string& d : {SameShard("src"), OtherShard("src")}) {
    EXPECT_EQ(Run({"SET", d, "other type"}), "OK");
    EXPECT_EQ(Run({"GEOSEARCHSTORE", d, "src", "FROMLONLAT", "15", "37", "BYRADIUS", "200",
                   "km", "ASC", "COUNT", "1"}),
              1);
    EXPECT_THAT(Run({"ZRANGE", d, "0", "-1", "WITHSCORES"}).strings(),
                ElementsAre("Catania", "3479447370796909"));
    EXPECT_EQ(Run({"GEORADIUS", "src", "15", "37", "200", "km", "STOREDIST", d}), 2);
    EXPECT_THAT(Run({"ZRANGE", d, "0", "-1"}).strings(), ElementsAre("Catania", "Palermo"));
    EXPECT_EQ(Run({"GEORADIUSBYMEMBER", "src", "Palermo", "10", "km", "STORE", d}), 1);
    EXPECT_THAT(Run({"ZRANGE", d, "0", "-1"}).strings(), ElementsAre("Palermo"));
    // No match, and a missing source: the destination goes.
    EXPECT_EQ(Run({"GEORADIUS", "src", "0", "0", "1", "km", "STORE", d}), 0);
    EXPECT_EQ(Run({"EXISTS", d}), 0);
    EXPECT_EQ(Run({"SET", d, "x"}), "OK");
    EXPECT_EQ(Run({"GEOSEARCHSTORE", d, "nosrc", "FROMMEMBER", "m", "BYRADIUS", "1", "km"}), 0);
    EXPECT_EQ(Run({"EXISTS", d}), 0);
    // Errors come from the source's shard before anything is written.
    EXPECT_EQ(Run({"SET", d, "x"}), "OK");
    EXPECT_EQ(Run({"GEOSEARCHSTORE", d, "src", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"}).str,
              "ERR could not decode requested zset member");
    EXPECT_EQ(Run({"GEORADIUS", d, "1", "1", "1", "km", "STORE", "src"}).str,
              "WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT_EQ(Run({"GET", d}), "x");
    EXPECT_EQ(Run({"DEL", d}), 1);
  }
}

TEST_F(GeoCommandsTest, PipelinedStoresAcrossShards) {
  ASSERT_EQ(Run({"GEOADD", "src", "1", "1", "a", "1.001", "1.001", "b"}), 2);
  const std::string same = SameShard("src"), other = OtherShard("src");
  std::vector<std::vector<std::string>> cmds = {
      {"GEORADIUS", "src", "1", "1", "10", "km", "STORE", same},
      {"GEORADIUS", "src", "1", "1", "10", "km", "STORE", other},
      {"GEORADIUS", "src", "1", "1", "10", "km", "ASC"},
      {"GEOSEARCHSTORE", other, "src", "FROMMEMBER", "b", "BYRADIUS", "1", "m"},
      {"ZCARD", same},
      {"ZCARD", other}};
  std::string batch;
  for (const auto& c : cmds) batch += c_->Encode(std::vector<std::string_view>(c.begin(), c.end()));
  c_->SendRaw(batch);  // one write: the calls arrive as one pipeline
  std::vector<RespValue> replies;
  for (size_t i = 0; i < cmds.size(); ++i) replies.push_back(c_->Read());
  EXPECT_EQ(replies[0], 2);
  EXPECT_EQ(replies[1], 2);
  EXPECT_THAT(replies[2].strings(), ElementsAre("a", "b"));
  EXPECT_EQ(replies[3], 1);
  EXPECT_EQ(replies[4], 2);
  EXPECT_EQ(replies[5], 1);
}

// Every member within the radius (by GEODIST) is found, and nothing farther, on a listpack and
// on a skiplist set, for radius and box searches.
TEST_F(GeoCommandsTest, SearchAgreesWithGeoDistOnBothEncodings) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> lon(-2, 2), lat(50, 53);
  std::vector<std::string> add_small = {"GEOADD", "small"}, add_big = {"GEOADD", "big"};
  char buf[32];
  for (int i = 0; i < 400; ++i) {
    std::vector<std::string>& add = i < 100 ? add_small : add_big;
    std::snprintf(buf, sizeof(buf), "%.6f", lon(rng));
    add.push_back(buf);
    std::snprintf(buf, sizeof(buf), "%.6f", lat(rng));
    add.push_back(buf);
    add.push_back("m" + std::to_string(i));
  }
  ASSERT_EQ(Run(add_small), 100);
  ASSERT_EQ(Run(add_big), 300);
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "small"}), "listpack");
  EXPECT_EQ(Run({"OBJECT", "ENCODING", "big"}), "skiplist");
  for (const auto& [key, first, n] : {std::tuple{"small", 0, 100}, std::tuple{"big", 100, 300}}) {
    for (int q = 0; q < 10; ++q) {
      const std::string center = "m" + std::to_string(first + q * 7);
      const double radius_km = 20 + q * 15;
      std::set<std::string> found;
      for (const RespValue& v :
           Run({"GEOSEARCH", key, "FROMMEMBER", center, "BYRADIUS", std::to_string(radius_km),
                "km"})
               .elems) {
        found.insert(v.str);
      }
      for (int i = first; i < first + n; ++i) {
        const std::string m = "m" + std::to_string(i);
        const double d = std::stod(Run({"GEODIST", key, center, m, "km"}).str);
        if (d < radius_km - 0.001) {
          EXPECT_TRUE(found.count(m)) << key << " " << center << " " << m;
        } else if (d > radius_km + 0.001) {
          EXPECT_FALSE(found.count(m)) << key << " " << center << " " << m;
        }
      }
    }
  }
}

TEST_F(GeoCommandsTest, HostileCountsAndRadii) {
  ASSERT_EQ(Run({"GEOADD", "g", "0", "0", "a", "0.1", "0.1", "b"}), 2);
  EXPECT_THAT(Run({"GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km", "COUNT",
                   "9223372036854775807", "ANY"})
                  .strings(),
              ElementsAre("a"));
  EXPECT_THAT(Run({"GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYBOX", "1e308", "1e308", "mi"})
                  .strings(),
              UnorderedElementsAre("a", "b"));
  EXPECT_THAT(Run({"GEORADIUS", "g", "180", "-85.05112878", "inf", "m", "DESC"}).strings(),
              ElementsAre("b", "a"));
  EXPECT_EQ(Run({"GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "-inf", "m"}).str,
            "ERR radius cannot be negative");
  EXPECT_EQ(Run({"GEOADD", "g", "-180.0000001", "0", "x"}).str,
            "ERR invalid longitude,latitude pair -180.000000,0.000000");
  EXPECT_EQ(Run({"GEOADD", "g", "1e308", "1e308", "x"}).str.substr(0, 40),
            "ERR invalid longitude,latitude pair 1000");
}

}  // namespace
}  // namespace dashkv
