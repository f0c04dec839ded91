#include "server/values/list_value.h"

#include <cstdio>

#include "core/str_util.h"

namespace dashkv {

namespace {

// Byte limit of one node for `fill` (Redis: -1 4 KiB ... -5 64 KiB; positive fills keep an
// 8 KiB safety limit).
size_t NodeByteLimit(int fill) {
  if (fill >= 0) return 8192;
  int level = fill < -5 ? 5 : -fill;
  return size_t{4096} << (level - 1);
}

size_t NodeCountLimit(int fill) {
  return fill > 0 ? static_cast<size_t>(fill) : SIZE_MAX;
}

// Converts Redis's LTRIM range into counts to drop at the head and at the tail.
void TrimCounts(long len, long start, long stop, size_t* ltrim, size_t* rtrim) {
  if (start < 0) start += len;
  if (stop < 0) stop += len;
  if (start < 0) start = 0;
  if (start > stop || start >= len) {
    *ltrim = static_cast<size_t>(len);
    *rtrim = 0;
    return;
  }
  if (stop >= len) stop = len - 1;
  *ltrim = static_cast<size_t>(start);
  *rtrim = static_cast<size_t>(len - stop - 1);
}

}  // namespace

void ListValue::MaybeGrow(const Options& opts) {
  if (ql_) return;
  if (lp_.total_bytes() <= NodeByteLimit(opts.fill) && lp_.size() <= NodeCountLimit(opts.fill)) {
    return;
  }
  auto ql = std::make_unique<QuickList>(opts.fill, opts.compress_depth);
  char buf[ListpackValue::kIntBufSize];
  for (Listpack::Pos p = lp_.First(); p != Listpack::kNoPos; p = lp_.Next(p)) {
    ql->Push(lp_.Get(p).AsText(buf), ListEnd::kTail);
  }
  detail::ListFree(lp_.Release());
  ql_ = std::move(ql);
}

void ListValue::MaybeShrink(const Options& opts) {
  if (!ql_ || ql_->node_count() > 1) return;
  // Half the limits of the list's own fill, so that a list does not flap at the boundary.
  int fill = ql_->fill();
  (void)opts;
  QuickList::Stats st = ql_->GetStats();
  if (st.uncompressed_bytes > NodeByteLimit(fill) / 2 || st.entries > NodeCountLimit(fill) / 2) {
    return;
  }
  Listpack lp;
  ql_->ForEachNode([&](std::string_view bytes) { lp = Listpack::Copy(bytes); });
  lp_ = std::move(lp);
  ql_.reset();
}

void ListValue::Push(std::string_view v, ListEnd end, const Options& opts) {
  if (ql_) return ql_->Push(v, end);
  lp_.Push(v, end);
  MaybeGrow(opts);
}

std::optional<std::string> ListValue::Pop(ListEnd end, const Options& opts) {
  if (ql_) {
    std::optional<std::string> v = ql_->Pop(end);
    MaybeShrink(opts);
    return v;
  }
  Listpack::Pos p = end == ListEnd::kHead ? lp_.First() : lp_.Last();
  if (p == Listpack::kNoPos) return std::nullopt;
  std::string out = lp_.Get(p).ToString();
  lp_.Delete(p);
  return out;
}

std::optional<std::string> ListValue::Index(long index) const {
  if (ql_) return ql_->Index(index);
  Listpack::Pos p = lp_.Seek(index);
  if (p == Listpack::kNoPos) return std::nullopt;
  return lp_.Get(p).ToString();
}

bool ListValue::Set(long index, std::string_view v, const Options& opts) {
  if (ql_) return ql_->Set(index, v);
  Listpack::Pos p = lp_.Seek(index);
  if (p == Listpack::kNoPos) return false;
  lp_.Replace(p, v);
  MaybeGrow(opts);
  return true;
}

bool ListValue::Insert(std::string_view pivot, std::string_view v, Where where,
                       const Options& opts) {
  if (ql_) return ql_->Insert(pivot, v, where);
  Listpack::Pos first = lp_.First();
  if (first == Listpack::kNoPos) return false;
  Listpack::Pos p = lp_.Find(pivot, first);
  if (p == Listpack::kNoPos) return false;
  lp_.Insert(p, where, v);
  MaybeGrow(opts);
  return true;
}

size_t ListValue::Remove(std::string_view v, long count, const Options& opts) {
  if (ql_) {
    size_t n = ql_->Remove(v, count);
    MaybeShrink(opts);
    return n;
  }
  size_t limit = count < 0 ? static_cast<size_t>(-(count + 1)) + 1 : static_cast<size_t>(count);
  return lp_.RemoveMatches(v, limit, count < 0 ? ListEnd::kTail : ListEnd::kHead);
}

void ListValue::Trim(long start, long stop, const Options& opts) {
  if (ql_) {
    ql_->Trim(start, stop);
    MaybeShrink(opts);
    return;
  }
  size_t ltrim, rtrim;
  TrimCounts(static_cast<long>(lp_.size()), start, stop, &ltrim, &rtrim);
  if (rtrim > 0) lp_.DeleteRange(-static_cast<long>(rtrim), rtrim);
  if (ltrim > 0) lp_.DeleteRange(0L, ltrim);
}

void ListValue::Walk(long index, ListEnd toward,
                     absl::FunctionRef<bool(const ListpackValue&)> fn) const {
  if (ql_) {
    for (QuickList::Iterator it = ql_->At(index, toward); it.Valid(); it.Next()) {
      if (!fn(it.Value())) return;
    }
    return;
  }
  for (Listpack::Pos p = lp_.Seek(index); p != Listpack::kNoPos;
       p = toward == ListEnd::kTail ? lp_.Next(p) : lp_.Prev(p)) {
    if (!fn(lp_.Get(p))) return;
  }
}

size_t ListValue::MallocUsed() const {
  if (ql_) return sizeof(ListValue) + sizeof(QuickList) + ql_->BytesUsed();
  return sizeof(ListValue) + lp_.MallocUsage();
}

std::string_view ListValue::EncodingName() const { return ql_ ? "quicklist" : "listpack"; }

std::string DebugObjectExtra(const CompactObj& value) {
  if (value.IsString() || value.type() != ObjType::kList) return {};
  const QuickList* ql = GetList(value)->quicklist();
  if (ql == nullptr) return {};
  QuickList::Stats st = ql->GetStats();
  char avg[32];
  snprintf(avg, sizeof(avg), "%.2f", st.avg_node_entries());
  return StrCat(" ql_nodes:", st.nodes, " ql_avg_node:", std::string_view(avg),
                " ql_listpack_max:", st.fill, " ql_compressed:", st.compress_depth != 0 ? 1 : 0,
                " ql_uncompressed_size:", st.uncompressed_bytes);
}

int64_t ObjectSerializedLength(const CompactObj& value) {
  if (value.IsString() || value.type() != ObjType::kList) return 0;
  const ListValue* list = GetList(value);
  auto string_length = [](size_t n) {
    return static_cast<int64_t>(n) + (n < 64 ? 1 : n < 16384 ? 2 : 5);
  };
  if (list->quicklist() == nullptr) return string_length(list->listpack_bytes().size());
  // RDB: node count, then each node's listpack as a string (length header + bytes).
  int64_t total = 1;
  list->quicklist()->ForEachNode([&](std::string_view lp) { total += string_length(lp.size()); });
  return total;
}

std::unique_ptr<ListValue> ListValue::Clone() const {
  auto copy = std::make_unique<ListValue>();
  if (!ql_) {
    copy->lp_ = Listpack::Copy(lp_.bytes());
    return copy;
  }
  auto ql = std::make_unique<QuickList>(ql_->fill(), ql_->compress_depth());
  ql_->ForEachNode([&](std::string_view bytes) { ql->AppendNode(Listpack::Copy(bytes)); });
  detail::ListFree(copy->lp_.Release());
  copy->ql_ = std::move(ql);
  return copy;
}

}  // namespace dashkv
