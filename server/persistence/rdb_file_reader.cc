#include "server/persistence/rdb_file_reader.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/crc64.h"
#include "core/rdb_encoding.h"

namespace dashkv {

namespace {

// Debian's abseil has its own string_view: StrCat takes that one.
absl::string_view Av(std::string_view v) { return absl::string_view(v.data(), v.size()); }

// Opcodes (the byte where a value type may stand).
constexpr uint8_t kOpFunctionPreGa = 0xF6;
constexpr uint8_t kOpFunction2 = 0xF5;
constexpr uint8_t kOpModuleAux = 0xF7;
constexpr uint8_t kOpIdle = 0xF8;
constexpr uint8_t kOpFreq = 0xF9;
constexpr uint8_t kOpAux = 0xFA;
constexpr uint8_t kOpResizeDb = 0xFB;
constexpr uint8_t kOpExpireTimeMs = 0xFC;
constexpr uint8_t kOpExpireTime = 0xFD;
constexpr uint8_t kOpSelectDb = 0xFE;
constexpr uint8_t kOpEof = 0xFF;

constexpr size_t kHeaderSize = 9;  // "REDIS" + 4 version digits
constexpr size_t kMaxKeyInMessage = 128;

}  // namespace

std::string_view RdbTypeName(int type) {
  switch (type) {
    case kRdbString: return "string";
    case kRdbList: return "list-linked";
    case kRdbSet: return "set-hashtable";
    case kRdbZset: return "zset-v1";
    case kRdbHash: return "hash-hashtable";
    case kRdbZset2: return "zset-v2";
    case kRdbModule: return "module-pre-release";
    case kRdbModule2: return "module-value";
    case kRdbHashZipmap: return "hash-zipmap";
    case kRdbListZiplist: return "list-ziplist";
    case kRdbSetIntset: return "set-intset";
    case kRdbZsetZiplist: return "zset-ziplist";
    case kRdbHashZiplist: return "hash-ziplist";
    case kRdbListQuicklist: return "quicklist";
    case kRdbStreamListpacks: return "stream";
    case kRdbHashListpack: return "hash-listpack";
    case kRdbZsetListpack: return "zset-listpack";
    case kRdbListQuicklist2: return "quicklist-v2";
    case kRdbStreamListpacks2: return "stream-v2";
    default: return "unknown";
  }
}

namespace {

// Returns the name a module id carries (9 characters of a 64-symbol set in its high 54 bits,
// the first character highest; the low 10 bits are the encoding version), as Redis prints it.
std::string ModuleName(uint64_t id) {
  static constexpr char kSet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string name(9, ' ');
  id >>= 10;
  for (int j = 8; j >= 0; --j) {
    name[j] = kSet[id & 63];
    id >>= 6;
  }
  return name;
}

std::string QuoteKey(std::string_view key) {
  std::string shown = absl::CHexEscape(std::string(key.substr(0, kMaxKeyInMessage)));
  if (key.size() > kMaxKeyInMessage) shown += "...";
  return shown;
}

uint64_t LoadLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RdbFileReader>> RdbFileReader::Open(const std::string& path,
                                                                   const Options& options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("Can't open RDB file ", path));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return absl::ErrnoToStatus(err, absl::StrCat("Can't stat RDB file ", path));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<RdbFileReader> reader(
      new RdbFileReader(fd, static_cast<uint64_t>(st.st_size), options));
  if (absl::Status s = reader->ReadHeader(); !s.ok()) return s;
  return reader;
}

RdbFileReader::RdbFileReader(int fd, uint64_t file_size, const Options& options)
    : fd_(fd), file_size_(file_size), options_(options) {
  options_.block_size = std::max<size_t>(options_.block_size, 64);
}

RdbFileReader::~RdbFileReader() { ::close(fd_); }

absl::Status RdbFileReader::ReadHeader() {
  if (!Need(kHeaderSize)) return TakeError();
  const char* h = buf_.get();
  if (std::memcmp(h, "REDIS", 5) != 0) {
    return absl::FailedPreconditionError("Wrong signature trying to load DB from file");
  }
  version_ = std::atoi(std::string(h + 5, 4).c_str());  // as Redis reads it
  if (version_ < 1 || version_ > kRdbVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("Can't handle RDB format version ", version_));
  }
  pos_ = kHeaderSize;
  return absl::OkStatus();
}

void RdbFileReader::UpdateCrc(size_t upto) {
  if (upto > crc_pos_ && options_.verify_checksum) {
    crc_ = Crc64(crc_, std::string_view(buf_.get() + crc_pos_, upto - crc_pos_));
  }
  crc_pos_ = std::max(crc_pos_, upto);
}

bool RdbFileReader::Fill(uint64_t n) {
  uint64_t at = buf_offset_ + pos_;
  if (n > file_size_ - std::min(at, file_size_)) return ShortRead();
  // Drop the consumed bytes (checksummed first), keeping the current record.
  UpdateCrc(begin_);
  size_t keep = end_ - begin_;
  size_t need = (pos_ - begin_) + static_cast<size_t>(n);  // bytes from begin_ that must fit
  size_t block = options_.block_size;
  uint64_t left = file_size_ - (buf_offset_ + begin_);  // >= need
  size_t cap = cap_;
  if (cap_ < need) {
    // Doubling, so that a big record costs amortized O(size) copies.
    cap = std::max<uint64_t>(need, std::min<uint64_t>(std::max(block, cap_ * 2), left));
  } else if (cap_ > 2 * block && need <= block) {
    cap = block;  // back to one block after a big record
  }
  if (cap != cap_) {
    std::unique_ptr<char[]> fresh(new char[cap]);
    if (keep) std::memcpy(fresh.get(), buf_.get() + begin_, keep);
    buf_ = std::move(fresh);
    cap_ = cap;
  } else if (begin_ > 0 && keep) {
    std::memmove(buf_.get(), buf_.get() + begin_, keep);
  }
  crc_pos_ -= begin_;
  buf_offset_ += begin_;
  pos_ -= begin_;
  end_ = keep;
  begin_ = 0;
  while (end_ - pos_ < n) {
    ssize_t r = ::pread(fd_, buf_.get() + end_, cap_ - end_, buf_offset_ + end_);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      error_ = absl::ErrnoToStatus(err, "Error reading the RDB file");
      return false;
    }
    if (r == 0) return ShortRead();  // the file shrank under us
    end_ += static_cast<size_t>(r);
  }
  return true;
}

bool RdbFileReader::Fail(absl::StatusCode code, const std::string& reason) {
  if (!error_.ok()) return false;
  std::string where = absl::StrCat("Short read or corrupt RDB at offset ", buf_offset_ + pos_);
  if (ctx_type_ >= 0) {
    absl::StrAppend(&where, " (");
    if (ctx_has_key_) {
      std::string_view key =
          ctx_key_.raw ? Rel(ctx_key_.data, ctx_key_.len) : std::string_view(key_scratch_);
      absl::StrAppend(&where, "key '", QuoteKey(key), "', ");
    }
    absl::StrAppend(&where, "type ", ctx_type_, " (", Av(RdbTypeName(ctx_type_)), "))");
  }
  error_ = absl::Status(code, absl::StrCat(where, ": ", reason));
  return false;
}

absl::Status RdbFileReader::TakeError() {
  absl::Status s = error_;
  if (s.ok()) s = absl::InternalError("RDB reader failed without an error");
  return s;
}

bool RdbFileReader::ReadU8(uint8_t* v) {
  if (!Need(1)) return false;
  *v = static_cast<uint8_t>(buf_[pos_++]);
  return true;
}

bool RdbFileReader::ReadLenOrEncoding(uint64_t* v, bool* encoded) {
  uint8_t first = 0;
  if (!ReadU8(&first)) return false;
  *encoded = false;
  switch (first >> 6) {
    case 0:
      *v = first & 0x3f;
      return true;
    case 1: {
      uint8_t low = 0;
      if (!ReadU8(&low)) return false;
      *v = (uint64_t{first & 0x3fu} << 8) | low;
      return true;
    }
    case 3:
      *encoded = true;
      *v = first & 0x3f;
      return true;
  }
  int bytes;
  if (first == 0x80) {
    bytes = 4;
  } else if (first == 0x81) {
    bytes = 8;
  } else {
    --pos_;
    return Corrupt(absl::StrFormat("Unknown length encoding %d in rdbLoadLen()", first));
  }
  if (!Need(bytes)) return false;
  uint64_t x = 0;
  for (int i = 0; i < bytes; ++i) x = (x << 8) | static_cast<uint8_t>(buf_[pos_++]);
  *v = x;
  return true;
}

bool RdbFileReader::ReadLen(uint64_t* v) {
  bool encoded;
  return ReadLenOrEncoding(v, &encoded);  // an encoding byte reads as its low bits (as Redis)
}

bool RdbFileReader::Skip(uint64_t n) {
  if (!Need(n)) return false;
  pos_ += n;
  return true;
}

bool RdbFileReader::ReadCount(uint64_t* n, uint64_t min_bytes) {
  if (!ReadLen(n)) return false;
  uint64_t left = file_size_ - (buf_offset_ + pos_);
  if (*n > left / min_bytes) return ShortRead();
  return true;
}

bool RdbFileReader::SkipString(StringExtent* out) {
  size_t begin = RelPos();
  uint64_t len = 0;
  bool encoded = false;
  if (!ReadLenOrEncoding(&len, &encoded)) return false;
  if (!encoded) {
    if (out) *out = StringExtent{begin, RelPos(), len, true};
    return Skip(len);
  }
  if (out) *out = StringExtent{begin, 0, 0, false};
  switch (len) {
    case 0:
      return Skip(1);
    case 1:
      return Skip(2);
    case 2:
      return Skip(4);
    case 3: {
      uint64_t clen, orig_len;
      if (!ReadLen(&clen) || !ReadLen(&orig_len)) return false;
      return Skip(clen);
    }
    default:
      return Corrupt(absl::StrFormat("Unknown RDB string encoding type %d", len));
  }
}

bool RdbFileReader::DecodeString(const StringExtent& e, std::string* scratch,
                                 std::string_view* out) {
  if (e.raw) {
    *out = Rel(e.data, e.len);
    return true;
  }
  RdbReader reader(Rel(e.begin, RelPos() - e.begin));
  absl::StatusOr<std::string> s = reader.ReadString();
  if (!s.ok()) {
    pos_ = begin_ + e.begin;
    return Corrupt(std::string(s.status().message()));
  }
  *scratch = std::move(*s);
  *out = *scratch;
  return true;
}

bool RdbFileReader::SkipTextDouble() {
  uint8_t len = 0;
  if (!ReadU8(&len)) return false;
  if (len >= 253) return true;  // NaN, +inf, -inf
  return Skip(len);
}

bool RdbFileReader::SkipStream(uint8_t type) {
  uint64_t n;
  if (!ReadCount(&n, 2)) return false;
  for (uint64_t i = 0; i < n; ++i) {
    if (!SkipString() || !SkipString()) return false;  // node key (master ID), listpack
  }
  uint64_t x;
  int lens = type == kRdbStreamListpacks2 ? 8 : 3;  // length, last ID [, first, max deleted, added]
  for (int i = 0; i < lens; ++i) {
    if (!ReadLen(&x)) return false;
  }
  uint64_t groups;
  if (!ReadCount(&groups, 4)) return false;
  for (uint64_t g = 0; g < groups; ++g) {
    if (!SkipString()) return false;  // name
    int group_lens = type == kRdbStreamListpacks2 ? 3 : 2;  // last ID [, entries read]
    for (int i = 0; i < group_lens; ++i) {
      if (!ReadLen(&x)) return false;
    }
    uint64_t pel;
    if (!ReadCount(&pel, 25)) return false;
    for (uint64_t i = 0; i < pel; ++i) {
      if (!Skip(16 + 8) || !ReadLen(&x)) return false;  // ID, delivery time, delivery count
    }
    uint64_t consumers;
    if (!ReadCount(&consumers, 10)) return false;
    for (uint64_t c = 0; c < consumers; ++c) {
      uint64_t ids;
      if (!SkipString() || !Skip(8) || !ReadCount(&ids, 16) || !Skip(ids * 16)) return false;
    }
  }
  return true;
}

bool RdbFileReader::SkipValue(uint8_t type) {
  uint64_t n;
  switch (type) {
    case kRdbString:
    case kRdbHashZipmap:
    case kRdbListZiplist:
    case kRdbSetIntset:
    case kRdbZsetZiplist:
    case kRdbHashZiplist:
    case kRdbHashListpack:
    case kRdbZsetListpack:
      return SkipString();
    case kRdbList:
    case kRdbSet:
    case kRdbListQuicklist:
      if (!ReadCount(&n, 1)) return false;
      for (uint64_t i = 0; i < n; ++i) {
        if (!SkipString()) return false;
      }
      return true;
    case kRdbZset:
      if (!ReadCount(&n, 2)) return false;
      for (uint64_t i = 0; i < n; ++i) {
        if (!SkipString() || !SkipTextDouble()) return false;
      }
      return true;
    case kRdbHash:
      if (!ReadCount(&n, 2)) return false;
      for (uint64_t i = 0; i < n; ++i) {
        if (!SkipString() || !SkipString()) return false;
      }
      return true;
    case kRdbZset2:
      if (!ReadCount(&n, 9)) return false;
      for (uint64_t i = 0; i < n; ++i) {
        if (!SkipString() || !Skip(8)) return false;
      }
      return true;
    case kRdbListQuicklist2:
      if (!ReadCount(&n, 2)) return false;
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t container;
        if (!ReadLen(&container)) return false;
        if (container != kQuicklistNodePlain && container != kQuicklistNodePacked) {
          return Corrupt(absl::StrCat("Quicklist integrity check failed: container ", container));
        }
        if (!SkipString()) return false;
      }
      return true;
    case kRdbStreamListpacks:
    case kRdbStreamListpacks2:
      return SkipStream(type);
    case kRdbModule:
    case kRdbModule2: {
      uint64_t id;
      if (!ReadLen(&id)) return false;
      return Fail(absl::StatusCode::kUnimplemented,
                  absl::StrCat("The RDB file contains module data I can't load: no matching "
                               "module type '", ModuleName(id),
                               "' (dashkv does not support modules)"));
    }
    default:
      return Corrupt(absl::StrCat("Unknown RDB encoding type ", type));
  }
}

absl::StatusOr<RdbRecord> RdbFileReader::Next() {
  RdbRecord rec;
  begin_ = pos_;
  ctx_type_ = -1;
  ctx_has_key_ = false;
  rec.offset = offset();
  for (;;) {
    uint8_t op;
    if (!ReadU8(&op)) return TakeError();
    switch (op) {
      case kOpExpireTime: {
        if (!Need(4)) return TakeError();
        int32_t secs = static_cast<int32_t>(LoadLE(buf_.get() + pos_, 4));
        pos_ += 4;
        rec.expire_ms = int64_t{secs} * 1000;
        continue;
      }
      case kOpExpireTimeMs:
        if (!Need(8)) return TakeError();
        rec.expire_ms = static_cast<int64_t>(LoadLE(buf_.get() + pos_, 8));
        pos_ += 8;
        continue;
      case kOpFreq: {
        uint8_t f;
        if (!ReadU8(&f)) return TakeError();
        rec.freq = f;
        continue;
      }
      case kOpIdle: {
        uint64_t idle;
        if (!ReadLen(&idle)) return TakeError();
        rec.idle_s = idle;
        continue;
      }
      case kOpEof:
        return Finish(std::move(rec));
      case kOpSelectDb: {
        uint64_t db;
        size_t at = offset();
        if (!ReadLen(&db)) return TakeError();
        if (db >= options_.num_dbs) {
          return absl::FailedPreconditionError(absl::StrFormat(
              "FATAL: Data file was created with a Redis server configured to handle more than "
              "%d databases. Exiting (SELECTDB %d at offset %d)",
              options_.num_dbs, db, at));
        }
        db_ = static_cast<unsigned>(db);
        continue;
      }
      case kOpResizeDb:
        if (!ReadLen(&rec.db_size) || !ReadLen(&rec.expires_size)) return TakeError();
        rec.kind = RdbRecordKind::kResizeDb;
        rec.db = db_;
        return rec;
      case kOpAux: {
        StringExtent k, v;
        if (!SkipString(&k) || !SkipString(&v)) return TakeError();
        std::string_view key, value;
        if (!DecodeString(k, &key_scratch_, &key) || !DecodeString(v, &value_scratch_, &value)) {
          return TakeError();
        }
        aux_.emplace_back(std::string(key), std::string(value));
        rec.kind = RdbRecordKind::kAux;
        rec.key = aux_.back().first;
        rec.value = aux_.back().second;
        return rec;
      }
      case kOpModuleAux: {
        uint64_t id;
        if (!ReadLen(&id)) return TakeError();
        return absl::UnimplementedError(absl::StrCat(
            "The RDB file contains AUX module data I can't load: no matching module '",
            ModuleName(id), "' (dashkv does not support modules; MODULE_AUX at offset ",
            rec.offset, ")"));
      }
      case kOpFunctionPreGa:
      case kOpFunction2:
        return ReadFunction(op, std::move(rec));
      default:
        return ReadEntry(op, std::move(rec));
    }
  }
}

absl::StatusOr<RdbRecord> RdbFileReader::ReadEntry(uint8_t type, RdbRecord rec) {
  ctx_type_ = type;
  if (!IsRdbObjectType(type)) {
    --pos_;
    Corrupt(absl::StrCat("Unknown RDB encoding type ", type));
    return TakeError();
  }
  if (!SkipString(&ctx_key_)) return TakeError();
  std::string_view key;
  if (!ctx_key_.raw && !DecodeString(ctx_key_, &key_scratch_, &key)) return TakeError();
  ctx_has_key_ = true;
  size_t value_begin = RelPos();
  rec.value_offset = offset();
  if (!SkipValue(type)) return TakeError();
  rec.kind = RdbRecordKind::kEntry;
  rec.db = db_;
  rec.type = type;
  rec.key = ctx_key_.raw ? Rel(ctx_key_.data, ctx_key_.len) : std::string_view(key_scratch_);
  rec.value = Rel(value_begin, RelPos() - value_begin);
  return rec;
}

absl::StatusOr<RdbRecord> RdbFileReader::ReadFunction(uint8_t opcode, RdbRecord rec) {
  rec.kind = RdbRecordKind::kFunction;
  if (opcode == kOpFunction2) {
    StringExtent code;
    std::string_view view;
    if (!SkipString(&code) || !DecodeString(code, &value_scratch_, &view)) return TakeError();
    rec.value = view;
    return rec;
  }
  // 7.0-rc1/rc2 form: name, engine, [description], code; rewritten as FUNCTION2's payload.
  StringExtent name, engine, code;
  uint64_t has_desc;
  if (!SkipString(&name) || !SkipString(&engine) || !ReadLen(&has_desc) ||
      (has_desc && !SkipString()) || !SkipString(&code)) {
    return TakeError();
  }
  std::string n, e, c;
  std::string_view nv, ev, cv;
  if (!DecodeString(name, &n, &nv) || !DecodeString(engine, &e, &ev) ||
      !DecodeString(code, &c, &cv)) {
    return TakeError();
  }
  value_scratch_ = absl::StrCat("#!", Av(ev), " name=", Av(nv), "\n", Av(cv));
  rec.value = value_scratch_;
  return rec;
}

absl::StatusOr<RdbRecord> RdbFileReader::Finish(RdbRecord rec) {
  rec.kind = RdbRecordKind::kEnd;
  if (version_ < 5) return rec;
  UpdateCrc(pos_);  // everything up to and including the EOF opcode
  uint64_t expected = crc_;
  if (!Need(8)) return TakeError();
  uint64_t stored = LoadLE(buf_.get() + pos_, 8);
  pos_ += 8;
  if (stored == 0) {
    checksum_disabled_ = true;
  } else if (options_.verify_checksum && stored != expected) {
    return absl::DataLossError(absl::StrFormat(
        "Wrong RDB checksum expected: (%x) but got (%x). Aborting now. (RDB CRC error at offset "
        "%d)",
        expected, stored, offset()));
  }
  return rec;
}

}  // namespace dashkv
