// CompactObj: the 16-byte object that holds every key and every value of a shard's Dashtable.
// Thread: owned by the shard thread that owns the table; not thread-safe.
//
// Design
//   sizeof(CompactObj) == 16, alignof == 1 (all fields are read with memcpy, so a table may pack
//   objects at any offset). Byte 15 is the tag; bytes 0..14 are the payload:
//
//     tag bits 0..4  kind: 0..15 inline raw string of that length, 16/17 packed ASCII string of
//                    16/17 chars, 18 int, 19 heap string, 20 heap string with expiry, 21 object
//     tag bit 5      "raw" (OBJECT ENCODING answers "raw": set by MarkRaw and by the in-place
//                    mutators, cleared by SetString/SetInt)
//     tag bits 6..7  user flags, free for the server (e.g. "touched", "has watchers"); kept by
//                    every setter, by moves and by Clone()
//     bytes 12..14   "aux": 24 spare bits in every form whose payload leaves them unused (inline
//                    raw strings of <= 12 bytes, int, heap, heap + expiry, object); the server
//                    keeps a key's access record there (core/access_record.h). Not part of the
//                    string: Hash(), EqualsString() and Equals() never read them. Setters that
//                    change the form keep them when the new form has room too (a form without
//                    room loses them; a form that gains room starts at 0); moves and Clone()
//                    copy them
//
//     inline raw     bytes 0..n-1 (n <= 15)
//     packed         7 bits per char (every byte < 0x80): chars 0..7 in bits 0..55, chars 8..15
//                    in bits 56..111, char 16 in bits 112..118 (little-endian over bytes 0..14)
//     int            int64 in bytes 0..7 (canonical decimal strings only, see below)
//     heap string    bytes 0..7 pointer, bytes 8..11 uint32 size; the block holds only the bytes,
//                    its capacity is the allocator's usable size (AllocationSize) so that
//                    appends grow in place, amortized O(1)
//     heap + expiry  as heap string, but the block starts with the int64 deadline (ms)
//     object         bytes 0..7 ObjectBase*, byte 8 ObjType, byte 9 encoding (owner-defined)
//
//   Strings pick the smallest form: canonical integer ("-12", not "012", "+1", " 1", "-0", and
//   within int64) -> int (FromKey: only if longer than 17); length <= 15 -> inline raw;
//   16..17 all-ASCII -> packed; else heap.
//   Every form decodes to the same bytes, Hash() == HashBytes(those bytes) and EqualsString()
//   compares those bytes, so a key may change form without changing its identity.
//
//   Expiry lives with the key. A key without expiry stays in its 16 bytes with no allocation; a
//   key with an expiry is re-encoded as "heap + expiry" (deadline and bytes in one block) and
//   ClearExpire() returns it to its smallest form. Neither changes the key's bytes, Hash() or
//   equality, so the Dashtable allows this in-place mutation of a key it holds (the key stays in
//   the same slot; no rehash is needed). Any other in-place change of a key is forbidden.
//
//   Trivially relocatable: no field points into the object itself, so a table may move a
//   CompactObj with memcpy and then forget the source without running its destructor. The move
//   constructor does the same copy and resets the source to the empty string.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "absl/types/span.h"

namespace dashkv {

enum class ObjType : uint8_t { kString, kList, kHash, kSet, kZset, kStream };

// Base of the heap structures a CompactObj may own (lists, hashes, sets, zsets).
// Thread: owned by the shard thread, like the CompactObj that owns it.
class ObjectBase {
 public:
  virtual ~ObjectBase() = default;
  // Returns the heap bytes owned by this object (including the object itself).
  virtual size_t MallocUsed() const = 0;
  // Returns the OBJECT ENCODING name ("listpack", "quicklist", "hashtable", ...).
  virtual std::string_view EncodingName() const { return {}; }
};

class CompactObj {
 public:
  static constexpr size_t kInlineMax = 15;   // longest inline raw string
  static constexpr size_t kPackedMax = 17;   // longest packed ASCII string
  static constexpr size_t kEmbstrMax = 44;   // Redis's embstr limit, for EncodingName()
  static constexpr uint8_t kUserFlagsMask = 0x3;

  // Creates the empty string (all 16 bytes zero).
  CompactObj() noexcept { std::memset(buf_, 0, sizeof(buf_)); }
  ~CompactObj() { Free(); }

  CompactObj(CompactObj&& o) noexcept {
    std::memcpy(buf_, o.buf_, sizeof(buf_));
    std::memset(o.buf_, 0, sizeof(buf_));
  }
  CompactObj& operator=(CompactObj&& o) noexcept {
    if (this != &o) {
      Free();
      std::memcpy(buf_, o.buf_, sizeof(buf_));
      std::memset(o.buf_, 0, sizeof(buf_));
    }
    return *this;
  }
  CompactObj(const CompactObj&) = delete;
  CompactObj& operator=(const CompactObj&) = delete;

  // Returns a string object in its smallest form.
  static CompactObj FromString(std::string_view s);
  // Returns a key object: as FromString but canonical integers of up to 17 chars stay bytes
  // (inline or packed; longer ones are int-encoded to stay off the heap). Such keys gain no
  // memory from int encoding and are hashed and compared on every lookup, which is ~4x cheaper
  // on bytes than on an integer that must be formatted first.
  static CompactObj FromKey(std::string_view key);
  // Returns an int-encoded string object.
  static CompactObj FromInt(int64_t v);
  // Returns a deep copy (strings, expiry and flags). REQUIRES: IsString().
  CompactObj Clone() const;

  // Replaces the content by string `s` in its smallest form. Frees the old content, clears the
  // raw bit and any expiry; keeps user flags. `s` may point into this object's own string.
  void SetString(std::string_view s);
  // Replaces the content by the integer `v` (its string is the decimal form). As SetString.
  void SetInt(int64_t v);
  // Replaces the content by `owned` (ownership passes to this object). As SetString.
  void SetObject(ObjType type, uint8_t encoding, ObjectBase* owned);
  // Resets to the empty string, keeping user flags.
  void Reset() { SetString({}); }

  ObjType type() const {
    return Kind() == kKindObject ? static_cast<ObjType>(buf_[8]) : ObjType::kString;
  }
  // Prefetches the heap block of a heap string or object into the cache (no-op for inline
  // forms), so that a pipelined batch overlaps the cache misses of the values it will read.
  // Up to 512 bytes of a string are prefetched (the lines a reply copies).
  void PrefetchData() const {
    if (Kind() < kKindHeap) return;
    const char* p;
    __builtin_memcpy(&p, buf_, sizeof(p));
    __builtin_prefetch(p);
    if (Kind() == kKindObject) return;
    uint32_t size;
    __builtin_memcpy(&size, buf_ + 8, sizeof(size));
    const uint32_t end = size < 448 ? size + 64 : 512;  // + a possible expiry header
    for (uint32_t off = 64; off < end; off += 64) __builtin_prefetch(p + off);
  }
  bool IsString() const { return Kind() != kKindObject; }
  // Returns true if no heap memory is owned.
  bool IsInline() const { return Kind() <= kKindInt; }
  // Returns true if the string is stored as an integer.
  bool IsIntEncoded() const { return Kind() == kKindInt; }

  // Returns the length of the string. REQUIRES: IsString().
  size_t StringSize() const;
  // Returns the string's bytes. The view points into this object for inline raw and heap
  // strings, else into `*scratch` (overwritten). Invalidated by any change of this object.
  // REQUIRES: IsString().
  std::string_view GetString(std::string* scratch) const;
  // Returns a copy of the string. REQUIRES: IsString().
  std::string ToString() const;
  // Appends the string's bytes to `*out`. REQUIRES: IsString().
  void AppendTo(std::string* out) const;
  // Stores the integer value in `*out` and returns true if the string is a canonical int64.
  bool TryGetInt(int64_t* out) const;
  // Returns true if the string equals `s`. Never allocates. False for non-strings.
  bool EqualsString(std::string_view s) const;
  // Returns true if both are strings with the same bytes (whatever their forms), or both hold
  // the same object. Never allocates.
  bool Equals(const CompactObj& o) const;
  bool operator==(const CompactObj& o) const { return Equals(o); }
  // Returns HashBytes(string bytes) (core/hash.h) for every form. REQUIRES: IsString().
  uint64_t Hash() const;
  // Returns the heap bytes owned (usable sizes, plus ObjectBase::MallocUsed for objects).
  size_t MallocUsed() const;

  // In-place mutation for APPEND / SETRANGE / SETBIT. Resizes the string to `new_size` bytes
  // (new bytes are zero, shrinking truncates) and returns its writable bytes. The string becomes
  // raw bytes: inline when new_size <= 15, else a heap block whose capacity grows geometrically
  // (double up to 1 MiB of slack), so repeated appends are amortized O(1). Sets the raw bit.
  // The span is invalidated by any further change. REQUIRES: IsString(), !HasExpire().
  absl::Span<char> ResizeString(size_t new_size);
  // Appends `s` (amortized O(1) per byte); as ResizeString. `s` must not alias this object.
  void AppendString(std::string_view s);
  // Calls f(std::string*) on a copy of the string, stores the result and sets the raw bit.
  // O(size): prefer ResizeString for hot commands. REQUIRES: IsString(), !HasExpire().
  template <typename F>
  void MutateString(F f) {
    std::string s = ToString();
    f(&s);
    SetString(s);
    MarkRaw();
  }

  // Marks the string as modified in place (OBJECT ENCODING then answers "raw").
  void MarkRaw() { buf_[kTag] = static_cast<char>(Tag() | kRawBit); }
  bool IsRaw() const { return (Tag() & kRawBit) != 0; }
  // Returns Redis's OBJECT ENCODING name: "int", "embstr" or "raw" for strings (raw bit first),
  // ObjectBase::EncodingName() for objects.
  std::string_view EncodingName() const;

  // Returns the owned object, or nullptr for strings.
  ObjectBase* GetObject() const;
  // Returns the encoding byte given to SetObject(). REQUIRES: !IsString().
  uint8_t object_encoding() const { return static_cast<uint8_t>(buf_[9]); }
  // Changes the encoding byte (e.g. after a conversion inside the object). REQUIRES: !IsString().
  void set_object_encoding(uint8_t e) { buf_[9] = static_cast<char>(e); }
  // Returns the owned object and resets this to the empty string; the caller owns the result.
  // REQUIRES: !IsString().
  ObjectBase* ReleaseObject();

  bool HasExpire() const { return Kind() == kKindHeapExpire; }
  // Returns the deadline in ms. REQUIRES: HasExpire().
  int64_t ExpireTimeMs() const;
  // Sets the deadline; moves the key to its "heap + expiry" form (one allocation) if needed.
  // Keeps the string, Hash() and equality. REQUIRES: IsString().
  void SetExpireTimeMs(int64_t deadline_ms);
  // Removes the deadline and returns the key to the form FromKey() would build. No-op without
  // expiry.
  void ClearExpire();

  // Returns whether bytes 12..14 are free in the current form (see Design).
  bool HasAuxRoom() const {
    // Kinds 13..17 (inline raw of 13..15 bytes, packed) have no room: one compare.
    return static_cast<uint8_t>(Kind() - (kAuxInlineMax + 1)) >= kKindInt - (kAuxInlineMax + 1);
  }
  // Returns the 24 spare bits, or 0 when the form has no room for them.
  uint32_t aux() const {
    if (!HasAuxRoom()) return 0;
    uint32_t w;
    __builtin_memcpy(&w, buf_ + kAux, sizeof(w));  // bytes 12..15: the spare bytes and the tag
    return w & kAuxMask;
  }
  // Stores the low 24 bits of `v` in the spare bytes; a no-op when the form has no room.
  void set_aux(uint32_t v) {
    if (!HasAuxRoom()) return;
    const uint32_t w = (v & kAuxMask) | static_cast<uint32_t>(Tag()) << 24;  // the tag stays
    __builtin_memcpy(buf_ + kAux, &w, sizeof(w));
  }

  uint8_t user_flags() const { return static_cast<uint8_t>(Tag() >> kUserShift); }
  // REQUIRES: (f & ~kUserFlagsMask) == 0.
  void set_user_flags(uint8_t f) {
    buf_[kTag] = static_cast<char>((Tag() & ~(kUserFlagsMask << kUserShift)) | (f << kUserShift));
  }

 private:
  static constexpr size_t kTag = 15;
  static constexpr size_t kAux = 12;           // first spare byte
  static constexpr uint8_t kAuxInlineMax = 12;  // longest inline raw string leaving them free
  static constexpr uint32_t kAuxMask = (1u << 24) - 1;
  static constexpr uint8_t kKindMask = 0x1f;
  static constexpr uint8_t kRawBit = 0x20;
  static constexpr int kUserShift = 6;
  static constexpr uint8_t kKindPacked16 = 16;
  static constexpr uint8_t kKindPacked17 = 17;
  static constexpr uint8_t kKindInt = 18;
  static constexpr uint8_t kKindHeap = 19;
  static constexpr uint8_t kKindHeapExpire = 20;
  static constexpr uint8_t kKindObject = 21;
  // Large enough for any non-heap string: int64 (20 chars), packed (17), inline (15).
  static constexpr size_t kSmallBuf = 24;

  uint8_t Tag() const { return static_cast<uint8_t>(buf_[kTag]); }
  uint8_t Kind() const { return Tag() & kKindMask; }
  bool IsHeapString() const { return Kind() == kKindHeap || Kind() == kKindHeapExpire; }
  // Sets the kind bits of the tag, keeping the raw bit and user flags.
  void SetKind(uint8_t kind) { buf_[kTag] = static_cast<char>((Tag() & ~kKindMask) | kind); }
  char* HeapBlock() const;
  char* HeapData() const;  // REQUIRES: IsHeapString()
  size_t HeapCapacity() const;
  // Returns the string's bytes, decoding small forms into `small` (>= kSmallBuf bytes).
  std::string_view View(char* small) const;
  // Frees owned memory; leaves the payload dangling (callers overwrite it).
  void Free();
  // Stores `s` in its smallest form. REQUIRES: nothing owned (after Free()).
  void Encode(std::string_view s, bool prefer_int);
  void EncodeHeap(std::string_view s, size_t capacity, bool with_expire, int64_t deadline);
  // ResizeString and SetExpireTimeMs without keeping the spare bytes (their callers do).
  absl::Span<char> ResizeBytes(size_t new_size);
  void EncodeExpire(int64_t deadline_ms);

  char buf_[16];
};

static_assert(sizeof(CompactObj) == 16);
static_assert(alignof(CompactObj) <= 8);

}  // namespace dashkv
