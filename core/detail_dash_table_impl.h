// Out-of-line member definitions of DashTable (core/dash_table.h). Included by dash_table.h only.
// Thread: see dash_table.h.
#pragma once

namespace dashkv {

template <typename Key, typename Value, typename Policy>
template <typename K, typename V, typename Hooks>
std::pair<typename DashTable<Key, Value, Policy>::iterator, bool>
DashTable<Key, Value, Policy>::InsertNew(uint64_t hash, K&& key, V&& value, Hooks& hooks) {
  unsigned stage = 0;
  for (;;) {
    const uint32_t idx = DirIndex(hash);
    SegmentT* seg = dir_[idx];
    const detail::InsertPlan plan = seg->PlanInsert(hash);
    if (plan.kind != detail::InsertPlan::Kind::kFull) {
      auto ref = seg->Execute(plan, hash, std::forward<K>(key), std::forward<V>(value));
      ++size_;
      return {iterator(this, idx, ref.bucket, ref.slot, false), true};
    }
    if (!MakeRoom(idx, hash, hooks, &stage)) return {end(), false};
  }
}

// Runs the next full-segment remedy: GC hook, stash unloading, split. Returns false when the
// split was refused.
template <typename Key, typename Value, typename Policy>
template <typename Hooks>
bool DashTable<Key, Value, Policy>::MakeRoom(uint32_t idx, uint64_t hash, Hooks& hooks,
                                             unsigned* stage) {
  if (*stage == 0) {
    *stage = 1;
    if constexpr (requires(Hooks& h, const HotBuckets& hb, DashTable* t) {
                    h.GarbageCollect(hb, t);
                  }) {
      if (hooks.GarbageCollect(MakeHotBuckets(idx, hash), this) > 0) return true;
    }
  }
  if (*stage == 1) {
    *stage = 2;
    if (dir_[idx]->UnloadStash() > 0) return true;
  }
  if constexpr (requires(Hooks& h, const DashTable& t) { h.CanGrow(t); }) {
    if (!hooks.CanGrow(*this)) return false;
  }
  Split(idx);
  if constexpr (requires(Hooks& h, const DashTable& t) { h.RecordSplit(t); }) {
    hooks.RecordSplit(*this);
  }
  return true;
}

template <typename Key, typename Value, typename Policy>
typename DashTable<Key, Value, Policy>::HotBuckets DashTable<Key, Value, Policy>::MakeHotBuckets(
    uint32_t idx, uint64_t hash) {
  HotBuckets hb;
  hb.key_hash = hash;
  unsigned b = SegmentT::PrevBucket(SegmentT::HomeBucket(hash));
  for (unsigned i = 0; i < HotBuckets::kNumRegular; ++i) {
    hb.buckets[i] = BucketBegin(idx, b);
    b = SegmentT::NextBucket(b);
  }
  for (unsigned s = 0; s < kStashBuckets; ++s) {
    hb.buckets[HotBuckets::kNumRegular + s] = BucketBegin(idx, kRegularBuckets + s);
  }
  return hb;
}

template <typename Key, typename Value, typename Policy>
void DashTable<Key, Value, Policy>::Split(uint32_t idx) {
  SegmentT* seg = dir_[idx];
  if (seg->local_depth() == global_depth_) {
    CHECK(global_depth_ < kMaxGlobalDepth);
    std::vector<SegmentT*> doubled(dir_.size() * 2);
    for (size_t i = 0; i < dir_.size(); ++i) doubled[2 * i] = doubled[2 * i + 1] = dir_[i];
    dir_.swap(doubled);
    ++global_depth_;
    idx *= 2;
  }
  const uint32_t start = SegmentStart(idx), span = SpanOf(idx);
  SegmentT* upper = NewSegment();
  seg->Split(upper);
  for (uint32_t i = start + span / 2; i < start + span; ++i) dir_[i] = upper;
  ++segment_count_;
  seg->UnloadStash();
  upper->UnloadStash();
}

template <typename Key, typename Value, typename Policy>
template <typename It>
void DashTable<Key, Value, Policy>::SeekValidImpl(It* it) {
  for (;;) {
    const SegmentT* seg = dir_[it->seg_idx_];
    if (it->slot_ < kSlotsPerBucket) {
      const uint32_t bits = uint32_t(seg->busy(it->bucket_)) >> it->slot_;
      if (bits != 0) {
        it->slot_ = uint8_t(it->slot_ + __builtin_ctz(bits));
        return;
      }
    }
    if (it->bucket_only_) {
      it->slot_ = kSlotsPerBucket;
      return;
    }
    it->slot_ = 0;
    if (++it->bucket_ < kBucketsPerSegment) continue;
    it->bucket_ = 0;
    it->seg_idx_ = NextSegment(it->seg_idx_);
    if (it->seg_idx_ >= dir_.size()) {
      it->owner_ = nullptr;
      return;
    }
  }
}

template <typename Key, typename Value, typename Policy>
template <typename Fn>
uint64_t DashTable<Key, Value, Policy>::Traverse(uint64_t cursor, Fn&& fn) {
  unsigned bucket = unsigned(cursor >> kMaxGlobalDepth) & 0xff;
  uint64_t prefix = cursor & kPrefixMask;
  bool visited = false;
  while (!visited && bucket < kRegularBuckets) {
    const uint32_t idx = uint32_t(prefix >> (kMaxGlobalDepth - global_depth_));
    const SegmentT* seg = dir_[idx];
    const unsigned next = SegmentT::NextBucket(bucket);
    auto visit = [&](unsigned b) {
      for (uint32_t bits = seg->EntriesWithHome(b, bucket); bits; bits &= bits - 1) {
        visited = true;
        fn(iterator(this, idx, uint8_t(b), uint8_t(__builtin_ctz(bits)), false));
      }
    };
    visit(bucket);
    visit(next);
    const detail::BucketMeta& home = seg->meta(bucket);
    if (home.hint_busy != 0 || home.overflow != 0) {
      for (unsigned s = 0; s < kStashBuckets; ++s) visit(kRegularBuckets + s);
    }
    const uint32_t next_idx = NextSegment(idx);
    if (next_idx >= dir_.size()) {
      ++bucket;
      prefix = 0;
    } else {
      prefix = uint64_t(next_idx) << (kMaxGlobalDepth - global_depth_);
    }
  }
  if (bucket >= kRegularBuckets) return 0;
  return (uint64_t(bucket) << kMaxGlobalDepth) | prefix;
}

template <typename Key, typename Value, typename Policy>
template <typename Fn>
uint64_t DashTable<Key, Value, Policy>::TraverseBuckets(uint64_t cursor, Fn&& fn) {
  unsigned bucket = unsigned(cursor & 0xff);
  uint64_t prefix = (cursor >> 8) & kPrefixMask;
  if (bucket >= kBucketsPerSegment) return 0;
  const uint32_t idx = uint32_t(prefix >> (kMaxGlobalDepth - global_depth_));
  fn(BucketBegin(idx, bucket));
  if (++bucket == kBucketsPerSegment) {
    bucket = 0;
    const uint32_t next_idx = NextSegment(idx);
    if (next_idx >= dir_.size()) return 0;
    prefix = uint64_t(next_idx) << (kMaxGlobalDepth - global_depth_);
  }
  return (prefix << 8) | bucket;
}

template <typename Key, typename Value, typename Policy>
template <typename Cb>
void DashTable<Key, Value, Policy>::CVCUponInsertHash(uint64_t version, uint64_t hash, Cb&& cb) {
  const uint32_t idx = DirIndex(hash);
  const SegmentT* seg = dir_[idx];
  auto report = [&](unsigned b) {
    if (!seg->saved(b, version)) cb(BucketBegin(idx, b));
  };
  const detail::InsertPlan plan = seg->PlanInsert(hash);
  switch (plan.kind) {
    case detail::InsertPlan::Kind::kDirect:
    case detail::InsertPlan::Kind::kStash:
      report(plan.bucket);
      break;
    case detail::InsertPlan::Kind::kDisplace:
      report(plan.bucket);
      report(plan.to_bucket);
      break;
    case detail::InsertPlan::Kind::kFull:
      for (unsigned b = 0; b < kBucketsPerSegment; ++b) report(b);
      break;
  }
}

template <typename Key, typename Value, typename Policy>
template <typename Cb>
void DashTable<Key, Value, Policy>::CVCEntryUponInsert(uint64_t version, uint64_t hash, Cb&& cb) {
  const uint32_t idx = DirIndex(hash);
  SegmentT* seg = dir_[idx];
  const detail::InsertPlan plan = seg->PlanInsert(hash);
  if (plan.kind == detail::InsertPlan::Kind::kDirect ||
      plan.kind == detail::InsertPlan::Kind::kStash) {
    seg->mark_slot_saved(plan.bucket, plan.slot, version);
    return;
  }
  CVCUponInsertHash(version, hash, std::forward<Cb>(cb));
}

template <typename Key, typename Value, typename Policy>
void DashTable<Key, Value, Policy>::FreeSegments() {
  uint32_t idx = 0;
  while (idx < dir_.size()) {
    SegmentT* seg = dir_[idx];
    const uint32_t next = NextSegment(idx);
    seg->~SegmentT();
    idx = next;
  }
  dir_.clear();
  arena_.Release();
}

template <typename Key, typename Value, typename Policy>
absl::Status DashTable<Key, Value, Policy>::CheckSegment(uint32_t idx, size_t* total) const {
  const SegmentT* seg = dir_[idx];
  const uint32_t start = SegmentStart(idx), span = SpanOf(idx);
  unsigned stashed[kRegularBuckets] = {};
  uint32_t spill[kRegularBuckets] = {};  // the spill filter each home bucket must have
  uint64_t filter[kRegularBuckets] = {};  // the home filter each home bucket must have
  size_t count = 0;
  for (unsigned b = 0; b < kBucketsPerSegment; ++b) {
    const detail::BucketMeta& m = seg->meta(b);
    if ((m.own & m.probe) != 0) return absl::InternalError("slot both own and probing");
    if (b >= kRegularBuckets && m.probe != 0) return absl::InternalError("probing stash slot");
    for (uint32_t bits = seg->busy(b); bits; bits &= bits - 1) {
      const unsigned s = __builtin_ctz(bits);
      const uint64_t hash = Policy::HashFn(seg->key(b, s));
      const uint32_t want = DirIndex(hash);
      if (want < start || want >= start + span) return absl::InternalError("wrong segment");
      if (seg->meta(b).fp[s] != SegmentT::Fingerprint(hash)) return absl::InternalError("bad fp");
      const unsigned home = seg->HomeOf(b, s);
      if (home != SegmentT::HomeBucket(hash)) {
        return absl::InternalError(absl::StrCat("bad home: bucket ", b, " slot ", s));
      }
      if (b >= kRegularBuckets) ++stashed[home];
      if (home != b) spill[home] |= detail::BucketMeta::SpillBit(seg->meta(b).fp[s]);
      filter[home] |= SegmentT::FilterBit(seg->meta(b).fp[s]);
      auto ref = seg->Find(seg->key(b, s), hash);
      if (ref.bucket != b || ref.slot != s) return absl::InternalError("entry not findable");
      ++count;
    }
  }
  for (unsigned b = 0; b < kRegularBuckets; ++b) {
    if (stashed[b] != seg->HintCount(b) + seg->Overflow(b)) {
      return absl::InternalError(absl::StrCat("hint count mismatch at bucket ", b));
    }
    if (seg->meta(b).spill != spill[b]) {
      return absl::InternalError(absl::StrCat("spill filter mismatch at bucket ", b));
    }
    // The home filter has every bit its entries need; a stale bit (left by an erase) is allowed
    // only where the spill filter has the same bit (Segment::DropOwnFromFilter).
    if ((seg->filter(b) & filter[b]) != filter[b]) {
      return absl::InternalError(absl::StrCat("home filter misses an entry at bucket ", b));
    }
    const uint64_t stale = seg->filter(b) & ~filter[b];
    if ((stale & ~SegmentT::FilterBitsOfSpill(spill[b])) != 0) {
      return absl::InternalError(absl::StrCat("stale home filter bit at bucket ", b));
    }
  }
  if (count != seg->size()) return absl::InternalError("segment size mismatch");
  *total += count;
  return absl::OkStatus();
}

template <typename Key, typename Value, typename Policy>
absl::Status DashTable<Key, Value, Policy>::CheckInvariants() const {
  if (dir_.size() != (size_t(1) << global_depth_)) return absl::InternalError("directory size");
  size_t segments = 0, total = 0;
  for (uint32_t idx = 0; idx < dir_.size(); idx = NextSegment(idx)) {
    const SegmentT* seg = dir_[idx];
    if (seg->local_depth() > global_depth_) return absl::InternalError("local depth > global");
    if (SegmentStart(idx) != idx) return absl::InternalError("segment start misaligned");
    for (uint32_t i = idx; i < idx + SpanOf(idx); ++i) {
      if (dir_[i] != seg) return absl::InternalError(absl::StrCat("directory span broken at ", i));
    }
    if (absl::Status st = CheckSegment(idx, &total); !st.ok()) return st;
    ++segments;
  }
  if (segments != segment_count_) return absl::InternalError("segment count mismatch");
  if (total != size_) return absl::InternalError("table size mismatch");
  return absl::OkStatus();
}

}  // namespace dashkv
