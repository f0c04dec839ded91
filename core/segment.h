// Segment: the fixed-size unit of a DashTable (regular buckets + stash buckets of slots), with
// its bucket metadata, fingerprint matching, insertion plan, stash hints and split.
// A detail of core/dash_table.h, tested on its own in tests/core/segment_test.cc.
// Thread: owned by the shard thread that owns the table.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "core/base/logging.h"

namespace dashkv {
namespace detail {

// Metadata of one bucket: 32 bytes for up to 16 slots (its version is kept apart, see Segment).
//   fp[16]      one fingerprint byte per slot (low 8 bits of the hash); 16 bytes so a single SSE2
//               load covers them (bytes past the slot count are masked off).
//   own         bit i set when slot i holds an entry whose home is this bucket (every entry of a
//               stash bucket counts as own).
//   probe       bit i set when slot i holds an entry whose home is the previous bucket
//               (regular buckets only). own & probe == 0; a slot is busy when either bit is set.
//               Keeping the two sets apart (rather than busy + probe) lets Find mask each bucket's
//               fingerprint matches with one load and one AND.
//   spill       a one-hash Bloom filter (32 bits) of the entries whose home is this bucket and
//               that live elsewhere, in the next bucket (probing) or in a stash bucket: bit
//               SpillBit(fp) set for each. A lookup looks past its home bucket only when its
//               fingerprint's bit is set, so most misses (and hits at home) read one 32-byte
//               metadata block. Kept exact: removing such an entry recomputes the filter.
//   hint_*      up to 4 stash hints: an entry whose home is this bucket and that lives in stash
//               bucket hint_stash(i), with fingerprint hint_fp[i]. Entries stashed when the 4 hints
//               are taken are counted in `overflow` (then a lookup scans every stash bucket).
struct BucketMeta {
  static constexpr unsigned kHints = 4;

  uint8_t fp[16];
  uint16_t own;
  uint16_t probe;
  uint32_t spill;
  uint8_t hint_fp[kHints];
  uint8_t hint_stash;  // 2 bits per hint
  uint8_t hint_busy;   // low 4 bits
  uint8_t overflow;
  uint8_t reserved;

  unsigned HintStash(unsigned i) const { return (hint_stash >> (2 * i)) & 3u; }
  // Returns the spill-filter bit of fingerprint `fp`: bit (fp >> 2) & 31, so that fingerprints
  // with the same home-filter bit (Segment::FilterShift) have the same spill bit.
  static uint32_t SpillBit(uint8_t fp) { return 1u << ((fp >> 2) & 31u); }
};
static_assert(sizeof(BucketMeta) == 32, "two bucket metadata blocks per cache line");

// Returns a bitmap of the slots among the first 16 whose fingerprint equals `fp` in the bits of
// `mask` (busy or not).
inline uint32_t MatchFingerprintBits(const BucketMeta& m, uint8_t fp, uint8_t mask) {
#if defined(__SSE2__)
  __m128i bytes = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m.fp)),
                                _mm_set1_epi8(char(mask)));
  return static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(char(fp & mask)))));
#else
  uint32_t r = 0;
  for (unsigned i = 0; i < 16; ++i) r |= uint32_t((m.fp[i] & mask) == (fp & mask)) << i;
  return r;
#endif
}

// Returns a bitmap of the slots among the first 16 whose fingerprint equals `fp` (busy or not).
// The compiler drops the AND with an all-ones mask, so this is the plain SSE2 compare.
inline uint32_t MatchFingerprints(const BucketMeta& m, uint8_t fp) {
  return MatchFingerprintBits(m, fp, 0xff);
}

// Compares a stored key with a probe key: Policy::Equal when the policy has one, else ==.
template <typename Policy, typename K, typename U>
bool PolicyEqual(const K& stored, const U& probe) {
  if constexpr (requires { Policy::Equal(stored, probe); }) {
    return Policy::Equal(stored, probe);
  } else {
    return stored == probe;
  }
}

// Moves the object at `src` into raw storage `dst` and ends the life of `*src`.
template <typename T, bool kMemcpy>
void Relocate(T* dst, T* src) {
  if constexpr (kMemcpy || std::is_trivially_copyable_v<T>) {
    std::memcpy(static_cast<void*>(dst), static_cast<const void*>(src), sizeof(T));
  } else {
    new (dst) T(std::move(*src));
    src->~T();
  }
}

// What an insertion will do: where the new entry goes, and the one move that makes room for it
// (displacement). Computed without side effects so the change report (CVC) can use it.
struct InsertPlan {
  enum class Kind : uint8_t { kFull, kDirect, kDisplace, kStash };
  Kind kind = Kind::kFull;
  uint8_t bucket = 0;  // target of the new entry
  uint8_t slot = 0;
  bool probe = false;
  uint8_t from_bucket = 0;  // kDisplace: the entry at (from_bucket, from_slot) moves to to_bucket
  uint8_t from_slot = 0;
  uint8_t to_bucket = 0;
  bool to_probe = false;
};

// A fixed array of kRegularBuckets + kStashBuckets buckets of kSlotsPerBucket slots. The entry of
// hash h has its home in regular bucket HomeBucket(h) and lives there, in the next bucket
// (probing), or in a stash bucket (with a hint or an overflow count in its home bucket).
template <typename Key, typename Value, typename Policy>
class Segment {
 public:
  static constexpr unsigned kRegular = Policy::kRegularBuckets;
  static constexpr unsigned kStash = Policy::kStashBuckets;
  static constexpr unsigned kTotal = kRegular + kStash;
  static constexpr unsigned kSlots = Policy::kSlotsPerBucket;
  static constexpr unsigned kCapacity = kTotal * kSlots;
  static constexpr bool kMemcpy = Policy::kRelocateByMemcpy;
  static constexpr uint8_t kNoBucket = 0xff;
  static constexpr uint16_t kSlotMask = uint16_t((1u << kSlots) - 1);

  static_assert(kSlots >= 1 && kSlots <= 16, "busy bitmaps are 16 bits wide");
  static_assert(kRegular >= 4 && kRegular <= 200, "displacement needs 4 distinct buckets");
  static_assert(kStash >= 1 && kStash <= 4, "hints hold a 2-bit stash index");

  // Position of a slot; bucket == kNoBucket means "none".
  struct SlotRef {
    uint8_t bucket = kNoBucket;
    uint8_t slot = 0;
    bool found() const { return bucket != kNoBucket; }
  };

  explicit Segment(uint8_t local_depth) : local_depth_(local_depth) {
    std::memset(filters_, 0, sizeof(filters_));
    std::memset(metas_, 0, sizeof(metas_));
    std::memset(versions_, 0, sizeof(versions_));
  }
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment() { DestroyAll(); }

  static uint8_t Fingerprint(uint64_t hash) { return uint8_t(hash); }
  // Returns the home bucket: bits 8..39 of the hash scaled to [0, kRegular). Does not depend on
  // the bits that choose the segment (the top global-depth bits) for depths up to 24.
  static unsigned HomeBucket(uint64_t hash) {
    return unsigned((((hash >> 8) & 0xffffffffu) * kRegular) >> 32);
  }
  // Branch-free: the lookup path computes it for every Find.
  static unsigned NextBucket(unsigned b) { return (b + 1) & -unsigned(b + 1 < kRegular); }
  static unsigned PrevBucket(unsigned b) { return b == 0 ? kRegular - 1 : b - 1; }

  uint32_t size() const { return size_; }
  uint8_t local_depth() const { return local_depth_; }
  void set_local_depth(uint8_t d) { local_depth_ = d; }

  Key& key(unsigned b, unsigned s) { return buckets_[b].key(s); }
  const Key& key(unsigned b, unsigned s) const { return buckets_[b].key(s); }
  Value& value(unsigned b, unsigned s) { return buckets_[b].value(s); }
  const Value& value(unsigned b, unsigned s) const { return buckets_[b].value(s); }
  uint16_t busy(unsigned b) const { return metas_[b].own | metas_[b].probe; }
  uint16_t probe(unsigned b) const { return metas_[b].probe; }
  const BucketMeta& meta(unsigned b) const { return metas_[b]; }
  // Returns the address of bucket b's keys (for prefetching).
  const void* keys_address(unsigned b) const { return &buckets_[b]; }
  // Returns the address of regular bucket b's home filter word (for prefetching).
  const void* filter_address(unsigned b) const { return &filters_[b]; }
  // Returns the home filter of regular bucket b: bit FilterShift(fp) is set for the fingerprint
  // of every entry whose home is b, wherever it lives (b, the next bucket, or a stash bucket).
  uint64_t filter(unsigned b) const { return filters_[b]; }
  // Returns the home-filter bit that stands for fingerprint `fp`: bit (fp >> 2), from the
  // fingerprint bits kFilterFpMask. Fingerprints with the same home-filter bit have the same spill
  // bit (BucketMeta::SpillBit), which is what lets an erase clear a bit from one bucket's data.
  static unsigned FilterShift(uint8_t fp) { return fp >> 2; }
  static uint64_t FilterBit(uint8_t fp) { return uint64_t{1} << FilterShift(fp); }
  static constexpr uint8_t kFilterFpMask = 0xfc;
  // Returns the home-filter bits whose fingerprints have one of the spill bits `spill` (each
  // spill bit j stands for home-filter bits j and j + 32).
  static uint64_t FilterBitsOfSpill(uint32_t spill) { return spill | (uint64_t{spill} << 32); }
  // Snapshot state of bucket b (see "Snapshot state" in core/dash_table.h). The word holds the
  // version in bits 16..63 and, in bits 0..15, the slots whose entry needs no saving for that
  // version; all 16 bits set means the whole bucket is saved. Words compare as a whole: a move
  // keeps the larger one, and a bucket is saved for v when its word >= SavedWord(v).
  static constexpr uint64_t kMaxVersion = (uint64_t{1} << 48) - 1;
  static constexpr uint64_t SavedWord(uint64_t v) { return (v << 16) | 0xffff; }
  // Returns the version of bucket b; it never decreases when entries move in.
  uint64_t version(unsigned b) const { return versions_[b] >> 16; }
  // Marks bucket b as saved at version v (every slot). REQUIRES: v <= kMaxVersion.
  void set_version(unsigned b, uint64_t v) { versions_[b] = SavedWord(v); }
  // Returns true when bucket b is wholly saved for version v.
  bool saved(unsigned b, uint64_t v) const { return versions_[b] >= SavedWord(v); }
  // Returns the slots of bucket b whose entries need no saving for version v: every slot when
  // the bucket is saved, none when its version is older than v.
  uint16_t saved_slots(unsigned b, uint64_t v) const {
    const uint64_t w = versions_[b];
    if ((w >> 16) < v) return 0;
    return (w >> 16) == v ? uint16_t(w) : uint16_t(0xffff);
  }
  // Marks slot s of bucket b as needing no saving for version v (its entry was saved, or it
  // will hold an entry created after the cut); a bucket of an older version starts afresh.
  void mark_slot_saved(unsigned b, unsigned s, uint64_t v) {
    const uint64_t w = versions_[b];
    if ((w >> 16) > v) return;
    versions_[b] = ((w >> 16) == v ? w : v << 16) | (uint64_t{1} << s);
  }

  // Returns the home bucket of the entry at (b, s).
  unsigned HomeOf(unsigned b, unsigned s) const {
    if (b >= kRegular) return stash_home_[(b - kRegular) * kSlots + s];
    return (metas_[b].probe >> s) & 1 ? PrevBucket(b) : b;
  }

  // Returns the bitmap of the entries of bucket `b` whose home is `home`.
  uint16_t EntriesWithHome(unsigned b, unsigned home) const {
    const BucketMeta& m = metas_[b];
    if (b < kRegular) return b == home ? m.own : m.probe;
    uint16_t r = 0;
    for (uint16_t bits = m.own; bits; bits &= bits - 1) {
      unsigned s = __builtin_ctz(bits);
      if (stash_home_[(b - kRegular) * kSlots + s] == home) r |= uint16_t(1u << s);
    }
    return r;
  }

  // Returns where `probe_key` (of hash `hash`) lives, or a SlotRef with found() false.
  // The inline path is what most lookups need: the home filter word (a lookup whose bit is clear
  // ends there, touching no metadata), then the home bucket's metadata (one 32-byte block), its
  // first fingerprint candidate, and the spill filter. The rest (more candidates, the neighbour's
  // probing entries, the stash) is out of line in FindRest, so a miss runs few instructions and
  // more lookups overlap their memory loads. Past the filter, prefetches the first cache line of
  // the home bucket's keys in parallel with the metadata: a hit waits for about one memory round
  // trip instead of two. While the filter branch is predicted to pass (mostly hits), the CPU
  // issues the metadata and key loads before the filter word arrives; while it is predicted to
  // fail (mostly misses), a miss costs the filter word alone.
  template <typename U>
  ABSL_ATTRIBUTE_ALWAYS_INLINE SlotRef Find(const U& probe_key, uint64_t hash) const {
    const uint8_t fp = Fingerprint(hash);
    const unsigned home = HomeBucket(hash);
    if ((filters_[home] & FilterBit(fp)) == 0) return {};
    __builtin_prefetch(buckets_[home].keys);
    const BucketMeta& hm = metas_[home];
    const uint32_t cand = MatchFingerprints(hm, fp) & hm.own;
    if (ABSL_PREDICT_TRUE(cand != 0)) {
      const unsigned s = __builtin_ctz(cand);
      if (ABSL_PREDICT_TRUE(PolicyEqual<Policy>(buckets_[home].key(s), probe_key))) {
        return {uint8_t(home), uint8_t(s)};
      }
      return FindRest(probe_key, home, fp, cand & (cand - 1));
    }
    if (ABSL_PREDICT_TRUE((hm.spill & BucketMeta::SpillBit(fp)) == 0)) return {};
    return FindRest(probe_key, home, fp, 0);
  }

  // Returns how an entry of hash `hash` would be inserted now; kind kFull when it cannot be.
  InsertPlan PlanInsert(uint64_t hash) const {
    InsertPlan p;
    const unsigned home = HomeBucket(hash), next = NextBucket(home);
    const unsigned free_home = FreeCount(home), free_next = FreeCount(next);
    if (free_home > 0 || free_next > 0) {
      const bool use_home = free_home > 0;
      p.kind = InsertPlan::Kind::kDirect;
      p.bucket = uint8_t(use_home ? home : next);
      p.slot = uint8_t(FirstFree(p.bucket));
      p.probe = !use_home;
      return p;
    }
    if (PlanDisplacement(home, next, &p)) return p;
    const unsigned start = Fingerprint(hash) % kStash;
    for (unsigned i = 0; i < kStash; ++i) {
      const unsigned sb = kRegular + (start + i) % kStash;
      if (FreeCount(sb) > 0) {
        p.kind = InsertPlan::Kind::kStash;
        p.bucket = uint8_t(sb);
        p.slot = uint8_t(FirstFree(sb));
        return p;
      }
    }
    return p;
  }

  // Executes `plan` (from PlanInsert on the same hash, no change in between) and constructs the
  // entry. Returns its position.
  template <typename K, typename V>
  SlotRef Execute(const InsertPlan& plan, uint64_t hash, K&& k, V&& v) {
    DCHECK(plan.kind != InsertPlan::Kind::kFull);
    if (plan.kind == InsertPlan::Kind::kDisplace) {
      const unsigned to_slot = FirstFree(plan.to_bucket);
      MoveEntry(plan.from_bucket, plan.from_slot, plan.to_bucket, to_slot, plan.to_probe);
    }
    Bucket& b = buckets_[plan.bucket];
    new (b.key_ptr(plan.slot)) Key(std::forward<K>(k));
    new (b.value_ptr(plan.slot)) Value(std::forward<V>(v));
    MarkBusy(plan.bucket, plan.slot, Fingerprint(hash), plan.probe);
    if (plan.kind == InsertPlan::Kind::kStash) {
      const unsigned home = HomeBucket(hash);
      stash_home_[(plan.bucket - kRegular) * kSlots + plan.slot] = uint8_t(home);
      AddHint(home, Fingerprint(hash), plan.bucket - kRegular);
    }
    ++size_;
    return {plan.bucket, plan.slot};
  }

  // Destroys the entry at (b, s). Does not move any other entry.
  void Erase(unsigned b, unsigned s) {
    DCHECK((busy(b) >> s) & 1);
    Bucket& bk = buckets_[b];
    bk.key_ptr(s)->~Key();
    bk.value_ptr(s)->~Value();
    Vacate(b, s);
  }

  // Moves every entry whose hash has bit (63 - local_depth) set into `dest` (an empty segment),
  // at the same bucket and slot, and increments the local depth of both. Versions are copied.
  void Split(Segment* dest) {
    DCHECK(dest->size_ == 0u);
    const unsigned bit = 63 - local_depth_;
    for (unsigned b = 0; b < kTotal; ++b) {
      dest->versions_[b] = versions_[b];
      for (uint16_t bits = busy(b); bits; bits &= bits - 1) {
        const unsigned s = __builtin_ctz(bits);
        const uint64_t hash = Policy::HashFn(key(b, s));
        if (((hash >> bit) & 1) == 0) continue;
        const bool probing = (probe(b) >> s) & 1;
        if (b >= kRegular) {
          const unsigned idx = (b - kRegular) * kSlots + s;
          dest->stash_home_[idx] = stash_home_[idx];
          dest->AddHint(stash_home_[idx], Fingerprint(hash), b - kRegular);
        }
        Bucket& src = buckets_[b];
        Bucket& dst = dest->buckets_[b];
        Relocate<Key, kMemcpy>(dst.key_ptr(s), src.key_ptr(s));
        Relocate<Value, kMemcpy>(dst.value_ptr(s), src.value_ptr(s));
        dest->MarkBusy(b, s, Fingerprint(hash), probing);
        ++dest->size_;
        Vacate(b, s);
      }
    }
    ++local_depth_;
    dest->local_depth_ = local_depth_;
  }

  // Moves stash entries back to their home bucket or its neighbour where there is room.
  // Returns how many moved.
  unsigned UnloadStash() {
    unsigned moved = 0;
    for (unsigned b = kRegular; b < kTotal; ++b) {
      for (uint16_t bits = busy(b); bits; bits &= bits - 1) {
        const unsigned s = __builtin_ctz(bits);
        const unsigned home = stash_home_[(b - kRegular) * kSlots + s];
        const unsigned next = NextBucket(home);
        if (FreeCount(home) > 0) {
          MoveEntry(b, s, home, FirstFree(home), false);
        } else if (FreeCount(next) > 0) {
          MoveEntry(b, s, next, FirstFree(next), true);
        } else {
          continue;
        }
        ++moved;
      }
    }
    return moved;
  }

  // Destroys every entry and resets the metadata, versions included.
  void Clear() {
    DestroyAll();
    std::memset(filters_, 0, sizeof(filters_));
    std::memset(metas_, 0, sizeof(metas_));
    std::memset(versions_, 0, sizeof(versions_));
    size_ = 0;
  }

  // Returns the number of free slots of bucket b.
  unsigned FreeCount(unsigned b) const { return kSlots - __builtin_popcount(busy(b)); }

  // Returns the number of stash entries homed at `b` that have no hint (tests, invariants).
  unsigned Overflow(unsigned b) const { return metas_[b].overflow; }
  unsigned HintCount(unsigned b) const { return __builtin_popcount(metas_[b].hint_busy); }

 private:
  // The slots of one bucket: keys, then values.
  struct Bucket {
    alignas(Key) unsigned char keys[sizeof(Key) * kSlots];
    alignas(Value) unsigned char values[sizeof(Value) * kSlots];

    Key* key_ptr(unsigned s) { return reinterpret_cast<Key*>(keys) + s; }
    Value* value_ptr(unsigned s) { return reinterpret_cast<Value*>(values) + s; }
    Key& key(unsigned s) { return *std::launder(key_ptr(s)); }
    const Key& key(unsigned s) const {
      return *std::launder(reinterpret_cast<const Key*>(keys) + s);
    }
    Value& value(unsigned s) { return *std::launder(value_ptr(s)); }
    const Value& value(unsigned s) const {
      return *std::launder(reinterpret_cast<const Value*>(values) + s);
    }
  };

  template <typename U>
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Probe(unsigned bucket, uint8_t fp, uint32_t candidates,
                                          const U& probe_key, uint8_t* slot) const {
    for (uint32_t m = MatchFingerprints(metas_[bucket], fp) & candidates; m; m &= m - 1) {
      const unsigned s = __builtin_ctz(m);
      if (PolicyEqual<Policy>(buckets_[bucket].key(s), probe_key)) {
        *slot = uint8_t(s);
        return true;
      }
    }
    return false;
  }

  // The rest of Find: home candidates after the first (`cand`), then, when the spill filter says
  // an entry homed here elsewhere may match, the neighbour's probing entries and the stash.
  template <typename U>
  ABSL_ATTRIBUTE_NOINLINE SlotRef FindRest(const U& probe_key, unsigned home, uint8_t fp,
                                           uint32_t cand) const {
    for (; cand != 0; cand &= cand - 1) {
      const unsigned s = __builtin_ctz(cand);
      if (PolicyEqual<Policy>(buckets_[home].key(s), probe_key)) return {uint8_t(home), uint8_t(s)};
    }
    const BucketMeta& hm = metas_[home];
    if ((hm.spill & BucketMeta::SpillBit(fp)) == 0) return {};
    const unsigned next = NextBucket(home);
    if (uint8_t s; Probe(next, fp, metas_[next].probe, probe_key, &s)) return {uint8_t(next), s};
    if (hm.hint_busy == 0 && hm.overflow == 0) return {};
    return FindInStash(hm, fp, probe_key);
  }

  template <typename U>
  SlotRef FindInStash(const BucketMeta& home, uint8_t fp, const U& probe_key) const {
    unsigned searched = 0;  // bitmap of stash buckets already probed
    for (unsigned i = 0; i < BucketMeta::kHints; ++i) {
      if (!((home.hint_busy >> i) & 1) || home.hint_fp[i] != fp) continue;
      const unsigned sb = home.HintStash(i);
      if ((searched >> sb) & 1) continue;
      searched |= 1u << sb;
      const unsigned b = kRegular + sb;
      if (uint8_t s; Probe(b, fp, metas_[b].own, probe_key, &s)) return {uint8_t(b), s};
    }
    if (home.overflow == 0) return {};
    for (unsigned sb = 0; sb < kStash; ++sb) {
      if ((searched >> sb) & 1) continue;
      const unsigned b = kRegular + sb;
      if (uint8_t s; Probe(b, fp, metas_[b].own, probe_key, &s)) return {uint8_t(b), s};
    }
    return {};
  }

  // Finds one move that frees a slot in `home` or `next` (both full): a probing entry of `home`
  // goes back to its own home (home - 1), or an entry of `next` homed there moves on to next + 1.
  bool PlanDisplacement(unsigned home, unsigned next, InsertPlan* p) const {
    const unsigned prev = PrevBucket(home);
    if (FreeCount(prev) > 0 && probe(home) != 0) {
      p->kind = InsertPlan::Kind::kDisplace;
      p->from_bucket = p->bucket = uint8_t(home);
      p->from_slot = p->slot = uint8_t(__builtin_ctz(probe(home)));
      p->probe = false;
      p->to_bucket = uint8_t(prev);
      p->to_probe = false;
      return true;
    }
    const unsigned after = NextBucket(next);
    const uint16_t movable = busy(next) & ~probe(next);
    if (FreeCount(after) > 0 && movable != 0) {
      p->kind = InsertPlan::Kind::kDisplace;
      p->from_bucket = p->bucket = uint8_t(next);
      p->from_slot = p->slot = uint8_t(__builtin_ctz(movable));
      p->probe = true;
      p->to_bucket = uint8_t(after);
      p->to_probe = true;
      return true;
    }
    return false;
  }

  unsigned FirstFree(unsigned b) const {
    const uint32_t free_bits = ~uint32_t(busy(b)) & kSlotMask;
    DCHECK(free_bits != 0u);
    return __builtin_ctz(free_bits);
  }

  void MarkBusy(unsigned b, unsigned s, uint8_t fp, bool probing) {
    BucketMeta& m = metas_[b];
    m.fp[s] = fp;
    (probing ? m.probe : m.own) |= uint16_t(1u << s);
    if (b >= kRegular) return;  // a stash entry's home is recorded by AddHint
    const unsigned home = probing ? PrevBucket(b) : b;
    filters_[home] |= FilterBit(fp);
    if (probing) metas_[home].spill |= BucketMeta::SpillBit(fp);
  }

  // Recomputes the home filter and the spill filter of regular bucket `home` exactly from the
  // entries homed there: its own entries, the probing entries of the next bucket, the stash
  // entries (this also drops the home filter's stale bits, see DropOwnFromFilter).
  void RebuildFilters(unsigned home) {
    BucketMeta& hm = metas_[home];
    const BucketMeta& nm = metas_[NextBucket(home)];
    uint64_t filter = 0;
    uint32_t spill = 0;
    for (uint16_t bits = hm.own; bits; bits &= bits - 1) {
      filter |= FilterBit(hm.fp[__builtin_ctz(bits)]);
    }
    for (uint16_t bits = nm.probe; bits; bits &= bits - 1) {
      const uint8_t fp = nm.fp[__builtin_ctz(bits)];
      filter |= FilterBit(fp);
      spill |= BucketMeta::SpillBit(fp);
    }
    if (hm.hint_busy != 0 || hm.overflow != 0) {
      for (unsigned b = kRegular; b < kTotal; ++b) {
        for (uint16_t bits = EntriesWithHome(b, home); bits; bits &= bits - 1) {
          const uint8_t fp = metas_[b].fp[__builtin_ctz(bits)];
          filter |= FilterBit(fp);
          spill |= BucketMeta::SpillBit(fp);
        }
      }
    }
    filters_[home] = filter;
    hm.spill = spill;
  }

  // Clears the home-filter bit of fingerprint `fp` at regular bucket `b` after one of b's own
  // entries left, unless another own entry needs it, or an entry homed at b that lives elsewhere
  // may (the fingerprint's spill bit is set: the bit then stays, a possible false positive, until
  // RebuildFilters). Reads only b's metadata, which the erase that got here has just read.
  // REQUIRES: the slot is already free.
  void DropOwnFromFilter(unsigned b, uint8_t fp) {
    const BucketMeta& m = metas_[b];
    if ((MatchFingerprintBits(m, fp, kFilterFpMask) & m.own) == 0 &&
        (m.spill & BucketMeta::SpillBit(fp)) == 0) {
      filters_[b] &= ~FilterBit(fp);
    }
  }

  // Clears slot (b, s) whose object was destroyed or relocated; fixes the home's stash hints and
  // filters.
  void Vacate(unsigned b, unsigned s) {
    BucketMeta& m = metas_[b];
    const uint8_t fp = m.fp[s];
    const bool probing = (m.probe >> s) & 1;
    m.own &= uint16_t(~(1u << s));
    m.probe &= uint16_t(~(1u << s));
    --size_;
    if (b < kRegular && !probing) return DropOwnFromFilter(b, fp);
    unsigned home = PrevBucket(b);
    if (b >= kRegular) {
      home = stash_home_[(b - kRegular) * kSlots + s];
      RemoveHint(home, fp, b - kRegular);
    }
    RebuildFilters(home);
  }

  // Moves the entry at (fb, fs) to the free slot (tb, ts), carrying the version (max).
  void MoveEntry(unsigned fb, unsigned fs, unsigned tb, unsigned ts, bool probing) {
    Bucket& from = buckets_[fb];
    Bucket& to = buckets_[tb];
    const uint8_t fp = metas_[fb].fp[fs];
    Relocate<Key, kMemcpy>(to.key_ptr(ts), from.key_ptr(fs));
    Relocate<Value, kMemcpy>(to.value_ptr(ts), from.value_ptr(fs));
    const unsigned home = HomeOf(fb, fs);
    Vacate(fb, fs);
    MarkBusy(tb, ts, fp, probing);
    if (tb >= kRegular) {
      DCHECK(fb < kRegular);
      stash_home_[(tb - kRegular) * kSlots + ts] = uint8_t(home);
      AddHint(home, fp, tb - kRegular);
    }
    ++size_;
    if (versions_[tb] < versions_[fb]) versions_[tb] = versions_[fb];
  }

  // Records a stash entry homed at `home` (a hint, else the overflow count; the spill filter).
  void AddHint(unsigned home, uint8_t fp, unsigned stash) {
    BucketMeta& m = metas_[home];
    m.spill |= BucketMeta::SpillBit(fp);
    filters_[home] |= FilterBit(fp);
    const uint32_t free_hints = ~uint32_t(m.hint_busy) & ((1u << BucketMeta::kHints) - 1);
    if (free_hints == 0) {
      ++m.overflow;
      return;
    }
    const unsigned i = __builtin_ctz(free_hints);
    m.hint_fp[i] = fp;
    m.hint_stash = uint8_t((m.hint_stash & ~(3u << (2 * i))) | (stash << (2 * i)));
    m.hint_busy |= uint8_t(1u << i);
  }

  // Removes one hint (fp, stash) of `home`, or one overflow count when no such hint exists: hints
  // with equal (fp, stash) are interchangeable, so the count of hints + overflow stays exact.
  void RemoveHint(unsigned home, uint8_t fp, unsigned stash) {
    BucketMeta& m = metas_[home];
    for (unsigned i = 0; i < BucketMeta::kHints; ++i) {
      if (((m.hint_busy >> i) & 1) && m.hint_fp[i] == fp && m.HintStash(i) == stash) {
        m.hint_busy &= uint8_t(~(1u << i));
        return;
      }
    }
    DCHECK(m.overflow > 0u);
    --m.overflow;
  }

  void DestroyAll() {
    if constexpr (!std::is_trivially_destructible_v<Key> ||
                  !std::is_trivially_destructible_v<Value>) {
      for (unsigned i = 0; i < kTotal; ++i) {
        Bucket& b = buckets_[i];
        for (uint16_t bits = busy(i); bits; bits &= bits - 1) {
          const unsigned s = __builtin_ctz(bits);
          b.key_ptr(s)->~Key();
          b.value_ptr(s)->~Value();
        }
      }
    }
  }

  uint32_t size_ = 0;
  uint8_t local_depth_;
  uint8_t stash_home_[kStash * kSlots];  // home bucket of each stash slot
  // The home filters of the regular buckets, packed apart from the metadata (8 bytes per bucket):
  // the filters of a million-key table (2,048 segments, 0.9 MiB) stay in a core's L2 cache, so
  // most misses end without touching the metadata.
  alignas(64) uint64_t filters_[kRegular];
  // All metadata first, two buckets per cache line: home and neighbour usually share a line.
  alignas(64) BucketMeta metas_[kTotal];
  uint64_t versions_[kTotal];  // snapshot state words (version(), saved_slots())
  // Line-aligned (free: it only moves the segment's tail padding), so the first key line that
  // Find prefetches holds slots 0..3 of 16-byte keys, the slots filled first.
  alignas(64) Bucket buckets_[kTotal];
};

}  // namespace detail
}  // namespace dashkv
