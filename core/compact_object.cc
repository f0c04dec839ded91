#include "core/compact_object.h"

#include <charconv>
#include <limits>

#include "core/base/logging.h"
#include "core/base/parse_int.h"
#include "core/hash.h"
#include "core/memory.h"

namespace dashkv {
namespace {

constexpr uint64_t kHighBits = 0x8080808080808080ULL;
constexpr uint64_t kLow56 = 0x00FFFFFFFFFFFFFFULL;
constexpr size_t kExpireHeader = sizeof(int64_t);
constexpr size_t kMaxSlack = 1 << 20;  // ResizeString grows by at most 1 MiB beyond the need

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline void Store64(char* p, uint64_t v) { std::memcpy(p, &v, 8); }

// Squeezes 8 bytes < 0x80 into 56 bits: char i moves to bits 7i..7i+6.
inline uint64_t Pack8(uint64_t x) {
  x = (x & 0x007F007F007F007FULL) | ((x & 0x7F007F007F007F00ULL) >> 1);
  x = (x & 0x00003FFF00003FFFULL) | ((x & 0x3FFF00003FFF0000ULL) >> 2);
  return (x & 0x000000000FFFFFFFULL) | ((x & 0x0FFFFFFF00000000ULL) >> 4);
}

// Inverse of Pack8.
inline uint64_t Unpack8(uint64_t y) {
  uint64_t x = (y & 0x000000000FFFFFFFULL) | ((y & 0x00FFFFFFF0000000ULL) << 4);
  x = (x & 0x00003FFF00003FFFULL) | ((x & 0x0FFFC0000FFFC000ULL) << 2);
  return (x & 0x007F007F007F007FULL) | ((x & 0x3F803F803F803F80ULL) << 1);
}

// Returns true if all bytes of a 16- or 17-byte string are < 0x80.
inline bool IsAscii1617(const char* s, size_t n) {
  if (((Load64(s) | Load64(s + 8)) & kHighBits) != 0) return false;
  return n == 16 || static_cast<uint8_t>(s[16]) < 0x80;
}

// Packs a 16/17-char ASCII string: w0 is payload bytes 0..7, w1 bytes 8..14 (byte 15 zero).
inline void PackWords(const char* s, size_t n, uint64_t* w0, uint64_t* w1) {
  uint64_t a = Pack8(Load64(s));
  uint64_t b = Pack8(Load64(s + 8));
  uint64_t c = n == 17 ? static_cast<uint8_t>(s[16]) : 0;
  *w0 = a | (b << 56);
  *w1 = (b >> 8) | (c << 48);
}

inline void UnpackWords(uint64_t w0, uint64_t w1, size_t n, char* out) {
  uint64_t a = w0 & kLow56;
  uint64_t b = (w0 >> 56) | ((w1 & 0x0000FFFFFFFFFFFFULL) << 8);
  Store64(out, Unpack8(a));
  Store64(out + 8, Unpack8(b));
  if (n == 17) out[16] = static_cast<char>((w1 >> 48) & 0x7F);
}

// Returns the length of the decimal form of v.
inline size_t IntLength(int64_t v) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  size_t n = v < 0 ? 2 : 1;
  while (u >= 10) {
    u /= 10;
    ++n;
  }
  return n;
}

inline size_t FormatInt(int64_t v, char* buf) {
  return static_cast<size_t>(std::to_chars(buf, buf + 24, v).ptr - buf);
}

// Returns true if the smallest form of `s` is a heap block.
bool NeedsHeap(std::string_view s) {
  if (s.size() <= CompactObj::kInlineMax || ParseInt64(s)) return false;
  return s.size() > CompactObj::kPackedMax || !IsAscii1617(s.data(), s.size());
}

// Returns the capacity to allocate when a string must grow to `need` bytes.
inline size_t GrowCapacity(size_t need) { return need + std::min(need, kMaxSlack); }

}  // namespace

CompactObj CompactObj::FromString(std::string_view s) {
  CompactObj o;
  o.Encode(s, /*prefer_int=*/true);
  return o;
}

CompactObj CompactObj::FromKey(std::string_view key) {
  CompactObj o;
  o.Encode(key, /*prefer_int=*/false);
  return o;
}

CompactObj CompactObj::FromInt(int64_t v) {
  CompactObj o;
  o.SetInt(v);
  return o;
}

CompactObj CompactObj::Clone() const {
  CHECK(IsString());
  CompactObj r;
  std::memcpy(r.buf_, buf_, sizeof(buf_));
  if (IsHeapString()) {
    size_t header = HasExpire() ? kExpireHeader : 0;
    size_t size = StringSize();
    char* block = static_cast<char*>(AllocateBytes(header + size));
    std::memcpy(block, HeapBlock(), header + size);
    std::memcpy(r.buf_, &block, sizeof(block));
  }
  return r;
}

void CompactObj::SetString(std::string_view s) {
  const uint32_t spare = aux();
  CompactObj old;  // takes the old content, freed after `s` (which may alias it) is copied
  std::memcpy(old.buf_, buf_, sizeof(buf_));
  buf_[kTag] = static_cast<char>(Tag() & ~kRawBit);
  Encode(s, /*prefer_int=*/true);
  if (spare != 0) set_aux(spare);  // a new form's spare bytes are 0 already
}

void CompactObj::SetInt(int64_t v) {
  const uint32_t spare = aux();
  Free();
  std::memset(buf_, 0, kTag);
  Store64(buf_, static_cast<uint64_t>(v));
  buf_[kTag] = static_cast<char>(Tag() & ~kRawBit);
  SetKind(kKindInt);
  if (spare != 0) set_aux(spare);  // a new form's spare bytes are 0 already
}

void CompactObj::SetObject(ObjType type, uint8_t encoding, ObjectBase* owned) {
  DCHECK(owned != nullptr);
  const uint32_t spare = aux();
  Free();
  std::memset(buf_, 0, kTag);
  std::memcpy(buf_, &owned, sizeof(owned));
  buf_[8] = static_cast<char>(type);
  buf_[9] = static_cast<char>(encoding);
  buf_[kTag] = static_cast<char>(Tag() & ~kRawBit);
  SetKind(kKindObject);
  if (spare != 0) set_aux(spare);  // a new form's spare bytes are 0 already
}

size_t CompactObj::StringSize() const {
  uint8_t k = Kind();
  if (k <= kInlineMax) return k;
  if (k == kKindPacked16) return 16;
  if (k == kKindPacked17) return 17;
  if (k == kKindInt) return IntLength(static_cast<int64_t>(Load64(buf_)));
  DCHECK(IsHeapString());
  uint32_t size;
  std::memcpy(&size, buf_ + 8, sizeof(size));
  return size;
}

std::string_view CompactObj::View(char* small) const {
  uint8_t k = Kind();
  if (k <= kInlineMax) return {buf_, k};
  if (k == kKindPacked16 || k == kKindPacked17) {
    size_t n = k == kKindPacked16 ? 16 : 17;
    UnpackWords(Load64(buf_), Load64(buf_ + 8) & kLow56, n, small);
    return {small, n};
  }
  if (k == kKindInt) return {small, FormatInt(static_cast<int64_t>(Load64(buf_)), small)};
  DCHECK(IsHeapString());
  return {HeapData(), StringSize()};
}

std::string_view CompactObj::GetString(std::string* scratch) const {
  uint8_t k = Kind();
  if (k <= kInlineMax) return {buf_, k};
  if (IsHeapString()) return {HeapData(), StringSize()};
  char small[kSmallBuf];
  scratch->assign(View(small));
  return *scratch;
}

std::string CompactObj::ToString() const {
  char small[kSmallBuf];
  return std::string(View(small));
}

void CompactObj::AppendTo(std::string* out) const {
  char small[kSmallBuf];
  out->append(View(small));
}

bool CompactObj::TryGetInt(int64_t* out) const {
  if (Kind() == kKindInt) {
    *out = static_cast<int64_t>(Load64(buf_));
    return true;
  }
  if (!IsString()) return false;
  char small[kSmallBuf];
  const std::optional<int64_t> v = ParseInt64(View(small));
  if (v) *out = *v;
  return v.has_value();
}

bool CompactObj::EqualsString(std::string_view s) const {
  uint8_t k = Kind();
  if (k <= kInlineMax) return s.size() == k && (k == 0 || std::memcmp(buf_, s.data(), k) == 0);
  if (k == kKindPacked16 || k == kKindPacked17) {
    size_t n = k == kKindPacked16 ? 16 : 17;
    if (s.size() != n || !IsAscii1617(s.data(), n)) return false;
    uint64_t w0, w1;
    PackWords(s.data(), n, &w0, &w1);
    return w0 == Load64(buf_) && w1 == (Load64(buf_ + 8) & kLow56);
  }
  if (k == kKindInt) {
    int64_t v = static_cast<int64_t>(Load64(buf_));
    if (s.size() != IntLength(v)) return false;
    char small[kSmallBuf];
    return FormatInt(v, small) == s.size() && std::memcmp(small, s.data(), s.size()) == 0;
  }
  if (k == kKindObject) return false;
  size_t n = StringSize();
  return n == s.size() && (n == 0 || std::memcmp(HeapData(), s.data(), n) == 0);
}

bool CompactObj::Equals(const CompactObj& o) const {
  if (!IsString() || !o.IsString()) return GetObject() != nullptr && GetObject() == o.GetObject();
  char small[kSmallBuf];
  return o.EqualsString(View(small));
}

uint64_t CompactObj::Hash() const {
  DCHECK(IsString());
  char small[kSmallBuf];
  return HashBytes(View(small));
}

size_t CompactObj::MallocUsed() const {
  if (IsHeapString()) return AllocationSize(HeapBlock());
  if (Kind() == kKindObject) return GetObject()->MallocUsed();
  return 0;
}

absl::Span<char> CompactObj::ResizeString(size_t new_size) {
  const uint32_t spare = aux();
  absl::Span<char> out = ResizeBytes(new_size);
  if (spare != 0) set_aux(spare);  // a new form's spare bytes are 0 already
  return out;
}

absl::Span<char> CompactObj::ResizeBytes(size_t new_size) {
  DCHECK(IsString());
  DCHECK(!HasExpire());
  CHECK(new_size <= std::numeric_limits<uint32_t>::max());
  uint8_t k = Kind();
  if (k == kKindHeap) {
    size_t old_size = StringSize();
    if (new_size > HeapCapacity()) {
      CompactObj old;
      std::memcpy(old.buf_, buf_, sizeof(buf_));
      EncodeHeap({old.HeapData(), old_size}, GrowCapacity(new_size), false, 0);
    }
    char* data = HeapData();
    if (new_size > old_size) std::memset(data + old_size, 0, new_size - old_size);
    uint32_t size32 = static_cast<uint32_t>(new_size);
    std::memcpy(buf_ + 8, &size32, sizeof(size32));
    MarkRaw();
    return {data, new_size};
  }
  // A small form: decode (inline raw decodes in place), then rebuild as raw bytes.
  char small[kSmallBuf];
  std::string_view cur = View(small);
  size_t keep = std::min(cur.size(), new_size);
  if (new_size <= kInlineMax) {
    if (keep > 0) std::memmove(buf_, cur.data(), keep);
    std::memset(buf_ + keep, 0, kTag - keep);
    SetKind(static_cast<uint8_t>(new_size));
  } else {
    char copy[kSmallBuf];
    if (keep > 0) std::memcpy(copy, cur.data(), keep);
    EncodeHeap({copy, keep}, GrowCapacity(new_size), false, 0);
    std::memset(HeapData() + keep, 0, new_size - keep);
    uint32_t size32 = static_cast<uint32_t>(new_size);
    std::memcpy(buf_ + 8, &size32, sizeof(size32));
  }
  MarkRaw();
  return {new_size <= kInlineMax ? buf_ : HeapData(), new_size};
}

void CompactObj::AppendString(std::string_view s) {
  if (s.empty()) {
    MarkRaw();
    return;
  }
  size_t old_size = StringSize();
  absl::Span<char> dst = ResizeString(old_size + s.size());
  std::memcpy(dst.data() + old_size, s.data(), s.size());
}

std::string_view CompactObj::EncodingName() const {
  if (Kind() == kKindObject) return GetObject()->EncodingName();
  if (IsRaw()) return "raw";
  if (Kind() == kKindInt) return "int";
  return StringSize() <= kEmbstrMax ? "embstr" : "raw";
}

ObjectBase* CompactObj::GetObject() const {
  if (Kind() != kKindObject) return nullptr;
  ObjectBase* p;
  std::memcpy(&p, buf_, sizeof(p));
  return p;
}

ObjectBase* CompactObj::ReleaseObject() {
  DCHECK_EQ(Kind(), kKindObject);
  ObjectBase* p = GetObject();
  const uint32_t spare = aux();
  std::memset(buf_, 0, kTag);
  buf_[kTag] = static_cast<char>(Tag() & ~kRawBit);
  SetKind(0);
  if (spare != 0) set_aux(spare);  // a new form's spare bytes are 0 already
  return p;
}

int64_t CompactObj::ExpireTimeMs() const {
  DCHECK(HasExpire());
  int64_t d;
  std::memcpy(&d, HeapBlock(), sizeof(d));
  return d;
}

void CompactObj::SetExpireTimeMs(int64_t deadline_ms) {
  DCHECK(IsString());
  const uint32_t spare = aux();
  EncodeExpire(deadline_ms);
  if (spare != 0) set_aux(spare);  // a new form's spare bytes are 0 already
}

void CompactObj::EncodeExpire(int64_t deadline_ms) {
  uint8_t k = Kind();
  if (k == kKindHeapExpire) {
    std::memcpy(HeapBlock(), &deadline_ms, sizeof(deadline_ms));
    return;
  }
  if (k == kKindHeap) {
    size_t size = StringSize();
    char* block = HeapBlock();
    if (AllocationSize(block) >= size + kExpireHeader) {  // room to shift the bytes in place
      std::memmove(block + kExpireHeader, block, size);
      std::memcpy(block, &deadline_ms, sizeof(deadline_ms));
      SetKind(kKindHeapExpire);
      return;
    }
    CompactObj old;
    std::memcpy(old.buf_, buf_, sizeof(buf_));
    EncodeHeap({old.HeapData(), size}, size, true, deadline_ms);
    return;
  }
  char small[kSmallBuf];
  std::string_view s = View(small);
  EncodeHeap(s, s.size(), true, deadline_ms);
}

void CompactObj::ClearExpire() {
  if (!HasExpire()) return;
  const uint32_t spare = aux();
  std::string_view s{HeapData(), StringSize()};
  if (NeedsHeap(s)) {  // stay in the same block, bytes shifted to its start
    char* block = HeapBlock();
    std::memmove(block, block + kExpireHeader, s.size());
    SetKind(kKindHeap);
    return;
  }
  CompactObj old;
  std::memcpy(old.buf_, buf_, sizeof(buf_));
  Encode(s, /*prefer_int=*/false);
  if (spare != 0) set_aux(spare);  // a new form's spare bytes are 0 already
}

char* CompactObj::HeapBlock() const {
  char* p;
  std::memcpy(&p, buf_, sizeof(p));
  return p;
}

char* CompactObj::HeapData() const {
  return HeapBlock() + (Kind() == kKindHeapExpire ? kExpireHeader : 0);
}

size_t CompactObj::HeapCapacity() const {
  return AllocationSize(HeapBlock()) - (Kind() == kKindHeapExpire ? kExpireHeader : 0);
}

void CompactObj::Free() {
  uint8_t k = Kind();
  if (k == kKindHeap || k == kKindHeapExpire) {
    FreeBytes(HeapBlock());
  } else if (k == kKindObject) {
    delete GetObject();
  }
}

void CompactObj::Encode(std::string_view s, bool prefer_int) {
  size_t n = s.size();
  const std::optional<int64_t> v =
      prefer_int || n > kPackedMax ? ParseInt64(s) : std::nullopt;
  if (v) {
    std::memset(buf_, 0, kTag);
    Store64(buf_, static_cast<uint64_t>(*v));
    SetKind(kKindInt);
  } else if (n <= kInlineMax) {
    if (n > 0) std::memmove(buf_, s.data(), n);
    std::memset(buf_ + n, 0, kTag - n);
    SetKind(static_cast<uint8_t>(n));
  } else if (n <= kPackedMax && IsAscii1617(s.data(), n)) {
    uint64_t w0, w1;
    PackWords(s.data(), n, &w0, &w1);
    Store64(buf_, w0);
    std::memcpy(buf_ + 8, &w1, 7);
    SetKind(n == 16 ? kKindPacked16 : kKindPacked17);
  } else {
    EncodeHeap(s, n, false, 0);
  }
}

void CompactObj::EncodeHeap(std::string_view s, size_t capacity, bool with_expire,
                            int64_t deadline) {
  CHECK(s.size() <= std::numeric_limits<uint32_t>::max());
  DCHECK(capacity >= s.size());
  size_t header = with_expire ? kExpireHeader : 0;
  char* block = static_cast<char*>(AllocateBytes(header + capacity));
  if (with_expire) std::memcpy(block, &deadline, sizeof(deadline));
  if (!s.empty()) std::memcpy(block + header, s.data(), s.size());
  std::memset(buf_, 0, kTag);
  std::memcpy(buf_, &block, sizeof(block));
  uint32_t size32 = static_cast<uint32_t>(s.size());
  std::memcpy(buf_ + 8, &size32, sizeof(size32));
  SetKind(with_expire ? kKindHeapExpire : kKindHeap);
}

}  // namespace dashkv
