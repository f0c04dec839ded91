// RdbFileReader: walks an RDB file (versions 1..10, everything Redis 7.0 loads) record by record
// through a buffered read, checking its structure and its CRC64 as it goes, without building any
// value: a key's value is handed over as its raw RDB bytes, for ReadRdbValue
// (value_loader.h) to decode later on the shard that will own it.
// Thread: an RdbFileReader belongs to its caller; it blocks on file reads (not for engine threads).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dashkv {

// Design
//   The file is read in blocks (Options::block_size, 4 MiB) into one buffer. A record is parsed
//   in place; when it runs past the buffered bytes, the unconsumed tail (from the record's first
//   byte) moves to the front and the next block is read behind it, so a record is always
//   contiguous. The buffer grows only for a record larger than itself (a big value must be
//   contiguous for its decoder anyway) and shrinks back afterwards.
//   Values are not built: a "skip" parse walks the structure of the value's type (string
//   headers incl. LZF, element and node counts, binary and text doubles, stream groups) to find
//   where it ends. Every length is checked against the bytes left in the file before anything
//   is buffered for it, so a hostile length costs nothing. Keys and AUX/function strings are
//   decoded (RdbReader), the value bytes are not: LZF payloads and listpacks are checked by
//   ReadRdbValue.
//   The CRC64 runs over the consumed bytes a buffer at a time (before bytes are dropped from
//   the buffer, and at EOF up to the 0xFF opcode).
//   Errors are offsets as redis-check-rdb prints them: where the read that failed began.
//   Record kinds follow Redis 7.0's loader: AUX, FUNCTION (7.0-rc form, rewritten to the
//   FUNCTION2 payload "#!<engine> name=<name>\n<code>" as Redis does), FUNCTION2, SELECTDB,
//   RESIZEDB, EXPIRETIME(_MS), IDLE, FREQ, key/value entries, EOF. MODULE_AUX and module values
//   are refused (Unimplemented, naming the module); streams are skipped (their structure is
//   known), so the caller decides.

// Returns the name redis-check-rdb gives RDB value type `type` ("quicklist-v2"), or "unknown".
std::string_view RdbTypeName(int type);

// What a record is.
enum class RdbRecordKind : uint8_t {
  kEntry,     // a key and its value
  kAux,       // an AUX field (also collected: aux())
  kResizeDb,  // RESIZEDB's size hints for the selected database
  kFunction,  // a function library (FUNCTION or FUNCTION2)
  kEnd,       // the EOF opcode, checksum checked
};

// One record of the file. Views point into the reader and stay valid until the next Next().
struct RdbRecord {
  RdbRecordKind kind = RdbRecordKind::kEnd;
  uint64_t offset = 0;        // file offset of the record's first byte (its first opcode)
  unsigned db = 0;            // kEntry, kResizeDb: the database selected at that point
  std::string_view key;       // kEntry: the key; kAux: the field name
  std::string_view value;     // kEntry: raw value bytes (after the key); kAux: the field value;
                              // kFunction: the library code (FUNCTION2 payload)
  uint64_t value_offset = 0;  // kEntry: file offset of value's first byte
  uint8_t type = 0;           // kEntry: RDB value type (RdbType)
  std::optional<int64_t> expire_ms;  // kEntry: absolute deadline, ms since the epoch
  std::optional<uint64_t> idle_s;    // kEntry: IDLE (LRU idle seconds), passed along
  std::optional<uint8_t> freq;       // kEntry: FREQ (LFU counter), passed along
  uint64_t db_size = 0;              // kResizeDb
  uint64_t expires_size = 0;         // kResizeDb
};

class RdbFileReader {
 public:
  struct Options {
    unsigned num_dbs = 16;         // SELECTDB must name a database below this
    bool verify_checksum = true;   // false: the trailer is read but not compared (rdbchecksum no)
    size_t block_size = 4 << 20;   // bytes per read(2)
  };

  // Opens `path` and reads its header. Errors: NotFound (no such file), other errno statuses,
  // FailedPrecondition "Wrong signature trying to load DB from file" / "Can't handle RDB format
  // version N" (as Redis's texts), DataLoss for a file shorter than its header.
  static absl::StatusOr<std::unique_ptr<RdbFileReader>> Open(const std::string& path,
                                                             const Options& options);
  ~RdbFileReader();
  RdbFileReader(const RdbFileReader&) = delete;
  RdbFileReader& operator=(const RdbFileReader&) = delete;

  // Returns the next record. After kEnd, or after an error, it must not be called again.
  // Errors: DataLoss "Short read or corrupt RDB at offset N (key 'k', type T): reason" (a cut or
  // malformed structure), DataLoss "Wrong RDB checksum expected: (x) but got (y). Aborting now."
  // (Redis's text: x computed, y stored), FailedPrecondition for a database index out of range
  // (Redis's "FATAL: Data file was created with ..." text), Unimplemented for module data.
  // May block (file reads).
  absl::StatusOr<RdbRecord> Next();

  int version() const { return version_; }
  uint64_t file_size() const { return file_size_; }
  // Returns the number of bytes consumed so far (the offset of the next record).
  uint64_t offset() const { return buf_offset_ + pos_; }
  // The AUX fields read so far, in file order.
  const std::vector<std::pair<std::string, std::string>>& aux() const { return aux_; }
  // After kEnd: whether the file's checksum was 0 ("saved with checksum disabled"; version >= 5).
  bool checksum_disabled() const { return checksum_disabled_; }

 private:
  RdbFileReader(int fd, uint64_t file_size, const Options& options);

  struct StringExtent {
    size_t begin;    // record-relative offset of the string's header
    size_t data;     // record-relative offset of its bytes (raw strings)
    uint64_t len;    // raw length
    bool raw;        // false: integer or LZF encoded (decode through RdbReader)
  };

  absl::Status ReadHeader();
  // Buffer access. Need() makes `n` bytes from pos_ available, reading blocks; false with error_
  // set when the file ends first.
  bool Need(uint64_t n) {
    return end_ - pos_ >= n || Fill(n);
  }
  bool Fill(uint64_t n);
  bool ReadU8(uint8_t* v);
  bool ReadLenOrEncoding(uint64_t* v, bool* encoded);
  bool ReadLen(uint64_t* v);
  bool Skip(uint64_t n);
  // Reads a count of items that each take at least `min_bytes`, refusing one the rest of the
  // file cannot hold.
  bool ReadCount(uint64_t* n, uint64_t min_bytes);
  bool SkipString(StringExtent* out = nullptr);
  bool SkipTextDouble();
  bool SkipValue(uint8_t type);
  bool SkipStream(uint8_t type);
  // Decodes the string at `e` into a view (raw strings: into the buffer; others: into `scratch`).
  bool DecodeString(const StringExtent& e, std::string* scratch, std::string_view* out);
  std::string_view Rel(size_t rel, size_t len) const {
    return std::string_view(buf_.get() + begin_ + rel, len);
  }
  size_t RelPos() const { return pos_ - begin_; }

  // Error helpers: they set error_ (the first error only) and return false. The message names
  // the offset and, inside an entry, the key and type.
  bool Fail(absl::StatusCode code, const std::string& reason);
  bool Corrupt(const std::string& reason) { return Fail(absl::StatusCode::kDataLoss, reason); }
  bool ShortRead() { return Corrupt("Unexpected EOF reading RDB file"); }
  absl::StatusOr<RdbRecord> ReadEntry(uint8_t type, RdbRecord rec);
  absl::StatusOr<RdbRecord> ReadFunction(uint8_t opcode, RdbRecord rec);
  absl::StatusOr<RdbRecord> Finish(RdbRecord rec);
  absl::Status TakeError();
  void UpdateCrc(size_t upto);

  int fd_;
  uint64_t file_size_;
  Options options_;
  int version_ = 0;

  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  uint64_t buf_offset_ = 0;  // file offset of buf_[0]
  size_t begin_ = 0;         // first byte of the current record (bytes before it may go)
  size_t pos_ = 0;           // parse position
  size_t end_ = 0;           // bytes buffered
  size_t crc_pos_ = 0;       // buf_[0, crc_pos_) are in crc_
  uint64_t crc_ = 0;

  unsigned db_ = 0;
  bool checksum_disabled_ = false;
  std::vector<std::pair<std::string, std::string>> aux_;
  std::string key_scratch_;
  std::string value_scratch_;

  // The first error, and the entry it happened in (ctx_type_ < 0: outside entries).
  absl::Status error_;
  int ctx_type_ = -1;
  bool ctx_has_key_ = false;
  StringExtent ctx_key_{};  // decoded into key_scratch_ unless raw
};

}  // namespace dashkv
