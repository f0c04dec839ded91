// Listpack: Redis's compact list encoding, byte for byte, so that RDB files can carry listpacks
// unchanged in both directions (Redis 7 writes and reads the same bytes). Used for small hashes
// and as the node payload of QuickList.
// Thread: not synchronized; a listpack belongs to the value that holds it (a shard's data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"

namespace dashkv {

// Design
//
// Layout (all integers little-endian):
//   <total-bytes u32> <num-elements u16> <entry> ... <entry> <0xFF>
// num-elements saturates at 65535 ("unknown": size() then counts the entries, as Redis does).
// An entry is <encoding><data><backlen>:
//   0xxxxxxx                     7-bit unsigned int 0..127            (1 byte)
//   10LLLLLL <str>               string of length 0..63               (1 + len)
//   110xxxxx yyyyyyyy            13-bit signed int -4096..4095        (2 bytes)
//   1110LLLL LLLLLLLL <str>      string of length 64..4095            (2 + len)
//   0xF0 <len u32> <str>         string of length >= 4096             (5 + len)
//   0xF1/0xF2/0xF3/0xF4 <int>    16/24/32/64-bit signed int           (1 + 2/3/4/8)
// backlen = length of <encoding><data>, stored in 1..5 bytes as 7-bit groups, most significant
// group first; every byte but the first written carries bit 7 so a reader walking backwards
// from the next entry knows whether another byte follows (size thresholds as in Redis:
// <=127: 1 byte, <16383: 2, <2097151: 3, <268435455: 4, else 5).
// A string is stored as an integer when it is a canonical decimal int64 (no sign '+', no leading
// zeros, no spaces, not "-0"; Redis's string2ll rules), in the smallest integer class.
//
// Positions (Pos) are byte offsets of an entry from the start of the buffer. They survive
// reallocation but not a change before them. kNoPos (0, the header) marks "no entry".
//
// Complexity: push/insert/delete O(bytes) (one memmove + realloc), Seek O(n) from the nearer end,
// Next/Prev O(1).

namespace detail {
// The heap of listpacks and quicklist nodes: AllocateBytes (core/memory.h), i.e. mimalloc counted
// in UsedMemory(), or libc malloc in sanitizer builds so that ASan sees every byte. OOM aborts.
void* ListAlloc(size_t n);
void* ListRealloc(void* p, size_t n);
void ListFree(void* p);
size_t ListUsableSize(const void* p);
}  // namespace detail

enum class ListEnd : uint8_t { kHead, kTail };
enum class Where : uint8_t { kBefore, kAfter };

// One decoded element: an integer or a view of string bytes inside a listpack.
class ListpackValue {
 public:
  // Large enough for any int64 in decimal.
  static constexpr size_t kIntBufSize = 24;

  static ListpackValue Int(int64_t v) { return ListpackValue(v); }
  static ListpackValue Str(std::string_view s) { return ListpackValue(s); }

  bool is_int() const { return is_int_; }
  // REQUIRES: is_int().
  int64_t int_value() const { return int_; }
  // REQUIRES: !is_int().
  std::string_view str_value() const { return str_; }

  // Returns the element as text; integers are formatted into buf.
  std::string_view AsText(char (&buf)[kIntBufSize]) const;
  // Returns the element as an owned string.
  std::string ToString() const;
  // Appends the element's text to out.
  void AppendTo(std::string* out) const;
  // Returns true when the element's text equals s (how Redis compares list elements).
  bool Equals(std::string_view s) const;

 private:
  explicit ListpackValue(int64_t v) : int_(v), is_int_(true) {}
  explicit ListpackValue(std::string_view s) : str_(s) {}

  std::string_view str_;
  int64_t int_ = 0;
  bool is_int_ = false;
};

// Read-only, non-owning access to listpack bytes.
// REQUIRES: the bytes are a valid listpack (see Validate for untrusted input) and outlive the view.
class ListpackView {
 public:
  using Pos = uint32_t;
  static constexpr Pos kNoPos = 0;
  static constexpr uint32_t kHeaderSize = 6;
  // Header plus terminator: the size of an empty listpack.
  static constexpr uint32_t kEmptySize = 7;
  static constexpr uint16_t kUnknownCount = 65535;

  explicit ListpackView(const uint8_t* data) : data_(data) {}

  const uint8_t* data() const { return data_; }
  // Returns the total size in bytes (header and terminator included).
  uint32_t total_bytes() const;
  std::string_view bytes() const {
    return {reinterpret_cast<const char*>(data_), total_bytes()};
  }
  // Returns the number of elements; O(n) when the header count is saturated.
  size_t size() const;
  bool empty() const { return data_[kHeaderSize] == 0xFF; }

  // Navigation; each returns kNoPos when there is no such entry.
  Pos First() const { return empty() ? kNoPos : kHeaderSize; }
  Pos Last() const;
  Pos Next(Pos p) const;
  Pos Prev(Pos p) const;
  // Returns the entry at index (negative: from the end, -1 is the last), walking from the
  // nearer end.
  Pos Seek(long index) const;

  // Decodes the entry at p. String views point into the listpack.
  ListpackValue Get(Pos p) const;
  // Returns the size of the entry at p including its backlen.
  uint32_t EntryBytes(Pos p) const;

  // Returns the first entry at or after start equal to v (as text), looking only at every
  // (skip+1)-th entry (skip=1 visits the fields of a field/value listpack); kNoPos if none.
  Pos Find(std::string_view v, Pos start, uint32_t skip = 0) const;

  // Returns the bytes an entry holding v takes (encoding, data and backlen).
  static uint32_t EncodedSize(std::string_view v);

  // Checks untrusted bytes: header, every entry's encoding and backlen, bounds, element count
  // and terminator. Never reads outside `bytes`. on_entry, when given, sees every element and
  // may reject it by returning false.
  static bool Validate(std::string_view bytes);
  static bool Validate(std::string_view bytes, absl::FunctionRef<bool(ListpackValue)> on_entry);

 private:
  const uint8_t* data_;
};

// An owned listpack in one allocation (detail::ListAlloc: mimalloc). Move-only; 8 bytes (one pointer).
// Thread: owned by its holder's shard thread.
class Listpack {
 public:
  using Pos = ListpackView::Pos;
  static constexpr Pos kNoPos = ListpackView::kNoPos;

  // Creates an empty listpack (7 bytes).
  Listpack();
  ~Listpack();
  Listpack(Listpack&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
  Listpack& operator=(Listpack&& other) noexcept;
  Listpack(const Listpack&) = delete;
  Listpack& operator=(const Listpack&) = delete;

  // Takes ownership of bytes allocated with detail::ListAlloc.
  // REQUIRES: bytes hold a valid listpack (validate untrusted input first).
  static Listpack Adopt(uint8_t* bytes);
  // Copies a listpack. REQUIRES: bytes hold a valid listpack.
  static Listpack Copy(std::string_view bytes);
  // Gives up ownership of the buffer (free with detail::ListFree); the object becomes empty-invalid and
  // may only be destroyed or assigned to.
  uint8_t* Release();

  ListpackView view() const { return ListpackView(data_); }
  std::string_view bytes() const { return view().bytes(); }
  uint32_t total_bytes() const { return view().total_bytes(); }
  size_t size() const { return view().size(); }
  bool empty() const { return view().empty(); }
  // Returns the bytes the allocator holds for this listpack (usable size).
  size_t MallocUsage() const;

  // Shorthands for view().
  Pos First() const { return view().First(); }
  Pos Last() const { return view().Last(); }
  Pos Next(Pos p) const { return view().Next(p); }
  Pos Prev(Pos p) const { return view().Prev(p); }
  Pos Seek(long index) const { return view().Seek(index); }
  ListpackValue Get(Pos p) const { return view().Get(p); }
  Pos Find(std::string_view v, Pos start, uint32_t skip = 0) const {
    return view().Find(v, start, skip);
  }

  // Mutators below invalidate string views into this listpack, and their argument v must not
  // point into it (copy first).
  //
  // Adds v at one end; returns its position.
  Pos Push(std::string_view v, ListEnd end);
  // Inserts v before or after the entry at p; returns the new entry's position.
  // REQUIRES: p is an entry. Invalidates string views and positions after the insertion point.
  Pos Insert(Pos p, Where where, std::string_view v);
  // Replaces the entry at p with v; returns p. REQUIRES: p is an entry.
  Pos Replace(Pos p, std::string_view v);
  // Deletes the entry at p; returns the position of the entry that followed it (now at p) or
  // kNoPos. REQUIRES: p is an entry.
  Pos Delete(Pos p);
  // Deletes up to count entries starting at p; returns how many were deleted.
  // REQUIRES: p is an entry.
  size_t DeleteRange(Pos p, size_t count);
  // Deletes up to count entries starting at index (negative: from the end); returns how many.
  size_t DeleteRange(long index, size_t count);
  // Deletes the elements equal to v: up to limit of them (0: all), the first ones when from is
  // kHead, the last ones when kTail. Returns how many were deleted. One pass, one memmove per run.
  size_t RemoveMatches(std::string_view v, size_t limit, ListEnd from);

  // Moves the entries from p to the end into a new listpack and returns it.
  // REQUIRES: p is an entry.
  Listpack SplitAt(Pos p);
  // Appends all of other's entries after this listpack's entries.
  void Append(ListpackView other);

 private:
  explicit Listpack(uint8_t* data) : data_(data) {}
  // Opens a gap of n bytes at offset off (after reallocating).
  void OpenGap(uint32_t off, uint32_t n);
  // Removes n bytes at offset off (then shrinks the allocation).
  void CloseGap(uint32_t off, uint32_t n);
  void AddCount(long delta);

  uint8_t* data_;
};

}  // namespace dashkv
