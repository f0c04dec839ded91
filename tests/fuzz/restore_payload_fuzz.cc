// libFuzzer target: a RESTORE payload from a client, decoded as CmdRestore decodes it
// (VerifyDumpPayload, then DecodeDumpPayload with the default config's thresholds). The CRC is
// the client's to compute, so the input's last 8 bytes are replaced by the right one: the
// fuzzer then reaches the decoders instead of stopping at the checksum. A value that decodes
// must also survive DUMP and RESTORE again (what SAVE and a restart would do to it).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/logging.h"
#include "core/crc64.h"
#include "server/config.h"
#include "server/persistence/dump_payload.h"

namespace dashkv {
namespace {

const ValueLimits& Limits() {
  static const ValueLimits limits = ValueLimits::From(Config());
  return limits;
}

void FixCrc(std::string* payload) {
  size_t crc_at = payload->size() - 8;
  uint64_t crc = Crc64(0, std::string_view(*payload).substr(0, crc_at));
  for (int i = 0; i < 8; ++i) (*payload)[crc_at + i] = static_cast<char>(crc >> (8 * i));
}

}  // namespace
}  // namespace dashkv

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dashkv;
  std::string payload(reinterpret_cast<const char*>(data), size);
  if (payload.size() < kDumpFooterSize) return 0;
  FixCrc(&payload);
  if (!VerifyDumpPayload(payload)) return 0;
  absl::StatusOr<CompactObj> value = DecodeDumpPayload(payload, Limits());
  if (!value.ok()) return 0;
  for (bool compress : {false, true}) {
    RdbWriteOptions opts;
    opts.compress = compress;
    std::string again = MakeDumpPayload(*value, opts);
    absl::StatusOr<CompactObj> reloaded = DecodeDumpPayload(again, Limits());
    CHECK(reloaded.ok()) << "a restored value's DUMP does not restore: " << reloaded.status();
  }
  return 0;
}
