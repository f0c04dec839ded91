// RdbBuilder: writes RDB files byte by byte for loader tests (opcodes, entries, a CRC64 trailer
// that is right, zero or wrong), from the format facts in shared/PERSISTENCE.md, not from our
// writer. Test-only.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/crc64.h"
#include "core/rdb_encoding.h"

namespace dashkv::testing {

class RdbBuilder {
 public:
  explicit RdbBuilder(int version = 10) {
    char header[10];
    std::snprintf(header, sizeof(header), "REDIS%04d", version);
    out_.append(header, 9);
  }

  RdbBuilder& Raw(std::string_view bytes) {
    out_.append(bytes);
    return *this;
  }
  RdbBuilder& Byte(uint8_t b) {
    out_.push_back(static_cast<char>(b));
    return *this;
  }
  RdbBuilder& Len(uint64_t n) {
    AppendRdbLen(&out_, n);
    return *this;
  }
  RdbBuilder& Str(std::string_view s, bool compress = false) {
    AppendRdbString(&out_, s, compress);
    return *this;
  }
  RdbBuilder& LE(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  RdbBuilder& Aux(std::string_view k, std::string_view v) { return Byte(0xFA).Str(k).Str(v); }
  RdbBuilder& SelectDb(uint64_t db) { return Byte(0xFE).Len(db); }
  RdbBuilder& ResizeDb(uint64_t size, uint64_t expires) {
    return Byte(0xFB).Len(size).Len(expires);
  }
  RdbBuilder& ExpireMs(int64_t ms) { return Byte(0xFC).LE(static_cast<uint64_t>(ms), 8); }
  RdbBuilder& ExpireSec(int32_t s) { return Byte(0xFD).LE(static_cast<uint32_t>(s), 4); }
  // A string key/value entry.
  RdbBuilder& Set(std::string_view key, std::string_view value) {
    return Byte(kRdbString).Str(key).Str(value);
  }
  // An entry whose value bytes are given (already encoded).
  RdbBuilder& Entry(uint8_t type, std::string_view key, std::string_view value_bytes) {
    return Byte(type).Str(key).Raw(value_bytes);
  }
  // Ends the file: EOF opcode and the CRC64 trailer (version >= 5).
  std::string Finish() const {
    std::string f = out_;
    f.push_back(static_cast<char>(0xFF));
    uint64_t crc = Crc64(0, f);
    for (int i = 0; i < 8; ++i) f.push_back(static_cast<char>(crc >> (8 * i)));
    return f;
  }
  std::string FinishWithCrc(uint64_t crc) const {
    std::string f = out_;
    f.push_back(static_cast<char>(0xFF));
    for (int i = 0; i < 8; ++i) f.push_back(static_cast<char>(crc >> (8 * i)));
    return f;
  }
  std::string FinishNoCrc() const { return out_ + "\xFF"; }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

// Returns the RDB encoding of `s` as a value / element.
inline std::string RdbStr(std::string_view s, bool compress = false) {
  std::string out;
  AppendRdbString(&out, s, compress);
  return out;
}
inline std::string RdbLen(uint64_t n) {
  std::string out;
  AppendRdbLen(&out, n);
  return out;
}

// Writes `bytes` to a fresh file under the test temp dir and returns its path.
inline std::string WriteTempFile(std::string_view bytes, const std::string& name = "t.rdb") {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/dashkv_" + std::to_string(::getpid()) +
                     "_" + name;
  // A new file rather than a truncated one: ext4 flushes a truncated-and-rewritten file to disk
  // on close (auto_da_alloc), which made tests that write thousands of files crawl.
  std::remove(path.c_str());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// Returns the directory of the golden RDB files (tests/data/rdb): $DASHKV_RDB_DATA, else found
// from the test binary (<source>/<build>/tests/<binary>) or from the working directory.
inline std::string RdbTestDataDir() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("DASHKV_RDB_DATA")) candidates.push_back(env);
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string dir(exe, static_cast<size_t>(n));
    for (int up = 0; up < 4 && dir.rfind('/') != std::string::npos; ++up) {
      dir = dir.substr(0, dir.rfind('/'));
      candidates.push_back(dir + "/tests/data/rdb");
    }
  }
  candidates.push_back("tests/data/rdb");
  candidates.push_back("../tests/data/rdb");
  candidates.push_back("../../tests/data/rdb");
  for (const std::string& c : candidates) {
    if (std::ifstream(c + "/golden.rdb").good()) return c;
  }
  return "tests/data/rdb";
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace dashkv::testing
