#include "server/commands/stream_read.h"

#include <cstdint>

namespace dashkv {

void SendId(io::ReplyBuilder& rb, StreamID id) { rb.SendBulk(id.ToString()); }

void SendEntry(io::ReplyBuilder& rb, const StreamValue::Entry& e) {
  rb.StartArray(2);
  SendId(rb, e.id);
  rb.StartArray(e.fields.size());
  std::string text;
  for (const ListpackValue& v : e.fields) {
    text.clear();
    v.AppendTo(&text);
    rb.SendBulk(text);
  }
}

OpResult<StreamID> ParseRangeBound(std::string_view arg, bool is_start) {
  const uint64_t missing_seq = is_start ? 0 : UINT64_MAX;
  if (arg.size() > 1 && arg[0] == '(') {
    std::optional<StreamID> id = ParseStreamID(arg.substr(1), missing_seq, /*strict=*/true);
    if (!id) return OpStatus::kStreamInvalidId;
    if (is_start ? !id->Incr() : !id->Decr()) {
      return is_start ? OpStatus::kStreamInvalidStart : OpStatus::kStreamInvalidEnd;
    }
    return *id;
  }
  std::optional<StreamID> id = ParseStreamID(arg, missing_seq, /*strict=*/false);
  if (!id) return OpStatus::kStreamInvalidId;
  return *id;
}

CopiedEntry CopyEntry(const StreamValue::Entry& e) {
  CopiedEntry c{e.id, {}};
  c.fields.reserve(e.fields.size());
  for (const ListpackValue& v : e.fields) c.fields.push_back(v.ToString());
  return c;
}

void SendCopiedEntry(io::ReplyBuilder& rb, const CopiedEntry& e) {
  rb.StartArray(2);
  SendId(rb, e.id);
  rb.StartArray(e.fields.size());
  for (const std::string& f : e.fields) rb.SendBulk(f);
}

std::vector<CopiedEntry> ReadAfter(const StreamValue& s, StreamID after, size_t count) {
  std::vector<CopiedEntry> out;
  StreamID start = after;
  if (!start.Incr()) return out;  // after the largest id: nothing can follow
  s.Range(start, StreamID::Max(), false, count,
          [&](const StreamValue::Entry& e) { out.push_back(CopyEntry(e)); });
  return out;
}

bool HasEntryAfter(const StreamValue& s, StreamID after) {
  if (s.length() == 0 || !(after < s.last_id())) return false;
  StreamID start = after;
  if (!start.Incr()) return false;
  return s.Range(start, StreamID::Max(), false, 1, [](const StreamValue::Entry&) {}) > 0;
}

void SendStreamReads(io::ReplyBuilder& rb, std::span<const std::string> keys,
                     std::span<const StreamRead> reads) {
  size_t n = 0;
  for (const StreamRead& r : reads) n += !r.entries.empty();
  if (n == 0) return rb.SendNullArray();
  rb.resp3() ? rb.StartMap(n) : rb.StartArray(n);
  for (const StreamRead& r : reads) {
    if (r.entries.empty()) continue;
    if (!rb.resp3()) rb.StartArray(2);
    rb.SendBulk(keys[r.key]);
    rb.StartArray(r.entries.size());
    for (const CopiedEntry& e : r.entries) SendCopiedEntry(rb, e);
  }
}

}  // namespace dashkv
