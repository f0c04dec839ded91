// DbSlice unit tests: insert/find/erase, expiry bookkeeping (expires count, lazy expiry and its
// counters, the bounded active cycle), Clear, Scan and RandomEntry. Runs on the test thread:
// a DbSlice is a plain single-threaded object.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/hash.h"
#include "server/storage/db_slice.h"
#include "server/storage/shard.h"

namespace dashkv {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;  // a fixed clock: tests pass time explicitly

class FakeList : public ObjectBase {
 public:
  size_t MallocUsed() const override { return sizeof(*this); }
};

class DbSliceTest : public ::testing::Test {
 protected:
  // Inserts `key` with value `value`; returns its entry.
  PrimeIterator Add(std::string_view key, std::string_view value = "v") {
    OpResult<DbSlice::AddResult> res = db_.FindOrAdd(key, kNow);
    EXPECT_TRUE(res.ok());
    res->it->second.SetString(value);
    return res->it;
  }
  std::set<std::string> ScanAll(int64_t now) {
    std::set<std::string> keys;
    std::string scratch;
    uint64_t cursor = 0;
    do {
      cursor = db_.Scan(cursor, now, [&](PrimeIterator it) {
        keys.emplace(it->first.GetString(&scratch));
      });
    } while (cursor != 0);
    return keys;
  }

  ChangeListeners changes_;
  ShardStats stats_;
  DbSlice db_{0, &stats_, &changes_};
};

TEST_F(DbSliceTest, FindOrAddFindErase) {
  EXPECT_EQ(db_.size(), 0u);
  EXPECT_TRUE(db_.FindReadOnly("a", kNow).is_done());
  OpResult<DbSlice::AddResult> first = db_.FindOrAdd("a", kNow);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->inserted);
  EXPECT_TRUE(first->it->second.IsString());  // a new entry holds an empty string
  first->it->second.SetString("hello");
  OpResult<DbSlice::AddResult> second = db_.FindOrAdd("a", kNow);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->inserted);
  std::string scratch;
  EXPECT_EQ(second->it->second.GetString(&scratch), "hello");
  EXPECT_EQ(db_.size(), 1u);
  PrimeIterator it = db_.FindReadOnly("a", kNow);
  ASSERT_FALSE(it.is_done());
  db_.Erase(it);
  EXPECT_EQ(db_.size(), 0u);
  EXPECT_TRUE(db_.FindReadOnly("a", kNow).is_done());
  Add("b");
  EXPECT_TRUE(db_.EraseKey("b", kNow));
  EXPECT_FALSE(db_.EraseKey("b", kNow));
  EXPECT_EQ(db_.size(), 0u);
}

// SetKeyHash's hint serves the lookups of its own view only (its bytes in memory), until
// cleared. A wrong hint shows which lookups used it: they miss the key.
TEST_F(DbSliceTest, KeyHashHintServesItsViewOnly) {
  Add("hinted");
  const std::string same_bytes = "hinted";
  const std::string_view view = same_bytes;
  db_.SetKeyHash(view, HashBytes(view));
  EXPECT_FALSE(db_.FindReadOnly(view, kNow).is_done());
  EXPECT_FALSE(db_.FindOrAdd(view, kNow)->inserted);
  db_.SetKeyHash(view, HashBytes(view) ^ 1);  // wrong on purpose
  EXPECT_TRUE(db_.FindReadOnlyQuiet(view, kNow).is_done());
  // Equal bytes elsewhere in memory, or a prefix of the view: hashed, found.
  EXPECT_FALSE(db_.FindReadOnly("hinted", kNow).is_done());
  Add("hint");
  EXPECT_FALSE(db_.FindReadOnly(view.substr(0, 4), kNow).is_done());
  db_.ClearKeyHash();
  EXPECT_FALSE(db_.FindReadOnly(view, kNow).is_done());
  EXPECT_EQ(db_.size(), 2u);
}

TEST_F(DbSliceTest, HitsAndMisses) {
  Add("a");
  db_.FindReadOnly("a", kNow);
  db_.FindReadOnly("a", kNow);
  db_.FindReadOnly("nokey", kNow);
  EXPECT_EQ(stats_.keyspace_hits, 2u);
  EXPECT_EQ(stats_.keyspace_misses, 1u);
  // FindQuiet counts nothing.
  db_.FindReadOnlyQuiet("a", kNow);
  db_.FindReadOnlyQuiet("nokey", kNow);
  EXPECT_EQ(stats_.keyspace_hits, 2u);
  EXPECT_EQ(stats_.keyspace_misses, 1u);
}

TEST_F(DbSliceTest, FindOfType) {
  Add("s");
  OpResult<DbSlice::AddResult> l = db_.FindOrAdd("l", kNow);
  ASSERT_TRUE(l.ok());
  l->it->second.SetObject(ObjType::kList, 0, new FakeList);
  EXPECT_TRUE(db_.FindReadOnlyOfType("s", ObjType::kString, kNow).ok());
  EXPECT_EQ(db_.FindReadOnlyOfType("l", ObjType::kString, kNow).status(), OpStatus::kWrongType);
  EXPECT_TRUE(db_.FindReadOnlyOfType("l", ObjType::kList, kNow).ok());
  EXPECT_EQ(db_.FindReadOnlyOfType("nokey", ObjType::kString, kNow).status(), OpStatus::kKeyNotFound);
}

TEST_F(DbSliceTest, SetExpireCountsExpires) {
  PrimeIterator a = Add("a");
  db_.SetExpire(a, kNow + 1000);
  EXPECT_EQ(db_.expires(), 1u);
  a = db_.FindReadOnly("a", kNow);
  db_.SetExpire(a, kNow + 2000);  // changing a deadline is not a new expire
  EXPECT_EQ(db_.expires(), 1u);
  EXPECT_EQ(db_.FindReadOnly("a", kNow)->first.ExpireTimeMs(), kNow + 2000);
  PrimeIterator b = Add("b");
  db_.SetExpire(b, kNow + 1000);
  Add("c");
  EXPECT_EQ(db_.expires(), 2u);
  db_.SetExpire(db_.FindMutable("a", kNow), 0);  // PERSIST
  EXPECT_EQ(db_.expires(), 1u);
  EXPECT_FALSE(db_.FindReadOnly("a", kNow)->first.HasExpire());
  db_.SetExpire(db_.FindMutable("c", kNow), 0);  // removing a missing deadline changes nothing
  EXPECT_EQ(db_.expires(), 1u);
  db_.Erase(db_.FindMutable("b", kNow));  // erasing a key with a deadline drops it from the count
  EXPECT_EQ(db_.expires(), 0u);
  EXPECT_EQ(db_.size(), 2u);
}

TEST_F(DbSliceTest, LazyExpiryCountsExpiredKeys) {
  db_.SetExpire(Add("a"), kNow + 100);
  db_.SetExpire(Add("b"), kNow + 100);
  db_.SetExpire(Add("c"), kNow + 100);
  Add("keep");
  EXPECT_FALSE(db_.FindReadOnly("a", kNow + 99).is_done());
  EXPECT_TRUE(DbSlice::IsExpired(db_.FindReadOnlyQuiet("a", kNow + 99), kNow + 100));
  // The deadline itself is already past (deadline <= now).
  EXPECT_TRUE(db_.FindReadOnly("a", kNow + 100).is_done());
  EXPECT_EQ(stats_.expired_keys, 1u);
  EXPECT_EQ(db_.size(), 3u);
  EXPECT_EQ(db_.expires(), 2u);
  EXPECT_TRUE(db_.FindReadOnlyQuiet("b", kNow + 200).is_done());
  EXPECT_EQ(stats_.expired_keys, 2u);
  // A write to an expired key starts a fresh entry without a deadline.
  OpResult<DbSlice::AddResult> c = db_.FindOrAdd("c", kNow + 200);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->inserted);
  EXPECT_FALSE(c->it->first.HasExpire());
  EXPECT_EQ(stats_.expired_keys, 3u);
  EXPECT_EQ(db_.expires(), 0u);
  EXPECT_FALSE(db_.EraseKey("a", kNow + 200));
  EXPECT_EQ(db_.size(), 2u);
}

TEST_F(DbSliceTest, ActiveExpireIsBoundedAndComplete) {
  constexpr int kExpiring = 5000;
  constexpr int kPlain = 5000;
  for (int i = 0; i < kExpiring; ++i) db_.SetExpire(Add("e" + std::to_string(i)), kNow + 10);
  for (int i = 0; i < kPlain; ++i) Add("p" + std::to_string(i));
  EXPECT_EQ(db_.expires(), static_cast<size_t>(kExpiring));
  // Nothing is due yet.
  EXPECT_EQ(db_.ActiveExpire(kNow, 1000), 0u);
  EXPECT_EQ(db_.size(), static_cast<size_t>(kExpiring + kPlain));
  // One bucket per call: a bounded slice of the work.
  size_t first = db_.ActiveExpire(kNow + 10, 1);
  EXPECT_LT(first, static_cast<size_t>(kExpiring));
  size_t total = first;
  int calls = 1;
  while (db_.expires() > 0 && calls < 1000000) {
    size_t n = db_.ActiveExpire(kNow + 10, 4);
    EXPECT_LE(n, 400u);  // 4 buckets (and their stash share): far below the 5000 due
    total += n;
    ++calls;
  }
  EXPECT_EQ(total, static_cast<size_t>(kExpiring));
  EXPECT_GT(calls, 10);
  EXPECT_EQ(stats_.expired_keys, static_cast<uint64_t>(kExpiring));
  EXPECT_EQ(db_.size(), static_cast<size_t>(kPlain));
  EXPECT_EQ(db_.expires(), 0u);
  EXPECT_FALSE(db_.FindReadOnly("p0", kNow + 10).is_done());
  // With no deadlines left the cycle does nothing.
  EXPECT_EQ(db_.ActiveExpire(kNow + 10, 1000), 0u);
}

TEST_F(DbSliceTest, ClearDropsEverything) {
  for (int i = 0; i < 1000; ++i) {
    PrimeIterator it = Add("k" + std::to_string(i));
    if (i % 2) db_.SetExpire(it, kNow + 1000);
  }
  EXPECT_EQ(db_.expires(), 500u);
  db_.Clear();
  EXPECT_EQ(db_.size(), 0u);
  EXPECT_EQ(db_.expires(), 0u);
  EXPECT_TRUE(db_.FindReadOnly("k1", kNow).is_done());
  EXPECT_TRUE(db_.RandomEntry(kNow).is_done());
  // Usable again after Clear.
  db_.SetExpire(Add("again"), kNow + 1000);
  EXPECT_EQ(db_.size(), 1u);
  EXPECT_EQ(db_.expires(), 1u);
}

TEST_F(DbSliceTest, ScanSkipsExpiredAndVisitsAll) {
  std::set<std::string> live;
  for (int i = 0; i < 3000; ++i) {
    std::string k = "k" + std::to_string(i);
    PrimeIterator it = Add(k);
    if (i % 3 == 0) {
      db_.SetExpire(it, kNow + 5);
    } else {
      live.insert(k);
    }
  }
  EXPECT_EQ(ScanAll(kNow + 5), live);
  EXPECT_EQ(ScanAll(kNow).size(), 3000u);
}

TEST_F(DbSliceTest, RandomEntry) {
  EXPECT_TRUE(db_.RandomEntry(kNow).is_done());
  Add("a");
  Add("b");
  std::set<std::string> seen;
  std::string scratch;
  for (int i = 0; i < 200; ++i) {
    PrimeIterator it = db_.RandomEntry(kNow);
    ASSERT_FALSE(it.is_done());
    seen.emplace(it->first.GetString(&scratch));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"a", "b"}));
  // Expired entries are never returned (and get deleted on the way).
  db_.SetExpire(db_.FindMutable("a", kNow), kNow + 1);
  for (int i = 0; i < 50; ++i) {
    PrimeIterator it = db_.RandomEntry(kNow + 1);
    ASSERT_FALSE(it.is_done());
    EXPECT_EQ(it->first.GetString(&scratch), "b");
  }
  db_.SetExpire(db_.FindMutable("b", kNow), kNow + 1);
  EXPECT_TRUE(db_.RandomEntry(kNow + 1).is_done());
}

// The access record (core/access_record.h): set on insert, updated by lookups but the quiet and
// no-touch ones, kept when an expiry moves a 13..17-byte key between forms.
TEST_F(DbSliceTest, AccessRecordFollowsLookups) {
  for (std::string key : {std::string("k"), std::string(15, 'k'), std::string(40, 'k')}) {
    SCOPED_TRACE(key.size());
    PrimeIterator it = Add(key, std::string(15, 'v'));  // a 15-byte key: the lossy form
    EXPECT_GE(LruIdleMs(db_.Record(it, kNow + 7000), kNow + 7000), 7000u);
    EXPECT_LT(LruIdleMs(db_.Record(it, kNow + 7000), kNow + 7000), 7000u + 512'000);
    db_.SetRecord(it, LruClock(kNow - 100'000));
    it = db_.FindReadOnlyQuiet(key, kNow);
    EXPECT_GE(LruIdleMs(db_.Record(it, kNow), kNow), 100'000u);
    it = db_.FindReadOnly(key, kNow, Access::kNoTouch);
    EXPECT_GE(LruIdleMs(db_.Record(it, kNow), kNow), 100'000u);
    db_.SetExpire(it, kNow + 1'000'000);
    EXPECT_GE(LruIdleMs(db_.Record(it, kNow), kNow), 100'000u);
    db_.SetExpire(it, 0);
    EXPECT_GE(LruIdleMs(db_.Record(it, kNow), kNow), 100'000u);
    it = db_.FindReadOnly(key, kNow);
    EXPECT_LT(LruIdleMs(db_.Record(it, kNow), kNow), 512'000u);  // lossy form: 512 s steps
    db_.SetRecord(it, LruClock(kNow - 100'000));
    it = db_.FindMutable(key, kNow);
    EXPECT_LT(LruIdleMs(db_.Record(it, kNow), kNow), 512'000u);
  }
}

TEST_F(DbSliceTest, LfuRecordUnderLfuPolicy) {
  EvictionSettings lfu;
  lfu.policy = MaxmemoryPolicy::kAllKeysLfu;
  lfu.lfu_log_factor = 0;  // every access counts
  db_.set_eviction(&lfu);
  PrimeIterator it = Add("k");
  EXPECT_EQ(LfuDecayed(db_.Record(it, kNow), kNow, 1), kLfuInitVal);
  for (int i = 0; i < 10; ++i) db_.FindReadOnly("k", kNow);
  EXPECT_EQ(LfuDecayed(db_.Record(db_.FindReadOnlyQuiet("k", kNow), kNow), kNow, 1), 15);
  // One decrement per minute (lfu-decay-time 1).
  EXPECT_EQ(LfuDecayed(db_.Record(db_.FindReadOnlyQuiet("k", kNow), kNow), kNow + 180'000, 1),
            12);
}

TEST_F(DbSliceTest, SlotCreditCountsEmptiedSlots) {
  for (int i = 0; i < 100; ++i) Add("key" + std::to_string(i));
  EXPECT_EQ(db_.SlotCredit(), 0);
  for (int i = 0; i < 10; ++i) db_.EraseKey("key" + std::to_string(i), kNow);
  EXPECT_EQ(db_.SlotCredit(), 10 * db_.SlotBytes());
  EXPECT_GT(db_.SlotBytes(), 16);
  for (int i = 0; i < 4; ++i) Add("new" + std::to_string(i));
  EXPECT_EQ(db_.SlotCredit(), 6 * db_.SlotBytes());
  db_.Clear();
  EXPECT_EQ(db_.SlotCredit(), 0);
}

}  // namespace
}  // namespace dashkv
