#include "server/values/zset_value.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/base/logging.h"
#include "server/config.h"

namespace dashkv {

namespace {

using Pos = Listpack::Pos;

// Reads the score stored in the listpack entry at p.
double LpScore(const Listpack& lp, Pos p) {
  ListpackValue v = lp.Get(p);
  if (v.is_int()) return static_cast<double>(v.int_value());
  std::string s(v.str_value());  // NUL-terminated for strtod
  return std::strtod(s.c_str(), nullptr);
}

// Compares (s1, m1) with (s2, m2) in sorted-set order.
int CompareElements(double s1, std::string_view m1, double s2, std::string_view m2) {
  if (s1 < s2) return -1;
  if (s1 > s2) return 1;
  int c = m1.compare(m2);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// Calls f(member pos, member text, score) for every pair until f returns false.
template <typename F>
void ForEachPair(const Listpack& lp, F&& f) {
  char buf[ListpackValue::kIntBufSize];
  for (Pos p = lp.First(); p != Listpack::kNoPos;) {
    Pos sp = lp.Next(p);
    if (!f(p, lp.Get(p).AsText(buf), LpScore(lp, sp))) return;
    p = lp.Next(sp);
  }
}

void LpInsert(Listpack& lp, std::string_view m, double score) {
  char sbuf[kMaxScoreChars];
  std::string_view stext(sbuf, FormatScoreShortest(score, sbuf));
  Pos before = Listpack::kNoPos;
  ForEachPair(lp, [&](Pos p, std::string_view em, double es) {
    if (CompareElements(es, em, score, m) > 0) {
      before = p;
      return false;
    }
    return true;
  });
  if (before == Listpack::kNoPos) {
    lp.Push(m, ListEnd::kTail);
    lp.Push(stext, ListEnd::kTail);
    return;
  }
  Pos np = lp.Insert(before, Where::kBefore, m);
  lp.Insert(np, Where::kAfter, stext);
}

// Deletes the pair whose member entry is at p.
void LpDeletePair(Listpack& lp, Pos p) { lp.DeleteRange(p, 2); }

}  // namespace

ZsetLimits ZsetLimits::From(const Config& c) {
  auto get = [](const std::atomic<int64_t>& v) {
    int64_t x = v.load(std::memory_order_relaxed);
    return x < 0 ? size_t{0} : static_cast<size_t>(x);
  };
  return ZsetLimits{get(c.zset_max_listpack_entries), get(c.zset_max_listpack_value)};
}

std::unique_ptr<ZsetValue> ZsetValue::Create(size_t size_hint, size_t max_member_len,
                                             const ZsetLimits& limits) {
  auto v = std::make_unique<ZsetValue>();
  if (size_hint > limits.max_listpack_entries || max_member_len > limits.max_listpack_value) {
    v->rep_.emplace<Skiplist>();
    std::get<Skiplist>(v->rep_).table.Reserve(size_hint);
  }
  return v;
}

size_t ZsetValue::size() const {
  if (const auto* lp = std::get_if<Listpack>(&rep_)) return lp->size() / 2;
  return std::get<Skiplist>(rep_).table.size();
}

std::optional<double> ZsetValue::Score(std::string_view m) const {
  if (const auto* lp = std::get_if<Listpack>(&rep_)) {
    Pos p = lp->Find(m, lp->First(), 1);
    if (p == Listpack::kNoPos) return std::nullopt;
    return LpScore(*lp, lp->Next(p));
  }
  const Skiplist& sl = std::get<Skiplist>(rep_);
  uint32_t slot = sl.table.Find(m);
  if (slot == MemberTable::kNotFound) return std::nullopt;
  return sl.table.score(slot);
}

bool ZsetValue::Set(std::string_view m, double score, const ZsetLimits& limits) {
  DCHECK(!std::isnan(score));
  if (auto* lp = std::get_if<Listpack>(&rep_)) {
    Pos p = lp->Find(m, lp->First(), 1);
    if (p != Listpack::kNoPos) {
      if (LpScore(*lp, lp->Next(p)) == score) return false;
      LpDeletePair(*lp, p);
      LpInsert(*lp, m, score);
      return false;
    }
    if (lp->size() / 2 + 1 <= limits.max_listpack_entries && m.size() <= limits.max_listpack_value) {
      LpInsert(*lp, m, score);
      return true;
    }
    ConvertToSkiplist();
  }
  Skiplist& sl = std::get<Skiplist>(rep_);
  auto [slot, inserted] = sl.table.Insert(m);
  if (inserted) {
    sl.table.set_score(slot, score);
    sl.index.InsertBorrowed(score, sl.table.member(slot));
    return true;
  }
  double old = sl.table.score(slot);
  if (old != score || std::signbit(old) != std::signbit(score)) {
    sl.index.UpdateScore(old, m, score);
    sl.table.set_score(slot, score);
  }
  return false;
}

bool ZsetValue::Remove(std::string_view m) {
  if (auto* lp = std::get_if<Listpack>(&rep_)) {
    Pos p = lp->Find(m, lp->First(), 1);
    if (p == Listpack::kNoPos) return false;
    LpDeletePair(*lp, p);
    return true;
  }
  Skiplist& sl = std::get<Skiplist>(rep_);
  uint32_t slot = sl.table.Find(m);
  if (slot == MemberTable::kNotFound) return false;
  sl.index.Delete(sl.table.score(slot), m);
  sl.table.EraseSlot(slot);
  return true;
}

std::optional<uint64_t> ZsetValue::Rank(std::string_view m) const {
  if (const auto* lp = std::get_if<Listpack>(&rep_)) {
    std::optional<uint64_t> rank;
    uint64_t i = 0;
    ForEachPair(*lp, [&](Pos, std::string_view em, double) {
      if (em == m) {
        rank = i;
        return false;
      }
      ++i;
      return true;
    });
    return rank;
  }
  const Skiplist& sl = std::get<Skiplist>(rep_);
  uint32_t slot = sl.table.Find(m);
  if (slot == MemberTable::kNotFound) return std::nullopt;
  return sl.index.Rank(sl.table.score(slot), m);
}

void ZsetValue::Range(uint64_t first, uint64_t last, bool reverse, ElementFn f) const {
  uint64_t n = size();
  if (last > n) last = n;
  if (first >= last) return;
  if (const auto* lp = std::get_if<Listpack>(&rep_)) {
    char buf[ListpackValue::kIntBufSize];
    Pos p = lp->Seek(static_cast<long>(2 * (reverse ? last - 1 : first)));
    for (uint64_t k = first; k < last; ++k) {
      Pos sp = lp->Next(p);
      f(lp->Get(p).AsText(buf), LpScore(*lp, sp));
      if (k + 1 < last) p = reverse ? lp->Prev(lp->Prev(p)) : lp->Next(sp);
    }
    return;
  }
  const SortedIndex& index = std::get<Skiplist>(rep_).index;
  SortedIndex::Iterator it = index.Seek(reverse ? last - 1 : first);
  for (uint64_t k = first; k < last && it.Valid(); ++k) {
    f(it.member(), it.score());
    reverse ? it.Prev() : it.Next();
  }
}

std::pair<uint64_t, uint64_t> ZsetValue::ScoreRanks(const ScoreRange& range) const {
  if (const auto* lp = std::get_if<Listpack>(&rep_)) {
    uint64_t i = 0, first = 0, last = 0;
    bool seen = false;
    ForEachPair(*lp, [&](Pos, std::string_view, double s) {
      if (!range.BelowMax(s)) return false;
      if (range.AboveMin(s)) {
        if (!seen) first = i;
        seen = true;
        last = i + 1;
      }
      ++i;
      return true;
    });
    return seen ? std::make_pair(first, last) : std::make_pair(uint64_t{0}, uint64_t{0});
  }
  return std::get<Skiplist>(rep_).index.ScoreRangeRanks(range);
}

std::pair<uint64_t, uint64_t> ZsetValue::LexRanks(const LexRange& range) const {
  if (const auto* lp = std::get_if<Listpack>(&rep_)) {
    uint64_t i = 0, first = 0, last = 0;
    bool seen = false;
    ForEachPair(*lp, [&](Pos, std::string_view m, double) {
      if (!range.BelowMax(m)) return false;
      if (range.AboveMin(m)) {
        if (!seen) first = i;
        seen = true;
        last = i + 1;
      }
      ++i;
      return true;
    });
    return seen ? std::make_pair(first, last) : std::make_pair(uint64_t{0}, uint64_t{0});
  }
  return std::get<Skiplist>(rep_).index.LexRangeRanks(range);
}

uint64_t ZsetValue::RemoveRanks(uint64_t first, uint64_t last) {
  uint64_t n = size();
  if (last > n) last = n;
  if (first >= last) return 0;
  if (auto* lp = std::get_if<Listpack>(&rep_)) {
    lp->DeleteRange(static_cast<long>(2 * first), 2 * (last - first));
    return last - first;
  }
  Skiplist& sl = std::get<Skiplist>(rep_);
  return sl.index.DeleteRankRange(first, last,
                                  [&](double, std::string_view m) { sl.table.Erase(m); });
}

uint64_t ZsetValue::Scan(uint64_t cursor, size_t count, ElementFn f) const {
  if (const auto* lp = std::get_if<Listpack>(&rep_)) {
    ForEachPair(*lp, [&](Pos, std::string_view m, double s) {
      f(m, s);
      return true;
    });
    return 0;
  }
  const MemberTable& t = std::get<Skiplist>(rep_).table;
  return t.Scan(cursor, count, [&](uint32_t slot) { f(t.member_view(slot), t.score(slot)); });
}

size_t ZsetValue::MallocUsed() const {
  if (const auto* lp = std::get_if<Listpack>(&rep_)) return sizeof(*this) + lp->MallocUsage();
  const Skiplist& sl = std::get<Skiplist>(rep_);
  return sizeof(*this) + sl.table.MallocUsed() + sl.index.MemoryUsage();
}

std::string_view ZsetValue::EncodingName() const {
  return encoding() == Encoding::kListpack ? "listpack" : "skiplist";
}

void ZsetValue::ConvertToSkiplist() {
  Skiplist sl;
  const Listpack& lp = std::get<Listpack>(rep_);
  sl.table.Reserve(lp.size() / 2 + 1);
  ForEachPair(lp, [&](Pos, std::string_view m, double s) {
    auto [slot, inserted] = sl.table.Insert(m);
    sl.table.set_score(slot, s);
    sl.index.InsertBorrowed(s, sl.table.member(slot));
    return true;
  });
  rep_ = std::move(sl);
}

std::unique_ptr<ZsetValue> ZsetValue::Clone() const {
  auto copy = std::make_unique<ZsetValue>();
  if (const auto* lp = std::get_if<Listpack>(&rep_)) {
    copy->rep_ = Listpack::Copy(lp->bytes());
    return copy;
  }
  Skiplist& sl = copy->rep_.emplace<Skiplist>();
  sl.table.Reserve(size());
  Range(0, size(), /*reverse=*/false, [&](std::string_view m, double s) {
    auto [slot, inserted] = sl.table.Insert(m);
    sl.table.set_score(slot, s);
    sl.index.InsertBorrowed(s, sl.table.member(slot));
  });
  return copy;
}

}  // namespace dashkv
