#include "server/persistence/listpack_check.h"

#include <cstdint>

namespace dashkv {

namespace {

constexpr uint8_t kEof = 0xFF;

// Returns the bytes needed to read an entry's size from its first byte; 0 if invalid.
uint32_t SizeBytes(uint8_t b) {
  if (b < 0x80 || (b & 0xC0) == 0x80 || (b & 0xE0) == 0xC0) return 1;
  if (b >= 0xF1 && b <= 0xF4) return 1;
  if ((b & 0xF0) == 0xE0) return 2;
  if (b == 0xF0) return 5;
  return 0;
}

// Returns the size of an entry's encoding and data. REQUIRES: SizeBytes(p[0]) bytes readable.
uint64_t EncodedSize(const uint8_t* p) {
  uint8_t b = p[0];
  if (b < 0x80) return 1;
  if ((b & 0xC0) == 0x80) return 1 + (b & 0x3F);
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 2 + ((uint64_t{b & 0x0Fu} << 8) | p[1]);
  switch (b) {
    case 0xF1: return 3;
    case 0xF2: return 4;
    case 0xF3: return 5;
    case 0xF4: return 9;
    default:  // 0xF0
      return 5 + (uint64_t{p[1]} | (uint64_t{p[2]} << 8) | (uint64_t{p[3]} << 16) |
                  (uint64_t{p[4]} << 24));
  }
}

// The size of the canonical backlen of an entry of `size` bytes.
uint64_t BacklenSize(uint64_t size) {
  if (size <= 127) return 1;
  if (size < 16383) return 2;
  if (size < 2097151) return 3;
  if (size < 268435455) return 4;
  return 5;
}

// Decodes a backlen backwards from `last` as Redis does: 7 bits per byte while bit 7 is set,
// at most five bytes. Never reads before `floor`.
uint64_t DecodeBacklen(const uint8_t* last, const uint8_t* floor) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7, --last) {
    if (shift > 28 || last < floor) return UINT64_MAX;
    v |= uint64_t{*last & 127u} << shift;
    if ((*last & 128) == 0) return v;
  }
}

}  // namespace

bool CheckRdbListpack(std::string_view bytes, absl::FunctionRef<bool(ListpackValue)> on_entry) {
  const auto* lp = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint64_t size = bytes.size();
  if (size < ListpackView::kHeaderSize + 1) return false;
  uint64_t total = uint64_t{lp[0]} | (uint64_t{lp[1]} << 8) | (uint64_t{lp[2]} << 16) |
                   (uint64_t{lp[3]} << 24);
  if (total != size || lp[size - 1] != kEof) return false;
  const uint64_t eof = size - 1;  // an entry may end exactly here
  const uint32_t numele = uint32_t{lp[4]} | (uint32_t{lp[5]} << 8);
  uint64_t p = ListpackView::kHeaderSize;
  uint32_t count = 0;
  while (lp[p] != kEof) {
    uint32_t size_bytes = SizeBytes(lp[p]);
    if (size_bytes == 0 || p + size_bytes > eof) return false;
    uint64_t encoded = EncodedSize(lp + p);
    uint64_t backlen = BacklenSize(encoded);
    uint64_t entry = encoded + backlen;
    if (entry > eof - p) return false;
    if (DecodeBacklen(lp + p + entry - 1, lp) + backlen != entry) return false;
    if (!on_entry(ListpackView(lp).Get(static_cast<ListpackView::Pos>(p)))) return false;
    ++count;
    p += entry;
  }
  if (p != eof) return false;
  return numele == ListpackView::kUnknownCount || numele == count;
}

}  // namespace dashkv
