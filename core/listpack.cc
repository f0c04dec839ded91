#include "core/listpack.h"


#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "core/base/logging.h"
#include "core/base/parse_int.h"
#include "core/memory.h"

namespace dashkv {
namespace {

static_assert(std::endian::native == std::endian::little, "listpack code assumes little-endian");

constexpr uint8_t kEof = 0xFF;
constexpr uint32_t kHeaderSize = ListpackView::kHeaderSize;

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint16_t Load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline void Store32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void Store16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// Size of the backlen field for an entry of l bytes (encoding + data); Redis's thresholds.
inline uint32_t BacklenSize(uint64_t l) {
  if (l <= 127) return 1;
  if (l < 16383) return 2;
  if (l < 2097151) return 3;
  if (l < 268435455) return 4;
  return 5;
}

void WriteBacklen(uint8_t* dst, uint64_t l) {
  uint32_t n = BacklenSize(l);
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t group = static_cast<uint8_t>((l >> (7 * (n - 1 - i))) & 127);
    dst[i] = i == 0 ? group : (group | 128);
  }
}

// Reads a backlen whose last byte is at `last`, reading at most max_bytes bytes backwards.
// Returns {value, bytes read}; bytes read is 0 on a malformed field.
std::pair<uint64_t, uint32_t> ReadBacklen(const uint8_t* last, uint32_t max_bytes) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < max_bytes && i < 5; ++i) {
    uint8_t b = *(last - i);
    v |= static_cast<uint64_t>(b & 127) << (7 * i);
    if ((b & 128) == 0) return {v, i + 1};
  }
  return {0, 0};
}

// Bytes needed to read an entry's length from its first byte; 0 for an invalid first byte.
inline uint32_t HeaderLen(uint8_t b) {
  if (b < 0x80 || (b & 0xC0) == 0x80) return 1;
  if ((b & 0xE0) == 0xC0 || (b & 0xF0) == 0xE0) return 2;
  if (b == 0xF0) return 5;
  if (b >= 0xF1 && b <= 0xF4) return 1;
  return 0;
}

// Length of encoding + data of the entry at p. REQUIRES: a valid first byte.
inline uint64_t EntryLen(const uint8_t* p) {
  uint8_t b = p[0];
  if (b < 0x80) return 1;
  if ((b & 0xC0) == 0x80) return 1 + (b & 0x3F);
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 2 + (((b & 0x0F) << 8) | p[1]);
  switch (b) {
    case 0xF0:
      return 5 + static_cast<uint64_t>(Load32(p + 1));
    case 0xF1:
      return 3;
    case 0xF2:
      return 4;
    case 0xF3:
      return 5;
    case 0xF4:
      return 9;
  }
  return 0;
}

inline uint32_t EntryTotal(const uint8_t* p) {
  uint64_t l = EntryLen(p);
  return static_cast<uint32_t>(l + BacklenSize(l));
}

ListpackValue Decode(const uint8_t* p) {
  uint8_t b = p[0];
  auto str = [](const uint8_t* s, size_t n) {
    return ListpackValue::Str({reinterpret_cast<const char*>(s), n});
  };
  if (b < 0x80) return ListpackValue::Int(b);
  if ((b & 0xC0) == 0x80) return str(p + 1, b & 0x3F);
  if ((b & 0xE0) == 0xC0) {
    int64_t uv = ((b & 0x1F) << 8) | p[1];
    return ListpackValue::Int(uv >= 4096 ? uv - 8192 : uv);
  }
  if ((b & 0xF0) == 0xE0) return str(p + 2, ((b & 0x0F) << 8) | p[1]);
  switch (b) {
    case 0xF0:
      return str(p + 5, Load32(p + 1));
    case 0xF1:
      return ListpackValue::Int(static_cast<int16_t>(Load16(p + 1)));
    case 0xF2: {
      int64_t uv = p[1] | (p[2] << 8) | (p[3] << 16);
      return ListpackValue::Int(uv >= (1 << 23) ? uv - (1 << 24) : uv);
    }
    case 0xF3:
      return ListpackValue::Int(static_cast<int32_t>(Load32(p + 1)));
    case 0xF4: {
      int64_t v;
      std::memcpy(&v, p + 1, 8);
      return ListpackValue::Int(v);
    }
  }
  DCHECK(false);
  return ListpackValue::Int(0);
}

// An element encoded for writing: header bytes (or the whole integer), then string payload.
struct Encoded {
  uint8_t head[9];
  uint32_t head_len = 0;
  std::string_view str;
  uint32_t entry_len = 0;  // head + str
  uint32_t total = 0;      // entry_len + backlen

  void Write(uint8_t* dst) const {
    std::memcpy(dst, head, head_len);
    if (!str.empty()) std::memcpy(dst + head_len, str.data(), str.size());
    WriteBacklen(dst + entry_len, entry_len);
  }
};

void EncodeInt(int64_t v, Encoded* e) {
  uint64_t uv = static_cast<uint64_t>(v);
  auto le = [&](uint8_t tag, int bytes) {
    e->head[0] = tag;
    for (int i = 0; i < bytes; ++i) e->head[1 + i] = static_cast<uint8_t>(uv >> (8 * i));
    e->head_len = 1 + bytes;
  };
  if (v >= 0 && v <= 127) {
    e->head[0] = static_cast<uint8_t>(v);
    e->head_len = 1;
  } else if (v >= -4096 && v <= 4095) {
    uint32_t u13 = static_cast<uint32_t>(v < 0 ? (1 << 13) + v : v);
    e->head[0] = static_cast<uint8_t>(0xC0 | (u13 >> 8));
    e->head[1] = static_cast<uint8_t>(u13 & 0xFF);
    e->head_len = 2;
  } else if (v >= std::numeric_limits<int16_t>::min() && v <= std::numeric_limits<int16_t>::max()) {
    le(0xF1, 2);
  } else if (v >= -(1 << 23) && v < (1 << 23)) {
    le(0xF2, 3);
  } else if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    le(0xF3, 4);
  } else {
    le(0xF4, 8);
  }
}

Encoded Encode(std::string_view v) {
  Encoded e;
  if (std::optional<int64_t> iv = ParseInt64(v)) {
    EncodeInt(*iv, &e);
  } else {
    size_t len = v.size();
    CHECK(len <= std::numeric_limits<uint32_t>::max() - 16);
    if (len < 64) {
      e.head[0] = static_cast<uint8_t>(0x80 | len);
      e.head_len = 1;
    } else if (len < 4096) {
      e.head[0] = static_cast<uint8_t>(0xE0 | (len >> 8));
      e.head[1] = static_cast<uint8_t>(len & 0xFF);
      e.head_len = 2;
    } else {
      e.head[0] = 0xF0;
      Store32(e.head + 1, static_cast<uint32_t>(len));
      e.head_len = 5;
    }
    e.str = v;
  }
  e.entry_len = e.head_len + static_cast<uint32_t>(e.str.size());
  e.total = e.entry_len + BacklenSize(e.entry_len);
  return e;
}

// Compares the entry at p with v (iv: v parsed as an integer, if it is one).
inline bool EntryEquals(const uint8_t* p, std::string_view v, const std::optional<int64_t>& iv) {
  ListpackValue e = Decode(p);
  if (e.is_int()) return iv.has_value() && *iv == e.int_value();
  return e.str_value() == v;
}

}  // namespace

// ----- ListpackValue -----

std::string_view ListpackValue::AsText(char (&buf)[kIntBufSize]) const {
  if (!is_int_) return str_;
  auto res = std::to_chars(buf, buf + kIntBufSize, int_);
  return {buf, static_cast<size_t>(res.ptr - buf)};
}

std::string ListpackValue::ToString() const {
  char buf[kIntBufSize];
  return std::string(AsText(buf));
}

void ListpackValue::AppendTo(std::string* out) const {
  char buf[kIntBufSize];
  out->append(AsText(buf));
}

bool ListpackValue::Equals(std::string_view s) const {
  if (!is_int_) return str_ == s;
  if (s.size() > 20) return false;
  char buf[kIntBufSize];
  return AsText(buf) == s;
}

// ----- ListpackView -----

uint32_t ListpackView::total_bytes() const { return Load32(data_); }

size_t ListpackView::size() const {
  uint16_t n = Load16(data_ + 4);
  if (n != kUnknownCount) return n;
  size_t count = 0;
  for (Pos p = First(); p != kNoPos; p = Next(p)) ++count;
  return count;
}

ListpackView::Pos ListpackView::Last() const {
  if (empty()) return kNoPos;
  uint32_t end = total_bytes() - 1;
  auto [l, n] = ReadBacklen(data_ + end - 1, 5);
  return static_cast<Pos>(end - n - l);
}

ListpackView::Pos ListpackView::Next(Pos p) const {
  Pos q = p + EntryTotal(data_ + p);
  return data_[q] == kEof ? kNoPos : q;
}

ListpackView::Pos ListpackView::Prev(Pos p) const {
  if (p <= kHeaderSize) return kNoPos;
  auto [l, n] = ReadBacklen(data_ + p - 1, 5);
  return static_cast<Pos>(p - n - l);
}

ListpackView::Pos ListpackView::Seek(long index) const {
  long n = static_cast<long>(size());
  if (index < 0) index += n;
  if (index < 0 || index >= n) return kNoPos;
  if (index <= n / 2) {
    Pos p = First();
    for (long i = 0; i < index; ++i) p = Next(p);
    return p;
  }
  Pos p = Last();
  for (long i = n - 1; i > index; --i) p = Prev(p);
  return p;
}

ListpackValue ListpackView::Get(Pos p) const { return Decode(data_ + p); }

uint32_t ListpackView::EntryBytes(Pos p) const { return EntryTotal(data_ + p); }

ListpackView::Pos ListpackView::Find(std::string_view v, Pos start, uint32_t skip) const {
  std::optional<int64_t> iv = ParseInt64(v);
  uint32_t skip_left = 0;
  for (Pos p = start; p != kNoPos; p = Next(p)) {
    if (skip_left > 0) {
      --skip_left;
      continue;
    }
    if (EntryEquals(data_ + p, v, iv)) return p;
    skip_left = skip;
  }
  return kNoPos;
}

uint32_t ListpackView::EncodedSize(std::string_view v) { return Encode(v).total; }

bool ListpackView::Validate(std::string_view bytes) {
  return Validate(bytes, [](ListpackValue) { return true; });
}

bool ListpackView::Validate(std::string_view bytes,
                            absl::FunctionRef<bool(ListpackValue)> on_entry) {
  const uint8_t* d = reinterpret_cast<const uint8_t*>(bytes.data());
  uint64_t size = bytes.size();
  if (size < kEmptySize || size > std::numeric_limits<uint32_t>::max()) return false;
  if (Load32(d) != size || d[size - 1] != kEof) return false;
  uint64_t end = size - 1;
  uint64_t p = kHeaderSize;
  uint64_t count = 0;
  while (p < end) {
    uint32_t hl = HeaderLen(d[p]);
    if (hl == 0 || p + hl > end) return false;
    uint64_t l = EntryLen(d + p);
    uint32_t bs = BacklenSize(l);
    if (p + l + bs > end) return false;
    auto [back, n] = ReadBacklen(d + p + l + bs - 1, bs);
    if (n != bs || back != l) return false;
    if (!on_entry(Decode(d + p))) return false;
    ++count;
    p += l + bs;
  }
  uint16_t hdr_count = Load16(d + 4);
  return hdr_count == kUnknownCount || hdr_count == count;
}

// ----- allocation -----

namespace detail {
// Counted like operator new (core/memory.h), so that INFO used_memory and maxmemory see lists and
// hashes; the allocator is mimalloc (libc malloc in sanitizer builds).
void* ListAlloc(size_t n) { return AllocateBytes(n); }
void* ListRealloc(void* p, size_t n) {
  if (p == nullptr) return AllocateBytes(n);
  size_t usable = AllocationSize(p);
  // Grow or shrink in place while the block fits and is at least half used (as mi_realloc).
  if (n <= usable && n >= usable / 2) return p;
  void* q = AllocateBytes(n);
  std::memcpy(q, p, std::min(n, usable));
  FreeBytes(p);
  return q;
}
void ListFree(void* p) { FreeBytes(p); }
size_t ListUsableSize(const void* p) { return AllocationSize(p); }
}  // namespace detail

// ----- Listpack -----

Listpack::Listpack() : data_(static_cast<uint8_t*>(detail::ListAlloc(ListpackView::kEmptySize))) {
  CHECK(data_ != nullptr);
  Store32(data_, ListpackView::kEmptySize);
  Store16(data_ + 4, 0);
  data_[kHeaderSize] = kEof;
}

Listpack::~Listpack() { detail::ListFree(data_); }

Listpack& Listpack::operator=(Listpack&& other) noexcept {
  if (this != &other) {
    detail::ListFree(data_);
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

Listpack Listpack::Adopt(uint8_t* bytes) { return Listpack(bytes); }

Listpack Listpack::Copy(std::string_view bytes) {
  auto* d = static_cast<uint8_t*>(detail::ListAlloc(bytes.size()));
  CHECK(d != nullptr);
  std::memcpy(d, bytes.data(), bytes.size());
  return Listpack(d);
}

uint8_t* Listpack::Release() { return std::exchange(data_, nullptr); }

size_t Listpack::MallocUsage() const { return detail::ListUsableSize(data_); }

void Listpack::OpenGap(uint32_t off, uint32_t n) {
  uint32_t total = total_bytes();
  CHECK(uint64_t{total} + n <= std::numeric_limits<uint32_t>::max());
  data_ = static_cast<uint8_t*>(detail::ListRealloc(data_, total + n));
  CHECK(data_ != nullptr);
  std::memmove(data_ + off + n, data_ + off, total - off);
  Store32(data_, total + n);
}

void Listpack::CloseGap(uint32_t off, uint32_t n) {
  uint32_t total = total_bytes();
  std::memmove(data_ + off, data_ + off + n, total - off - n);
  Store32(data_, total - n);
  data_ = static_cast<uint8_t*>(detail::ListRealloc(data_, total - n));
  CHECK(data_ != nullptr);
}

void Listpack::AddCount(long delta) {
  uint16_t c = Load16(data_ + 4);
  if (c == ListpackView::kUnknownCount) {
    // Fewer than 65535 entries are certain when the bytes cannot hold that many (2 bytes each).
    if (total_bytes() >= 2u * ListpackView::kUnknownCount + ListpackView::kEmptySize) return;
    uint16_t n = 0;
    for (Pos p = First(); p != kNoPos; p = Next(p)) ++n;
    Store16(data_ + 4, n);
    return;
  }
  long n = static_cast<long>(c) + delta;
  DCHECK(n >= 0);
  Store16(data_ + 4, n >= ListpackView::kUnknownCount ? ListpackView::kUnknownCount
                                                      : static_cast<uint16_t>(n));
}

Listpack::Pos Listpack::Push(std::string_view v, ListEnd end) {
  Encoded e = Encode(v);
  uint32_t off = end == ListEnd::kHead ? kHeaderSize : total_bytes() - 1;
  OpenGap(off, e.total);
  e.Write(data_ + off);
  AddCount(1);
  return off;
}

Listpack::Pos Listpack::Insert(Pos p, Where where, std::string_view v) {
  Encoded e = Encode(v);
  uint32_t off = where == Where::kBefore ? p : p + EntryTotal(data_ + p);
  OpenGap(off, e.total);
  e.Write(data_ + off);
  AddCount(1);
  return off;
}

Listpack::Pos Listpack::Replace(Pos p, std::string_view v) {
  Encoded e = Encode(v);
  uint32_t old = EntryTotal(data_ + p);
  if (e.total > old) {
    OpenGap(p + old, e.total - old);
  } else if (e.total < old) {
    CloseGap(p + e.total, old - e.total);
  }
  e.Write(data_ + p);
  return p;
}

Listpack::Pos Listpack::Delete(Pos p) {
  DeleteRange(p, 1);
  return data_[p] == kEof ? kNoPos : p;
}

size_t Listpack::DeleteRange(Pos p, size_t count) {
  uint32_t q = p;
  size_t n = 0;
  while (n < count && data_[q] != kEof) {
    q += EntryTotal(data_ + q);
    ++n;
  }
  if (n == 0) return 0;
  CloseGap(p, q - p);
  AddCount(-static_cast<long>(n));
  return n;
}

size_t Listpack::DeleteRange(long index, size_t count) {
  Pos p = Seek(index);
  return p == kNoPos ? 0 : DeleteRange(p, count);
}

size_t Listpack::RemoveMatches(std::string_view v, size_t limit, ListEnd from) {
  std::optional<int64_t> iv = ParseInt64(v);
  std::vector<std::pair<uint32_t, uint32_t>> hits;  // {position, entry bytes}
  ListpackView lv = view();
  if (from == ListEnd::kHead) {
    for (Pos p = lv.First(); p != kNoPos && (limit == 0 || hits.size() < limit); p = lv.Next(p)) {
      if (EntryEquals(data_ + p, v, iv)) hits.emplace_back(p, EntryTotal(data_ + p));
    }
  } else {
    for (Pos p = lv.Last(); p != kNoPos && (limit == 0 || hits.size() < limit); p = lv.Prev(p)) {
      if (EntryEquals(data_ + p, v, iv)) hits.emplace_back(p, EntryTotal(data_ + p));
    }
    std::reverse(hits.begin(), hits.end());
  }
  if (hits.empty()) return 0;
  uint32_t total = total_bytes();
  uint32_t w = hits[0].first;
  for (size_t i = 0; i < hits.size(); ++i) {
    uint32_t src = hits[i].first + hits[i].second;
    uint32_t end = i + 1 < hits.size() ? hits[i + 1].first : total;  // last run: + terminator
    std::memmove(data_ + w, data_ + src, end - src);
    w += end - src;
  }
  Store32(data_, w);
  data_ = static_cast<uint8_t*>(detail::ListRealloc(data_, w));
  CHECK(data_ != nullptr);
  AddCount(-static_cast<long>(hits.size()));
  return hits.size();
}

Listpack Listpack::SplitAt(Pos p) {
  uint32_t total = total_bytes();
  uint32_t moved = total - 1 - p;
  size_t n = 0;
  for (uint32_t q = p; data_[q] != kEof; q += EntryTotal(data_ + q)) ++n;
  auto* d = static_cast<uint8_t*>(detail::ListAlloc(ListpackView::kEmptySize + moved));
  CHECK(d != nullptr);
  Store32(d, ListpackView::kEmptySize + moved);
  Store16(d + 4, n >= ListpackView::kUnknownCount ? ListpackView::kUnknownCount
                                                  : static_cast<uint16_t>(n));
  std::memcpy(d + kHeaderSize, data_ + p, moved);
  d[kHeaderSize + moved] = kEof;
  data_[p] = kEof;
  Store32(data_, p + 1);
  data_ = static_cast<uint8_t*>(detail::ListRealloc(data_, p + 1));
  CHECK(data_ != nullptr);
  AddCount(-static_cast<long>(n));
  return Listpack(d);
}

void Listpack::Append(ListpackView other) {
  size_t n = size() + other.size();
  uint32_t bytes = other.total_bytes() - ListpackView::kEmptySize;
  uint32_t off = total_bytes() - 1;
  OpenGap(off, bytes);
  std::memcpy(data_ + off, other.data() + kHeaderSize, bytes);
  Store16(data_ + 4, n >= ListpackView::kUnknownCount ? ListpackView::kUnknownCount
                                                      : static_cast<uint16_t>(n));
}

}  // namespace dashkv
