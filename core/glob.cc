#include "core/glob.h"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace dashkv {

namespace {

// Redis caps the nesting of '*' at 1000 (each non-final star run costs one level).
constexpr int kMaxStarRuns = 1000;

// Lowercases ASCII letters only: the "C" locale's tolower.
inline int FoldAscii(int c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

inline bool SameByte(char a, char b, bool nocase) {
  if (a == b) return true;
  return nocase && FoldAscii(static_cast<unsigned char>(a)) ==
                       FoldAscii(static_cast<unsigned char>(b));
}

struct TokenMatch {
  bool matched;
  size_t next;  // pattern index just past the token
};

// Matches byte `c` against the bracket set starting at pattern[pos] == '['.
TokenMatch MatchSet(std::string_view p, size_t pos, char c, bool nocase) {
  const size_t m = p.size();
  size_t i = pos + 1;
  const bool negate = i < m && p[i] == '^';
  if (negate) ++i;
  bool matched = false;
  while (i < m) {
    const char ch = p[i];
    if (ch == '\\' && i + 1 < m) {  // escaped byte: always case-sensitive, as in Redis
      matched |= p[i + 1] == c;
      i += 2;
    } else if (ch == ']') {
      ++i;
      break;
    } else if (i + 2 < m && p[i + 1] == '-') {
      // Bounds compare as signed chars (Redis reads them through `int` from `char`).
      int lo = static_cast<signed char>(ch);
      int hi = static_cast<signed char>(p[i + 2]);
      int x = static_cast<signed char>(c);
      if (lo > hi) std::swap(lo, hi);
      if (nocase) {
        lo = FoldAscii(lo);
        hi = FoldAscii(hi);
        x = FoldAscii(x);
      }
      matched |= x >= lo && x <= hi;
      i += 3;
    } else {
      matched |= SameByte(ch, c, nocase);
      ++i;
    }
  }
  return {matched != negate, i};
}

// Matches byte `c` against the single-byte token at pattern[pos] (anything but '*').
inline TokenMatch MatchToken(std::string_view p, size_t pos, char c, bool nocase) {
  switch (p[pos]) {
    case '?':
      return {true, pos + 1};
    case '[':
      return MatchSet(p, pos, c, nocase);
    case '\\':
      if (pos + 1 < p.size()) return {SameByte(p[pos + 1], c, nocase), pos + 2};
      return {SameByte('\\', c, nocase), pos + 1};
    default:
      return {SameByte(p[pos], c, nocase), pos + 1};
  }
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view subject, GlobCase glob_case) {
  if (subject.empty()) return pattern.empty();
  const bool nocase = glob_case == GlobCase::kNoCase;
  const size_t m = pattern.size();
  const size_t n = subject.size();
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t pi = 0, si = 0;
  size_t resume_p = kNone;  // pattern index right after the last star run seen
  size_t resume_s = 0;      // subject index that star run currently extends to
  int star_runs = 0;

  while (si < n) {
    if (pi < m && pattern[pi] == '*') {
      while (pi < m && pattern[pi] == '*') ++pi;
      if (pi == m) return true;  // a final star run swallows the rest
      if (++star_runs > kMaxStarRuns) return false;
      resume_p = pi;
      resume_s = si;
      continue;
    }
    if (pi < m) {
      TokenMatch t = MatchToken(pattern, pi, subject[si], nocase);
      if (t.matched) {
        pi = t.next;
        ++si;
        continue;
      }
    }
    if (resume_p == kNone) return false;
    // Let the last star run absorb one more byte and retry the tokens after it.
    pi = resume_p;
    si = ++resume_s;
  }
  while (pi < m && pattern[pi] == '*') ++pi;
  return pi == m;
}

bool IsPlainPattern(std::string_view pattern) {
  for (char c : pattern) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') return false;
  }
  return true;
}

}  // namespace dashkv
