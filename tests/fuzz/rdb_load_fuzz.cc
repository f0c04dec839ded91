// libFuzzer target: an RDB file, read as LoadRdbFile reads it but without shards: the input is
// written to a memfd, RdbFileReader walks its records (64-byte reads, so a record often spans
// refills) and every entry's value is decoded by ReadRdbValue with the default config's
// thresholds and must use up its bytes, as ApplyBatch requires. The checksum is not compared
// (rdbchecksum no): the fuzzer would not get past it otherwise.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/logging.h"
#include "server/config.h"
#include "server/persistence/rdb_file_reader.h"
#include "server/persistence/value_loader.h"

namespace dashkv {
namespace {

const ValueLimits& Limits() {
  static const ValueLimits limits = ValueLimits::From(Config());
  return limits;
}

// Returns the path of a memory file holding `data` (one file, rewritten for every input).
std::string WriteInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("rdb_load_fuzz", MFD_CLOEXEC);
  CHECK(fd >= 0);
  CHECK_EQ(ftruncate(fd, 0), 0);
  CHECK_EQ(pwrite(fd, data, size, 0), static_cast<ssize_t>(size));
  return "/proc/self/fd/" + std::to_string(fd);
}

void Load(const std::string& path) {
  RdbFileReader::Options opts;
  opts.verify_checksum = false;
  opts.block_size = 64;
  absl::StatusOr<std::unique_ptr<RdbFileReader>> reader = RdbFileReader::Open(path, opts);
  if (!reader.ok()) return;
  for (;;) {
    absl::StatusOr<RdbRecord> rec = (*reader)->Next();
    if (!rec.ok() || rec->kind == RdbRecordKind::kEnd) return;
    if (rec->kind != RdbRecordKind::kEntry) continue;
    RdbReader value_reader(rec->value);
    absl::StatusOr<CompactObj> value = ReadRdbValue(rec->type, value_reader, Limits());
    if (!value.ok() && !IsEmptyValue(value.status())) return;
    if (value.ok() && value_reader.remaining() != 0) return;
  }
}

}  // namespace
}  // namespace dashkv

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dashkv::Load(dashkv::WriteInput(data, size));
  return 0;
}
