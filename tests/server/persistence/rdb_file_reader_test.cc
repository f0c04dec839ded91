// RdbFileReader: records of hand-made files (every opcode, every value type's extent), the
// checksum rules, Redis's refusals (signature, version, database index), cuts at every offset,
// bit flips, hostile lengths, tiny read blocks, and the golden files Redis 7.0.15 wrote
// (tests/data/rdb), including redis-check-rdb's verdicts on damaged copies (damaged.txt).
#include "server/persistence/rdb_file_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/crc64.h"
#include "core/rdb_encoding.h"
#include "tests/testing/rdb_builder.h"

namespace dashkv {
namespace {

using ::testing::HasSubstr;
using testing::RdbBuilder;
using testing::RdbLen;
using testing::RdbStr;
using testing::WriteTempFile;

// A record with its views copied.
struct Rec {
  RdbRecordKind kind;
  uint64_t offset;
  unsigned db;
  std::string key;
  std::string value;
  uint64_t value_offset;
  uint8_t type;
  std::optional<int64_t> expire_ms;
  std::optional<uint64_t> idle_s;
  std::optional<uint8_t> freq;
  uint64_t db_size;
  uint64_t expires_size;
};

struct ReadResult {
  std::vector<Rec> recs;
  absl::Status status;  // the error that stopped the walk, ok when kEnd was reached
  bool checksum_disabled = false;
  std::vector<std::pair<std::string, std::string>> aux;
};

ReadResult ReadPath(const std::string& path, RdbFileReader::Options opts = {}) {
  ReadResult out;
  auto reader = RdbFileReader::Open(path, opts);
  if (!reader.ok()) {
    out.status = reader.status();
    return out;
  }
  for (;;) {
    absl::StatusOr<RdbRecord> r = (*reader)->Next();
    if (!r.ok()) {
      out.status = r.status();
      return out;
    }
    out.recs.push_back(Rec{r->kind, r->offset, r->db, std::string(r->key), std::string(r->value),
                           r->value_offset, r->type, r->expire_ms, r->idle_s, r->freq,
                           r->db_size, r->expires_size});
    if (r->kind == RdbRecordKind::kEnd) break;
  }
  out.checksum_disabled = (*reader)->checksum_disabled();
  out.aux = (*reader)->aux();
  return out;
}

ReadResult ReadBytes(const std::string& bytes, RdbFileReader::Options opts = {}) {
  return ReadPath(WriteTempFile(bytes), opts);
}

std::vector<Rec> Entries(const ReadResult& r) {
  std::vector<Rec> out;
  for (const Rec& rec : r.recs) {
    if (rec.kind == RdbRecordKind::kEntry) out.push_back(rec);
  }
  return out;
}

// The minimal file of PERSISTENCE.md §7, byte for byte.
TEST(RdbFileReaderTest, MinimalHandMadeFile) {
  std::string body("REDIS0010\xFE\x00\xFB\x01\x00\x00\x03" "foo\x03" "bar\xFF", 24);
  uint64_t crc = Crc64(0, body);
  std::string file = body;
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<char>(crc >> (8 * i)));
  ReadResult r = ReadBytes(file);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.recs.size(), 3u);
  EXPECT_EQ(r.recs[0].kind, RdbRecordKind::kResizeDb);
  EXPECT_EQ(r.recs[0].db_size, 1u);
  EXPECT_EQ(r.recs[0].expires_size, 0u);
  EXPECT_EQ(r.recs[1].kind, RdbRecordKind::kEntry);
  EXPECT_EQ(r.recs[1].key, "foo");
  EXPECT_EQ(r.recs[1].value, "\x03" "bar");
  EXPECT_EQ(r.recs[1].type, kRdbString);
  EXPECT_EQ(r.recs[1].db, 0u);
  EXPECT_EQ(r.recs[1].offset, 14u);
  EXPECT_EQ(r.recs[1].value_offset, 19u);
  EXPECT_FALSE(r.recs[1].expire_ms.has_value());
  EXPECT_EQ(r.recs[2].kind, RdbRecordKind::kEnd);
  EXPECT_FALSE(r.checksum_disabled);
}

// A file with every opcode and an entry of every value type; the value extents must be the
// exact bytes written.
struct Sample {
  std::string file;
  std::vector<std::pair<std::string, std::string>> values;  // key -> value bytes, in order
};

Sample EveryTypeFile() {
  Sample s;
  RdbBuilder b;
  b.Aux("redis-ver", "7.0.15").Aux("redis-bits", "64").Aux("ctime", "1700000000");
  b.Aux("used-mem", "1048576").Aux("some-unknown-field", "whatever");
  b.Byte(0xF5).Str("#!lua name=lib2\nredis.register_function('f', function() return 1 end)");
  b.Byte(0xF6).Str("oldlib").Str("LUA").Len(1).Str("a description").Str("return 1");
  b.SelectDb(2).ResizeDb(20, 3);
  auto add = [&](uint8_t type, const std::string& key, const std::string& value) {
    b.Entry(type, key, value);
    s.values.emplace_back(key, value);
  };
  add(kRdbString, "str", RdbStr("hello"));
  b.ExpireMs(1234567890123);
  add(kRdbString, "int", RdbStr("12345"));
  b.ExpireSec(1700000000);
  add(kRdbString, "lzf", RdbStr(std::string(300, 'z') + "tail", true));
  b.Byte(0xF8).Len(1000);  // IDLE
  add(kRdbList, "linked", RdbLen(3) + RdbStr("a") + RdbStr("12") + RdbStr(std::string(70, 'q')));
  b.Byte(0xF9).Byte(7);  // FREQ
  add(kRdbSet, "set", RdbLen(2) + RdbStr("m1") + RdbStr("m2"));
  add(kRdbZset, "zset1", RdbLen(3) + RdbStr("a") + std::string("\x03" "1.5", 4) + RdbStr("b") +
                             std::string("\xFE", 1) + RdbStr("c") + std::string("\xFD", 1));
  add(kRdbHash, "hash", RdbLen(2) + RdbStr("f1") + RdbStr("v1") + RdbStr("f2") + RdbStr("v2"));
  std::string zset2 = RdbLen(2) + RdbStr("x");
  AppendRdbBinaryDouble(&zset2, 2.5);
  zset2 += RdbStr("y");
  AppendRdbBinaryDouble(&zset2, -1e300);
  add(kRdbZset2, "zset2", zset2);
  for (uint8_t t : {kRdbHashZipmap, kRdbListZiplist, kRdbSetIntset, kRdbZsetZiplist,
                    kRdbHashZiplist, kRdbHashListpack, kRdbZsetListpack}) {
    add(t, "blob" + std::to_string(t), RdbStr(std::string(40 + t, 'b'), true));
  }
  add(kRdbListQuicklist, "ql1", RdbLen(2) + RdbStr("zl-one") + RdbStr("zl-two"));
  add(kRdbListQuicklist2, "ql2", RdbLen(2) + RdbLen(2) + RdbStr("listpack") + RdbLen(1) +
                                     RdbStr(std::string(2000, 'p')));
  // Stream (type 19): 1 node, metadata, 1 group with a 1-entry PEL, 1 consumer.
  std::string stream = RdbLen(1) + RdbStr(std::string(16, '\0')) + RdbStr("stream-listpack");
  for (int i = 0; i < 8; ++i) stream += RdbLen(static_cast<uint64_t>(i));
  stream += RdbLen(1) + RdbStr("group") + RdbLen(1) + RdbLen(1) + RdbLen(1);
  stream += RdbLen(1) + std::string(16, 'i') + std::string(8, 't') + RdbLen(1);
  stream += RdbLen(1) + RdbStr("consumer") + std::string(8, 's') + RdbLen(1) + std::string(16, 'i');
  add(kRdbStreamListpacks2, "stream2", stream);
  // Type 15: no first/max-deleted/added, no entries-read.
  std::string stream1 = RdbLen(0) + RdbLen(0) + RdbLen(0) + RdbLen(0) + RdbLen(1) + RdbStr("g") +
                        RdbLen(0) + RdbLen(0) + RdbLen(0) + RdbLen(0);
  add(kRdbStreamListpacks, "stream1", stream1);
  b.SelectDb(0);
  add(kRdbString, std::string("bin\0key\xff", 8), RdbStr(std::string("v\0v", 3)));
  add(kRdbString, "777", RdbStr("key is int-encoded"));
  s.file = b.Finish();
  return s;
}

TEST(RdbFileReaderTest, EveryOpcodeAndType) {
  Sample s = EveryTypeFile();
  ReadResult r = ReadBytes(s.file);
  ASSERT_TRUE(r.status.ok()) << r.status;
  std::vector<Rec> entries = Entries(r);
  ASSERT_EQ(entries.size(), s.values.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].key, s.values[i].first);
    EXPECT_EQ(entries[i].value, s.values[i].second) << entries[i].key;
    // value_offset points at the value bytes in the file.
    EXPECT_EQ(s.file.substr(entries[i].value_offset, entries[i].value.size()), entries[i].value);
  }
  EXPECT_EQ(entries[0].db, 2u);
  EXPECT_EQ(entries[1].expire_ms, 1234567890123);
  EXPECT_EQ(entries[2].expire_ms, int64_t{1700000000} * 1000);
  EXPECT_EQ(entries[3].idle_s, 1000u);
  EXPECT_FALSE(entries[3].expire_ms.has_value());  // key attributes reset after each key
  EXPECT_EQ(entries[4].freq, 7);
  EXPECT_FALSE(entries[5].freq.has_value());
  EXPECT_EQ(entries.back().db, 0u);

  ASSERT_EQ(r.aux.size(), 5u);
  EXPECT_EQ(r.aux[0], (std::pair<std::string, std::string>("redis-ver", "7.0.15")));
  EXPECT_EQ(r.aux[1].second, "64");  // integer-encoded string
  std::vector<std::string> functions;
  int resize = 0;
  for (const Rec& rec : r.recs) {
    if (rec.kind == RdbRecordKind::kFunction) functions.push_back(rec.value);
    if (rec.kind == RdbRecordKind::kResizeDb) {
      ++resize;
      EXPECT_EQ(rec.db, 2u);
      EXPECT_EQ(rec.db_size, 20u);
      EXPECT_EQ(rec.expires_size, 3u);
    }
  }
  EXPECT_EQ(resize, 1);
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_THAT(functions[0], HasSubstr("name=lib2"));
  EXPECT_EQ(functions[1], "#!LUA name=oldlib\nreturn 1");  // Redis's rewrite of the rc form
}

// Tiny read blocks force every record across block boundaries and the buffer to grow for big
// values and shrink back: the records must not change.
TEST(RdbFileReaderTest, TinyBlocksGiveTheSameRecords) {
  Sample s = EveryTypeFile();
  ReadResult big = ReadBytes(s.file);
  for (size_t block : {64, 100, 333}) {
    RdbFileReader::Options opts;
    opts.block_size = block;
    ReadResult small = ReadBytes(s.file, opts);
    ASSERT_TRUE(small.status.ok()) << small.status;
    ASSERT_EQ(small.recs.size(), big.recs.size());
    for (size_t i = 0; i < big.recs.size(); ++i) {
      EXPECT_EQ(small.recs[i].key, big.recs[i].key);
      EXPECT_EQ(small.recs[i].value, big.recs[i].value);
      EXPECT_EQ(small.recs[i].offset, big.recs[i].offset);
    }
  }
}

TEST(RdbFileReaderTest, ChecksumZeroIsAccepted) {
  ReadResult r = ReadBytes(RdbBuilder().Set("k", "v").FinishWithCrc(0));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.checksum_disabled);
}

TEST(RdbFileReaderTest, WrongChecksumIsRefused) {
  RdbBuilder b;
  b.Set("k", "v");
  std::string good = b.Finish();
  uint64_t crc = Crc64(0, good.substr(0, good.size() - 8));
  ReadResult r = ReadBytes(b.FinishWithCrc(crc ^ 0xFF00000000000000ull));
  EXPECT_TRUE(absl::IsDataLoss(r.status));
  char expected[128];
  std::snprintf(expected, sizeof(expected), "Wrong RDB checksum expected: (%llx) but got (%llx)",
                static_cast<unsigned long long>(crc),
                static_cast<unsigned long long>(crc ^ 0xFF00000000000000ull));
  EXPECT_THAT(r.status.message(), HasSubstr(expected));
  // Not compared when checksums are off (rdbchecksum no).
  RdbFileReader::Options opts;
  opts.verify_checksum = false;
  EXPECT_TRUE(ReadBytes(b.FinishWithCrc(crc ^ 1), opts).status.ok());
}

TEST(RdbFileReaderTest, OldVersionsHaveNoChecksum) {
  for (int v : {1, 4}) {
    ReadResult r = ReadBytes(RdbBuilder(v).Set("k", "v").FinishNoCrc());
    ASSERT_TRUE(r.status.ok()) << v << " " << r.status;
    EXPECT_EQ(Entries(r).size(), 1u);
  }
  // Version 5 needs the trailer.
  EXPECT_TRUE(absl::IsDataLoss(ReadBytes(RdbBuilder(5).Set("k", "v").FinishNoCrc()).status));
}

TEST(RdbFileReaderTest, SignatureAndVersionRefusedWithRedisTexts) {
  ReadResult r = ReadBytes(RdbBuilder(11).Set("k", "v").Finish());
  EXPECT_EQ(r.status.message(), "Can't handle RDB format version 11");
  r = ReadBytes(RdbBuilder(0).Set("k", "v").Finish());
  EXPECT_EQ(r.status.message(), "Can't handle RDB format version 0");
  std::string wrong = RdbBuilder().Set("k", "v").Finish();
  wrong[0] = 'X';
  r = ReadBytes(wrong);
  EXPECT_EQ(r.status.message(), "Wrong signature trying to load DB from file");
  r = ReadBytes("REDI");
  EXPECT_TRUE(absl::IsDataLoss(r.status));
  EXPECT_THAT(r.status.message(), HasSubstr("Unexpected EOF"));
}

TEST(RdbFileReaderTest, MissingFileIsNotFound) {
  auto r = RdbFileReader::Open("/nonexistent/dir/dump.rdb", {});
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
}

TEST(RdbFileReaderTest, DatabaseIndexOutOfRange) {
  RdbFileReader::Options opts;
  opts.num_dbs = 16;
  EXPECT_TRUE(ReadBytes(RdbBuilder().SelectDb(15).Set("k", "v").Finish(), opts).status.ok());
  ReadResult r = ReadBytes(RdbBuilder().SelectDb(16).Set("k", "v").Finish(), opts);
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status));
  EXPECT_THAT(r.status.message(),
              HasSubstr("FATAL: Data file was created with a Redis server configured to handle "
                        "more than 16 databases. Exiting"));
}

TEST(RdbFileReaderTest, ModulesAreRefusedNamingThem) {
  // Module id of "mymodule1" encoding version 3: 9 symbols of 6 bits, then 10 bits.
  const std::string set = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  uint64_t id = 0;
  for (char c : std::string("mymodule1")) id = (id << 6) | set.find(c);
  id = (id << 10) | 3;
  ReadResult r = ReadBytes(RdbBuilder().Byte(0xF7).Len(id).Len(2).Len(1).Finish());
  EXPECT_TRUE(absl::IsUnimplemented(r.status)) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr("'mymodule1'"));
  r = ReadBytes(RdbBuilder().Set("a", "b").Byte(kRdbModule2).Str("modkey").Len(id).Finish());
  EXPECT_TRUE(absl::IsUnimplemented(r.status)) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr("key 'modkey', type 7"));
  EXPECT_THAT(r.status.message(), HasSubstr("'mymodule1'"));
}

TEST(RdbFileReaderTest, UnknownTypeByte) {
  for (uint8_t t : {8, 20, 21, 100, 0xF4}) {
    ReadResult r = ReadBytes(RdbBuilder().Set("a", "b").Entry(t, "k", RdbStr("v")).Finish());
    EXPECT_TRUE(absl::IsDataLoss(r.status)) << int{t};
    EXPECT_THAT(r.status.message(), HasSubstr("Unknown RDB encoding type " + std::to_string(t)));
  }
}

TEST(RdbFileReaderTest, BadEncodingsAreCorrupt) {
  // Length byte 0x82 (not a length encoding) and string encoding 4 (not one of 0..3).
  EXPECT_TRUE(absl::IsDataLoss(ReadBytes(RdbBuilder().Byte(0).Byte(0x82).Finish()).status));
  ReadResult r = ReadBytes(RdbBuilder().Byte(0).Str("k").Byte(0xC4).Finish());
  EXPECT_THAT(r.status.message(), HasSubstr("key 'k', type 0"));
  // An int-encoded key whose LZF stream is bad.
  r = ReadBytes(RdbBuilder().Byte(0).Byte(0xC3).Len(2).Len(10).Raw("\xFF\xFF").Str("v").Finish());
  EXPECT_TRUE(absl::IsDataLoss(r.status)) << r.status;
  // A quicklist node container that is neither PLAIN nor PACKED.
  r = ReadBytes(RdbBuilder().Entry(kRdbListQuicklist2, "q", RdbLen(1) + RdbLen(3) + RdbStr("x"))
                    .Finish());
  EXPECT_THAT(r.status.message(), HasSubstr("key 'q', type 18 (quicklist-v2)"));
}

// Declared lengths far beyond the file are refused before anything is buffered for them (this
// would abort under ASan's allocator, or exhaust memory, otherwise).
TEST(RdbFileReaderTest, HugeDeclaredLengths) {
  std::vector<std::string> files = {
      RdbBuilder().Byte(0).Str("k").Byte(0x81).Raw(std::string("\x40\0\0\0\0\0\0\0", 8)).Finish(),
      RdbBuilder().Byte(0).Str("k").Byte(0x80).Raw("\xFF\xFF\xFF\xF0").Finish(),
      RdbBuilder().Byte(0).Byte(0x81).Raw(std::string("\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 8))
          .Finish(),
      RdbBuilder().Entry(kRdbSet, "s", std::string("\x81\x00\x00\x01\x00\x00\x00\x00\x00", 9))
          .Finish(),
      RdbBuilder().Entry(kRdbZset2, "z", std::string("\x80\x10\x00\x00\x00", 5)).Finish(),
      RdbBuilder().Entry(kRdbString, "l", std::string("\xC3\x80\x7F\xFF\xFF\xFF\x05", 7)).Finish(),
      RdbBuilder().Entry(kRdbStreamListpacks2, "x", RdbLen(0) + std::string(8, '\0') +
                         std::string("\x80\x7F\xFF\xFF\xFF", 5)).Finish(),
      RdbBuilder().Aux("k", "v").Byte(0xFA).Byte(0x80).Raw("\x7F\xFF\xFF\xFF").Finish(),
  };
  for (const std::string& f : files) {
    ReadResult r = ReadBytes(f);
    EXPECT_TRUE(absl::IsDataLoss(r.status)) << r.status;
    EXPECT_THAT(r.status.message(), HasSubstr("Unexpected EOF reading RDB file"));
  }
}

// Every prefix of a valid file fails cleanly: a DataLoss error naming an offset inside the
// prefix, never a crash or a success.
TEST(RdbFileReaderTest, TruncationAtEveryOffset) {
  Sample s = EveryTypeFile();
  for (size_t cut = 0; cut < s.file.size(); ++cut) {
    RdbFileReader::Options opts;
    opts.block_size = cut % 3 == 0 ? 64 : 4096;
    ReadResult r = ReadBytes(s.file.substr(0, cut), opts);
    ASSERT_FALSE(r.status.ok()) << "cut at " << cut;
    // The module-free file fails as short, except where a cut leaves a wrong signature.
    EXPECT_TRUE(absl::IsDataLoss(r.status) || cut < 9) << cut << ": " << r.status;
  }
}

// Random damage never crashes the reader (run under ASan/UBSan).
TEST(RdbFileReaderTest, RandomBitFlips) {
  Sample s = EveryTypeFile();
  std::mt19937_64 rng(15);
  for (int i = 0; i < 2000; ++i) {
    std::string f = s.file;
    // 1..3 flips at distinct bytes (two flips of one bit would cancel out).
    std::set<size_t> at;
    while (at.size() < static_cast<size_t>(1 + i % 3)) at.insert(rng() % f.size());
    for (size_t p : at) f[p] ^= static_cast<char>(1 << (rng() % 8));
    RdbFileReader::Options opts;
    opts.block_size = i % 2 ? 64 : 4096;
    ReadResult r = ReadBytes(f, opts);
    // The CRC catches whatever the structure does not, unless the version digits now read
    // (as atoi reads them, as Redis does) as a version below 5, which has no checksum.
    int version = std::atoi(f.substr(5, 4).c_str());
    if (version >= 5) {
      EXPECT_FALSE(r.status.ok()) << "flips at " << *at.begin();
    }
  }
}

// --- Golden files written by Redis 7.0.15 (tests/data/rdb/README.md) ---

std::string Golden(const std::string& name) {
  return testing::RdbTestDataDir() + "/" + name;
}

TEST(RdbFileReaderGoldenTest, WalksRedisFiles) {
  for (const char* name : {"golden.rdb", "golden_nocompress.rdb", "golden_nochecksum.rdb"}) {
    ReadResult r = ReadPath(Golden(name));
    ASSERT_TRUE(r.status.ok()) << name << ": " << r.status;
    // 32 live keys and ttl_past (saved after its deadline).
    EXPECT_EQ(Entries(r).size(), 33u) << name;
    ASSERT_FALSE(r.aux.empty());
    EXPECT_EQ(r.aux[0], (std::pair<std::string, std::string>("redis-ver", "7.0.15")));
    EXPECT_EQ(r.checksum_disabled, std::string(name) == "golden_nochecksum.rdb") << name;
    // Tiny blocks agree.
    RdbFileReader::Options opts;
    opts.block_size = 100;
    ReadResult small = ReadPath(Golden(name), opts);
    ASSERT_TRUE(small.status.ok()) << small.status;
    ASSERT_EQ(small.recs.size(), r.recs.size());
    for (size_t i = 0; i < r.recs.size(); ++i) EXPECT_EQ(small.recs[i].value, r.recs[i].value);
  }
}

TEST(RdbFileReaderGoldenTest, StreamAndFunctionFiles) {
  ReadResult r = ReadPath(Golden("stream.rdb"));
  ASSERT_TRUE(r.status.ok()) << r.status;
  std::vector<Rec> entries = Entries(r);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].key, "events");
  EXPECT_EQ(entries[1].type, kRdbStreamListpacks2);
  r = ReadPath(Golden("function.rdb"));
  ASSERT_TRUE(r.status.ok()) << r.status;
  int functions = 0;
  for (const Rec& rec : r.recs) {
    if (rec.kind == RdbRecordKind::kFunction) {
      ++functions;
      EXPECT_THAT(rec.value, HasSubstr("#!lua name=mylib"));
    }
  }
  EXPECT_EQ(functions, 1);
}

// damaged.txt holds redis-check-rdb's verdict on damaged copies of golden.rdb (kind, position,
// exit code, its "[offset N] reason" line). We refuse every file Redis refuses, and a cut file
// at the same offset Redis names.
TEST(RdbFileReaderGoldenTest, DamagedFilesAsRedisCheckRdb) {
  std::string golden = testing::ReadWholeFile(Golden("golden.rdb"));
  ASSERT_FALSE(golden.empty());
  std::ifstream list(Golden("damaged.txt"));
  std::string line;
  int cases = 0;
  while (std::getline(list, line)) {
    std::istringstream in(line);
    std::string kind, reason;
    size_t arg;
    int rc;
    in >> kind >> arg >> rc;
    std::getline(in, reason);
    std::string f = golden;
    if (kind == "cut") {
      f = golden.substr(0, arg);
    } else if (kind == "flip") {
      f[arg] ^= 0x10;
    } else if (kind == "version") {
      f.replace(5, 4, "0011");
    }
    ReadResult r = ReadBytes(f);
    EXPECT_EQ(r.status.ok(), rc == 0) << line << " -> " << r.status;
    if (kind == "cut") {
      // "[offset N] Unexpected EOF reading RDB file" -> "... at offset N ..."
      size_t at = reason.find("[offset ");
      ASSERT_NE(at, std::string::npos) << line;
      std::string offset = reason.substr(at + 8, reason.find(']') - at - 8);
      EXPECT_THAT(std::string(r.status.message()),
                  ::testing::AnyOf(HasSubstr("at offset " + offset + " "),
                                   HasSubstr("at offset " + offset + ":")))
          << line << " -> " << r.status;
    }
    if (kind == "version") {
      EXPECT_EQ(r.status.message(), "Can't handle RDB format version 11");
    }
    ++cases;
  }
  EXPECT_GE(cases, 10);
}

}  // namespace
}  // namespace dashkv
