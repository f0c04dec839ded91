#include "server/persistence/value_serializer.h"

#include <string>
#include <string_view>

#include "core/base/logging.h"
#include "core/rdb_encoding.h"
#include "server/values/hash_value.h"
#include "server/values/list_value.h"
#include "server/values/set_value.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"
#include "server/values/zset_value.h"

namespace dashkv {

namespace {

// Appends one string (an element, or a whole listpack/intset blob).
void WriteString(std::string_view s, const RdbWriteOptions& opts, RdbSink& sink) {
  if (s.size() <= kRdbPieceSize) {
    sink.AppendString(s, opts.compress);
    return;
  }
  AppendRdbLen(sink.buffer(), s.size());
  for (size_t off = 0; off < s.size(); off += kRdbPieceSize) {
    sink.Append(s.substr(off, kRdbPieceSize));
    sink.MaybeFlush();
  }
}

void WriteList(const ListValue& list, const RdbWriteOptions& opts, RdbSink& sink) {
  auto write_node = [&](std::string_view listpack) {
    AppendRdbLen(sink.buffer(), kQuicklistNodePacked);
    WriteString(listpack, opts, sink);
    sink.MaybeFlush();
  };
  if (const QuickList* ql = list.quicklist()) {
    AppendRdbLen(sink.buffer(), ql->node_count());
    ql->ForEachNode(write_node);
  } else {
    AppendRdbLen(sink.buffer(), 1);
    write_node(list.listpack_bytes());
  }
}

void WriteHash(const HashValue& hash, const RdbWriteOptions& opts, RdbSink& sink) {
  if (hash.encoding() == HashValue::kListpack) {
    return WriteString(hash.listpack_bytes(), opts, sink);
  }
  AppendRdbLen(sink.buffer(), hash.size());
  hash.ForEach([&](std::string_view field, std::string_view value) {
    WriteString(field, opts, sink);
    WriteString(value, opts, sink);
    sink.MaybeFlush();
  });
}

void WriteSet(const SetValue& set, const RdbWriteOptions& opts, RdbSink& sink) {
  if (set.encoding() == SetValue::Encoding::kIntSet) {
    return WriteString(set.intset_bytes(), opts, sink);
  }
  AppendRdbLen(sink.buffer(), set.size());
  set.ForEach([&](std::string_view member) {
    WriteString(member, opts, sink);
    sink.MaybeFlush();
  });
}

void WriteZset(const ZsetValue& zset, const RdbWriteOptions& opts, RdbSink& sink) {
  if (zset.encoding() == ZsetValue::Encoding::kListpack) {
    return WriteString(zset.listpack_bytes(), opts, sink);
  }
  AppendRdbLen(sink.buffer(), zset.size());
  zset.Range(0, zset.size(), /*reverse=*/true, [&](std::string_view member, double score) {
    WriteString(member, opts, sink);
    AppendRdbBinaryDouble(sink.buffer(), score);
    sink.MaybeFlush();
  });
}

void WriteStreamId(StreamID id, RdbSink& sink) {
  AppendRdbLen(sink.buffer(), id.ms);
  AppendRdbLen(sink.buffer(), id.seq);
}

void WriteRawStreamId(StreamID id, RdbSink& sink) {
  char raw[16];
  id.EncodeBigEndian(raw);
  sink.buffer()->append(raw, sizeof(raw));
}

// 8 little-endian bytes, as Redis saves milliseconds.
void WriteMillis(int64_t ms, RdbSink& sink) {
  uint64_t v = static_cast<uint64_t>(ms);
  for (int i = 0; i < 8; ++i) sink.buffer()->push_back(static_cast<char>(v >> (8 * i)));
}

// The consumer groups of type 19: count, then per group (in name order) its name, last id,
// entries-read (-1 as the 64-bit all-ones length), its PEL (raw id, delivery time, delivery
// count) and its consumers (name, seen time, their PEL as raw ids).
void WriteStreamGroups(const StreamGroups* groups, const RdbWriteOptions& opts, RdbSink& sink) {
  if (groups == nullptr) return AppendRdbLen(sink.buffer(), 0);
  AppendRdbLen(sink.buffer(), groups->size());
  for (const auto& [name, g] : groups->groups()) {
    WriteString(name, opts, sink);
    WriteStreamId(g->last_id, sink);
    AppendRdbLen(sink.buffer(), static_cast<uint64_t>(g->entries_read));
    AppendRdbLen(sink.buffer(), g->pel.size());
    for (const auto& [id, p] : g->pel) {
      WriteRawStreamId(id, sink);
      WriteMillis(p->delivery_time_ms, sink);
      AppendRdbLen(sink.buffer(), p->delivery_count);
      sink.MaybeFlush();
    }
    AppendRdbLen(sink.buffer(), g->consumers.size());
    for (const auto& [cname, c] : g->consumers) {
      WriteString(cname, opts, sink);
      WriteMillis(c->seen_time_ms, sink);
      AppendRdbLen(sink.buffer(), c->pel.size());
      for (const auto& [id, p] : c->pel) {
        WriteRawStreamId(id, sink);
        sink.MaybeFlush();
      }
    }
  }
}

// Type 19: the nodes (16-byte big-endian master id, listpack), then length, last id, first id,
// max deleted id, entries added and the consumer groups.
void WriteStream(const StreamValue& s, const RdbWriteOptions& opts, RdbSink& sink) {
  AppendRdbLen(sink.buffer(), s.node_count());
  s.ForEachNode([&](StreamID master, std::string_view listpack) {
    char key[16];
    master.EncodeBigEndian(key);
    WriteString(std::string_view(key, sizeof(key)), opts, sink);
    WriteString(listpack, opts, sink);
    sink.MaybeFlush();
  });
  AppendRdbLen(sink.buffer(), s.length());
  WriteStreamId(s.last_id(), sink);
  WriteStreamId(s.first_id(), sink);
  WriteStreamId(s.max_deleted_id(), sink);
  AppendRdbLen(sink.buffer(), s.entries_added());
  WriteStreamGroups(s.groups(), opts, sink);
}

}  // namespace

uint8_t RdbTypeOf(const CompactObj& value) {
  switch (value.type()) {
    case ObjType::kString:
      return kRdbString;
    case ObjType::kList:
      return kRdbListQuicklist2;
    case ObjType::kHash:
      return static_cast<const HashValue*>(value.GetObject())->encoding() == HashValue::kListpack
                 ? kRdbHashListpack
                 : kRdbHash;
    case ObjType::kSet:
      return AsSet(value).encoding() == SetValue::Encoding::kIntSet ? kRdbSetIntset : kRdbSet;
    case ObjType::kZset:
      return AsZset(value).encoding() == ZsetValue::Encoding::kListpack ? kRdbZsetListpack
                                                                        : kRdbZset2;
    case ObjType::kStream:
      return kRdbStreamListpacks2;
  }
  LOG(FATAL) << "unknown value type " << static_cast<int>(value.type());
  return 0;
}

void WriteRdbValue(const CompactObj& value, const RdbWriteOptions& opts, RdbSink& sink) {
  sink.buffer()->push_back(static_cast<char>(RdbTypeOf(value)));
  WriteRdbValueBody(value, opts, sink);
  sink.MaybeFlush();
}

void WriteRdbValueBody(const CompactObj& value, const RdbWriteOptions& opts, RdbSink& sink) {
  switch (value.type()) {
    case ObjType::kString: {
      std::string scratch;
      WriteString(value.GetString(&scratch), opts, sink);
      break;
    }
    case ObjType::kList:
      WriteList(*GetList(value), opts, sink);
      break;
    case ObjType::kHash:
      WriteHash(*static_cast<const HashValue*>(value.GetObject()), opts, sink);
      break;
    case ObjType::kSet:
      WriteSet(AsSet(value), opts, sink);
      break;
    case ObjType::kZset:
      WriteZset(AsZset(value), opts, sink);
      break;
    case ObjType::kStream:
      WriteStream(AsStream(value), opts, sink);
      break;
  }
}

}  // namespace dashkv
