#include "core/ziplist.h"

#include <cstdint>

namespace dashkv {

namespace {

constexpr size_t kHeaderSize = 10;
constexpr uint8_t kEnd = 0xFF;
constexpr uint8_t kBigPrevLen = 0xFE;

uint64_t LoadLE(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// Returns v (the low `bytes` bytes) sign-extended to int64.
int64_t SignExtend(uint64_t v, int bytes) {
  int shift = 64 - 8 * bytes;
  return static_cast<int64_t>(v << shift) >> shift;
}

}  // namespace

bool ValidateZiplist(std::string_view bytes, absl::FunctionRef<bool(ListpackValue)> on_entry) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t size = bytes.size();
  if (size < kHeaderSize + 1) return false;
  if (LoadLE(data, 4) != size || data[size - 1] != kEnd) return false;
  const uint64_t zltail = LoadLE(data + 4, 4);
  const uint64_t zllen = LoadLE(data + 8, 2);
  size_t pos = kHeaderSize;
  size_t prev_size = 0;
  size_t last = 0;
  uint64_t count = 0;
  while (pos < size - 1) {
    const size_t start = pos;
    // prevlen
    size_t prevlen;
    if (data[pos] < kBigPrevLen) {
      prevlen = data[pos];
      pos += 1;
    } else if (data[pos] == kBigPrevLen) {
      if (size - 1 - pos < 5) return false;
      prevlen = LoadLE(data + pos + 1, 4);
      pos += 5;
    } else {
      return false;
    }
    if (prevlen != prev_size) return false;
    if (pos >= size - 1) return false;
    // encoding and data
    const uint8_t enc = data[pos];
    const size_t avail = size - 1 - pos;  // bytes before the terminator
    ListpackValue value = ListpackValue::Int(0);
    size_t header;
    size_t len = 0;
    if ((enc >> 6) != 3) {  // a string
      if ((enc >> 6) == 0) {
        header = 1;
        len = enc & 0x3f;
      } else if ((enc >> 6) == 1) {
        if (avail < 2) return false;
        header = 2;
        len = (size_t{enc & 0x3fu} << 8) | data[pos + 1];
      } else {
        if (avail < 5) return false;
        header = 5;
        len = (size_t{data[pos + 1]} << 24) | (size_t{data[pos + 2]} << 16) |
              (size_t{data[pos + 3]} << 8) | data[pos + 4];
      }
      if (avail - header < len) return false;
      value = ListpackValue::Str(
          std::string_view(reinterpret_cast<const char*>(data + pos + header), len));
    } else {
      int int_bytes;
      switch (enc) {
        case 0xC0: int_bytes = 2; break;
        case 0xD0: int_bytes = 4; break;
        case 0xE0: int_bytes = 8; break;
        case 0xF0: int_bytes = 3; break;
        case 0xFE: int_bytes = 1; break;
        default:
          if (enc < 0xF1 || enc > 0xFD) return false;
          int_bytes = 0;
      }
      header = 1;
      len = static_cast<size_t>(int_bytes);
      if (avail - header < len) return false;
      int64_t v = int_bytes == 0 ? (enc & 0x0f) - 1
                                 : SignExtend(LoadLE(data + pos + 1, int_bytes), int_bytes);
      value = ListpackValue::Int(v);
    }
    pos += header + len;
    prev_size = pos - start;
    last = start;
    ++count;
    if (!on_entry(value)) return false;
  }
  if (pos != size - 1) return false;
  // zltail names the last entry; an empty ziplist's need only stay inside it (as Redis checks).
  if (count > 0 ? zltail != last : zltail > size - 1) return false;
  if (zllen != 0xFFFF && zllen != count) return false;
  return true;
}

}  // namespace dashkv
