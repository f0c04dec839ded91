#include "server/commands/string_ops.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dashkv {

void StoreString(CompactObj& value, std::string_view s) {
  if (s.size() <= 20) {
    if (std::optional<int64_t> v = ParseStrictInt(s)) {
      value.SetInt(*v);
      return;
    }
  }
  value.SetString(s);
}

std::string CopyString(const CompactObj& value) {
  std::string out;
  value.AppendTo(&out);
  return out;
}

OpResult<DbSlice::AddResult> FindOrAddString(DbSlice& db, std::string_view key, int64_t now_ms) {
  OpResult<DbSlice::AddResult> res = db.FindOrAdd(key, now_ms);
  if (!res) return res.status();
  if (!res->inserted && res->it->second.type() != ObjType::kString) return OpStatus::kWrongType;
  return res;
}

void SendOpError(ShardCmdContext& ctx, OpStatus status) {
  if (status == OpStatus::kInvalidExpire) return ctx.rb.SendError(InvalidExpireText(ctx.spec.name));
  ctx.SendStatus(status);
}

bool ParseExpireOption(ArgParser& parser, ExpireExtra extra, ExpireSpec* spec) {
  ExpireKind kind;
  if (parser.Check("EX")) {
    kind = ExpireKind::kEx;
  } else if (parser.Check("PX")) {
    kind = ExpireKind::kPx;
  } else if (parser.Check("EXAT")) {
    kind = ExpireKind::kExAt;
  } else if (parser.Check("PXAT")) {
    kind = ExpireKind::kPxAt;
  } else if (extra == ExpireExtra::kKeepTtl && parser.Check("KEEPTTL")) {
    kind = ExpireKind::kKeepTtl;
  } else if (extra == ExpireExtra::kPersist && parser.Check("PERSIST")) {
    kind = ExpireKind::kPersist;
  } else {
    return false;
  }
  if (spec->kind != ExpireKind::kNone && spec->kind != kind) {
    parser.SetError(OpStatus::kSyntaxError);
    return true;
  }
  spec->kind = kind;
  if (kind != ExpireKind::kKeepTtl && kind != ExpireKind::kPersist) spec->arg = parser.Next();
  return true;
}

OpResult<int64_t> ExpireDeadline(const ExpireSpec& spec, int64_t now_ms) {
  bool seconds = spec.kind == ExpireKind::kEx || spec.kind == ExpireKind::kExAt;
  bool relative = spec.kind == ExpireKind::kEx || spec.kind == ExpireKind::kPx;
  if (!seconds && !relative && spec.kind != ExpireKind::kPxAt) return int64_t{0};
  std::optional<int64_t> v = ParseStrictInt(spec.arg);
  if (!v) return OpStatus::kNotAnInteger;
  int64_t ms = *v;
  if (ms <= 0 || (seconds && ms > INT64_MAX / 1000)) return OpStatus::kInvalidExpire;
  if (seconds) ms *= 1000;
  if (relative) {
    if (ms > INT64_MAX - now_ms) return OpStatus::kInvalidExpire;
    ms += now_ms;
  }
  return ms;
}

bool ApplyExpire(DbSlice& db, PrimeIterator it, ExpireKind kind, int64_t deadline_ms,
                 int64_t now_ms) {
  if (kind == ExpireKind::kKeepTtl) return true;
  if (deadline_ms > 0) {
    if (deadline_ms <= now_ms) {
      db.Erase(it);
      return false;
    }
    db.SetExpire(it, deadline_ms);
  } else if (it->first.HasExpire()) {
    db.SetExpire(it, 0);
  }
  return true;
}

std::optional<IndexRange> NormalizeRange(int64_t start, int64_t end, int64_t total,
                                         bool reject_negative_inversion) {
  if (reject_negative_inversion && start < 0 && end < 0 && start > end) return std::nullopt;
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  if (total == 0 || start > end) return std::nullopt;
  return IndexRange{start, end};
}

bool GetBitAt(std::string_view s, uint64_t offset) {
  uint64_t byte = offset >> 3;
  if (byte >= s.size()) return false;
  return (static_cast<uint8_t>(s[byte]) >> (7 - (offset & 7))) & 1;
}

bool SetBitAt(std::string& s, uint64_t offset, bool on) {
  uint64_t byte = offset >> 3;
  if (byte >= s.size()) s.resize(byte + 1, '\0');
  uint8_t mask = uint8_t(0x80) >> (offset & 7);
  uint8_t b = static_cast<uint8_t>(s[byte]);
  bool old = (b & mask) != 0;
  s[byte] = static_cast<char>(on ? (b | mask) : (b & ~mask));
  return old;
}

namespace {

// Returns the byte at `i` with the bits outside [first, last] (bit positions) cleared.
uint8_t MaskedByte(std::string_view s, uint64_t i, uint64_t first, uint64_t last, bool invert) {
  uint8_t b = static_cast<uint8_t>(s[i]);
  if (invert) b = static_cast<uint8_t>(~b);
  if (i == first >> 3) b &= uint8_t(0xFF) >> (first & 7);
  if (i == last >> 3) b &= static_cast<uint8_t>(0xFF << (7 - (last & 7)));
  return b;
}

}  // namespace

int64_t CountBits(std::string_view s, uint64_t first, uint64_t last) {
  uint64_t fb = first >> 3, lb = last >> 3;
  int64_t n = __builtin_popcount(MaskedByte(s, fb, first, last, false));
  if (lb == fb) return n;
  n += __builtin_popcount(MaskedByte(s, lb, first, last, false));
  uint64_t i = fb + 1;
  for (; i + 8 <= lb; i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    n += __builtin_popcountll(w);
  }
  for (; i < lb; ++i) n += __builtin_popcount(static_cast<uint8_t>(s[i]));
  return n;
}

int64_t FindBit(std::string_view s, bool bit, uint64_t first, uint64_t last) {
  uint64_t fb = first >> 3, lb = last >> 3;
  const uint64_t skip_word = bit ? 0 : ~uint64_t{0};  // words that cannot hold a match
  for (uint64_t i = fb; i <= lb; ++i) {
    if (i != fb && i + 8 < lb) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (w == skip_word) {
        i += 7;
        continue;
      }
    }
    uint8_t b = MaskedByte(s, i, first, last, !bit);
    if (b != 0) return static_cast<int64_t>(i * 8 + (__builtin_clz(b) - 24));
  }
  return -1;
}

uint64_t GetBitsAt(std::string_view s, uint64_t offset, unsigned bits) {
  uint64_t v = 0;
  for (unsigned i = 0; i < bits; ++i) v = (v << 1) | (GetBitAt(s, offset + i) ? 1 : 0);
  return v;
}

void SetBitsAt(std::string& s, uint64_t offset, unsigned bits, uint64_t v) {
  for (unsigned i = 0; i < bits; ++i) {
    SetBitAt(s, offset + i, (v >> (bits - 1 - i)) & 1);
  }
}

std::optional<int64_t> FitBitfield(__int128 v, unsigned bits, bool is_signed,
                                   BitOverflow policy) {
  __int128 max = is_signed ? (__int128{1} << (bits - 1)) - 1 : (__int128{1} << bits) - 1;
  __int128 min = is_signed ? -max - 1 : 0;
  if (v >= min && v <= max) return static_cast<int64_t>(v);
  if (policy == BitOverflow::kFail) return std::nullopt;
  if (policy == BitOverflow::kSat) return static_cast<int64_t>(v > max ? max : min);
  uint64_t u = static_cast<uint64_t>(static_cast<unsigned __int128>(v));
  if (bits < 64) {
    uint64_t low = (uint64_t{1} << bits) - 1;
    bool negative = is_signed && ((u >> (bits - 1)) & 1);
    u = negative ? (u | ~low) : (u & low);
  }
  return static_cast<int64_t>(u);
}

std::optional<long double> ParseLongDoubleStrict(std::string_view s) {
  constexpr size_t kMaxChars = 5 * 1024;  // Redis's MAX_LONG_DOUBLE_CHARS
  if (s.empty() || s.size() >= kMaxChars || std::isspace(static_cast<unsigned char>(s[0]))) {
    return std::nullopt;
  }
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(v)) return std::nullopt;
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return std::nullopt;
  if (errno == EINVAL) return std::nullopt;
  return v;
}

std::string FormatLongDoubleHuman(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[5200];  // %.17Lf of the largest long double is ~4950 characters
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return "0";
  std::string_view out(buf, n);
  if (out.find('.') != std::string_view::npos) {
    while (out.back() == '0') out.remove_suffix(1);
    if (out.back() == '.') out.remove_suffix(1);
  }
  if (out == "-0") return "0";
  return std::string(out);
}

}  // namespace dashkv
