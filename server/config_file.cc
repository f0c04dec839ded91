#include "server/config_file.h"

#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/str_util.h"
#include "server/version.h"

namespace dashkv {

namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Returns `s` without the characters of " \t\r\n" at either end (Redis's sdstrim set).
std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSet = " \t\r\n";
  size_t b = s.find_first_not_of(kSet);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSet);
  return s.substr(b, e - b + 1);
}

// Splits `text` at '\n' (a trailing newline yields a last, empty line, as Redis's split).
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  if (text.empty()) return lines;
  size_t start = 0;
  for (;;) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(StrCat("Fatal error, can't open config file '", path,
                                      "': ", std::strerror(errno)));
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(StrCat("Fatal error, can't open config file '", path,
                                             "': ", std::strerror(EISDIR)));
  }
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigFileBytes) {
      return absl::InvalidArgumentError(StrCat("Fatal error, config file '", path,
                                               "' is larger than ", kMaxConfigFileBytes,
                                               " bytes"));
    }
  }
  return text;
}

bool HasGlobChars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// Reads one file into `out`, following its includes. `open_files`: the real paths of the files
// being read (the include chain), to refuse a loop.
absl::Status ReadInto(const std::string& path, std::vector<std::string>* open_files,
                      std::vector<ConfigLine>* out);

absl::Status ReadInclude(const ConfigLine& line, std::vector<std::string>* open_files,
                         std::vector<ConfigLine>* out) {
  if (line.args.size() != 2) {
    return absl::InvalidArgumentError(
        ConfigErrorText(line, "Bad directive or wrong number of arguments"));
  }
  if (open_files->size() >= static_cast<size_t>(kMaxIncludeDepth)) {
    return absl::InvalidArgumentError(
        ConfigErrorText(line, StrCat("include nested deeper than ", kMaxIncludeDepth)));
  }
  const std::string& pattern = line.args[1];
  if (!HasGlobChars(pattern)) return ReadInto(pattern, open_files, out);
  // As Redis 7.0: every match in glob's (sorted) order; no match reads nothing.
  glob_t matches;
  std::vector<std::string> paths;
  if (glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
  for (const std::string& p : paths) {
    if (absl::Status st = ReadInto(p, open_files, out); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status ReadInto(const std::string& path, std::vector<std::string>* open_files,
                      std::vector<ConfigLine>* out) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  char* real = realpath(path.c_str(), nullptr);
  std::string real_path = real != nullptr ? real : path;
  free(real);
  for (const std::string& open : *open_files) {
    if (open == real_path) {
      return absl::InvalidArgumentError(
          StrCat("Fatal error, config file '", path, "' includes itself (include loop)"));
    }
  }
  open_files->push_back(real_path);
  int number = 0;
  for (std::string_view raw : SplitLines(*text)) {
    ++number;
    std::string_view trimmed = Trim(raw);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    ConfigLine line;
    line.file = path;
    line.line = number;
    line.text = std::string(trimmed);
    std::optional<std::vector<std::string>> args = SplitConfigArgs(trimmed);
    if (!args) {
      return absl::InvalidArgumentError(
          ConfigErrorText(line, "Unbalanced quotes in configuration line"));
    }
    if (args->empty()) continue;  // only a NUL byte and what follows it
    line.args = std::move(*args);
    line.args[0] = AsciiStrToLower(line.args[0]);
    if (line.args[0] == "include") {
      if (absl::Status st = ReadInclude(line, open_files, out); !st.ok()) return st;
      continue;
    }
    out->push_back(std::move(line));
  }
  open_files->pop_back();
  return absl::OkStatus();
}

}  // namespace

std::optional<std::vector<std::string>> SplitConfigArgs(std::string_view line) {
  std::vector<std::string> args;
  size_t i = 0;
  const size_t n = line.size();
  auto at = [&](size_t k) { return k < n ? line[k] : '\0'; };
  for (;;) {
    while (i < n && line[i] != '\0' && IsSpace(line[i])) ++i;
    if (at(i) == '\0') return args;
    std::string current;
    bool in_double = false, in_single = false, done = false;
    while (!done) {
      const char c = at(i);
      if (in_double) {
        if (c == '\0') return std::nullopt;
        if (c == '\\' && at(i + 1) == 'x' && HexValue(at(i + 2)) >= 0 &&
            HexValue(at(i + 3)) >= 0) {
          current.push_back(static_cast<char>(HexValue(at(i + 2)) * 16 + HexValue(at(i + 3))));
          i += 3;
        } else if (c == '\\' && at(i + 1) != '\0') {
          char e = at(++i);
          switch (e) {
            case 'n': e = '\n'; break;
            case 'r': e = '\r'; break;
            case 't': e = '\t'; break;
            case 'b': e = '\b'; break;
            case 'a': e = '\a'; break;
            default: break;
          }
          current.push_back(e);
        } else if (c == '"') {
          // The closing quote must end the argument.
          if (at(i + 1) != '\0' && !IsSpace(at(i + 1))) return std::nullopt;
          done = true;
        } else {
          current.push_back(c);
        }
      } else if (in_single) {
        if (c == '\0') return std::nullopt;
        if (c == '\\' && at(i + 1) == '\'') {
          current.push_back('\'');
          ++i;
        } else if (c == '\'') {
          if (at(i + 1) != '\0' && !IsSpace(at(i + 1))) return std::nullopt;
          done = true;
        } else {
          current.push_back(c);
        }
      } else {
        switch (c) {
          case ' ': case '\n': case '\r': case '\t': case '\0': done = true; break;
          case '"': in_double = true; break;
          case '\'': in_single = true; break;
          default: current.push_back(c); break;
        }
      }
      if (at(i) != '\0') ++i;
    }
    args.push_back(std::move(current));
  }
}

std::string QuoteConfigString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out.push_back(static_cast<char>(c));
        } else {
          constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string FormatConfigMemory(int64_t bytes) {
  constexpr int64_t kKb = 1024, kMb = kKb * 1024, kGb = kMb * 1024;
  if (bytes != 0 && bytes % kGb == 0) return StrCat(bytes / kGb, "gb");
  if (bytes != 0 && bytes % kMb == 0) return StrCat(bytes / kMb, "mb");
  if (bytes != 0 && bytes % kKb == 0) return StrCat(bytes / kKb, "kb");
  return StrCat(bytes);
}

std::string ConfigErrorText(const ConfigLine& line, std::string_view reason) {
  return StrCat("\n*** FATAL CONFIG FILE ERROR (dashkv ", kDashkvVersion, ") ***\n",
                "Reading the configuration file ", line.file, ", at line ", line.line, "\n",
                ">>> '", line.text, "'\n", reason);
}

absl::StatusOr<std::vector<ConfigLine>> ReadConfigFile(const std::string& path) {
  std::vector<ConfigLine> lines;
  std::vector<std::string> open_files;
  if (absl::Status st = ReadInto(path, &open_files, &lines); !st.ok()) return st;
  return lines;
}

std::string RewriteConfigText(std::string_view old_text, const std::vector<RewriteOption>& options,
                              CanonicalNameFn canonical) {
  std::vector<std::string> lines;
  // Old line numbers of each option, first first.
  absl::flat_hash_map<std::string, std::vector<size_t>> option_lines;
  bool has_tail = false;
  for (std::string_view raw : SplitLines(old_text)) {
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#') {
      if (!has_tail && line == kRewriteSignature) has_tail = true;
      lines.emplace_back(line);
      continue;
    }
    std::optional<std::vector<std::string>> args = SplitConfigArgs(line);
    std::optional<std::string> name;
    if (args && !args->empty()) name = canonical((*args)[0]);
    if (!name) {
      lines.push_back(StrCat("# ??? ", line));
      continue;
    }
    option_lines[*name].push_back(lines.size());
    lines.emplace_back(line);
  }
  absl::flat_hash_set<std::string> processed;
  for (const RewriteOption& option : options) {
    processed.insert(option.name);
    auto it = option_lines.find(option.name);
    size_t reused = 0;
    for (const std::string& text : option.lines) {
      if (it != option_lines.end() && reused < it->second.size()) {
        lines[it->second[reused++]] = text;
        continue;
      }
      if (!option.force) continue;
      if (!has_tail) {
        lines.emplace_back(kRewriteSignature);
        has_tail = true;
      }
      lines.push_back(text);
    }
    // Old lines the new value did not reuse go.
    if (it != option_lines.end()) {
      for (size_t k = reused; k < it->second.size(); ++k) lines[it->second[k]].clear();
    }
  }
  std::string out;
  bool was_empty = false;
  for (const std::string& line : lines) {
    if (line.empty()) {
      if (was_empty) continue;
      was_empty = true;
    } else {
      was_empty = false;
    }
    StrAppend(&out, line, "\n");
  }
  return out;
}

absl::Status ReplaceFile(const std::string& path, std::string_view content) {
  auto error = [](std::string_view what) {
    return absl::InternalError(StrCat(what, std::strerror(errno)));
  };
  std::string tmp = path + ".rewrite.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return error("");
  struct stat st;
  mode_t mode = stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  size_t written = 0;
  while (written < content.size()) {
    ssize_t w = write(fd, content.data() + written, content.size() - written);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      absl::Status st_err = error("");
      close(fd);
      unlink(tmp.c_str());
      return st_err;
    }
    written += static_cast<size_t>(w);
  }
  if (fchmod(fd, mode) != 0 || fsync(fd) != 0) {
    absl::Status st_err = error("");
    close(fd);
    unlink(tmp.c_str());
    return st_err;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status st_err = error("");
    unlink(tmp.c_str());
    return st_err;
  }
  return absl::OkStatus();
}

}  // namespace dashkv
