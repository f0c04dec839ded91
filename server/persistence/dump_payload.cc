#include "server/persistence/dump_payload.h"

#include <cstdint>

#include "core/crc64.h"
#include "core/rdb_encoding.h"

namespace dashkv {

namespace {

void AppendLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t LoadLE(std::string_view b, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(b[pos + i])} << (8 * i);
  return v;
}

}  // namespace

void AppendDumpFooter(std::string* out) {
  AppendLE(out, kRdbVersion, 2);
  AppendLE(out, Crc64(0, *out), 8);
}

std::string MakeDumpPayload(const CompactObj& value, const RdbWriteOptions& opts) {
  RdbSink sink;
  WriteRdbValue(value, opts, sink);
  std::string* out = sink.buffer();
  AppendDumpFooter(out);
  return std::move(*out);
}

bool VerifyDumpPayload(std::string_view payload) {
  if (payload.size() < kDumpFooterSize) return false;
  size_t footer = payload.size() - kDumpFooterSize;
  if (LoadLE(payload, footer, 2) > kRdbVersion) return false;
  return Crc64(0, payload.substr(0, footer + 2)) == LoadLE(payload, footer + 2, 8);
}

absl::StatusOr<CompactObj> DecodeDumpPayload(std::string_view payload, const ValueLimits& limits) {
  RdbReader reader(payload);
  return ReadRdbObject(reader, limits);
}

}  // namespace dashkv
