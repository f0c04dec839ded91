// String helpers over std::string_view. Debian 12's abseil is built with its own
// absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0), which does not convert from
// std::string_view, so absl::StrCat & co. cannot take our views; these can.
// Thread: pure functions.
#pragma once

#include <charconv>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace dashkv {

namespace detail {

// Appends one piece: strings, characters are taken as text; integers in decimal.
inline void AppendPiece(std::string* out, std::string_view s) { out->append(s); }
inline void AppendPiece(std::string* out, const char* s) { out->append(s); }
inline void AppendPiece(std::string* out, const std::string& s) { out->append(s); }
inline void AppendPiece(std::string* out, char c) { out->push_back(c); }
template <typename T>
  requires(std::integral<T> && !std::same_as<T, char> && !std::same_as<T, bool>)
void AppendPiece(std::string* out, T v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, res.ptr);
}

}  // namespace detail

// Appends every piece to `out`.
template <typename... Pieces>
void StrAppend(std::string* out, const Pieces&... pieces) {
  (detail::AppendPiece(out, pieces), ...);
}

// Returns the concatenation of the pieces (strings, string views, chars, integers).
template <typename... Pieces>
std::string StrCat(const Pieces&... pieces) {
  std::string out;
  StrAppend(&out, pieces...);
  return out;
}

inline char AsciiToLower(char c) { return c >= 'A' && c <= 'Z' ? char(c + 32) : c; }
inline char AsciiToUpper(char c) { return c >= 'a' && c <= 'z' ? char(c - 32) : c; }

// Returns whether a and b are equal ignoring ASCII case.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiToLower(a[i]) != AsciiToLower(b[i])) return false;
  }
  return true;
}

inline std::string AsciiStrToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiToLower(c);
  return out;
}

inline std::string AsciiStrToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiToUpper(c);
  return out;
}

// A NUL-terminated copy of a string view, for C functions such as strtod: on the stack when
// short, on the heap otherwise.
class NulTerminated {
 public:
  explicit NulTerminated(std::string_view s) {
    if (s.size() < sizeof(small_)) {
      for (size_t i = 0; i < s.size(); ++i) small_[i] = s[i];
      small_[s.size()] = '\0';
      ptr_ = small_;
    } else {
      large_.assign(s.data(), s.size());
      ptr_ = large_.c_str();
    }
  }
  NulTerminated(const NulTerminated&) = delete;
  NulTerminated& operator=(const NulTerminated&) = delete;
  const char* c_str() const { return ptr_; }

 private:
  char small_[128];
  std::string large_;
  const char* ptr_;
};

}  // namespace dashkv
