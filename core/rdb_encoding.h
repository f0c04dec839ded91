// RDB encoding primitives (Redis RDB version 10, as Redis 7.0 writes it): value type codes,
// the length encoding, the string encodings (integer, LZF, raw) and doubles, for writing into a
// byte buffer and for reading untrusted bytes. Knows nothing of keys, databases or values.
// Thread: pure functions; an RdbReader belongs to its caller.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dashkv {

// The RDB version dashkv writes and the newest it reads (Redis 7.0; 7.2 writes 11).
inline constexpr uint16_t kRdbVersion = 10;

// Value type codes (the byte before a key in a file, the first byte of a DUMP payload). Redis
// 7.0 knows 0..7 and 9..19; 20 and 21 arrived in 7.2.
enum RdbType : uint8_t {
  kRdbString = 0,
  kRdbList = 1,            // linked list of strings (load only)
  kRdbSet = 2,
  kRdbZset = 3,            // scores as text (load only)
  kRdbHash = 4,
  kRdbZset2 = 5,           // scores as binary doubles
  kRdbModule = 6,          // module value, pre-4.0 form
  kRdbModule2 = 7,
  kRdbHashZipmap = 9,      // load only
  kRdbListZiplist = 10,    // load only
  kRdbSetIntset = 11,
  kRdbZsetZiplist = 12,    // load only
  kRdbHashZiplist = 13,    // load only
  kRdbListQuicklist = 14,  // quicklist of ziplists (load only)
  kRdbStreamListpacks = 15,
  kRdbHashListpack = 16,
  kRdbZsetListpack = 17,
  kRdbListQuicklist2 = 18,
  kRdbStreamListpacks2 = 19,
};

// Returns whether Redis 7.0 knows `type` as a value type (0..7, 9..19).
constexpr bool IsRdbObjectType(unsigned type) { return type <= 7 || (type >= 9 && type <= 19); }

// Quicklist (type 18) node containers.
inline constexpr uint64_t kQuicklistNodePlain = 1;   // the node is one element, stored as is
inline constexpr uint64_t kQuicklistNodePacked = 2;  // the node is a listpack

// Appends `len` in the shortest length encoding: 6 bits, 14 bits (big-endian), 0x80 + 32 bits
// or 0x81 + 64 bits (big-endian).
void AppendRdbLen(std::string* out, uint64_t len);

// Redis tries LZF only on strings longer than this.
inline constexpr size_t kRdbMinCompressLen = 20;

// How AppendRdbString tries LZF on a string longer than kRdbMinCompressLen.
enum class RdbLzf : uint8_t {
  kOff,
  // Over the whole string, as Redis's rdbcompression yes (DUMP payloads: byte for byte what
  // Redis writes).
  kFull,
  // Gives up when the first kRdbLzfProbeBytes did not shrink (LzfCompress's probe), writing
  // the string raw. For snapshot files: a value of random bytes (redis-benchmark's values,
  // compressed or encrypted data) then costs a short attempt instead of a whole one; a value
  // that compresses is encoded exactly as with kFull; one whose first bytes are random and the
  // rest compressible stays raw (still valid RDB, only larger).
  kProbe,
};

// The probe of RdbLzf::kProbe. Measured (bench/core/LZF_RESULTS.md): it cuts the attempt on
// 1 KiB of random bytes from ~360 to ~115 ns (16 KiB: 2.3 us to 0.13 us), and every JSON-like,
// text-like and run-filled value of 100 B-4 KiB tried still compressed as without it.
inline constexpr size_t kRdbLzfProbeBytes = 256;

// Appends `s` as Redis's rdbSaveRawString does: an integer encoding (C0/C1/C2) when `s` is a
// canonical decimal that fits 32 bits and is at most 11 bytes long; else, when `lzf` is not
// kOff and `s` is longer than 20 bytes and LZF saves at least 4 bytes (see RdbLzf), C3 <clen>
// <len> <lzf bytes>; else <len> <bytes>.
void AppendRdbString(std::string* out, std::string_view s, RdbLzf lzf);
// Same, with `compress` meaning RdbLzf::kFull.
inline void AppendRdbString(std::string* out, std::string_view s, bool compress) {
  AppendRdbString(out, s, compress ? RdbLzf::kFull : RdbLzf::kOff);
}

// Appends `v` as 8 little-endian IEEE-754 bytes (ZSET_2 scores).
void AppendRdbBinaryDouble(std::string* out, double v);

// Reads RDB primitives from untrusted bytes. Every read checks the bytes left before it copies
// or reserves anything, so a claimed length can never make it reserve more memory than the
// input describes (an LZF string's claimed size is checked against what its stream really
// decompresses to first).
// Errors are absl::DataLoss statuses naming what was wrong.
class RdbReader {
 public:
  // REQUIRES: `in` outlives the reader.
  explicit RdbReader(std::string_view in) : in_(in) {}
  RdbReader(std::string&&) = delete;  // would dangle

  size_t offset() const { return pos_; }
  size_t remaining() const { return in_.size() - pos_; }

  absl::StatusOr<uint8_t> ReadByte();
  // Reads a length. A special string-encoding byte (11xxxxxx) reads as its low 6 bits, as
  // Redis reads it.
  absl::StatusOr<uint64_t> ReadLen();
  // Reads a string in any encoding (integer, LZF, raw).
  absl::StatusOr<std::string> ReadString();
  // Reads an 8-byte binary double (ZSET_2).
  absl::StatusOr<double> ReadBinaryDouble();
  // Reads a text double (ZSET v1): a length byte (253 NaN, 254 +inf, 255 -inf) and the text,
  // read as Redis reads it (sscanf "%lg": the leading number; no number is an error).
  absl::StatusOr<double> ReadTextDouble();

 private:
  struct Len {
    uint64_t value;
    bool encoded;  // the 11xxxxxx form: value is the string encoding (0..3)
  };
  absl::StatusOr<Len> ReadLenOrEncoding();
  absl::StatusOr<std::string> ReadLzfString();

  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace dashkv
