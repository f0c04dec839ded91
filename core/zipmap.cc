#include "core/zipmap.h"

#include <cstdint>
#include <optional>

namespace dashkv {

namespace {

constexpr uint8_t kBigLen = 254;
constexpr uint8_t kEnd = 255;

// Reads a zipmap length at *pos (advancing it): one byte below 254, else (254 or 255, as Redis
// reads it) the next four bytes, little-endian. nullopt when cut short.
std::optional<size_t> ReadLen(std::string_view b, size_t* pos) {
  if (*pos >= b.size()) return std::nullopt;
  uint8_t first = static_cast<uint8_t>(b[*pos]);
  if (first < kBigLen) {
    *pos += 1;
    return first;
  }
  if (b.size() - *pos < 5) return std::nullopt;
  size_t v = 0;
  for (int i = 0; i < 4; ++i) v |= size_t{static_cast<uint8_t>(b[*pos + 1 + i])} << (8 * i);
  *pos += 5;
  return v;
}

}  // namespace

bool ValidateZipmap(std::string_view b,
                    absl::FunctionRef<bool(std::string_view, std::string_view)> on_pair) {
  if (b.size() < 2) return false;
  const uint8_t zmlen = static_cast<uint8_t>(b[0]);
  size_t pos = 1;
  size_t count = 0;
  while (pos < b.size() && static_cast<uint8_t>(b[pos]) != kEnd) {
    std::optional<size_t> klen = ReadLen(b, &pos);
    if (!klen || b.size() - pos < *klen) return false;
    std::string_view field = b.substr(pos, *klen);
    pos += *klen;
    std::optional<size_t> vlen = ReadLen(b, &pos);
    if (!vlen || pos >= b.size()) return false;
    size_t free = static_cast<uint8_t>(b[pos++]);
    if (b.size() - pos < *vlen || b.size() - pos - *vlen < free) return false;
    std::string_view value = b.substr(pos, *vlen);
    pos += *vlen + free;
    ++count;
    if (!on_pair(field, value)) return false;
  }
  if (pos != b.size() - 1) return false;  // the end marker must be the last byte
  if (zmlen != kBigLen && zmlen != count) return false;
  return true;
}

}  // namespace dashkv
