// RdbFileWriter: chunks of several shards land in the file with every entry contiguous, after
// the header, followed by the EOF opcode and the CRC64 of everything before it; a failed or
// aborted save leaves no file; stale temporary files of dead processes are removed; strings a
// shard left uncompressed are encoded before they are written.
#include "server/persistence/rdb_file_writer.h"

#include <absl/synchronization/notification.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/crc64.h"
#include "core/rdb_encoding.h"
#include "io/engine.h"

namespace dashkv {
namespace {

namespace fs = std::filesystem;

class RdbFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rdb_writer_test_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    io_.Start();
  }
  void TearDown() override {
    io_.Stop();
    io_.Join();
    fs::remove_all(dir_);
  }

  std::shared_ptr<RdbFileWriter> Create(unsigned shards, bool checksum = true) {
    RdbFileWriter::Options o;
    o.dir = dir_.string();
    o.filename = "dump.rdb";
    o.num_shards = shards;
    o.checksum = checksum;
    auto w = RdbFileWriter::Create(&io_, o, [this](absl::Status st) {
      status_ = st;
      done_.Notify();
    });
    EXPECT_TRUE(w.ok()) << w.status();
    return *w;
  }
  std::string ReadDump() {
    std::ifstream in(dir_ / "dump.rdb", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  size_t FileCount() {
    return size_t(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  static std::string Trailer(std::string_view body, bool checksum = true) {
    std::string all(body);
    all.push_back(char(0xFF));
    uint64_t crc = checksum ? Crc64(0, all) : 0;
    for (int i = 0; i < 8; ++i) all.push_back(char((crc >> (8 * i)) & 0xFF));
    return all;
  }

  fs::path dir_;
  io::Engine io_{7, io::EngineOptions{.spin_us = 0}};
  absl::Notification done_;
  absl::Status status_;
};

TEST_F(RdbFileWriterTest, EntriesStayContiguousAcrossShards) {
  auto w = Create(2);
  // Shard 0 starts an entry that spans two chunks; shard 1's chunk must wait for its end.
  w->Append(0, "a1", {}, /*entry_end=*/false);
  w->Append(1, "b1", {}, true);
  w->WriteHeader("HDR");  // chunks that came first wait for the header
  w->Append(0, "a2", {}, true);
  w->Append(1, "b2", {}, false);
  w->Append(0, "a3", {}, true);
  w->Append(1, "b3", {}, true);
  w->ShardDone(0);
  w->ShardDone(1);
  done_.WaitForNotification();
  ASSERT_TRUE(status_.ok()) << status_;
  EXPECT_EQ(ReadDump(), Trailer("HDRa1a2b1b2b3a3"));
  EXPECT_EQ(FileCount(), 1u);  // the temporary file was renamed
  EXPECT_EQ(w->in_flight(), 0u);
}

TEST_F(RdbFileWriterTest, WrittenChunksGoBackToTheirShardAsSpares) {
  auto w = Create(2);
  std::string bytes, none;
  std::vector<LzfSpan> lzf;
  EXPECT_FALSE(w->TakeSpare(0, &bytes, &lzf));
  std::string chunk(100'000, 'a');
  const char* const storage = chunk.data();
  w->WriteHeader("HDR");
  w->Append(0, std::move(chunk), {}, true);
  w->Append(0, std::string(3 << 20, 'b'), {}, true);  // too big to keep
  w->ShardDone(0);
  w->ShardDone(1);
  done_.WaitForNotification();
  ASSERT_TRUE(status_.ok()) << status_;
  EXPECT_FALSE(w->TakeSpare(1, &none, &lzf));  // shard 1 sent nothing
  ASSERT_TRUE(w->TakeSpare(0, &bytes, &lzf));
  EXPECT_TRUE(bytes.empty());
  EXPECT_EQ(bytes.data(), storage);  // the same block, not a copy
  EXPECT_GE(bytes.capacity(), 100'000u);
  EXPECT_FALSE(w->TakeSpare(0, &none, &lzf));
}

// A snapshot under load hands strings over raw with their spans; the writer encodes each one
// as AppendRdbString would (LZF where it pays) before the bytes reach the file.
TEST_F(RdbFileWriterTest, DeferredStringsAreEncodedBeforeWriting) {
  auto w = Create(1);
  w->WriteHeader("H");
  const std::string zs(100, 'z');
  const std::string mixed = "abcdefghijklmnopqrstuvwxyz";  // LZF does not pay: raw with length
  std::string raw = "k" + zs + "-" + mixed + "v";
  w->Append(0, raw, {LzfSpan{1, zs.size()}, LzfSpan{2 + zs.size(), mixed.size()}}, true);
  w->ShardDone(0);
  done_.WaitForNotification();
  ASSERT_TRUE(status_.ok()) << status_;
  std::string expect = "Hk";
  AppendRdbString(&expect, zs, /*compress=*/true);
  expect += "-";
  AppendRdbString(&expect, mixed, /*compress=*/true);
  expect += "v";
  EXPECT_EQ(ReadDump(), Trailer(expect));
  EXPECT_LT(expect.size(), raw.size());  // the 100 z's were compressed
  EXPECT_EQ(w->in_flight(), 0u);
}

// The writer probes (RdbLzf::kProbe): a string whose first bytes are random goes raw even when
// its tail would have paid for a whole attempt; one that compresses is compressed as before.
TEST_F(RdbFileWriterTest, DeferredStringsWithARandomHeadAreNotCompressed) {
  auto w = Create(1);
  w->WriteHeader("H");
  std::mt19937 rng(11);
  std::string head(kRdbLzfProbeBytes, '\0');
  for (char& c : head) c = static_cast<char>(rng());
  const std::string random_head = head + std::string(1000, 'y');
  const std::string run(1000, 'x');
  const std::string raw = random_head + run;
  w->Append(0, raw, {LzfSpan{0, random_head.size()}, LzfSpan{random_head.size(), run.size()}},
            true);
  w->ShardDone(0);
  done_.WaitForNotification();
  ASSERT_TRUE(status_.ok()) << status_;
  std::string expect = "H";
  AppendRdbString(&expect, random_head, /*compress=*/false);
  AppendRdbString(&expect, run, /*compress=*/true);
  EXPECT_EQ(ReadDump(), Trailer(expect));
  EXPECT_LT(expect.size(), 1 + random_head.size() + 100);  // the run was compressed
}

// With O_DIRECT the bytes go out in aligned blocks through a staging buffer and the padding of
// the last one is cut off: the file is byte for byte what buffered writes give, for contents
// that end inside a block and cross several staging buffers, with chunks bigger than a buffer.
TEST_F(RdbFileWriterTest, DirectAndBufferedWritesGiveTheSameFile) {
  std::mt19937 rng(5);
  std::vector<std::string> chunks;
  std::string body = "REDIS0010";
  size_t sizes[] = {1, 4095, 4096, 4097, RdbFileWriter::kDirectBufferBytes - 7,
                    RdbFileWriter::kDirectBufferBytes, 3 * RdbFileWriter::kDirectBufferBytes + 5,
                    12345};
  for (size_t n : sizes) {
    std::string c(n, '\0');
    for (char& ch : c) ch = static_cast<char>(rng());
    body += c;
    chunks.push_back(std::move(c));
  }
  const std::string expect = Trailer(body);
  ASSERT_NE(expect.size() % RdbFileWriter::kDirectAlign, 0u);
  for (bool direct_io : {true, false}) {
    SCOPED_TRACE(direct_io ? "direct" : "buffered");
    RdbFileWriter::Options o;
    o.dir = dir_.string();
    o.filename = "dump.rdb";
    o.direct_io = direct_io;
    absl::Notification done;
    absl::Status status;
    auto created = RdbFileWriter::Create(&io_, o, [&](absl::Status st) {
      status = st;
      done.Notify();
    });
    ASSERT_TRUE(created.ok()) << created.status();
    std::shared_ptr<RdbFileWriter> w = *created;
    struct statfs fs_info {};
    ASSERT_EQ(statfs(dir_.c_str(), &fs_info), 0);
    // ext4 takes O_DIRECT; other file systems may refuse it and get buffered writes.
    if (!direct_io) {
      EXPECT_FALSE(w->direct());
    } else if (fs_info.f_type == EXT4_SUPER_MAGIC) {
      EXPECT_TRUE(w->direct());
    }
    w->WriteHeader("REDIS0010");
    for (const std::string& c : chunks) w->Append(0, c, {}, true);
    w->ShardDone(0);
    done.WaitForNotification();
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(w->bytes_written(), expect.size());
    std::string got = ReadDump();
    ASSERT_EQ(got.size(), expect.size());
    EXPECT_TRUE(got == expect);
    EXPECT_EQ(FileCount(), 1u);
  }
}

TEST_F(RdbFileWriterTest, ChecksumOffWritesZero) {
  auto w = Create(1, /*checksum=*/false);
  w->WriteHeader("REDIS0010");
  w->Append(0, "x", {}, true);
  w->ShardDone(0);
  done_.WaitForNotification();
  ASSERT_TRUE(status_.ok());
  EXPECT_EQ(ReadDump(), Trailer("REDIS0010x", false));
}

TEST_F(RdbFileWriterTest, NothingIsRenamedBeforeEveryShardIsDone) {
  auto w = Create(2);
  w->WriteHeader("H");
  w->ShardDone(0);
  // Give the I/O thread time to act on what it has: the file must not appear yet.
  absl::Notification flushed;
  io_.Post([&] { flushed.Notify(); });
  flushed.WaitForNotification();
  EXPECT_FALSE(fs::exists(dir_ / "dump.rdb"));
  EXPECT_FALSE(done_.HasBeenNotified());
  w->ShardDone(1);
  done_.WaitForNotification();
  EXPECT_TRUE(status_.ok());
  EXPECT_EQ(ReadDump(), Trailer("H"));
}

TEST_F(RdbFileWriterTest, AbortRemovesTheFileAndKeepsTheOldOne) {
  std::ofstream(dir_ / "dump.rdb") << "old";
  auto w = Create(2);
  w->WriteHeader("H");
  w->Append(0, "a", {}, true);
  w->Abort(absl::CancelledError("flushall"));
  EXPECT_TRUE(w->failed());
  done_.WaitForNotification();
  EXPECT_TRUE(absl::IsCancelled(status_));
  w->ShardDone(0);  // late calls after an abort are harmless
  w->ShardDone(1);
  absl::Notification flushed;
  io_.Post([&] { flushed.Notify(); });
  flushed.WaitForNotification();
  EXPECT_EQ(ReadDump(), "old");
  EXPECT_EQ(FileCount(), 1u);
}

TEST_F(RdbFileWriterTest, RenameFailureIsReportedAndCleansUp) {
  fs::create_directories(dir_ / "dump.rdb" / "inside");  // rename onto a non-empty directory
  auto w = Create(1);
  w->WriteHeader("H");
  w->ShardDone(0);
  done_.WaitForNotification();
  EXPECT_FALSE(status_.ok());
  EXPECT_NE(status_.message().find("Error moving temp DB file"), std::string::npos) << status_;
  EXPECT_EQ(FileCount(), 1u);  // only the directory: the temporary file is gone
}

TEST_F(RdbFileWriterTest, CreateFailsInAMissingDirectory) {
  RdbFileWriter::Options o;
  o.dir = (dir_ / "missing").string();
  o.filename = "dump.rdb";
  auto w = RdbFileWriter::Create(&io_, o, [](absl::Status) {});
  EXPECT_FALSE(w.ok());
}

TEST_F(RdbFileWriterTest, StaleTempFilesOfDeadProcessesAreRemoved) {
  // pid 1 is alive; a pid above the kernel's maximum is not.
  for (const char* name : {"temp-1-0.rdb", "temp-99999999-3.rdb", "temp-x-1.rdb", "dump.rdb",
                           "temp-99999999.rdb"}) {
    std::ofstream(dir_ / name) << "x";
  }
  std::ofstream(dir_ / ("temp-" + std::to_string(getpid()) + "-0.rdb")) << "x";
  EXPECT_EQ(RdbFileWriter::RemoveStaleTempFiles(dir_.string()), 2u);
  EXPECT_TRUE(fs::exists(dir_ / "temp-1-0.rdb"));
  EXPECT_FALSE(fs::exists(dir_ / "temp-99999999-3.rdb"));
  EXPECT_TRUE(fs::exists(dir_ / "temp-x-1.rdb"));
  EXPECT_TRUE(fs::exists(dir_ / "dump.rdb"));
  EXPECT_TRUE(fs::exists(dir_ / "temp-99999999.rdb"));  // Redis's name: not ours to remove
}

}  // namespace
}  // namespace dashkv
