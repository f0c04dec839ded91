#include "server/values/stream_value.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/base/logging.h"
#include "server/config.h"
#include "server/values/stream_groups.h"

namespace dashkv {

namespace {

using Pos = Listpack::Pos;

constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;
// Redis's STREAM_LISTPACK_MAX_SIZE: the node size used when stream-node-max-bytes is 0 or larger.
constexpr size_t kNodeMaxSize = size_t{1} << 30;

std::string_view IntText(int64_t v, char (&buf)[ListpackValue::kIntBufSize]) {
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return {buf, static_cast<size_t>(end - buf)};
}

Pos PushInt(Listpack& lp, int64_t v) {
  char buf[ListpackValue::kIntBufSize];
  return lp.Push(IntText(v, buf), ListEnd::kTail);
}

void ReplaceInt(Listpack& lp, Pos p, int64_t v) {
  char buf[ListpackValue::kIntBufSize];
  lp.Replace(p, IntText(v, buf));
}

// Returns the integer at p, or nullopt when p is no entry or a string (untrusted nodes).
std::optional<int64_t> IntAt(ListpackView lp, Pos p) {
  if (p == Listpack::kNoPos) return std::nullopt;
  ListpackValue v = lp.Get(p);
  if (!v.is_int()) return std::nullopt;
  return v.int_value();
}

// Reads the entries of one trusted node.
class NodeReader {
 public:
  NodeReader(StreamID master, ListpackView lp) : master_(master), lp_(lp) {
    Pos p = lp.Next(lp.Next(lp.First()));  // count, deleted -> num-fields
    int64_t n = lp.Get(p).int_value();
    for (int64_t i = 0; i < n; ++i) {
      p = lp.Next(p);
      master_fields_.push_back(lp.Get(p));
    }
    first_entry_ = lp.Next(lp.Next(p));  // past the master terminator
  }

  Pos first_entry() const { return first_entry_; }

  // Decodes the entry whose flags are at p: fills flags, id and (when `with_fields`) the
  // interleaved fields; returns the position of the next entry's flags (kNoPos at the end).
  Pos Read(Pos p, bool with_fields, int64_t* flags, StreamID* id) {
    *flags = lp_.Get(p).int_value();
    p = lp_.Next(p);
    id->ms = master_.ms + static_cast<uint64_t>(lp_.Get(p).int_value());
    p = lp_.Next(p);
    id->seq = master_.seq + static_cast<uint64_t>(lp_.Get(p).int_value());
    p = lp_.Next(p);
    if (with_fields) fields_.clear();
    if (*flags & kFlagSameFields) {
      for (const ListpackValue& f : master_fields_) {
        if (with_fields) {
          fields_.push_back(f);
          fields_.push_back(lp_.Get(p));
        }
        p = lp_.Next(p);
      }
    } else {
      int64_t n = lp_.Get(p).int_value();
      p = lp_.Next(p);
      for (int64_t i = 0; i < 2 * n; ++i) {
        if (with_fields) fields_.push_back(lp_.Get(p));
        p = lp_.Next(p);
      }
    }
    return lp_.Next(p);  // past lp-count
  }

  // Returns the flags position of the entry before the one at `flags_pos` (kNoPos if none).
  Pos PrevEntry(Pos flags_pos) const {
    if (flags_pos == first_entry_) return Listpack::kNoPos;
    return EntryStartFromCount(lp_.Prev(flags_pos));
  }
  // Returns the flags position of the last entry.
  Pos LastEntry() const { return EntryStartFromCount(lp_.Last()); }

  absl::Span<const ListpackValue> fields() const { return fields_; }

 private:
  Pos EntryStartFromCount(Pos count_pos) const {
    int64_t n = lp_.Get(count_pos).int_value();
    Pos p = count_pos;
    for (int64_t i = 0; i < n; ++i) p = lp_.Prev(p);
    return p;
  }

  StreamID master_;
  ListpackView lp_;
  std::vector<ListpackValue> master_fields_;
  std::vector<ListpackValue> fields_;
  Pos first_entry_;
};

// string2ull as Redis has it: a decimal int64 that is not negative, else strtoull of the whole
// text (which takes leading spaces and a sign).
bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  int64_t ll;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), ll);
  bool canonical = ec == std::errc() && end == s.data() + s.size() &&
                   !(s.size() > 1 && s[0] == '0') && !(s.size() > 1 && s[0] == '-' && s[1] == '0');
  if (canonical) {
    if (ll < 0) return false;
    *out = static_cast<uint64_t>(ll);
    return true;
  }
  char buf[128];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  errno = 0;
  char* endp = nullptr;
  unsigned long long v = std::strtoull(buf, &endp, 10);
  if (errno == EINVAL || errno == ERANGE || *endp != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

std::string StreamID::ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

bool StreamID::Incr() {
  if (seq != UINT64_MAX) {
    ++seq;
  } else if (ms != UINT64_MAX) {
    ++ms;
    seq = 0;
  } else {
    return false;
  }
  return true;
}

bool StreamID::Decr() {
  if (seq != 0) {
    --seq;
  } else if (ms != 0) {
    --ms;
    seq = UINT64_MAX;
  } else {
    return false;
  }
  return true;
}

void StreamID::EncodeBigEndian(char out[16]) const {
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(ms >> (56 - 8 * i));
    out[8 + i] = static_cast<char>(seq >> (56 - 8 * i));
  }
}

StreamID StreamID::DecodeBigEndian(const char in[16]) {
  StreamID id;
  for (int i = 0; i < 8; ++i) {
    id.ms = (id.ms << 8) | static_cast<uint8_t>(in[i]);
    id.seq = (id.seq << 8) | static_cast<uint8_t>(in[8 + i]);
  }
  return id;
}

StreamLimits StreamLimits::From(const Config& config) {
  StreamLimits l;
  l.node_max_bytes =
      static_cast<size_t>(config.stream_node_max_bytes.load(std::memory_order_relaxed));
  l.node_max_entries = config.stream_node_max_entries.load(std::memory_order_relaxed);
  return l;
}

std::optional<StreamID> ParseStreamID(std::string_view s, uint64_t missing_seq, bool strict,
                                      bool* seq_auto) {
  if (s.size() > 127) return std::nullopt;
  if (s == "-" || s == "+") {
    if (strict) return std::nullopt;
    return s == "-" ? StreamID{} : StreamID::Max();
  }
  StreamID id;
  size_t dash = s.find('-');
  if (!ParseU64(s.substr(0, dash), &id.ms)) return std::nullopt;
  if (dash == std::string_view::npos) {
    id.seq = missing_seq;
    if (seq_auto) *seq_auto = false;
    return id;
  }
  std::string_view seq = s.substr(dash + 1);
  if (seq_auto && seq == "*") {
    *seq_auto = true;
    return id;
  }
  if (seq_auto) *seq_auto = false;
  if (!ParseU64(seq, &id.seq)) return std::nullopt;
  return id;
}

StreamValue::StreamValue() = default;
StreamValue::~StreamValue() = default;

StreamGroups& StreamValue::MutableGroups() {
  if (!groups_) groups_ = std::make_unique<StreamGroups>();
  return *groups_;
}

void StreamValue::SetGroups(std::unique_ptr<StreamGroups> groups) { groups_ = std::move(groups); }

bool StreamValue::Contains(StreamID id) const {
  return Range(id, id, false, 1, [](const Entry&) {}) > 0;
}

std::unique_ptr<StreamValue> StreamValue::Clone() const {
  auto out = std::make_unique<StreamValue>();
  for (const auto& [master, lp] : nodes_) out->nodes_.emplace(master, Listpack::Copy(lp.bytes()));
  out->length_ = length_;
  out->last_id_ = last_id_;
  out->first_id_ = first_id_;
  out->max_deleted_id_ = max_deleted_id_;
  out->entries_added_ = entries_added_;
  if (groups_) out->groups_ = groups_->Clone();
  return out;
}

void StreamValue::Append(StreamID id, absl::Span<const std::string_view> fields,
                         const StreamLimits& limits) {
  DCHECK(id > last_id_);
  DCHECK(!fields.empty() && fields.size() % 2 == 0);
  const int64_t nfields = static_cast<int64_t>(fields.size() / 2);
  Listpack* lp = nullptr;
  StreamID master;
  if (!nodes_.empty()) {
    auto last = std::prev(nodes_.end());
    size_t bytes = 0;
    for (std::string_view f : fields) bytes += f.size();
    size_t max_bytes = limits.node_max_bytes;
    if (max_bytes == 0 || max_bytes > kNodeMaxSize) max_bytes = kNodeMaxSize;
    bool full = last->second.total_bytes() + bytes >= max_bytes;
    if (!full && limits.node_max_entries > 0) {
      ListpackView v = last->second.view();
      Pos p = v.First();
      int64_t total = v.Get(p).int_value() + v.Get(v.Next(p)).int_value();
      full = total >= limits.node_max_entries;
    }
    if (!full) {
      lp = &last->second;
      master = last->first;
    }
  }
  bool same_fields;
  if (lp == nullptr) {
    Listpack fresh;
    PushInt(fresh, 0);  // count, set below
    PushInt(fresh, 0);
    PushInt(fresh, nfields);
    for (int64_t i = 0; i < nfields; ++i) fresh.Push(fields[2 * i], ListEnd::kTail);
    PushInt(fresh, 0);
    master = id;
    lp = &nodes_.emplace(id, std::move(fresh)).first->second;
    same_fields = true;
  } else {
    ListpackView v = lp->view();
    Pos p = v.Next(v.Next(v.First()));
    same_fields = v.Get(p).int_value() == nfields;
    for (int64_t i = 0; same_fields && i < nfields; ++i) {
      p = v.Next(p);
      same_fields = v.Get(p).Equals(fields[2 * i]);
    }
  }
  Pos count_pos = lp->First();
  ReplaceInt(*lp, count_pos, lp->Get(count_pos).int_value() + 1);
  PushInt(*lp, same_fields ? kFlagSameFields : 0);
  PushInt(*lp, static_cast<int64_t>(id.ms - master.ms));
  PushInt(*lp, static_cast<int64_t>(id.seq - master.seq));
  if (same_fields) {
    for (int64_t i = 0; i < nfields; ++i) lp->Push(fields[2 * i + 1], ListEnd::kTail);
    PushInt(*lp, nfields + 3);
  } else {
    PushInt(*lp, nfields);
    for (std::string_view f : fields) lp->Push(f, ListEnd::kTail);
    PushInt(*lp, 2 * nfields + 4);
  }
  if (length_ == 0) first_id_ = id;
  ++length_;
  ++entries_added_;
  last_id_ = id;
}

size_t StreamValue::Range(StreamID start, StreamID end, bool reverse, size_t count,
                          EntryFn f) const {
  if (start > end || nodes_.empty()) return 0;
  size_t visited = 0;
  int64_t flags;
  StreamID id;
  if (!reverse) {
    auto it = nodes_.upper_bound(start);
    if (it != nodes_.begin()) --it;
    for (; it != nodes_.end() && it->first <= end; ++it) {
      NodeReader r(it->first, it->second.view());
      for (Pos p = r.first_entry(); p != Listpack::kNoPos;) {
        p = r.Read(p, true, &flags, &id);
        if (id > end) return visited;
        if ((flags & kFlagDeleted) || id < start) continue;
        f(Entry{id, r.fields()});
        if (++visited == count) return visited;
      }
    }
    return visited;
  }
  auto it = nodes_.upper_bound(end);
  while (it != nodes_.begin()) {
    --it;
    NodeReader r(it->first, it->second.view());
    for (Pos p = r.LastEntry(); p != Listpack::kNoPos; p = r.PrevEntry(p)) {
      r.Read(p, true, &flags, &id);
      if (id < start) return visited;
      if ((flags & kFlagDeleted) || id > end) continue;
      f(Entry{id, r.fields()});
      if (++visited == count) return visited;
    }
  }
  return visited;
}

bool StreamValue::MarkDeleted(NodeMap::iterator it, absl::Span<const Pos> flags_pos) {
  Listpack& lp = it->second;
  // Flags stay 1-byte integers (0..3), so marking moves no entry; the counters at the front
  // (which may change size) are updated last.
  for (Pos fp : flags_pos) ReplaceInt(lp, fp, lp.Get(fp).int_value() | kFlagDeleted);
  Pos p = lp.First();
  int64_t n = static_cast<int64_t>(flags_pos.size());
  int64_t live = lp.Get(p).int_value() - n;
  if (live == 0) {
    nodes_.erase(it);
    return true;
  }
  ReplaceInt(lp, p, live);
  p = lp.Next(p);
  ReplaceInt(lp, p, lp.Get(p).int_value() + n);
  return false;
}

bool StreamValue::Delete(StreamID target) {
  auto it = nodes_.upper_bound(target);
  if (it == nodes_.begin()) return false;
  --it;
  NodeReader r(it->first, it->second.view());
  int64_t flags;
  StreamID id;
  for (Pos p = r.first_entry(); p != Listpack::kNoPos;) {
    Pos here = p;
    p = r.Read(p, false, &flags, &id);
    if (id > target) return false;
    if (id < target) continue;
    if (flags & kFlagDeleted) return false;
    Pos one[1] = {here};
    MarkDeleted(it, one);
    --length_;
    if (target > max_deleted_id_) max_deleted_id_ = target;
    if (target == first_id_) RefreshFirstId();
    return true;
  }
  return false;
}

void StreamValue::RefreshFirstId() {
  first_id_ = StreamID{};
  Range(StreamID{}, StreamID::Max(), false, 1, [&](const Entry& e) { first_id_ = e.id; });
}

std::optional<StreamID> StreamValue::LastLiveId() const {
  std::optional<StreamID> out;
  Range(StreamID{}, StreamID::Max(), true, 1, [&](const Entry& e) { out = e.id; });
  return out;
}

uint64_t StreamValue::TrimMaxLen(uint64_t maxlen, bool approx, int64_t limit) {
  uint64_t deleted = 0;
  while (!nodes_.empty() && length_ > maxlen) {
    auto it = nodes_.begin();
    Listpack& lp = it->second;
    const int64_t live = lp.Get(lp.First()).int_value();
    if (limit > 0 && static_cast<int64_t>(deleted) + live > limit) break;
    if (length_ - static_cast<uint64_t>(live) >= maxlen) {
      nodes_.erase(it);
      length_ -= static_cast<uint64_t>(live);
      deleted += static_cast<uint64_t>(live);
      continue;
    }
    if (approx) break;
    NodeReader r(it->first, lp.view());
    int64_t flags;
    StreamID id;
    std::vector<Pos> marks;
    uint64_t remaining = length_;
    for (Pos p = r.first_entry(); p != Listpack::kNoPos && remaining > maxlen;) {
      Pos here = p;
      p = r.Read(p, false, &flags, &id);
      if (flags & kFlagDeleted) continue;
      marks.push_back(here);
      --remaining;
    }
    MarkDeleted(it, marks);
    length_ = remaining;
    deleted += marks.size();
    break;
  }
  if (deleted > 0) RefreshFirstId();
  return deleted;
}

uint64_t StreamValue::TrimMinId(StreamID minid, bool approx, int64_t limit) {
  uint64_t deleted = 0;
  while (!nodes_.empty()) {
    auto it = nodes_.begin();
    Listpack& lp = it->second;
    const int64_t live = lp.Get(lp.First()).int_value();
    if (limit > 0 && static_cast<int64_t>(deleted) + live > limit) break;
    NodeReader r(it->first, lp.view());
    int64_t flags;
    StreamID last;
    r.Read(r.LastEntry(), false, &flags, &last);
    if (last < minid) {
      nodes_.erase(it);
      length_ -= static_cast<uint64_t>(live);
      deleted += static_cast<uint64_t>(live);
      continue;
    }
    if (approx) break;
    StreamID id;
    std::vector<Pos> marks;
    for (Pos p = r.first_entry(); p != Listpack::kNoPos;) {
      Pos here = p;
      p = r.Read(p, false, &flags, &id);
      if (id >= minid) break;
      if (!(flags & kFlagDeleted)) marks.push_back(here);
    }
    MarkDeleted(it, marks);
    length_ -= marks.size();
    deleted += marks.size();
    break;
  }
  if (deleted > 0) RefreshFirstId();
  return deleted;
}

void StreamValue::ForEachNode(absl::FunctionRef<void(StreamID, std::string_view)> f) const {
  for (const auto& [master, lp] : nodes_) f(master, lp.bytes());
}

std::optional<StreamValue::NodeCheck> StreamValue::CheckNode(StreamID master,
                                                             std::string_view bytes,
                                                             std::optional<StreamID> after) {
  if (!ListpackView::Validate(bytes)) return std::nullopt;
  ListpackView lp(reinterpret_cast<const uint8_t*>(bytes.data()));
  Pos p = lp.First();
  std::optional<int64_t> count = IntAt(lp, p);
  std::optional<int64_t> deleted = IntAt(lp, p = lp.Next(p));
  std::optional<int64_t> nf = IntAt(lp, p = lp.Next(p));
  if (!count || !deleted || !nf || *count < 0 || *deleted < 0 || *nf < 1) return std::nullopt;
  for (int64_t i = 0; i < *nf; ++i) {
    if ((p = lp.Next(p)) == Listpack::kNoPos) return std::nullopt;
  }
  std::optional<int64_t> term = IntAt(lp, p = lp.Next(p));
  if (!term || *term != 0) return std::nullopt;
  NodeCheck out;
  int64_t live = 0, dead = 0;
  std::optional<StreamID> prev = after;
  for (p = lp.Next(p); p != Listpack::kNoPos;) {
    std::optional<int64_t> flags = IntAt(lp, p);
    std::optional<int64_t> msd = IntAt(lp, p = lp.Next(p));
    std::optional<int64_t> seqd = IntAt(lp, p = lp.Next(p));
    if (!flags || !msd || !seqd || *flags < 0 || *flags > 3) return std::nullopt;
    StreamID id{master.ms + static_cast<uint64_t>(*msd), master.seq + static_cast<uint64_t>(*seqd)};
    if (id < master || (prev && id <= *prev)) return std::nullopt;
    prev = id;
    int64_t elements;
    if (*flags & kFlagSameFields) {
      elements = *nf;
    } else {
      std::optional<int64_t> n = IntAt(lp, p = lp.Next(p));
      if (!n || *n < 1 || *n > static_cast<int64_t>(bytes.size())) return std::nullopt;
      elements = 2 * *n;
    }
    for (int64_t i = 0; i < elements; ++i) {
      if ((p = lp.Next(p)) == Listpack::kNoPos) return std::nullopt;
    }
    std::optional<int64_t> lp_count = IntAt(lp, p = lp.Next(p));
    int64_t want = (*flags & kFlagSameFields) ? *nf + 3 : elements + 4;
    if (!lp_count || *lp_count != want) return std::nullopt;
    ((*flags & kFlagDeleted) ? dead : live)++;
    out.last_id = id;
    p = lp.Next(p);
  }
  if (!prev || prev == after || live != *count || dead != *deleted) return std::nullopt;
  out.live = static_cast<uint64_t>(live);
  return out;
}

void StreamValue::AddCheckedNode(StreamID master, std::string_view bytes, uint64_t live) {
  if (live == 0) return;
  nodes_.emplace(master, Listpack::Copy(bytes));
}

size_t StreamValue::MallocUsed() const {
  // btree_map nodes hold up to ~10 (id, listpack) slots of 24 bytes; count them as 32 each.
  size_t total = sizeof(*this) + nodes_.size() * 32;
  for (const auto& [master, lp] : nodes_) total += lp.MallocUsage();
  if (groups_) total += groups_->MallocUsed();
  return total;
}

}  // namespace dashkv
