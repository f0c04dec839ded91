// Number parsing and formatting with Redis 7.0's exact rules: doubles for scores, long doubles
// for INCRBYFLOAT / HINCRBYFLOAT, integer formatting. Integer parsing (ParseInt64) is
// core/base/parse_int.h, shared with io/.
// Thread: pure functions, safe from any thread (the "C" locale is assumed for strtod; dashkv
// never calls setlocale for LC_NUMERIC).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/parse_int.h"

namespace dashkv {

// Longest input ParseLongDouble accepts, exclusive (Redis's MAX_LONG_DOUBLE_CHARS).
inline constexpr size_t kLongDoubleMaxChars = 5 * 1024;

// Parses a double with strtod semantics, as Redis does for scores and float arguments: accepts
// "1.5", ".5", "5.", "+1", "1e3", "inf", "-Infinity", hex floats ("0x1p3"), denormals; rejects
// the empty string, leading or trailing whitespace, trailing garbage, NaN, overflow to +-inf
// ("1e400") and underflow to zero ("1e-400"). Returns nullopt on rejection.
std::optional<double> ParseDouble(std::string_view s);

// Parses a long double with the same rules as ParseDouble (strtold), as INCRBYFLOAT does; also
// rejects inputs of kLongDoubleMaxChars bytes or more.
std::optional<long double> ParseLongDouble(std::string_view s);

// Formats `v` the way INCRBYFLOAT stores its result: fixed notation with 17 decimals ("%.17Lf"),
// trailing zeros and a trailing '.' removed, "-0" turned into "0", "inf"/"-inf" for infinities.
// Examples: 10.6L -> "10.6", 5000 -> "5000", 1e20L -> "100000000000000000000".
// REQUIRES: !isnan(v) (INCRBYFLOAT refuses to produce NaN).
std::string FormatLongDouble(long double v);

// Formats `v` as Redis 7.0 replies with doubles (ZSCORE, ZINCRBY, ...): "%.17g", except that
// infinities are "inf" / "-inf". Example: 1.1 -> "1.1000000000000001".
std::string FormatDouble(double v);

// Formats `v` with the fewest digits that round-trip (std::to_chars), "inf"/"-inf"/"nan" for
// non-finite values. Not Redis 7.0's reply format: for RESP3 and later Redis versions.
std::string FormatDoubleShortest(double v);

// Writes the decimal form of `v` to `buf` (no terminating NUL) and returns its length.
// REQUIRES: `buf` has room for kInt64MaxChars bytes.
size_t FormatInt64(int64_t v, char* buf);

// Returns the decimal form of `v`.
std::string Int64ToString(int64_t v);

}  // namespace dashkv
