#include "core/int_set.h"

#include "core/memory.h"

#include <absl/status/status.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/base/logging.h"

namespace dashkv {

static_assert(std::endian::native == std::endian::little, "intset blobs are little-endian");

namespace {

uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void StoreU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

int64_t LoadAt(const uint8_t* contents, uint32_t width, uint32_t i) {
  switch (width) {
    case 2: {
      int16_t v;
      std::memcpy(&v, contents + size_t{i} * 2, 2);
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, contents + size_t{i} * 4, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, contents + size_t{i} * 8, 8);
      return v;
    }
  }
}

void StoreAt(uint8_t* contents, uint32_t width, uint32_t i, int64_t value) {
  switch (width) {
    case 2: {
      int16_t v = static_cast<int16_t>(value);
      std::memcpy(contents + size_t{i} * 2, &v, 2);
      break;
    }
    case 4: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(contents + size_t{i} * 4, &v, 4);
      break;
    }
    default:
      std::memcpy(contents + size_t{i} * 8, &value, 8);
  }
}

// Counted allocations (core/memory.h), so that intsets show in used_memory and maxmemory.
uint8_t* Alloc(size_t n) { return static_cast<uint8_t*>(AllocateBytes(n)); }

uint8_t* Grow(uint8_t* blob, size_t n) {
  if (n <= AllocationSize(blob)) return blob;
  uint8_t* p = Alloc(n);
  std::memcpy(p, blob, AllocationSize(blob));
  FreeBytes(blob);
  return p;
}

}  // namespace

IntSet::IntSet() : blob_(Alloc(kHeaderSize)) {
  StoreU32(blob_, static_cast<uint32_t>(Width::k16));
  StoreU32(blob_ + 4, 0);
}

IntSet::~IntSet() { FreeBytes(blob_); }

IntSet& IntSet::operator=(IntSet&& other) noexcept {
  if (this != &other) {
    FreeBytes(blob_);
    blob_ = other.blob_;
    other.blob_ = nullptr;
  }
  return *this;
}

IntSet IntSet::Clone() const {
  size_t n = bytes();
  uint8_t* copy = Alloc(n);
  std::memcpy(copy, blob_, n);
  return IntSet(copy);
}

bool IntSet::Validate(std::string_view bytes, bool deep) {
  if (bytes.size() < kHeaderSize) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  uint32_t width = LoadU32(p);
  if (width != 2 && width != 4 && width != 8) return false;
  uint32_t count = LoadU32(p + 4);
  // 64-bit arithmetic: count * width cannot overflow.
  if (kHeaderSize + uint64_t{count} * width != bytes.size()) return false;
  if (!deep) return true;
  const uint8_t* contents = p + kHeaderSize;
  for (uint32_t i = 1; i < count; ++i) {
    if (LoadAt(contents, width, i - 1) >= LoadAt(contents, width, i)) return false;
  }
  return true;
}

absl::StatusOr<IntSet> IntSet::FromBytes(std::string_view bytes) {
  if (!Validate(bytes, true)) return absl::DataLossError("corrupt intset");
  uint8_t* copy = Alloc(bytes.size());
  std::memcpy(copy, bytes.data(), bytes.size());
  return IntSet(copy);
}

IntSet IntSet::Adopt(uint8_t* blob) {
  DCHECK(blob != nullptr);
  return IntSet(blob);
}

uint8_t* IntSet::Release() {
  uint8_t* b = blob_;
  blob_ = nullptr;
  return b;
}

uint32_t IntSet::size() const { return LoadU32(blob_ + 4); }

IntSet::Width IntSet::width() const { return static_cast<Width>(LoadU32(blob_)); }

void IntSet::SetLength(uint32_t n) { StoreU32(blob_ + 4, n); }

IntSet::Width IntSet::WidthFor(int64_t v) {
  if (v >= std::numeric_limits<int16_t>::min() && v <= std::numeric_limits<int16_t>::max()) {
    return Width::k16;
  }
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    return Width::k32;
  }
  return Width::k64;
}

int64_t IntSet::Get(uint32_t i) const {
  DCHECK(i < size());
  return LoadAt(blob_ + kHeaderSize, static_cast<uint32_t>(width()), i);
}

std::pair<bool, uint32_t> IntSet::Search(int64_t v) const {
  uint32_t n = size();
  if (n == 0) return {false, 0};
  uint32_t w = static_cast<uint32_t>(width());
  const uint8_t* contents = blob_ + kHeaderSize;
  // Fast paths for values outside [min, max] (appends are common).
  if (v > LoadAt(contents, w, n - 1)) return {false, n};
  if (v < LoadAt(contents, w, 0)) return {false, 0};
  uint32_t lo = 0, hi = n;  // answer in [lo, hi)
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int64_t cur = LoadAt(contents, w, mid);
    if (cur < v) {
      lo = mid + 1;
    } else if (cur > v) {
      hi = mid;
    } else {
      return {true, mid};
    }
  }
  return {false, lo};
}

std::optional<uint32_t> IntSet::Find(int64_t v) const {
  // A value wider than the encoding cannot be present.
  if (static_cast<uint32_t>(WidthFor(v)) > static_cast<uint32_t>(width())) return std::nullopt;
  auto [found, pos] = Search(v);
  if (!found) return std::nullopt;
  return pos;
}

void IntSet::Upgrade(Width new_width, int64_t v) {
  uint32_t old_w = static_cast<uint32_t>(width());
  uint32_t new_w = static_cast<uint32_t>(new_width);
  uint32_t n = size();
  blob_ = Grow(blob_, kHeaderSize + size_t{n + 1} * new_w);
  uint8_t* contents = blob_ + kHeaderSize;
  // The new value is out of the old range: it goes first if negative, last otherwise. Rewrite
  // from the back so no element is overwritten before it is read.
  uint32_t shift = v < 0 ? 1 : 0;
  for (uint32_t i = n; i-- > 0;) {
    StoreAt(contents, new_w, i + shift, LoadAt(contents, old_w, i));
  }
  StoreAt(contents, new_w, v < 0 ? 0 : n, v);
  StoreU32(blob_, new_w);
  SetLength(n + 1);
}

bool IntSet::Add(int64_t v) {
  Width need = WidthFor(v);
  if (static_cast<uint32_t>(need) > static_cast<uint32_t>(width())) {
    Upgrade(need, v);
    return true;
  }
  auto [found, pos] = Search(v);
  if (found) return false;
  uint32_t w = static_cast<uint32_t>(width());
  uint32_t n = size();
  blob_ = Grow(blob_, kHeaderSize + size_t{n + 1} * w);
  uint8_t* contents = blob_ + kHeaderSize;
  std::memmove(contents + size_t{pos + 1} * w, contents + size_t{pos} * w, size_t{n - pos} * w);
  StoreAt(contents, w, pos, v);
  SetLength(n + 1);
  return true;
}

bool IntSet::Remove(int64_t v) {
  auto pos = Find(v);
  if (!pos) return false;
  uint32_t w = static_cast<uint32_t>(width());
  uint32_t n = size();
  uint8_t* contents = blob_ + kHeaderSize;
  std::memmove(contents + size_t{*pos} * w, contents + size_t{*pos + 1} * w,
               size_t{n - *pos - 1} * w);
  SetLength(n - 1);
  blob_ = Grow(blob_, kHeaderSize + size_t{n - 1} * w);
  return true;
}

}  // namespace dashkv
