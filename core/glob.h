// Glob-style pattern matching with Redis 7.0 semantics, as used by KEYS, SCAN MATCH, CONFIG GET,
// PSUBSCRIBE and friends. Thread: pure functions, safe from any thread.
//
// Design
//   Pattern syntax (byte-oriented, no UTF-8 awareness):
//     *        any sequence of bytes (runs of '*' count as one)
//     ?        any single byte
//     [abc]    one byte of the set; [^abc] one byte not in the set
//     [a-z]    a range, inclusive; reversed ranges ([z-a]) are accepted; bounds compare as
//              *signed* chars, like Redis on x86 (so [a-\xff] is the empty-ish range \xff..a)
//     \x       the byte x literally, also inside [...]; a trailing '\' is a literal '\'
//   Redis quirks kept on purpose: an unterminated '[' runs to the end of the pattern ("[ab" is
//   "[ab]"); ']' right after '[' or '[^' closes an empty set; "x-]" inside a set is a range up to
//   ']' (the set then continues); with nocase, escaped bytes inside a set compare case-sensitively;
//   an empty subject is matched only by the empty pattern (so "*" does not match ""); a pattern
//   with more than 1000 star runs before its last token never matches (Redis's recursion cap).
//   Matching is the classic single-backtrack-point scan: on a mismatch, resume right after the
//   last '*' with the subject advanced by one. Every token matches exactly one byte, so this is
//   exact, runs in O(|pattern| * |subject|) worst case and O(|pattern| + |subject|) typically,
//   uses no heap and no recursion (Redis 7.0 recurses and needed a fix against exponential
//   blow-up on patterns like "a*a*a*a*b").
#pragma once

#include <string_view>

namespace dashkv {

// Glob case handling; kNoCase folds ASCII letters only (Redis runs in the "C" locale).
enum class GlobCase { kSensitive, kNoCase };

// Returns true if `subject` matches the glob `pattern` (Redis stringmatchlen semantics).
bool GlobMatch(std::string_view pattern, std::string_view subject,
               GlobCase glob_case = GlobCase::kSensitive);

// Returns true if `pattern` has no special byte ('*', '?', '[', '\'), i.e. it matches exactly
// one string, itself: callers may then do a single exact lookup instead of a scan.
bool IsPlainPattern(std::string_view pattern);

// Returns true if `pattern` is exactly "*", the pattern KEYS/SCAN treat as "no filter" (note that
// GlobMatch("*", "") is false, as in Redis; callers that want every key must use this fast path).
inline bool IsMatchAllPattern(std::string_view pattern) { return pattern == "*"; }

}  // namespace dashkv
