#include "core/rdb_encoding.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "core/base/parse_int.h"
#include "core/lzf.h"
#include "core/numbers.h"  // Int64ToString

namespace dashkv {

namespace {

constexpr uint8_t kLen6 = 0;
constexpr uint8_t kLen14 = 1;
constexpr uint8_t kLen32 = 0x80;
constexpr uint8_t kLen64 = 0x81;
constexpr uint8_t kEncInt8 = 0;
constexpr uint8_t kEncInt16 = 1;
constexpr uint8_t kEncInt32 = 2;
constexpr uint8_t kEncLzf = 3;

void AppendLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

absl::Status Corrupt(const std::string& what) { return absl::DataLossError(what); }

absl::Status ShortRead() { return Corrupt("unexpected end of input"); }

// Appends the integer encoding of `s` and returns true when Redis would use one for it.
bool AppendIntEncoded(std::string* out, std::string_view s) {
  if (s.empty() || s.size() > 11) return false;
  std::optional<int64_t> v = ParseInt64(s);
  if (!v) return false;
  if (*v >= INT8_MIN && *v <= INT8_MAX) {
    out->push_back(static_cast<char>(0xC0 | kEncInt8));
    AppendLE(out, static_cast<uint64_t>(*v), 1);
  } else if (*v >= INT16_MIN && *v <= INT16_MAX) {
    out->push_back(static_cast<char>(0xC0 | kEncInt16));
    AppendLE(out, static_cast<uint64_t>(*v), 2);
  } else if (*v >= INT32_MIN && *v <= INT32_MAX) {
    out->push_back(static_cast<char>(0xC0 | kEncInt32));
    AppendLE(out, static_cast<uint64_t>(*v), 4);
  } else {
    return false;
  }
  return true;
}

// Appends the LZF encoding of `s` and returns true when it saves at least 4 bytes (and, with
// `probe` > 0, its first `probe` bytes shrank: LzfCompress).
bool AppendLzf(std::string* out, std::string_view s, size_t probe) {
  // Strings up to kKept bytes (every string a snapshot compresses: longer ones go raw, in
  // pieces) compress into a buffer each thread keeps, so compressing allocates nothing.
  constexpr size_t kKept = 64 * 1024;
  thread_local std::unique_ptr<char[]> kept;
  std::unique_ptr<char[]> own;
  char* buf;
  if (s.size() - 4 <= kKept) {
    if (kept == nullptr) kept.reset(new char[kKept]);
    buf = kept.get();
  } else {
    own.reset(new char[s.size() - 4]);
    buf = own.get();
  }
  size_t clen = LzfCompress(s, buf, s.size() - 4, probe);
  if (clen == 0) return false;
  out->push_back(static_cast<char>(0xC0 | kEncLzf));
  AppendRdbLen(out, clen);
  AppendRdbLen(out, s.size());
  out->append(buf, clen);
  return true;
}

}  // namespace

void AppendRdbLen(std::string* out, uint64_t len) {
  if (len < (1 << 6)) {
    out->push_back(static_cast<char>((kLen6 << 6) | len));
  } else if (len < (1 << 14)) {
    out->push_back(static_cast<char>((kLen14 << 6) | (len >> 8)));
    out->push_back(static_cast<char>(len & 0xff));
  } else if (len <= std::numeric_limits<uint32_t>::max()) {
    out->push_back(static_cast<char>(kLen32));
    for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(len >> shift));
  } else {
    out->push_back(static_cast<char>(kLen64));
    for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(len >> shift));
  }
}

void AppendRdbString(std::string* out, std::string_view s, RdbLzf lzf) {
  if (AppendIntEncoded(out, s)) return;
  if (lzf != RdbLzf::kOff && s.size() > kRdbMinCompressLen &&
      AppendLzf(out, s, lzf == RdbLzf::kProbe ? kRdbLzfProbeBytes : 0)) {
    return;
  }
  AppendRdbLen(out, s.size());
  out->append(s);
}

void AppendRdbBinaryDouble(std::string* out, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  AppendLE(out, bits, 8);
}

absl::StatusOr<uint8_t> RdbReader::ReadByte() {
  if (remaining() < 1) return ShortRead();
  return static_cast<uint8_t>(in_[pos_++]);
}

absl::StatusOr<RdbReader::Len> RdbReader::ReadLenOrEncoding() {
  absl::StatusOr<uint8_t> first = ReadByte();
  if (!first.ok()) return first.status();
  uint8_t kind = *first >> 6;
  if (kind == 3) return Len{static_cast<uint64_t>(*first & 0x3f), true};
  if (kind == kLen6) return Len{static_cast<uint64_t>(*first & 0x3f), false};
  if (kind == kLen14) {
    absl::StatusOr<uint8_t> low = ReadByte();
    if (!low.ok()) return low.status();
    return Len{(static_cast<uint64_t>(*first & 0x3f) << 8) | *low, false};
  }
  int bytes;
  if (*first == kLen32) {
    bytes = 4;
  } else if (*first == kLen64) {
    bytes = 8;
  } else {
    return Corrupt("unknown length encoding");
  }
  if (remaining() < static_cast<size_t>(bytes)) return ShortRead();
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(in_[pos_++]);
  return Len{v, false};
}

absl::StatusOr<uint64_t> RdbReader::ReadLen() {
  absl::StatusOr<Len> len = ReadLenOrEncoding();
  if (!len.ok()) return len.status();
  // A special-encoding byte (11xxxxxx) reads as its low 6 bits, as in Redis's rdbLoadLen.
  return len->value;
}

absl::StatusOr<std::string> RdbReader::ReadString() {
  absl::StatusOr<Len> len = ReadLenOrEncoding();
  if (!len.ok()) return len.status();
  if (!len->encoded) {
    if (len->value > remaining()) return ShortRead();
    std::string s(in_.substr(pos_, len->value));
    pos_ += len->value;
    return s;
  }
  if (len->value == kEncLzf) return ReadLzfString();
  if (len->value > kEncInt32) return Corrupt("unknown string encoding");
  int bytes = 1 << len->value;  // 1, 2 or 4
  if (remaining() < static_cast<size_t>(bytes)) return ShortRead();
  uint32_t raw = 0;
  for (int i = 0; i < bytes; ++i) raw |= uint32_t{static_cast<uint8_t>(in_[pos_++])} << (8 * i);
  int64_t v = bytes == 1   ? static_cast<int8_t>(raw)
              : bytes == 2 ? static_cast<int16_t>(raw)
                           : static_cast<int32_t>(raw);
  return Int64ToString(v);
}

absl::StatusOr<std::string> RdbReader::ReadLzfString() {
  absl::StatusOr<uint64_t> clen = ReadLen();
  if (!clen.ok()) return clen.status();
  absl::StatusOr<uint64_t> len = ReadLen();
  if (!len.ok()) return len.status();
  if (*clen > remaining()) return ShortRead();
  std::string_view compressed = in_.substr(pos_, *clen);
  pos_ += *clen;
  // Reserve only what the stream really decompresses to: a claimed size it does not produce
  // is refused before any memory is reserved for it.
  if (*len != 0 && LzfDecompressedSize(compressed) != *len) {
    return Corrupt("Invalid LZF compressed string");
  }
  std::string out(*len, '\0');
  if (*len != 0 && LzfDecompress(compressed, out.data(), out.size()) != *len) {
    return Corrupt("Invalid LZF compressed string");
  }
  return out;
}

absl::StatusOr<double> RdbReader::ReadBinaryDouble() {
  if (remaining() < 8) return ShortRead();
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits |= uint64_t{static_cast<uint8_t>(in_[pos_++])} << (8 * i);
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

absl::StatusOr<double> RdbReader::ReadTextDouble() {
  absl::StatusOr<uint8_t> len = ReadByte();
  if (!len.ok()) return len.status();
  switch (*len) {
    case 253:
      return std::numeric_limits<double>::quiet_NaN();
    case 254:
      return std::numeric_limits<double>::infinity();
    case 255:
      return -std::numeric_limits<double>::infinity();
  }
  if (*len > remaining()) return ShortRead();
  // Read as Redis reads it (sscanf "%lg"): the leading number, after optional whitespace.
  char buf[256];
  std::memcpy(buf, in_.data() + pos_, *len);
  buf[*len] = '\0';
  pos_ += *len;
  char* end = nullptr;
  double v = std::strtod(buf, &end);
  if (end == buf) return Corrupt("invalid double");
  return v;
}

}  // namespace dashkv
