#include "core/string_map.h"

#include <cstring>
#include <string>
#include <utility>

#include "core/base/logging.h"
#include "core/hash.h"

namespace dashkv {

namespace {
// The allocator class of an Entry (40 bytes -> 48 with mimalloc's and glibc's classes).
constexpr size_t kEntryAlloc = 48;
constexpr size_t kMinBuckets = 4;
constexpr size_t kMaxBuckets = size_t{1} << 31;  // mask_ is 32-bit
// Rejected draws RandomEntry tries before it falls back to a walk (see Design).
constexpr int kRandomTries = 256;

uint64_t ReverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}
}  // namespace

struct StringMap::Entry {
  Entry* next;
  CompactObj field;
  CompactObj value;
};

static_assert(sizeof(void*) != 8 || sizeof(StringMap) == 40, "every HashValue holds one");

StringMap::StringMap() : key_(NewHashKey()) {}

StringMap::~StringMap() {
  if (buckets_ == nullptr) return;
  for (size_t b = 0; b <= mask_; ++b) {
    for (Entry* e = buckets_[b]; e != nullptr;) {
      Entry* next = e->next;
      delete e;
      e = next;
    }
  }
  delete[] buckets_;
}

StringMap::StringMap(StringMap&& o) noexcept
    : buckets_(o.buckets_), key_(o.key_), size_(o.size_), string_bytes_(o.string_bytes_),
      mask_(o.mask_), max_chain_(o.max_chain_) {
  o.buckets_ = nullptr;
  o.size_ = o.string_bytes_ = 0;
  o.mask_ = o.max_chain_ = 0;
}

StringMap& StringMap::operator=(StringMap&& o) noexcept {
  if (this != &o) {
    this->~StringMap();
    new (this) StringMap(std::move(o));
  }
  return *this;
}

uint64_t StringMap::HashOf(std::string_view field) const { return KeyedHashBytes(field, key_); }

uint64_t StringMap::HashOf(const CompactObj& field) const {
  std::string scratch;
  return HashOf(field.GetString(&scratch));
}

StringMap::Entry** StringMap::Slot(std::string_view field, uint64_t hash) const {
  Entry** slot = &buckets_[hash & mask_];
  while (*slot != nullptr && !(*slot)->field.EqualsString(field)) slot = &(*slot)->next;
  return slot;
}

const CompactObj* StringMap::Find(std::string_view field) const {
  if (size_ == 0) return nullptr;
  Entry* e = *Slot(field, HashOf(field));
  return e ? &e->value : nullptr;
}

bool StringMap::Set(std::string_view field, std::string_view value) {
  if (buckets_ == nullptr) Rehash(kMinBuckets);
  uint64_t h = HashOf(field);
  Entry** slot = Slot(field, h);
  if (*slot != nullptr) {
    string_bytes_ -= (*slot)->value.MallocUsed();
    (*slot)->value.SetString(value);
    string_bytes_ += (*slot)->value.MallocUsed();
    return false;
  }
  Entry* e = new Entry{nullptr, CompactObj::FromKey(field), CompactObj::FromString(value)};
  string_bytes_ += e->field.MallocUsed() + e->value.MallocUsed();
  *slot = e;
  ++size_;
  uint32_t chain = 0;
  for (const Entry* p = buckets_[h & mask_]; p != nullptr; p = p->next) ++chain;
  if (chain > max_chain_) max_chain_ = chain;
  if (size_ > bucket_count() && bucket_count() < kMaxBuckets) Rehash(bucket_count() * 2);
  return true;
}

bool StringMap::SetIfMissing(std::string_view field, std::string_view value) {
  if (Find(field) != nullptr) return false;
  return Set(field, value);
}

bool StringMap::Erase(std::string_view field) {
  if (size_ == 0) return false;
  Entry** slot = Slot(field, HashOf(field));
  Entry* e = *slot;
  if (e == nullptr) return false;
  *slot = e->next;
  string_bytes_ -= e->field.MallocUsed() + e->value.MallocUsed();
  delete e;
  --size_;
  MaybeShrink();
  return true;
}

void StringMap::MaybeShrink() {
  size_t n = bucket_count();
  if (n > kMinBuckets && size_ < n / 8) {
    size_t target = kMinBuckets;
    while (target < size_ * 2) target *= 2;
    Rehash(target);
  }
}

void StringMap::Rehash(size_t new_buckets) {
  DCHECK(new_buckets <= kMaxBuckets);
  Entry** fresh = new Entry*[new_buckets]();
  size_t new_mask = new_buckets - 1;
  if (buckets_ != nullptr) {
    for (size_t b = 0; b <= mask_; ++b) {
      for (Entry* e = buckets_[b]; e != nullptr;) {
        Entry* next = e->next;
        Entry** head = &fresh[HashOf(e->field) & new_mask];
        e->next = *head;
        *head = e;
        e = next;
      }
    }
    delete[] buckets_;
  }
  buckets_ = fresh;
  mask_ = static_cast<uint32_t>(new_mask);
  max_chain_ = 0;
  for (size_t b = 0; b <= mask_; ++b) {
    uint32_t chain = 0;
    for (const Entry* e = buckets_[b]; e != nullptr; e = e->next) ++chain;
    if (chain > max_chain_) max_chain_ = chain;
  }
}

void StringMap::ForEach(EntryFn fn) const {
  if (buckets_ == nullptr) return;
  for (size_t b = 0; b <= mask_; ++b) {
    for (const Entry* e = buckets_[b]; e != nullptr; e = e->next) fn(e->field, e->value);
  }
}

uint64_t StringMap::Scan(uint64_t cursor, EntryFn fn) const {
  if (size_ == 0) return 0;
  for (const Entry* e = buckets_[cursor & mask_]; e != nullptr; e = e->next) fn(e->field, e->value);
  // Increment the cursor's reversed bits above the mask.
  cursor |= ~static_cast<uint64_t>(mask_);
  cursor = ReverseBits(ReverseBits(cursor) + 1);
  return cursor;
}

void StringMap::RandomEntry(absl::FunctionRef<uint64_t()> rand, EntryFn fn) const {
  DCHECK(size_ > 0);
  for (int tries = 0; tries < kRandomTries; ++tries) {
    const Entry* e = buckets_[rand() & mask_];
    for (uint64_t pos = rand() % max_chain_; e != nullptr && pos > 0; --pos) e = e->next;
    if (e != nullptr) return fn(e->field, e->value);
  }
  uint64_t k = rand() % size_;
  for (size_t b = 0;; ++b) {
    for (const Entry* e = buckets_[b]; e != nullptr; e = e->next) {
      if (k-- == 0) return fn(e->field, e->value);
    }
  }
}

size_t StringMap::MallocUsed() const {
  size_t buckets = bucket_count() * sizeof(Entry*);
  return buckets + size_ * kEntryAlloc + string_bytes_;
}

}  // namespace dashkv
