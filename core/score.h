// Sorted-set score and range syntax, as Redis 7 parses and prints it: ZADD/ZINCRBY scores,
// ZRANGEBYSCORE/ZCOUNT score ranges ("(" exclusive, "-inf"/"+inf"), ZRANGEBYLEX/ZLEXCOUNT lex
// ranges ("[" "(" "-" "+"), and the reply text of a double.
// Thread: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace dashkv {

// The parsers return nullopt on failure; the server replies with the matching OpStatus
// (kNotAFloat, kMinMaxNotFloat, kLexRangeInvalid in server/op_status.h).

// Parses a ZADD / ZINCRBY score with Redis's rules: the whole string must be a strtod number
// (decimal or hex float, "inf"/"+inf"/"-inf"/"infinity" in any case), no leading whitespace, no
// trailing bytes, not empty, not NaN, and not an overflow (1e400) or an underflow to zero (1e-400;
// denormals are fine). Returns nullopt on failure (OpStatus::kNotAFloat).
std::optional<double> ParseScore(std::string_view s);

// A score interval [min, max] with optionally exclusive ends.
struct ScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;

  // Returns true if no score can be inside (min > max, or min == max with an exclusive end).
  bool IsEmpty() const {
    return min > max || (min == max && (min_exclusive || max_exclusive));
  }
  // Returns true if `v` is not below the lower bound.
  bool AboveMin(double v) const { return min_exclusive ? v > min : v >= min; }
  // Returns true if `v` is not above the upper bound.
  bool BelowMax(double v) const { return max_exclusive ? v < max : v <= max; }
  bool Contains(double v) const { return AboveMin(v) && BelowMax(v); }
};

// Parses the min and max arguments of ZRANGEBYSCORE / ZCOUNT / ZREMRANGEBYSCORE as Redis does: an
// optional "(" prefix makes the end exclusive, the rest is read by strtod up to the end of the
// string (or an embedded NUL); leading whitespace, overflow to +-inf and an empty number (read as
// 0) are accepted, trailing bytes and NaN are not. Returns nullopt on failure (reply
// OpStatus::kMinMaxNotFloat). An inverted range is valid (and empty).
std::optional<ScoreRange> ParseScoreRange(std::string_view min, std::string_view max);

// One end of a lex range.
struct LexBound {
  enum class Kind : uint8_t { kNegInf, kPosInf, kInclusive, kExclusive };
  Kind kind = Kind::kNegInf;
  std::string value;  // only for kInclusive / kExclusive
};

// Compares member `m` with bound `b`: <0 if m sorts before b, 0 if equal to an inclusive or
// exclusive bound's value, >0 if after (-inf is below and +inf above every member). Byte order
// (memcmp, then length), as Redis's sorted-set order.
int CompareToLexBound(std::string_view m, const LexBound& b);

// A lex interval, meaningful when all scores of the set are equal.
struct LexRange {
  LexBound min;
  LexBound max;

  // Returns true if no string can be inside.
  bool IsEmpty() const;
  // Returns true if `m` is not below the lower bound.
  bool AboveMin(std::string_view m) const {
    int c = CompareToLexBound(m, min);
    return min.kind == LexBound::Kind::kExclusive ? c > 0 : c >= 0;
  }
  // Returns true if `m` is not above the upper bound.
  bool BelowMax(std::string_view m) const {
    int c = CompareToLexBound(m, max);
    return max.kind == LexBound::Kind::kExclusive ? c < 0 : c <= 0;
  }
  bool Contains(std::string_view m) const { return AboveMin(m) && BelowMax(m); }
};

// Parses one lex range item: "-" (minus infinity), "+" (plus infinity), "[x" (inclusive x), "(x"
// (exclusive x). Returns nullopt for anything else (an empty string, "-x", "+x", "x").
std::optional<LexBound> ParseLexBound(std::string_view s);

// Parses the min and max of ZRANGEBYLEX / ZLEXCOUNT / ZREMRANGEBYLEX. Returns nullopt when either
// is invalid (OpStatus::kLexRangeInvalid).
std::optional<LexRange> ParseLexRange(std::string_view min, std::string_view max);

// Upper bound on the length of a formatted score ("-2.2250738585072014e-308" is 24 bytes).
inline constexpr size_t kMaxScoreChars = 32;

// Formats `v` exactly as Redis 7.0 replies with a double: "%.17g" (1.1 -> "1.1000000000000001"),
// with "inf" / "-inf" for infinities. Writes into `buf` (>= kMaxScoreChars bytes) and returns the
// length. Locale-independent (std::to_chars).
size_t FormatScoreRedis70(double v, char* buf);
std::string FormatScoreRedis70(double v);

// Formats `v` as Redis 7.2+ does: the shortest digit string that reads back as the same double
// (1.1 -> "1.1"), laid out like "%.17g" would lay out those digits: plain notation for decimal
// exponents in [-4, 16] ("0.0001", "1e-05", "12345678901234568" vs "1e+17"), a sign, at least two
// exponent digits; "inf" / "-inf" for infinities, "-0" for negative zero. This is what issue 5
// asks for in replies. Writes into `buf` (>= kMaxScoreChars bytes) and returns the length.
size_t FormatScoreShortest(double v, char* buf);
std::string FormatScoreShortest(double v);

}  // namespace dashkv
