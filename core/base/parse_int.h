// Decimal integer parsing with Redis's string2ll rules, shared by core/ (argument values,
// integer encodings), io/ (RESP length lines) and server/ (command arguments).
// Thread: pure functions, safe from any thread.
//
// Performance: header-only so that the RESP parser's length lines and CompactObj's integer
// encoding inline it; one pass, no overflow test per digit (the length bound makes the
// accumulator unable to overflow).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace dashkv {

namespace detail {

// Returns whether `c` is '0'..'9'.
inline bool IsDecimalDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// Returns the value of the digits [p, end), or nullopt if one is not a digit.
// REQUIRES: end - p <= 19 (at most 19 digits cannot overflow a uint64_t).
inline std::optional<uint64_t> AccumulateDigits(const char* p, const char* end) {
  uint64_t v = 0;
  for (; p != end; ++p) {
    const unsigned d = static_cast<unsigned char>(*p - '0');
    if (d > 9) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

}  // namespace detail

// Longest decimal int64 with its sign ("-9223372036854775808").
inline constexpr size_t kInt64MaxChars = 20;

// Parses a decimal int64 the way Redis's string2ll does: an optional '-', then digits; no '+',
// no spaces, no leading zeros except the string "0" itself ("-0", "01" and "-01" are refused),
// overflow refused. Accepts the whole int64 range. Returns nullopt if `s` is not such a number.
inline std::optional<int64_t> ParseInt64(std::string_view s) {
  const char* p = s.data();
  const char* const end = p + s.size();
  const bool negative = p != end && *p == '-';
  p += negative;
  // The first digit must be 1-9: refuses "", "-", "-0", leading zeros, '+' and spaces.
  if (p == end || static_cast<unsigned char>(*p - '1') > 8) {
    if (s.size() == 1 && s[0] == '0') return 0;
    return std::nullopt;
  }
  // 19 digits hold every int64 magnitude; 20 digits starting with 1-9 exceed INT64_MAX.
  if (end - p > 19) return std::nullopt;
  const std::optional<uint64_t> mag = detail::AccumulateDigits(p, end);
  if (!mag) return std::nullopt;
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(INT64_MAX);
  if (negative) {
    if (*mag > kMaxPositive + 1) return std::nullopt;
    return static_cast<int64_t>(0 - *mag);  // modular negation: exact for INT64_MIN too
  }
  if (*mag > kMaxPositive) return std::nullopt;
  return static_cast<int64_t>(*mag);
}

// Parses an unsigned decimal uint64 for SCAN-family cursors: digits only (no sign, no spaces),
// overflow refused. Unlike ParseInt64 it accepts leading zeros ("007" is 7), as Redis parses
// cursors with strtoull. Returns nullopt if `s` is not such a number.
inline std::optional<uint64_t> ParseUint64(std::string_view s) {
  const char* p = s.data();
  const char* const end = p + s.size();
  if (p == end) return std::nullopt;
  while (end - p > 1 && *p == '0') ++p;  // leading zeros do not count towards the length bound
  if (end - p < 20) return detail::AccumulateDigits(p, end);
  if (end - p > 20) return std::nullopt;
  // 20 digits: the first 19 cannot overflow; the last step might.
  const std::optional<uint64_t> head = detail::AccumulateDigits(p, end - 1);
  if (!head || !detail::IsDecimalDigit(end[-1])) return std::nullopt;
  const unsigned last = static_cast<unsigned>(end[-1] - '0');
  if (*head > (UINT64_MAX - last) / 10) return std::nullopt;
  return *head * 10 + last;
}

}  // namespace dashkv
