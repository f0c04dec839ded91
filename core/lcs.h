// Longest common subsequence of two byte strings, computed the way Redis's LCS command does, so
// that the same inputs give the same subsequence and the same match ranges (several LCS of the
// same length exist; which one is reported depends on the walk back through the table).
// Thread: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dashkv {

// One run of consecutive matched bytes: a[a_start..a_end] == b[b_start..b_end] (inclusive).
struct LcsMatch {
  uint32_t a_start, a_end, b_start, b_end;
  uint32_t length() const { return a_end - a_start + 1; }
  bool operator==(const LcsMatch&) const = default;
};

struct LcsResult {
  std::string sequence;               // the common subsequence (its size is LCS's LEN)
  std::vector<LcsMatch> matches;      // runs, from the end of the strings backward
};

// Bytes of the dynamic-programming table for strings of these lengths (a 32-bit cell per pair of
// prefixes); saturates at UINT64_MAX. The caller compares it with its limit before computing.
uint64_t LcsTableBytes(size_t a_len, size_t b_len);

// Design
//  The classic table: cell (i, j) holds the LCS length of a[0..i) and b[0..j). The walk back from
//  (|a|, |b|) takes a diagonal step on equal bytes, otherwise steps up (drops a byte of a) when
//  that keeps the strictly longer LCS, else left: Redis's tie-break. Matched bytes that are
//  adjacent in both strings extend the current run; any other match closes it and opens a new
//  one. Runs shorter than min_match_len are left out of `matches` (not out of `sequence`).
// Returns the LCS of `a` and `b`, or nullopt when the table's memory cannot be allocated.
// REQUIRES: both sizes below UINT32_MAX - 1.
std::optional<LcsResult> ComputeLcs(std::string_view a, std::string_view b,
                                    uint64_t min_match_len);

}  // namespace dashkv
