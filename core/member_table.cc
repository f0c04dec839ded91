#include "core/member_table.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

#include "core/base/logging.h"
#include "core/hash.h"

namespace dashkv {

namespace {

constexpr uint32_t kMinCapacity = 8;

// Returns the bits of `m` as an inline PackedMember would hold them. REQUIRES: m.size() <= 7.
uint64_t InlineBits(std::string_view m) {
  uint8_t b[8] = {};
  b[0] = static_cast<uint8_t>(1 | (m.size() << 1));
  if (!m.empty()) std::memcpy(b + 1, m.data(), m.size());
  uint64_t bits;
  std::memcpy(&bits, b, 8);
  return bits;
}

// Slot arrays come from operator new so that the server's memory accounting (core/memory.h)
// sees them; plain malloc is not counted.
uint64_t* NewSlots(uint32_t n) {
  auto* p = static_cast<uint64_t*>(::operator new(size_t{n} * sizeof(uint64_t)));
  std::memset(p, 0, size_t{n} * sizeof(uint64_t));
  return p;
}

double* NewScores(uint32_t n) {
  auto* p = static_cast<double*>(::operator new(size_t{n} * sizeof(double)));
  std::memset(p, 0, size_t{n} * sizeof(double));
  return p;
}

void FreeArray(void* p) {
  if (p != nullptr) ::operator delete(p);
}

}  // namespace

static_assert(sizeof(void*) != 8 || sizeof(MemberTable) == 40, "a SetValue is as large as this");

MemberTable::MemberTable(Scores scores) : MemberTable(scores, NewHashKey()) {}

MemberTable::MemberTable(Scores scores, uint64_t hash_key)
    : keys_(NewSlots(kMinCapacity)),
      key_(hash_key),
      shift_(64 - std::countr_zero(kMinCapacity)),
      with_scores_(scores == Scores::kWith) {
  if (with_scores_) scores_ = NewScores(kMinCapacity);
}

MemberTable::~MemberTable() { Free(); }

void MemberTable::Free() {
  if (keys_ == nullptr) return;
  for (uint32_t i = 0, cap = capacity(); i < cap; ++i) {
    if (keys_[i] != 0) PackedMember::FromBits(keys_[i]).Free();
  }
  FreeArray(keys_);
  FreeArray(scores_);
  keys_ = nullptr;
  scores_ = nullptr;
}

MemberTable::MemberTable(MemberTable&& o) noexcept
    : keys_(std::exchange(o.keys_, nullptr)),
      scores_(std::exchange(o.scores_, nullptr)),
      key_(o.key_),
      blob_bytes_(std::exchange(o.blob_bytes_, 0)),
      size_(std::exchange(o.size_, 0)),
      shift_(o.shift_),
      with_scores_(o.with_scores_) {}

MemberTable& MemberTable::operator=(MemberTable&& o) noexcept {
  if (this != &o) {
    Free();
    keys_ = std::exchange(o.keys_, nullptr);
    scores_ = std::exchange(o.scores_, nullptr);
    key_ = o.key_;
    size_ = std::exchange(o.size_, 0);
    shift_ = o.shift_;
    with_scores_ = o.with_scores_;
    blob_bytes_ = std::exchange(o.blob_bytes_, 0);
  }
  return *this;
}

std::string_view MemberTable::member_view(uint32_t slot) const {
  uint64_t bits = keys_[slot];
  if ((bits & 1) != 0) {
    return {reinterpret_cast<const char*>(&keys_[slot]) + 1, static_cast<size_t>((bits >> 1) & 7)};
  }
  return PackedMember::FromBits(bits).view();
}

uint32_t MemberTable::HomeOfSlot(uint32_t slot) const {
  return HomeOf(Hash(member_view(slot)));
}

uint32_t MemberTable::Find(std::string_view m) const {
  const bool small = m.size() <= PackedMember::kMaxInline;
  const uint64_t want = small ? InlineBits(m) : 0;
  const uint32_t mask = this->mask();
  for (uint32_t i = HomeOf(Hash(m));; i = (i + 1) & mask) {
    uint64_t bits = keys_[i];
    if (bits == 0) return kNotFound;
    if (small) {
      if (bits == want) return i;
    } else if ((bits & 1) == 0 && PackedMember::FromBits(bits).view() == m) {
      return i;
    }
  }
}

std::pair<uint32_t, bool> MemberTable::Insert(std::string_view m) {
  uint32_t found = Find(m);
  if (found != kNotFound) return {found, false};
  if ((size_ + 1) * 4 > capacity() * 3) Rehash(capacity() * 2);
  PackedMember pm = PackedMember::Make(m);
  blob_bytes_ += pm.HeapBytes();
  const uint32_t mask = this->mask();
  uint32_t i = HomeOf(Hash(m));
  while (keys_[i] != 0) i = (i + 1) & mask;
  keys_[i] = pm.bits();
  if (with_scores_) scores_[i] = 0;
  ++size_;
  return {i, true};
}

bool MemberTable::Erase(std::string_view m) {
  uint32_t slot = Find(m);
  if (slot == kNotFound) return false;
  EraseSlot(slot);
  return true;
}

void MemberTable::EraseSlot(uint32_t hole) {
  DCHECK(keys_[hole] != 0);
  PackedMember pm = PackedMember::FromBits(keys_[hole]);
  blob_bytes_ -= pm.HeapBytes();
  pm.Free();
  keys_[hole] = 0;
  --size_;
  // Backward shift: pull later members of the cluster into the hole when their home allows it.
  const uint32_t mask = this->mask();
  for (uint32_t j = (hole + 1) & mask; keys_[j] != 0; j = (j + 1) & mask) {
    uint32_t home = HomeOfSlot(j);
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      keys_[hole] = keys_[j];
      if (with_scores_) scores_[hole] = scores_[j];
      keys_[j] = 0;
      hole = j;
    }
  }
  if (capacity() > kMinCapacity && size_ * 8 < capacity()) Rehash(capacity() / 2);
}

void MemberTable::Reserve(size_t n) {
  uint32_t cap = capacity();
  while (n * 4 > size_t{cap} * 3) cap *= 2;
  if (cap != capacity()) Rehash(cap);
}

void MemberTable::Rehash(uint32_t new_capacity) {
  DCHECK(std::has_single_bit(new_capacity));
  uint64_t* old_keys = keys_;
  double* old_scores = scores_;
  uint32_t old_cap = capacity();
  keys_ = NewSlots(new_capacity);
  scores_ = with_scores_ ? NewScores(new_capacity) : nullptr;
  shift_ = static_cast<uint8_t>(64 - std::countr_zero(new_capacity));
  const uint32_t mask = new_capacity - 1;
  for (uint32_t s = 0; s < old_cap; ++s) {
    if (old_keys[s] == 0) continue;
    std::string_view v;
    uint64_t bits = old_keys[s];
    if ((bits & 1) != 0) {
      v = {reinterpret_cast<const char*>(&old_keys[s]) + 1, static_cast<size_t>((bits >> 1) & 7)};
    } else {
      v = PackedMember::FromBits(bits).view();
    }
    uint32_t i = HomeOf(Hash(v));
    while (keys_[i] != 0) i = (i + 1) & mask;
    keys_[i] = bits;
    if (with_scores_) scores_[i] = old_scores[s];
  }
  FreeArray(old_keys);
  FreeArray(old_scores);
}

uint32_t MemberTable::RandomSlot(absl::FunctionRef<uint64_t()> rand) const {
  DCHECK(size_ > 0);
  constexpr int kRandomTries = 64;
  for (int tries = 0; tries < kRandomTries; ++tries) {
    uint32_t i = static_cast<uint32_t>(rand()) & mask();
    if (keys_[i] != 0) return i;
  }
  uint64_t k = rand() % size_;
  for (uint32_t i = 0;; ++i) {
    if (keys_[i] != 0 && k-- == 0) return i;
  }
}

size_t MemberTable::MallocUsed() const {
  return size_t{capacity()} * (with_scores_ ? 16 : 8) + blob_bytes_;
}

MemberTable::Displacement MemberTable::displacement() const {
  Displacement d;
  const uint32_t mask = this->mask();
  for (uint32_t slot = 0; slot <= mask; ++slot) {
    if (keys_[slot] == 0) continue;
    uint32_t dist = (slot - HomeOfSlot(slot)) & mask;
    d.max = std::max(d.max, dist);
    d.total += dist;
  }
  return d;
}

}  // namespace dashkv
