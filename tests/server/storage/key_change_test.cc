// The storage change seam (server/storage/key_change.h): what a listener hears for every way a
// key changes through DbSlice and Shard, in which order and with which reason; that it hears
// nothing it did not ask for; and that read-only lookups tell nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/str_util.h"
#include "server/storage/db_slice.h"
#include "server/storage/shard.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kNow = 1'700'000'000'000;

const char* ReasonName(RemoveReason r) {
  switch (r) {
    case RemoveReason::kDeleted: return "deleted";
    case RemoveReason::kExpired: return "expired";
    case RemoveReason::kEvicted: return "evicted";
    case RemoveReason::kOverwritten: return "overwritten";
  }
  return "?";
}

// Writes one line per call it hears.
class Recorder : public ChangeListener {
 public:
  void BeforeChange(unsigned db, PrimeIterator it, uint64_t) override {
    std::string key = it.is_done() ? "(insert)" : it->first.ToString();
    log.push_back(StrCat("before ", db, " ", key));
  }
  void AfterWrite(unsigned db, std::string_view key, bool modified) override {
    log.push_back(StrCat("write ", db, " ", key, modified ? "" : " unmodified"));
  }
  void AfterRemove(unsigned db, std::string_view key, RemoveReason reason) override {
    log.push_back(StrCat("remove ", db, " ", key, " ", ReasonName(reason)));
  }
  void BeforeFlush(unsigned db) override { log.push_back(StrCat("flush ", db)); }
  void BeforeSwap(unsigned db1, unsigned db2) override {
    log.push_back(StrCat("swapping ", db1, " ", db2));
  }
  void AfterSwap(unsigned db1, unsigned db2) override {
    log.push_back(StrCat("swapped ", db1, " ", db2));
  }
  void OnEvent(unsigned db, NotifyClass cls, std::string_view event,
               std::string_view key) override {
    log.push_back(StrCat("event ", db, " ", static_cast<int>(cls), " ", event, " ", key));
  }
  std::vector<std::string> Take() { return std::exchange(log, {}); }

  std::vector<std::string> log;
};

constexpr uint32_t kEverything = kWantBefore | kWantWrites | kWantRemovals | kWantEvents;

class KeyChangeTest : public ::testing::Test {
 protected:
  KeyChangeTest() {
    slot_ = changes_.Add(&rec_);
    changes_.SetInterest(slot_, kEverything);
    changes_.set_notify_classes(&classes_);
  }
  // Inserts `key` (a string "v") and ends the change.
  void Add(std::string_view key, int64_t deadline = 0) {
    OpResult<DbSlice::AddResult> res = db_.FindOrAdd(key, kNow);
    ASSERT_TRUE(res.ok());
    res->it->second.SetString("v");
    if (deadline) db_.SetExpire(res->it, deadline);
    changes_.Finish();
  }

  ChangeListeners changes_;
  ShardStats stats_;
  Recorder rec_;
  unsigned slot_ = 0;
  std::atomic<uint32_t> classes_{0};
  DbSlice db_{3, &stats_, &changes_};
};

TEST_F(KeyChangeTest, AnInsertIsToldBeforeAndAfterTheCommandIsDone) {
  OpResult<DbSlice::AddResult> res = db_.FindOrAdd("k", kNow);
  ASSERT_TRUE(res.ok());
  // The "after" part waits until the command is done with the entry.
  EXPECT_THAT(rec_.Take(), ElementsAre("before 3 (insert)"));
  res->it->second.SetString("v");
  changes_.Finish();
  EXPECT_THAT(rec_.Take(), ElementsAre("write 3 k"));
  changes_.Finish();  // nothing left
  EXPECT_THAT(rec_.Take(), IsEmpty());
}

TEST_F(KeyChangeTest, AChangeInPlaceIsToldWithTheEntryBeforeIt) {
  Add("k");
  rec_.Take();
  ASSERT_FALSE(db_.FindMutable("k", kNow).is_done());
  ASSERT_TRUE(db_.FindMutableOfType("k", ObjType::kString, kNow).ok());
  ASSERT_TRUE(db_.FindOrAddOfType("k", ObjType::kString, kNow).ok());
  changes_.Finish();
  // One write for the three lookups of one key in a row; a "before" for each.
  EXPECT_THAT(rec_.Take(), ElementsAre("before 3 k", "before 3 k", "before 3 k", "write 3 k"));
}

TEST_F(KeyChangeTest, ReadOnlyLookupsAndFailedTypeChecksTellNothing) {
  Add("k");
  rec_.Take();
  EXPECT_FALSE(db_.FindReadOnly("k", kNow).is_done());
  EXPECT_FALSE(db_.FindReadOnlyQuiet("k", kNow).is_done());
  EXPECT_TRUE(db_.FindReadOnlyOfType("k", ObjType::kString, kNow).ok());
  EXPECT_TRUE(db_.FindReadOnly("missing", kNow).is_done());
  EXPECT_EQ(db_.FindMutableOfType("k", ObjType::kHash, kNow).status(), OpStatus::kWrongType);
  EXPECT_EQ(db_.FindOrAddOfType("k", ObjType::kList, kNow).status(), OpStatus::kWrongType);
  EXPECT_TRUE(db_.FindMutable("missing", kNow).is_done());
  EXPECT_EQ(db_.FindMutableOfType("missing", ObjType::kHash, kNow).status(),
            OpStatus::kKeyNotFound);
  changes_.Finish();
  EXPECT_THAT(rec_.Take(), IsEmpty());
}

TEST_F(KeyChangeTest, AWriteThatChangedNothingIsToldUnmodified) {
  Add("k");
  rec_.Take();
  db_.FindMutable("k", kNow);
  changes_.MarkUnmodified();
  changes_.Finish();
  EXPECT_THAT(rec_.Take(), ElementsAre("before 3 k", "write 3 k unmodified"));
}

TEST_F(KeyChangeTest, EveryRemovalSaysWhy) {
  Add("del");
  Add("erasekey");
  Add("over");
  Add("evict");
  Add("lazy-ro", kNow + 10);
  Add("lazy-quiet", kNow + 10);
  Add("lazy-mut", kNow + 10);
  Add("lazy-type", kNow + 10);
  Add("lazy-add", kNow + 10);
  Add("lazy-erase", kNow + 10);
  Add("active", kNow + 10);
  rec_.Take();

  db_.Erase(db_.FindMutable("del", kNow));
  EXPECT_TRUE(db_.EraseKey("erasekey", kNow));
  db_.Erase(db_.FindMutable("over", kNow), RemoveReason::kOverwritten);
  db_.Erase(db_.FindMutable("evict", kNow), RemoveReason::kEvicted);
  EXPECT_THAT(rec_.Take(),
              ElementsAre("before 3 del", "before 3 del", "remove 3 del deleted",
                          "before 3 erasekey", "remove 3 erasekey deleted", "before 3 over",
                          "before 3 over", "remove 3 over overwritten", "before 3 evict",
                          "before 3 evict", "remove 3 evict evicted"));
  changes_.Finish();
  EXPECT_THAT(rec_.Take(), ElementsAre("write 3 del", "write 3 over", "write 3 evict"));

  // Lazy expiry on every kind of access.
  const int64_t later = kNow + 10;
  EXPECT_TRUE(db_.FindReadOnly("lazy-ro", later).is_done());
  EXPECT_TRUE(db_.FindReadOnlyQuiet("lazy-quiet", later).is_done());
  EXPECT_TRUE(db_.FindMutable("lazy-mut", later).is_done());
  EXPECT_FALSE(db_.FindMutableOfType("lazy-type", ObjType::kString, later).ok());
  EXPECT_FALSE(db_.EraseKey("lazy-erase", later));
  EXPECT_THAT(rec_.Take(),
              ElementsAre("before 3 lazy-ro", "remove 3 lazy-ro expired", "before 3 lazy-quiet",
                          "remove 3 lazy-quiet expired", "before 3 lazy-mut",
                          "remove 3 lazy-mut expired", "before 3 lazy-type",
                          "remove 3 lazy-type expired", "before 3 lazy-erase",
                          "remove 3 lazy-erase expired"));
  ASSERT_TRUE(db_.FindOrAdd("lazy-add", later).ok());
  EXPECT_THAT(rec_.Take(), ElementsAre("before 3 lazy-add", "remove 3 lazy-add expired",
                                       "before 3 (insert)"));
  changes_.Finish();
  rec_.Take();

  // The active cycle.
  EXPECT_EQ(db_.ActiveExpire(later, 1000), 1u);
  EXPECT_THAT(rec_.Take(), ElementsAre("before 3 active", "remove 3 active expired"));
  EXPECT_EQ(stats_.expired_keys, 7u);
  EXPECT_EQ(stats_.evicted_keys, 1u);
}

TEST_F(KeyChangeTest, KeysCollectedFromAFullSegmentAreToldExpired) {
  // Fill with keys that all expire, then insert past their deadline: full segments collect
  // their expired keys instead of splitting, and each collected key is reported.
  changes_.SetInterest(slot_, kWantRemovals);
  constexpr int kKeys = 20000;
  for (int i = 0; i < kKeys; ++i) {
    OpResult<DbSlice::AddResult> res = db_.FindOrAdd(StrCat("old", i), kNow);
    ASSERT_TRUE(res.ok());
    db_.SetExpire(res->it, kNow + 1);
  }
  changes_.Finish();
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(db_.FindOrAdd(StrCat("new", i), kNow + 1).ok());
  changes_.Finish();
  std::vector<std::string> log = rec_.Take();
  ASSERT_FALSE(log.empty());  // some segment filled up
  for (const std::string& line : log) {
    EXPECT_TRUE(line.starts_with("remove 3 old") && line.ends_with(" expired")) << line;
  }
  EXPECT_EQ(stats_.expired_keys, log.size());
  EXPECT_EQ(db_.size(), 2 * kKeys - log.size());
}

TEST_F(KeyChangeTest, ALoadIsToldOnlyBeforeTheChange) {
  // A snapshot load (DbSlice::FindOrAddForLoad) is quiet as Redis's loader: the snapshot hears
  // BeforeChange, nobody hears a write, an event or a removal, and no change is counted.
  classes_ = ~0u;
  Add("old", kNow + 1);
  rec_.Take();
  const uint64_t changes = changes_.change_count();
  OpResult<DbSlice::AddResult> added = db_.FindOrAddForLoad("k");
  ASSERT_TRUE(added.ok());
  EXPECT_TRUE(added->inserted);
  added->it->second.SetString("v");
  // An entry already there is returned as it is, even past its deadline (the loader decides).
  OpResult<DbSlice::AddResult> old = db_.FindOrAddForLoad("old");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->inserted);
  EXPECT_TRUE(old->it->first.HasExpire());
  EXPECT_FALSE(changes_.has_pending());
  changes_.Finish();
  EXPECT_THAT(rec_.Take(), ElementsAre("before 3 (insert)", "before 3 old"));
  EXPECT_EQ(changes_.change_count(), changes);
  EXPECT_EQ(stats_.expired_keys, 0u);
  EXPECT_EQ(db_.size(), 2u);
}

TEST_F(KeyChangeTest, ALoadCollectsNoExpiredKey) {
  // Inserts past the deadline of keys filling the table: FindOrAdd would collect them from full
  // segments (KeysCollectedFromAFullSegmentAreToldExpired); a load deletes nothing.
  changes_.SetInterest(slot_, kWantRemovals | kWantEvents);
  classes_ = ~0u;
  constexpr int kKeys = 20000;
  for (int i = 0; i < kKeys; ++i) {
    OpResult<DbSlice::AddResult> res = db_.FindOrAddForLoad(StrCat("old", i));
    ASSERT_TRUE(res.ok());
    db_.SetExpire(res->it, kNow + 1);
  }
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(db_.FindOrAddForLoad(StrCat("new", i)).ok());
  changes_.Finish();
  EXPECT_THAT(rec_.Take(), IsEmpty());
  EXPECT_EQ(db_.size(), 2u * kKeys);
}

TEST_F(KeyChangeTest, AFlushIsToldOnceBeforeTheKeysGo) {
  Add("a");
  db_.FindMutable("a", kNow);  // a write not yet told: heard before the flush
  rec_.Take();
  db_.Clear();
  EXPECT_THAT(rec_.Take(), ElementsAre("write 3 a", "flush 3"));
  EXPECT_EQ(db_.size(), 0u);
}

TEST_F(KeyChangeTest, AListenerHearsOnlyWhatItAskedFor) {
  changes_.SetInterest(slot_, kWantRemovals);
  Add("a");
  db_.FindMutable("a", kNow);
  db_.Notify(kNotifyString, "set", "a");
  changes_.Finish();
  EXPECT_THAT(rec_.Take(), IsEmpty());
  db_.EraseKey("a", kNow);
  EXPECT_THAT(rec_.Take(), ElementsAre("remove 3 a deleted"));
  changes_.SetInterest(slot_, 0);
  Add("b");
  db_.EraseKey("b", kNow);
  EXPECT_THAT(rec_.Take(), IsEmpty());
  EXPECT_FALSE(changes_.wants(kWantWrites));
  // Nobody listens to removals (the counters are DbSlice's own): an erase keeps no key copy.
  EXPECT_FALSE(changes_.wants(kWantRemovals));
}

TEST_F(KeyChangeTest, EventsAreRaisedOnlyForPublishedClasses) {
  db_.Notify(kNotifyString, "set", "a");
  EXPECT_THAT(rec_.Take(), IsEmpty());
  classes_ = kNotifyKeyspace | kNotifyString | kNotifyNew | kNotifyKeyMiss;
  db_.Notify(kNotifyString, "set", "a");
  db_.Notify(kNotifyHash, "hset", "a");  // class not published
  ASSERT_TRUE(db_.FindOrAdd("n", kNow).ok());
  db_.FindReadOnly("missing", kNow);
  db_.FindReadOnlyQuiet("missing", kNow);  // quiet lookups raise no keymiss
  db_.FindMutable("missing", kNow);        // nor do writes
  EXPECT_THAT(rec_.Take(),
              ElementsAre(StrCat("event 3 ", static_cast<int>(kNotifyString), " set a"),
                          "before 3 (insert)", StrCat("event 3 ", static_cast<int>(kNotifyNew), " new n"),
                          StrCat("event 3 ", static_cast<int>(kNotifyKeyMiss), " keymiss missing")));
}

TEST_F(KeyChangeTest, ExpiredAndEvictedKeysAreCountedAndRaiseTheirEvents) {
  // Nobody listens to removals: the counters and the events come from the erase itself.
  changes_.SetInterest(slot_, kWantEvents);
  Add("e1", kNow + 10);
  Add("e2", kNow + 10);
  Add("ev1");
  Add("ev2");
  Add("del");
  db_.Erase(db_.FindMutable("ev1", kNow), RemoveReason::kEvicted);
  EXPECT_TRUE(db_.FindReadOnly("e1", kNow + 10).is_done());
  EXPECT_THAT(rec_.Take(), IsEmpty());  // classes x and e not published
  classes_ = kNotifyKeyevent | kNotifyExpired | kNotifyEvicted;
  db_.Erase(db_.FindMutable("ev2", kNow), RemoveReason::kEvicted);
  EXPECT_EQ(db_.ActiveExpire(kNow + 10, 1000), 1u);
  EXPECT_TRUE(db_.EraseKey("del", kNow));  // a deletion raises no event of its own here
  EXPECT_THAT(rec_.Take(),
              ElementsAre(StrCat("event 3 ", static_cast<int>(kNotifyEvicted), " evicted ev2"),
                          StrCat("event 3 ", static_cast<int>(kNotifyExpired), " expired e2")));
  EXPECT_EQ(stats_.expired_keys, 2u);
  EXPECT_EQ(stats_.evicted_keys, 2u);
}

TEST(ShardChangeTest, SwapDbsIsToldBeforeAndAfterAndRenumbersTheSlices) {
  Shard shard(0, 4);
  Recorder rec;
  shard.changes().SetInterest(shard.changes().Add(&rec), kEverything);
  ASSERT_TRUE(shard.db(1).FindOrAdd("k", kNow).ok());
  shard.FinishChanges();
  rec.Take();
  shard.SwapDbs(1, 2);
  EXPECT_THAT(rec.Take(), ElementsAre("swapping 1 2", "swapped 1 2"));
  EXPECT_EQ(shard.db(1).size(), 0u);
  EXPECT_EQ(shard.db(2).size(), 1u);
  EXPECT_EQ(shard.db(2).index(), 2u);
  // Changes in the swapped slice are told with its new index.
  shard.db(2).EraseKey("k", kNow);
  EXPECT_THAT(rec.Take(), ElementsAre("before 2 k", "remove 2 k deleted"));
  shard.SwapDbs(3, 3);  // no-op
  EXPECT_THAT(rec.Take(), IsEmpty());
}

}  // namespace
}  // namespace dashkv
