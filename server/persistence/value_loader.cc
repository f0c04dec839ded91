#include "server/persistence/value_loader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/int_set.h"
#include "core/listpack.h"
#include "core/ziplist.h"
#include "core/zipmap.h"
#include "server/persistence/listpack_check.h"
#include "server/config.h"
#include "server/values/stream_groups.h"
#include "server/values/stream_value.h"

namespace dashkv {

namespace {

constexpr char kEmptyValueMessage[] = "empty collection";

absl::Status Corrupt(const std::string& what) { return absl::DataLossError(what); }
absl::Status Empty() { return absl::FailedPreconditionError(kEmptyValueMessage); }

// Reads a count of items that each take at least `min_item_bytes` of input, and refuses one the
// remaining input cannot hold (before any loop or reservation is sized by it).
absl::StatusOr<uint64_t> ReadCount(RdbReader& r, size_t min_item_bytes) {
  absl::StatusOr<uint64_t> n = r.ReadLen();
  if (!n.ok()) return n.status();
  if (*n > r.remaining() / min_item_bytes) return Corrupt("length exceeds the input");
  return *n;
}

// Builds a list by appending elements.
class ListBuilder {
 public:
  explicit ListBuilder(const ValueLimits& limits) : opts_(limits.list) {}
  void Add(std::string_view v) { list_->Push(v, ListEnd::kTail, opts_); }
  void Add(ListpackValue v) {
    char buf[ListpackValue::kIntBufSize];
    Add(v.AsText(buf));
  }
  absl::StatusOr<CompactObj> Finish() {
    if (list_->empty()) return Empty();
    CompactObj obj;
    uint8_t enc = list_->encoding();
    obj.SetObject(ObjType::kList, enc, list_.release());
    return obj;
  }

 private:
  ListValue::Options opts_;
  std::unique_ptr<ListValue> list_ = std::make_unique<ListValue>();
};

// Builds a hash from field/value pairs; refuses a repeated field.
class HashBuilder {
 public:
  explicit HashBuilder(const ValueLimits& limits) : limits_(limits.hash) {}
  bool Add(std::string_view field, std::string_view value) {
    return hash_->Set(field, value, limits_, HashValue::SetMode::kIfMissing);
  }
  // Takes the elements of a flat field, value, field, value ... sequence.
  bool AddFlat(ListpackValue v) {
    if (!pending_) {
      pending_ = v.ToString();
      return true;
    }
    std::string field = std::move(*pending_);
    pending_.reset();
    char buf[ListpackValue::kIntBufSize];
    return Add(field, v.AsText(buf));
  }
  absl::StatusOr<CompactObj> Finish() {
    if (pending_) return Corrupt("hash listpack with an odd number of entries");
    if (hash_->empty()) return Empty();
    CompactObj obj;
    uint8_t enc = hash_->encoding();
    obj.SetObject(ObjType::kHash, enc, hash_.release());
    return obj;
  }

 private:
  HashValue::Limits limits_;
  std::unique_ptr<HashValue> hash_ = std::make_unique<HashValue>();
  std::optional<std::string> pending_;
};

// Builds a set; refuses a repeated member.
// The table is sized for the whole count at once (a count ReadCount bounded by the input):
// members arriving in the table's own hash order, as a dashkv DUMP writes them, would otherwise
// pile up at the low end of each smaller table on the way and make every insert probe far.
class SetBuilder {
 public:
  SetBuilder(const ValueLimits& limits, uint64_t size_hint)
      : limits_(limits.set), size_hint_(size_hint) {}
  bool Add(std::string_view m) {
    if (!set_) set_ = SetValue::Create(m, size_hint_, limits_);
    return set_->Add(m, limits_);
  }
  absl::StatusOr<CompactObj> Finish() {
    if (!set_ || set_->empty()) return Empty();
    CompactObj obj;
    obj.SetObject(ObjType::kSet, 0, set_.release());
    return obj;
  }

 private:
  SetLimits limits_;
  uint64_t size_hint_;
  std::unique_ptr<SetValue> set_;
};

// Returns the score a listpack's text entry holds, read as Redis reads it (zzlStrtod: strtod
// of at most the first 127 bytes, ignoring what follows the number), so that dashkv accepts
// exactly the listpacks Redis accepts; a NaN is then refused by the caller.
double TextScore(std::string_view text) {
  char buf[128];
  size_t n = std::min(text.size(), sizeof(buf) - 1);
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
  return std::strtod(buf, nullptr);
}

// Builds a sorted set; refuses a repeated member and a NaN score. Sized at once, as SetBuilder.
class ZsetBuilder {
 public:
  ZsetBuilder(const ValueLimits& limits, uint64_t size_hint)
      : limits_(limits.zset), zset_(ZsetValue::Create(size_hint, 0, limits.zset)) {}
  bool Add(std::string_view member, double score) {
    if (std::isnan(score)) return false;
    return zset_->Set(member, score, limits_);
  }
  // Takes the elements of a flat member, score, member, score ... sequence (score as an
  // integer or as text).
  bool AddFlat(ListpackValue v) {
    if (!pending_) {
      pending_ = v.ToString();
      return true;
    }
    std::string member = std::move(*pending_);
    pending_.reset();
    return Add(member, v.is_int() ? static_cast<double>(v.int_value()) : TextScore(v.str_value()));
  }
  absl::StatusOr<CompactObj> Finish() {
    if (pending_) return Corrupt("zset listpack with an odd number of entries");
    if (zset_->empty()) return Empty();
    CompactObj obj;
    obj.SetObject(ObjType::kZset, 0, zset_.release());
    return obj;
  }

 private:
  ZsetLimits limits_;
  std::unique_ptr<ZsetValue> zset_;
  std::optional<std::string> pending_;
};

absl::StatusOr<CompactObj> ReadStringValue(RdbReader& r) {
  absl::StatusOr<std::string> s = r.ReadString();
  if (!s.ok()) return s.status();
  return CompactObj::FromString(*s);
}

// Type 1: a count, then the elements as strings.
absl::StatusOr<CompactObj> ReadLinkedList(RdbReader& r, const ValueLimits& limits) {
  absl::StatusOr<uint64_t> n = ReadCount(r, 1);
  if (!n.ok()) return n.status();
  ListBuilder list(limits);
  for (uint64_t i = 0; i < *n; ++i) {
    absl::StatusOr<std::string> s = r.ReadString();
    if (!s.ok()) return s.status();
    list.Add(*s);
  }
  return list.Finish();
}

// Types 14 (ziplist nodes) and 18 (container + listpack or plain nodes).
absl::StatusOr<CompactObj> ReadQuicklist(RdbReader& r, const ValueLimits& limits, bool v2) {
  absl::StatusOr<uint64_t> nodes = ReadCount(r, v2 ? 2 : 1);
  if (!nodes.ok()) return nodes.status();
  ListBuilder list(limits);
  auto add = [&](ListpackValue v) {
    list.Add(v);
    return true;
  };
  for (uint64_t i = 0; i < *nodes; ++i) {
    uint64_t container = kQuicklistNodePacked;
    if (v2) {
      absl::StatusOr<uint64_t> c = r.ReadLen();
      if (!c.ok()) return c.status();
      container = *c;
      if (container != kQuicklistNodePacked && container != kQuicklistNodePlain) {
        return Corrupt("Quicklist integrity check failed");
      }
    }
    absl::StatusOr<std::string> blob = r.ReadString();
    if (!blob.ok()) return blob.status();
    // Redis refuses an empty node of either container (a plain node of "" included).
    if (blob->empty()) return Corrupt("empty quicklist node");
    if (container == kQuicklistNodePlain) {
      list.Add(*blob);
      continue;
    }
    bool ok = v2 ? CheckRdbListpack(*blob, add) : ValidateZiplist(*blob, add);
    if (!ok) return Corrupt(v2 ? "Listpack integrity check failed" : "Ziplist integrity check failed");
  }
  return list.Finish();
}

// Type 10: one ziplist of elements.
absl::StatusOr<CompactObj> ReadListZiplist(RdbReader& r, const ValueLimits& limits) {
  absl::StatusOr<std::string> blob = r.ReadString();
  if (!blob.ok()) return blob.status();
  ListBuilder list(limits);
  if (!ValidateZiplist(*blob, [&](ListpackValue v) {
        list.Add(v);
        return true;
      })) {
    return Corrupt("List ziplist integrity check failed");
  }
  return list.Finish();
}

// Type 2: a count, then the members.
absl::StatusOr<CompactObj> ReadSet(RdbReader& r, const ValueLimits& limits) {
  absl::StatusOr<uint64_t> n = ReadCount(r, 1);
  if (!n.ok()) return n.status();
  SetBuilder set(limits, *n);
  for (uint64_t i = 0; i < *n; ++i) {
    absl::StatusOr<std::string> m = r.ReadString();
    if (!m.ok()) return m.status();
    if (!set.Add(*m)) return Corrupt("Duplicate set members detected");
  }
  return set.Finish();
}

// Type 11: an intset blob (strictly ascending members).
absl::StatusOr<CompactObj> ReadIntSet(RdbReader& r, const ValueLimits& limits) {
  absl::StatusOr<std::string> blob = r.ReadString();
  if (!blob.ok()) return blob.status();
  absl::StatusOr<IntSet> ints = IntSet::FromBytes(*blob);
  if (!ints.ok()) return Corrupt("Intset integrity check failed");
  SetBuilder set(limits, ints->size());
  char buf[ListpackValue::kIntBufSize];
  for (int64_t v : *ints) {
    if (!set.Add(ListpackValue::Int(v).AsText(buf))) return Corrupt("Duplicate intset members");
  }
  return set.Finish();
}

// Type 4: a count, then field and value strings.
absl::StatusOr<CompactObj> ReadHash(RdbReader& r, const ValueLimits& limits) {
  absl::StatusOr<uint64_t> n = ReadCount(r, 2);
  if (!n.ok()) return n.status();
  HashBuilder hash(limits);
  for (uint64_t i = 0; i < *n; ++i) {
    absl::StatusOr<std::string> field = r.ReadString();
    if (!field.ok()) return field.status();
    absl::StatusOr<std::string> value = r.ReadString();
    if (!value.ok()) return value.status();
    if (!hash.Add(*field, *value)) return Corrupt("Duplicate hash fields detected");
  }
  return hash.Finish();
}

// Types 9 (zipmap), 13 (ziplist) and 16 (listpack): one blob of pairs.
absl::StatusOr<CompactObj> ReadHashBlob(RdbReader& r, const ValueLimits& limits, uint8_t type) {
  absl::StatusOr<std::string> blob = r.ReadString();
  if (!blob.ok()) return blob.status();
  HashBuilder hash(limits);
  auto add = [&](ListpackValue v) { return hash.AddFlat(v); };
  bool ok;
  if (type == kRdbHashZipmap) {
    ok = ValidateZipmap(*blob, [&](std::string_view f, std::string_view v) {
      return hash.Add(f, v);
    });
  } else if (type == kRdbHashZiplist) {
    ok = ValidateZiplist(*blob, add);
  } else {
    ok = CheckRdbListpack(*blob, add);
  }
  if (!ok) return Corrupt("Hash integrity check failed (or duplicate fields)");
  return hash.Finish();
}

// Types 3 (text scores) and 5 (binary scores): a count, then member and score.
absl::StatusOr<CompactObj> ReadZset(RdbReader& r, const ValueLimits& limits, bool binary) {
  absl::StatusOr<uint64_t> n = ReadCount(r, binary ? 9 : 2);
  if (!n.ok()) return n.status();
  ZsetBuilder zset(limits, *n);
  for (uint64_t i = 0; i < *n; ++i) {
    absl::StatusOr<std::string> member = r.ReadString();
    if (!member.ok()) return member.status();
    absl::StatusOr<double> score = binary ? r.ReadBinaryDouble() : r.ReadTextDouble();
    if (!score.ok()) return score.status();
    if (std::isnan(*score)) return Corrupt("Zset with NAN score detected");
    if (!zset.Add(*member, *score)) return Corrupt("Duplicate zset fields detected");
  }
  return zset.Finish();
}

// Types 12 (ziplist) and 17 (listpack): one blob of member/score pairs.
absl::StatusOr<CompactObj> ReadZsetBlob(RdbReader& r, const ValueLimits& limits, uint8_t type) {
  absl::StatusOr<std::string> blob = r.ReadString();
  if (!blob.ok()) return blob.status();
  ZsetBuilder zset(limits, 0);
  auto add = [&](ListpackValue v) { return zset.AddFlat(v); };
  bool ok = type == kRdbZsetZiplist ? ValidateZiplist(*blob, add)
                                    : CheckRdbListpack(*blob, add);
  if (!ok) return Corrupt("Zset integrity check failed (or duplicate members, NaN scores)");
  return zset.Finish();
}

absl::StatusOr<StreamID> ReadStreamId(RdbReader& r) {
  absl::StatusOr<uint64_t> ms = r.ReadLen();
  if (!ms.ok()) return ms.status();
  absl::StatusOr<uint64_t> seq = r.ReadLen();
  if (!seq.ok()) return seq.status();
  return StreamID{*ms, *seq};
}

// Reads `n` raw bytes.
absl::Status ReadRaw(RdbReader& r, char* out, size_t n) {
  if (r.remaining() < n) return Corrupt("unexpected end of stream group data");
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<uint8_t> b = r.ReadByte();
    if (!b.ok()) return b.status();
    out[i] = static_cast<char>(*b);
  }
  return absl::OkStatus();
}

absl::StatusOr<StreamID> ReadRawStreamId(RdbReader& r) {
  char raw[16];
  absl::Status st = ReadRaw(r, raw, sizeof(raw));
  if (!st.ok()) return st;
  return StreamID::DecodeBigEndian(raw);
}

// 8 little-endian bytes of milliseconds.
absl::StatusOr<int64_t> ReadMillis(RdbReader& r) {
  unsigned char raw[8];
  absl::Status st = ReadRaw(r, reinterpret_cast<char*>(raw), sizeof(raw));
  if (!st.ok()) return st;
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | raw[i];
  return static_cast<int64_t>(v);
}

// The consumer groups of types 15 and 19 (see WriteStreamGroups in value_serializer.cc); v1
// files have no entries-read, which is estimated as Redis does. Refuses duplicate groups,
// consumers or PEL entries, a consumer's entry missing from its group's PEL and a group PEL
// entry no consumer owns.
absl::Status ReadStreamGroups(RdbReader& r, bool v2, StreamValue& stream) {
  absl::StatusOr<uint64_t> ngroups = ReadCount(r, 4);
  if (!ngroups.ok()) return ngroups.status();
  if (*ngroups == 0) return absl::OkStatus();
  auto groups = std::make_unique<StreamGroups>();
  for (uint64_t i = 0; i < *ngroups; ++i) {
    absl::StatusOr<std::string> name = r.ReadString();
    if (!name.ok()) return name.status();
    absl::StatusOr<StreamID> last = ReadStreamId(r);
    if (!last.ok()) return last.status();
    int64_t entries_read = StreamGroup::kInvalidEntriesRead;
    if (v2) {
      absl::StatusOr<uint64_t> read = r.ReadLen();
      if (!read.ok()) return read.status();
      entries_read = static_cast<int64_t>(*read);
    } else {
      entries_read = EstimateEntriesRead(stream, *last);
    }
    StreamGroup* g = groups->Create(*name, *last, entries_read);
    if (g == nullptr) return Corrupt("Duplicated consumer group name");
    absl::StatusOr<uint64_t> npel = ReadCount(r, 18);
    if (!npel.ok()) return npel.status();
    for (uint64_t j = 0; j < *npel; ++j) {
      absl::StatusOr<StreamID> id = ReadRawStreamId(r);
      if (!id.ok()) return id.status();
      absl::StatusOr<int64_t> time = ReadMillis(r);
      if (!time.ok()) return time.status();
      absl::StatusOr<uint64_t> count = r.ReadLen();
      if (!count.ok()) return count.status();
      if (g->pel.contains(*id)) return Corrupt("Duplicated global PEL entry");
      g->AddUnowned(*id, *time)->delivery_count = *count;
    }
    absl::StatusOr<uint64_t> nconsumers = ReadCount(r, 10);
    if (!nconsumers.ok()) return nconsumers.status();
    for (uint64_t j = 0; j < *nconsumers; ++j) {
      absl::StatusOr<std::string> cname = r.ReadString();
      if (!cname.ok()) return cname.status();
      absl::StatusOr<int64_t> seen = ReadMillis(r);
      if (!seen.ok()) return seen.status();
      StreamConsumer* c = g->AddConsumer(*cname, *seen);
      if (c == nullptr) return Corrupt("Duplicated consumer name");
      absl::StatusOr<uint64_t> n = ReadCount(r, 16);
      if (!n.ok()) return n.status();
      for (uint64_t k = 0; k < *n; ++k) {
        absl::StatusOr<StreamID> id = ReadRawStreamId(r);
        if (!id.ok()) return id.status();
        auto it = g->pel.find(*id);
        if (it == g->pel.end()) return Corrupt("Consumer entry not found in group global PEL");
        if (it->second->consumer != nullptr) return Corrupt("Duplicated consumer PEL entry");
        g->MoveTo(*id, it->second.get(), c);
      }
    }
    for (const auto& [id, p] : g->pel) {
      if (p->consumer == nullptr) return Corrupt("Stream CG PEL entry without consumer");
    }
  }
  stream.SetGroups(std::move(groups));
  return absl::OkStatus();
}

// Types 15 and 19 (v2: with first id, max deleted id and entries added): the listpack nodes
// keyed by their 16-byte master ids, then the stream's counters and its consumer groups.
absl::StatusOr<CompactObj> ReadStream(RdbReader& r, bool v2) {
  absl::StatusOr<uint64_t> nodes = ReadCount(r, 2);
  if (!nodes.ok()) return nodes.status();
  auto stream = std::make_unique<StreamValue>();
  std::optional<StreamID> last_entry;
  uint64_t live = 0;
  for (uint64_t i = 0; i < *nodes; ++i) {
    absl::StatusOr<std::string> key = r.ReadString();
    if (!key.ok()) return key.status();
    if (key->size() != 16) return Corrupt("Stream node key entry is not the size of a stream ID");
    StreamID master = StreamID::DecodeBigEndian(key->data());
    absl::StatusOr<std::string> lp = r.ReadString();
    if (!lp.ok()) return lp.status();
    std::optional<StreamValue::NodeCheck> check = StreamValue::CheckNode(master, *lp, last_entry);
    if (!check) return Corrupt("Stream listpack integrity check failed");
    if (last_entry && master <= *last_entry) return Corrupt("Stream node ids out of order");
    last_entry = check->last_id;
    live += check->live;
    stream->AddCheckedNode(master, *lp, check->live);
  }
  absl::StatusOr<uint64_t> length = r.ReadLen();
  if (!length.ok()) return length.status();
  absl::StatusOr<StreamID> last_id = ReadStreamId(r);
  if (!last_id.ok()) return last_id.status();
  if (*length != live) return Corrupt("Stream length inconsistent with its entries");
  if (last_entry && *last_id < *last_entry) return Corrupt("Stream last id below its entries");
  StreamID first_id, max_deleted;
  uint64_t entries_added = *length;
  if (v2) {
    absl::StatusOr<StreamID> first = ReadStreamId(r);
    if (!first.ok()) return first.status();
    absl::StatusOr<StreamID> maxdel = ReadStreamId(r);
    if (!maxdel.ok()) return maxdel.status();
    absl::StatusOr<uint64_t> added = r.ReadLen();
    if (!added.ok()) return added.status();
    first_id = *first;
    max_deleted = *maxdel;
    entries_added = *added;
  }
  stream->SetLoadedMeta(*length, *last_id, first_id, max_deleted, entries_added);
  if (!v2) {
    first_id = StreamID{};
    stream->Range(StreamID{}, StreamID::Max(), false, 1,
                  [&](const StreamValue::Entry& e) { first_id = e.id; });
    stream->SetLoadedMeta(*length, *last_id, first_id, max_deleted, entries_added);
  }
  absl::Status groups = ReadStreamGroups(r, v2, *stream);
  if (!groups.ok()) return groups;
  CompactObj obj;
  obj.SetObject(ObjType::kStream, 0, stream.release());
  return obj;
}

// Returns the name of a type dashkv cannot hold yet, or "" for the others.
std::string_view UnsupportedTypeName(uint8_t type) {
  switch (type) {
    case kRdbModule:
    case kRdbModule2:
      return "module";
    default:
      return "";
  }
}

}  // namespace

ValueLimits ValueLimits::From(const Config& config) {
  ValueLimits l;
  l.list.fill = static_cast<int>(config.list_max_listpack_size.load(std::memory_order_relaxed));
  l.list.compress_depth =
      static_cast<int>(config.list_compress_depth.load(std::memory_order_relaxed));
  l.hash.max_entries =
      static_cast<size_t>(config.hash_max_listpack_entries.load(std::memory_order_relaxed));
  l.hash.max_value =
      static_cast<size_t>(config.hash_max_listpack_value.load(std::memory_order_relaxed));
  l.set = SetLimits::From(config);
  l.zset = ZsetLimits::From(config);
  return l;
}

bool IsEmptyValue(const absl::Status& status) {
  return absl::IsFailedPrecondition(status) && status.message() == kEmptyValueMessage;
}

absl::StatusOr<CompactObj> ReadRdbObject(RdbReader& reader, const ValueLimits& limits) {
  absl::StatusOr<uint8_t> type = reader.ReadByte();
  if (!type.ok()) return type.status();
  return ReadRdbValue(*type, reader, limits);
}

absl::StatusOr<CompactObj> ReadRdbValue(uint8_t type, RdbReader& reader,
                                        const ValueLimits& limits) {
  if (!IsRdbObjectType(type)) return Corrupt("unknown RDB value type " + std::to_string(type));
  if (std::string_view name = UnsupportedTypeName(type); !name.empty()) {
    return absl::UnimplementedError("dashkv does not support the " + std::string(name) +
                                    " type yet (RDB type " + std::to_string(type) + ")");
  }
  switch (type) {
    case kRdbString:
      return ReadStringValue(reader);
    case kRdbList:
      return ReadLinkedList(reader, limits);
    case kRdbListZiplist:
      return ReadListZiplist(reader, limits);
    case kRdbListQuicklist:
      return ReadQuicklist(reader, limits, /*v2=*/false);
    case kRdbListQuicklist2:
      return ReadQuicklist(reader, limits, /*v2=*/true);
    case kRdbSet:
      return ReadSet(reader, limits);
    case kRdbSetIntset:
      return ReadIntSet(reader, limits);
    case kRdbHash:
      return ReadHash(reader, limits);
    case kRdbHashZipmap:
    case kRdbHashZiplist:
    case kRdbHashListpack:
      return ReadHashBlob(reader, limits, type);
    case kRdbZset:
      return ReadZset(reader, limits, /*binary=*/false);
    case kRdbZset2:
      return ReadZset(reader, limits, /*binary=*/true);
    case kRdbZsetZiplist:
    case kRdbZsetListpack:
      return ReadZsetBlob(reader, limits, type);
    case kRdbStreamListpacks:
      return ReadStream(reader, /*v2=*/false);
    case kRdbStreamListpacks2:
      return ReadStream(reader, /*v2=*/true);
  }
  return Corrupt("unknown RDB value type " + std::to_string(type));
}

}  // namespace dashkv
