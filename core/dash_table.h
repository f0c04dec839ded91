// DashTable: the keyspace index of a shard. Extendible hashing over a directory of fixed-size
// segments: the table grows one segment split at a time and never rehashes everything at once.
// Thread: owned by the shard thread; no internal synchronization.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/logging.h"
#include "core/segment.h"
#include "core/segment_arena.h"

namespace dashkv {

// Design
//
// Layout. A directory (vector of 2^global_depth segment pointers) indexed by the top
// global_depth bits of the 64-bit hash. A segment of local depth d is referenced by the
// 2^(global_depth - d) consecutive directory entries that share its d-bit prefix. A segment
// (core/segment.h) holds kRegularBuckets regular + kStashBuckets stash buckets of
// kSlotsPerBucket slots, laid out as: header (size, local depth, home bucket of each stash slot),
// then one 64-bit home filter per regular bucket, then the 32-byte metadata of every bucket packed
// two per cache line (fingerprints, own/probe bitmaps, spill filter, stash hints), then one 64-bit
// version per bucket, then per bucket its keys and values. The home filter of bucket b has bit
// (fp >> 2) set for the fingerprint fp of every entry whose home is b, wherever it lives; the
// filters are packed apart so that those of a million-key table (0.9 MiB) stay in a core's L2
// cache, and a lookup whose bit is clear (most misses) ends there without reading metadata.
//
// Placement. fingerprint = hash bits 0..7; home bucket = bits 8..39 scaled to kRegularBuckets
// (independent of the segment bits for global depth <= 24). An entry lives in its home bucket,
// in the next one (probe bit set), or in a stash bucket (hint or overflow count in its home).
// Insert order: the home bucket while it has room (so most hits are found in the first bucket
// probed), else the neighbour; else one displacement (a probing entry of home goes back to
// home-1, or an entry of next homed there moves to next+1); else a stash bucket. When the
// segment is full: Hooks::GarbageCollect on the hot buckets, stash unloading, Hooks::CanGrow,
// then split: entries whose hash bit (63 - local_depth) is set move to a new segment at the
// *same bucket and slot* (so a split never fails and never changes a bucket index), versions
// are copied, the directory doubles when local depth == global depth; after a split both
// halves unload their stash where room appeared.
//
// Invariants. An entry's home bucket never changes (splits keep bucket indices), so SCAN by
// home bucket is stable. Per home bucket: stash entries homed there == hints + overflow. A
// bucket's version never decreases when entries move into it (max of the two). Erase never moves
// another entry. CheckInvariants() verifies all of this (tests).
//
// Complexity. Find: 1 directory load + the home filter word; past the filter, an SSE2 match over
// the home bucket, and over the neighbour's probing entries and the stash only when the home's
// spill filter says an entry homed there that lives elsewhere may match; O(1). Past the filter,
// Find prefetches the home bucket's first key line while the metadata loads, so a hit in a table
// far larger than the cache waits for about one memory round trip, not two (metadata, then key).
// Filters stay exact on insert; an erase clears the bit unless another entry may need it (a stale
// bit only costs a lookup the metadata read it would have made without the filter).
// Insert: O(1); the worst case is one split = rehash of one segment's keys (840) + directory
// doubling (O(#segments) pointer copies, rare). No whole-table rehash ever happens.
//
// Memory (server policy, 16-byte key and value objects): per bucket 32 bytes of metadata +
// 8 bytes of version + 14 * 32 bytes of slots, per regular bucket 8 bytes of home filter; segment
// = 64 + 56 * 8 + 60 * (32 + 8) + 60 * 448 = 29,792 bytes (29,824 with alignment) for 840 slots
// (fits a 32 KiB allocation class): 3.50 bytes of overhead per slot, plus 8 bytes of directory
// per segment (< 0.02 bytes per slot). Segments split in waves, so the load factor swings
// between ~50% (just after a wave) and ~96%; bytes per entry = 35.5 / load factor.
//
// Snapshot state. Each bucket has a 64-bit word: a version (bits 16..63) and a bitmap of the
// slots whose entries need no saving for that version (bits 0..15; all set: the bucket is
// saved). A snapshot of version v treats a bucket whose version is older than v as holding only
// entries as of the cut. A write saves just the entry it changes (CVCEntryUponChange) and marks
// its slot; an insert into a free slot marks that slot before the entry exists
// (CVCEntryUponInsert), so the new entry is never saved; the walk saves a bucket's unmarked
// entries and marks the bucket saved (SetVersion). Operations that move entries between slots
// (displacement, stash unloading, garbage collection and split of a full segment) are reported
// per bucket and save whole buckets first, so no entry moves out of a partly saved bucket while
// that snapshot runs; a split keeps slots, so copying the words keeps each entry's mark. The
// mark of an emptied slot stays: any entry placed there later during the snapshot is new, or
// moved by one of those whole-bucket operations. Words of an aborted snapshot are ignored by
// the next one, whose version is higher. The word is the version field that a table without
// snapshot state would have anyway: no memory is added per entry.
//
// Cursors. Traverse() cursors: bits 40..47 = home bucket, bits 0..39 = segment hash prefix
// left-aligned to 40 bits (global depth <= 40); bits 48..63 are always 0 and free for the caller.
// TraverseBuckets() cursors: bits 8..47 = segment prefix, bits 0..7 = physical bucket.

// Defaults for policies: the server's geometry (56 + 4 buckets x 14 slots, 840 slots).
// A policy also supplies `static uint64_t HashFn(const Key&)` (plus overloads for heterogeneous
// lookup types) and optionally `static bool Equal(const Key&, const U&)` (else operator==).
struct DashPolicyBase {
  static constexpr unsigned kRegularBuckets = 56;
  static constexpr unsigned kStashBuckets = 4;
  static constexpr unsigned kSlotsPerBucket = 14;
  // true: keys and values relocate by memcpy and the source is not destroyed.
  static constexpr bool kRelocateByMemcpy = false;
};

// Hooks with no effect: the table splits whenever a segment is full. Any hook a Hooks type lacks
// is skipped, so callers may define only those they need:
//   unsigned GarbageCollect(const HotBuckets&, DashTable*)  -- returns entries freed
//   bool CanGrow(const DashTable&)                          -- false refuses the split
//   void RecordSplit(const DashTable&)                      -- called after each split
struct NoDashHooks {};

// An unordered map from Key to Value that grows by splitting one segment at a time (see Design).
// Owned by one shard; Thread: owned by the shard thread (no internal synchronization).
// Iterators stay valid until the next insert, split or Clear; Erase invalidates only iterators
// to the erased entry.
template <typename Key, typename Value, typename Policy>
class DashTable {
  using SegmentT = detail::Segment<Key, Value, Policy>;

 public:
  static constexpr unsigned kRegularBuckets = SegmentT::kRegular;
  static constexpr unsigned kStashBuckets = SegmentT::kStash;
  static constexpr unsigned kBucketsPerSegment = SegmentT::kTotal;
  static constexpr unsigned kSlotsPerBucket = SegmentT::kSlots;
  static constexpr unsigned kSegmentCapacity = SegmentT::kCapacity;
  static constexpr unsigned kMaxGlobalDepth = 40;
  static constexpr unsigned kCursorBits = 48;

  template <bool kConst>
  class Iter;
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;
  // An iterator over the entries of one physical bucket; is_done() at the bucket's end. It
  // still names its bucket when done (GetVersion/SetVersion work on it).
  using bucket_iterator = iterator;

  // The buckets an insert of `key_hash` touches when its segment is full, as bucket iterators
  // (done when empty): buckets[0..3] = home - 1, home, home + 1, home + 2; buckets[4..] = the
  // stash buckets. Hooks may Erase entries through them (other iterators stay valid).
  struct HotBuckets {
    static constexpr unsigned kNumRegular = 4;
    static constexpr unsigned kNum = kNumRegular + kStashBuckets;
    bucket_iterator buckets[kNum];
    uint64_t key_hash = 0;
  };

  DashTable() { dir_.push_back(NewSegment()); }
  DashTable(const DashTable&) = delete;
  DashTable& operator=(const DashTable&) = delete;
  ~DashTable() { FreeSegments(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t segment_count() const { return segment_count_; }
  size_t bucket_count() const { return segment_count_ * kBucketsPerSegment; }
  // Returns the number of slots (regular and stash) of all segments.
  size_t capacity() const { return segment_count_ * kSegmentCapacity; }
  unsigned global_depth() const { return global_depth_; }
  size_t directory_size() const { return dir_.size(); }
  // Returns the bytes the table itself occupies: directory + segments + this object. Memory owned
  // by keys and values is not included.
  size_t mem_usage() const {
    return sizeof(*this) + dir_.capacity() * sizeof(SegmentT*) + arena_.bytes();
  }
  static constexpr size_t segment_bytes() { return sizeof(SegmentT); }
  // Takes the table's large segment chunks from `reserve` (core/chunk_reserve.h), so that growing
  // the table never faults a huge page on this thread; nullptr: none. REQUIRES: `reserve`
  // outlives the table, and this thread is its only consumer.
  void set_chunk_reserve(ChunkReserve* reserve) { arena_.set_chunk_reserve(reserve); }

  iterator begin() { return SeekFrom(0, 0, 0); }
  const_iterator begin() const { return const_cast<DashTable*>(this)->begin(); }
  iterator end() { return iterator(); }
  const_iterator end() const { return const_iterator(); }

  // Returns the entry equal to `key`, or end(). `hash` must be Policy::HashFn(key).
  template <typename U>
  ABSL_ATTRIBUTE_ALWAYS_INLINE iterator Find(const U& key, uint64_t hash) {
    const uint32_t idx = DirIndex(hash);
    auto ref = dir_[idx]->Find(key, hash);
    return ref.found() ? iterator(this, idx, ref.bucket, ref.slot, false) : end();
  }
  template <typename U>
  ABSL_ATTRIBUTE_ALWAYS_INLINE iterator Find(const U& key) { return Find(key, Policy::HashFn(key)); }
  template <typename U>
  ABSL_ATTRIBUTE_ALWAYS_INLINE const_iterator Find(const U& key, uint64_t hash) const {
    return const_cast<DashTable*>(this)->Find(key, hash);
  }
  template <typename U>
  ABSL_ATTRIBUTE_ALWAYS_INLINE const_iterator Find(const U& key) const {
    return Find(key, Policy::HashFn(key));
  }

  // Prefetches the home bucket of `hash` (home filter, metadata and the first keys) ahead of a
  // Find, or of a Find that may be followed by InsertNew: a Find whose filter rejects the key
  // reads neither the metadata nor the keys, which an insert then writes.
  void Prefetch(uint64_t hash) const {
    const SegmentT* seg = dir_[DirIndex(hash)];
    const unsigned home = SegmentT::HomeBucket(hash);
    __builtin_prefetch(seg->filter_address(home));
    __builtin_prefetch(&seg->meta(home));
    __builtin_prefetch(seg->keys_address(home));
  }

  // Inserts (key, value) unless an equal key exists. Returns {iterator to the entry, true} when
  // inserted, {iterator to the existing entry, false} when the key exists, and {end(), false}
  // when the segment was full and hooks.CanGrow refused the split. Invalidates iterators.
  // REQUIRES: hooks do not insert into this table.
  template <typename K, typename V, typename Hooks>
  std::pair<iterator, bool> Insert(K&& key, V&& value, Hooks& hooks) {
    const uint64_t hash = Policy::HashFn(key);
    Prefetch(hash);  // an insert writes the home bucket whether Find's filter passes or not
    if (iterator it = Find(key, hash); !it.is_done()) return {it, false};
    return InsertNew(hash, std::forward<K>(key), std::forward<V>(value), hooks);
  }
  template <typename K, typename V>
  std::pair<iterator, bool> Insert(K&& key, V&& value) {
    NoDashHooks hooks;
    return Insert(std::forward<K>(key), std::forward<V>(value), hooks);
  }

  // Like Insert, but assigns `value` to the existing entry when the key exists.
  template <typename K, typename V, typename Hooks>
  std::pair<iterator, bool> InsertOrAssign(K&& key, V&& value, Hooks& hooks) {
    const uint64_t hash = Policy::HashFn(key);
    Prefetch(hash);
    if (iterator it = Find(key, hash); !it.is_done()) {
      it->second = std::forward<V>(value);
      return {it, false};
    }
    return InsertNew(hash, std::forward<K>(key), std::forward<V>(value), hooks);
  }
  template <typename K, typename V>
  std::pair<iterator, bool> InsertOrAssign(K&& key, V&& value) {
    NoDashHooks hooks;
    return InsertOrAssign(std::forward<K>(key), std::forward<V>(value), hooks);
  }

  // Inserts a key known to be absent; `hash` must be Policy::HashFn(key).
  // REQUIRES: no entry equal to `key` exists.
  template <typename K, typename V, typename Hooks>
  std::pair<iterator, bool> InsertNew(uint64_t hash, K&& key, V&& value, Hooks& hooks);

  // Destroys the entry at `it`. Other entries do not move, so iterators to them (and `it` itself
  // for ++, within a bucket iteration) stay usable. REQUIRES: !it.is_done().
  void Erase(const_iterator it) {
    dir_[it.seg_idx_]->Erase(it.bucket_, it.slot_);
    --size_;
  }
  void Erase(iterator it) { Erase(const_iterator(it)); }
  // Erases the entry equal to `key`; returns 1 when found, else 0.
  template <typename U>
    requires(!std::is_convertible_v<const U&, const_iterator>)
  size_t Erase(const U& key) {
    iterator it = Find(key);
    if (it.is_done()) return 0;
    Erase(it);
    return 1;
  }

  // Destroys every entry and frees all segments but one; versions are reset to 0.
  void Clear() {
    FreeSegments();
    dir_.assign(1, NewSegment());
    dir_.shrink_to_fit();
    global_depth_ = 0;
    segment_count_ = 1;
    size_ = 0;
  }

  // Visits the entries homed at the next logical bucket(s) (bucket-major, then segments in hash
  // order) until at least one entry was visited; calls fn(iterator) for each. Returns the next
  // cursor, 0 when the traversal is complete. Every key present for the whole traversal is
  // visited at least once, even if the table splits between calls. Only the low 48 bits of the
  // cursor are used (see Design). REQUIRES: fn does not insert or erase.
  template <typename Fn>
  uint64_t Traverse(uint64_t cursor, Fn&& fn);

  // Visits one physical bucket (segment-major order): calls fn(bucket_iterator) once, even for
  // an empty bucket. Returns the next cursor, 0 when done. For snapshots: a split between calls
  // may make a later call revisit moved entries (their bucket versions tell). REQUIRES: as above.
  template <typename Fn>
  uint64_t TraverseBuckets(uint64_t cursor, Fn&& fn);

  // Returns the version of the bucket `it` points into.
  uint64_t GetVersion(const const_iterator& it) const {
    return dir_[it.seg_idx_]->version(it.bucket_);
  }
  // Marks the bucket `it` points into as wholly saved at `version` (see Snapshot state).
  // REQUIRES: version <= kMaxVersion.
  void SetVersion(const const_iterator& it, uint64_t version) {
    dir_[it.seg_idx_]->set_version(it.bucket_, version);
  }
  static constexpr uint64_t kMaxVersion = SegmentT::kMaxVersion;
  // Returns true when the bucket `it` points into is wholly saved for `version`.
  bool IsBucketSaved(const const_iterator& it, uint64_t version) const {
    return dir_[it.seg_idx_]->saved(it.bucket_, version);
  }
  // Returns the slots (bit i: slot i) of the bucket `it` points into whose entries need no
  // saving for `version`: all when the bucket is saved, none when it is older.
  uint16_t SavedSlots(const const_iterator& it, uint64_t version) const {
    return dir_[it.seg_idx_]->saved_slots(it.bucket_, version);
  }
  // Returns true when the entry at `it` needs no saving for `version`. REQUIRES: !it.is_done().
  bool IsEntrySaved(const const_iterator& it, uint64_t version) const {
    return (SavedSlots(it, version) >> it.slot_) & 1;
  }

  // Calls cb(bucket_iterator) for every bucket not saved for `version` that inserting `key`
  // (assumed absent) would change now: the target bucket, the displaced entry's new bucket, or
  // every bucket of the segment when it is full (hooks and split may touch any of them).
  template <typename U, typename Cb>
  void CVCUponInsert(uint64_t version, const U& key, Cb&& cb) {
    CVCUponInsertHash(version, Policy::HashFn(key), std::forward<Cb>(cb));
  }
  // The same, for a key whose hash is `hash`.
  template <typename Cb>
  void CVCUponInsertHash(uint64_t version, uint64_t hash, Cb&& cb);
  // Calls cb(bucket_iterator) for the bucket of `it` if its version < `version` (an erase of
  // `it` changes only that bucket).
  template <typename Cb>
  void CVCUponErase(uint64_t version, const_iterator it, Cb&& cb) {
    if (!IsBucketSaved(it, version)) cb(BucketBegin(it.seg_idx_, it.bucket_));
  }

  // Per-entry variants (see Snapshot state). Before inserting an absent key of hash `hash`:
  // when the insert only fills a free slot (no entry moves), marks that slot saved for
  // `version`, since the new entry is not part of the snapshot; otherwise (displacement, full
  // segment) calls cb(bucket_iterator) for every bucket that may change, as CVCUponInsertHash.
  // REQUIRES: the table does not change before the insert.
  template <typename Cb>
  void CVCEntryUponInsert(uint64_t version, uint64_t hash, Cb&& cb);
  // Before the entry at `it` changes or is erased: unless it is already saved for `version`,
  // calls cb(it) (which saves its old contents) and marks it saved. Nothing else moves.
  template <typename Cb>
  void CVCEntryUponChange(uint64_t version, iterator it, Cb&& cb) {
    SegmentT* seg = dir_[it.seg_idx_];
    if ((seg->saved_slots(it.bucket_, version) >> it.slot_) & 1) return;
    cb(it);
    seg->mark_slot_saved(it.bucket_, it.slot_, version);
  }

  // The place of an entry: directory index, bucket and slot. A small copyable name for an entry
  // that holds while no entry moves; an insert (displacement, split), an erase or a Clear may
  // empty it or put another entry there, so whoever keeps one checks what it finds.
  struct Place {
    uint32_t seg_idx = 0;
    uint8_t bucket = 0;
    uint8_t slot = 0;
  };
  // Returns the entry at `place`, or end() when that slot is empty or no longer exists.
  iterator AtPlace(Place place) {
    if (place.seg_idx >= dir_.size() || place.bucket >= kBucketsPerSegment ||
        place.slot >= kSlotsPerBucket ||
        !((dir_[place.seg_idx]->busy(place.bucket) >> place.slot) & 1)) {
      return end();
    }
    return iterator(this, place.seg_idx, place.bucket, place.slot, false);
  }

  // Returns an iterator to an entry chosen uniformly at random (end() when empty). `gen` is a
  // uniform random bit generator of 64-bit values (absl::BitGen, std::mt19937_64, SplitMix64).
  // Draws (segment, bucket, slot) uniformly until the slot is busy: a directory index counts
  // only when it is the first of its segment's span, so every segment, and then every slot, is
  // equally likely whatever the local depths. Expected tries: directory size / segments / load
  // factor; after 256 misses (a table emptied by erases) it takes the k-th entry, k uniform, in
  // O(segments + buckets).
  template <typename Gen>
  iterator GetRandomIterator(Gen& gen) {
    if (size_ == 0) return end();
    constexpr unsigned kSlots = kBucketsPerSegment * kSlotsPerBucket;
    static_assert(Gen::min() == 0 && Gen::max() == ~uint64_t{0}, "64 random bits per draw");
    for (int tries = 0; tries < 256; ++tries) {
      // One draw per try: its low half picks the directory index, its high half the slot
      // (multiply-shift maps 32 uniform bits onto [0, n) with a bias under n / 2^32).
      const uint64_t r = gen();
      const auto idx = uint32_t(((r & 0xffffffffu) * dir_.size()) >> 32);
      const auto slot = unsigned(((r >> 32) * kSlots) >> 32);
      if (SegmentStart(idx) != idx) continue;
      const unsigned bucket = slot / kSlotsPerBucket, in_bucket = slot % kSlotsPerBucket;
      if ((dir_[idx]->busy(bucket) >> in_bucket) & 1) {
        return iterator(this, idx, uint8_t(bucket), uint8_t(in_bucket), false);
      }
    }
    uint64_t k = gen() % size_;
    uint32_t idx = 0;
    while (k >= dir_[idx]->size()) {
      k -= dir_[idx]->size();
      idx = NextSegment(idx);
    }
    for (iterator it = SeekFrom(idx, 0, 0);; ++it) {
      if (k-- == 0) return it;
    }
  }

  // Returns an iterator on the first entry of bucket `bucket` of the segment at directory index
  // `seg_idx` (done if the bucket is empty).
  bucket_iterator BucketBegin(uint32_t seg_idx, unsigned bucket) {
    iterator it(this, seg_idx, uint8_t(bucket), 0, true);
    SeekValid(&it);
    return it;
  }

  // Checks the structural invariants (directory spans, placement, hints, sizes). For tests.
  absl::Status CheckInvariants() const;

  template <bool kConst>
  class Iter {
    using Owner = std::conditional_t<kConst, const DashTable, DashTable>;
    using KeyRef = std::conditional_t<kConst, const Key&, Key&>;
    using ValueRef = std::conditional_t<kConst, const Value&, Value&>;

   public:
    // `first` is mutable for iterator: REQUIRES the caller never changes its hash or equality.
    struct Ref {
      KeyRef first;
      ValueRef second;
    };
    struct Arrow {
      Ref ref;
      Ref* operator->() { return &ref; }
    };

    Iter() = default;
    template <bool kOther, typename = std::enable_if_t<kConst && !kOther>>
    Iter(const Iter<kOther>& o)  // NOLINT: iterator -> const_iterator
        : owner_(o.owner_), seg_idx_(o.seg_idx_), bucket_(o.bucket_), slot_(o.slot_),
          bucket_only_(o.bucket_only_) {}

    Ref operator*() const { return Ref{seg()->key(bucket_, slot_), seg()->value(bucket_, slot_)}; }
    Arrow operator->() const { return Arrow{**this}; }
    Iter& operator++() {
      ++slot_;
      owner_->SeekValidAny(this);
      return *this;
    }

    bool is_done() const { return owner_ == nullptr || slot_ >= kSlotsPerBucket; }
    // Returns the segment's id: the first directory index that points to it (valid until the
    // next split or directory doubling).
    uint32_t segment_id() const { return owner_->SegmentStart(seg_idx_); }
    // Returns the physical bucket index in the segment (>= kRegularBuckets: stash).
    uint8_t bucket_id() const { return bucket_; }
    uint8_t slot_id() const { return slot_; }
    // Returns the entry's place (DashTable::AtPlace finds it again while nothing moved).
    Place place() const { return Place{seg_idx_, bucket_, slot_}; }
    // Returns the home (logical) bucket of the entry.
    unsigned home_bucket() const { return seg()->HomeOf(bucket_, slot_); }

    friend bool operator==(const Iter& a, const Iter& b) {
      if (a.is_done() || b.is_done()) return a.is_done() == b.is_done();
      return a.owner_ == b.owner_ && a.seg_idx_ == b.seg_idx_ && a.bucket_ == b.bucket_ &&
             a.slot_ == b.slot_;
    }

   private:
    friend class DashTable;
    template <bool>
    friend class Iter;
    Iter(Owner* owner, uint32_t seg_idx, uint8_t bucket, uint8_t slot, bool bucket_only)
        : owner_(owner), seg_idx_(seg_idx), bucket_(bucket), slot_(slot),
          bucket_only_(bucket_only) {}
    auto* seg() const { return owner_->dir_[seg_idx_]; }

    Owner* owner_ = nullptr;
    uint32_t seg_idx_ = 0;
    uint8_t bucket_ = 0;
    uint8_t slot_ = 0;
    bool bucket_only_ = false;
  };

 private:
  static constexpr uint64_t kPrefixMask = (uint64_t(1) << kMaxGlobalDepth) - 1;

  // Returns the top global_depth_ bits of `hash` (0 when the depth is 0), without a branch.
  uint32_t DirIndex(uint64_t hash) const { return uint32_t((hash >> 1) >> (63 - global_depth_)); }
  // Returns the first directory index of the segment at `idx`, and the count of its entries.
  uint32_t SpanOf(uint32_t idx) const { return 1u << (global_depth_ - dir_[idx]->local_depth()); }
  uint32_t SegmentStart(uint32_t idx) const { return idx & ~(SpanOf(idx) - 1); }
  uint32_t NextSegment(uint32_t idx) const { return SegmentStart(idx) + SpanOf(idx); }

  iterator SeekFrom(uint32_t idx, uint8_t bucket, uint8_t slot) {
    iterator it(this, idx, bucket, slot, false);
    SeekValid(&it);
    return it;
  }
  template <typename It>
  void SeekValidAny(It* it) const { const_cast<DashTable*>(this)->SeekValidImpl(it); }
  void SeekValid(iterator* it) { SeekValidImpl(it); }
  template <typename It>
  void SeekValidImpl(It* it);

  template <typename Hooks>
  bool MakeRoom(uint32_t idx, uint64_t hash, Hooks& hooks, unsigned* stage);
  HotBuckets MakeHotBuckets(uint32_t idx, uint64_t hash);
  void Split(uint32_t idx);
  void FreeSegments();
  SegmentT* NewSegment() { return new (arena_.Allocate()) SegmentT(0); }
  absl::Status CheckSegment(uint32_t idx, size_t* total) const;

  detail::SegmentArena<sizeof(SegmentT), alignof(SegmentT)> arena_;  // declared before dir_
  std::vector<SegmentT*> dir_;
  unsigned global_depth_ = 0;
  size_t segment_count_ = 1;
  size_t size_ = 0;
};

}  // namespace dashkv

#include "core/detail_dash_table_impl.h"
