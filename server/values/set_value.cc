#include "server/values/set_value.h"

#include <random>

#include "core/base/logging.h"
#include "core/base/parse_int.h"
#include "server/config.h"

namespace dashkv {

SetLimits SetLimits::From(const Config& c) {
  auto get = [](const std::atomic<int64_t>& v) {
    int64_t x = v.load(std::memory_order_relaxed);
    return x < 0 ? size_t{0} : static_cast<size_t>(x);
  };
  return SetLimits{get(c.set_max_intset_entries), get(c.set_max_listpack_entries),
                   get(c.set_max_listpack_value)};
}

uint64_t ShardRandom() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen();
}

std::unique_ptr<SetValue> SetValue::Create(std::string_view first, size_t size_hint,
                                           const SetLimits& limits) {
  auto v = std::make_unique<SetValue>();  // default: an empty IntSet
  if (ParseInt64(first) && size_hint <= limits.max_intset_entries) return v;
  if (size_hint <= limits.max_listpack_entries) {
    v->rep_.emplace<Listpack>();
  } else {
    v->rep_.emplace<MemberTable>().Reserve(size_hint);
  }
  return v;
}

size_t SetValue::size() const {
  switch (encoding()) {
    case Encoding::kIntSet: return std::get<IntSet>(rep_).size();
    case Encoding::kListpack: return std::get<Listpack>(rep_).size();
    case Encoding::kHashtable: return std::get<MemberTable>(rep_).size();
  }
  return 0;
}

bool SetValue::Add(std::string_view m, const SetLimits& limits) {
  if (auto* is = std::get_if<IntSet>(&rep_)) {
    if (std::optional<int64_t> v = ParseInt64(m)) {
      if (!is->Add(*v)) return false;
      if (is->size() > limits.max_intset_entries) {
        if (is->size() <= limits.max_listpack_entries) {
          ConvertToListpack();
        } else {
          ConvertToHashtable();
        }
      }
      return true;
    }
    if (is->size() < limits.max_listpack_entries && m.size() <= limits.max_listpack_value) {
      ConvertToListpack();
    } else {
      ConvertToHashtable();
    }
  }
  if (auto* lp = std::get_if<Listpack>(&rep_)) {
    if (lp->Find(m, lp->First()) != Listpack::kNoPos) return false;
    if (lp->size() < limits.max_listpack_entries && m.size() <= limits.max_listpack_value) {
      lp->Push(m, ListEnd::kTail);
      return true;
    }
    ConvertToHashtable();
  }
  return std::get<MemberTable>(rep_).Insert(m).second;
}

bool SetValue::Remove(std::string_view m) {
  switch (encoding()) {
    case Encoding::kIntSet: {
      std::optional<int64_t> v = ParseInt64(m);
      return v && std::get<IntSet>(rep_).Remove(*v);
    }
    case Encoding::kListpack: {
      Listpack& lp = std::get<Listpack>(rep_);
      Listpack::Pos p = lp.Find(m, lp.First());
      if (p == Listpack::kNoPos) return false;
      lp.Delete(p);
      return true;
    }
    case Encoding::kHashtable: return std::get<MemberTable>(rep_).Erase(m);
  }
  return false;
}

bool SetValue::Contains(std::string_view m) const {
  switch (encoding()) {
    case Encoding::kIntSet: {
      std::optional<int64_t> v = ParseInt64(m);
      return v && std::get<IntSet>(rep_).Contains(*v);
    }
    case Encoding::kListpack: {
      const Listpack& lp = std::get<Listpack>(rep_);
      return lp.Find(m, lp.First()) != Listpack::kNoPos;
    }
    case Encoding::kHashtable: return std::get<MemberTable>(rep_).Contains(m);
  }
  return false;
}

void SetValue::ForEach(absl::FunctionRef<void(std::string_view)> f) const {
  char buf[ListpackValue::kIntBufSize];
  switch (encoding()) {
    case Encoding::kIntSet:
      for (int64_t v : std::get<IntSet>(rep_)) {
        f(ListpackValue::Int(v).AsText(buf));
      }
      return;
    case Encoding::kListpack: {
      const Listpack& lp = std::get<Listpack>(rep_);
      for (Listpack::Pos p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) {
        f(lp.Get(p).AsText(buf));
      }
      return;
    }
    case Encoding::kHashtable: {
      const MemberTable& t = std::get<MemberTable>(rep_);
      t.ForEach([&](uint32_t slot) { f(t.member_view(slot)); });
      return;
    }
  }
}

std::vector<std::string> SetValue::Members() const {
  std::vector<std::string> out;
  out.reserve(size());
  ForEach([&](std::string_view m) { out.emplace_back(m); });
  return out;
}

std::string SetValue::RandomMember() const {
  DCHECK(!empty());
  uint64_t r = ShardRandom();
  switch (encoding()) {
    case Encoding::kIntSet: {
      const IntSet& is = std::get<IntSet>(rep_);
      return std::to_string(is.Get(static_cast<uint32_t>(r % is.size())));
    }
    case Encoding::kListpack: {
      const Listpack& lp = std::get<Listpack>(rep_);
      return lp.Get(lp.Seek(static_cast<long>(r % lp.size()))).ToString();
    }
    case Encoding::kHashtable: {
      const MemberTable& t = std::get<MemberTable>(rep_);
      return std::string(t.member_view(t.RandomSlot(ShardRandom)));
    }
  }
  return {};
}

void SetValue::ForEachRandom(uint64_t draws,
                             absl::FunctionRef<bool(std::string_view)> f) const {
  DCHECK(!empty());
  char buf[ListpackValue::kIntBufSize];
  switch (encoding()) {
    case Encoding::kIntSet: {
      const IntSet& is = std::get<IntSet>(rep_);
      for (uint64_t i = 0; i < draws; ++i) {
        int64_t v = is.Get(static_cast<uint32_t>(ShardRandom() % is.size()));
        if (!f(ListpackValue::Int(v).AsText(buf))) return;
      }
      return;
    }
    case Encoding::kListpack: {
      // Index the members once: a listpack has no random access.
      const Listpack& lp = std::get<Listpack>(rep_);
      std::vector<Listpack::Pos> pos;
      pos.reserve(lp.size());
      for (Listpack::Pos p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) pos.push_back(p);
      for (uint64_t i = 0; i < draws; ++i) {
        if (!f(lp.Get(pos[ShardRandom() % pos.size()]).AsText(buf))) return;
      }
      return;
    }
    case Encoding::kHashtable: {
      const MemberTable& t = std::get<MemberTable>(rep_);
      for (uint64_t i = 0; i < draws; ++i) {
        if (!f(t.member_view(t.RandomSlot(ShardRandom)))) return;
      }
      return;
    }
  }
}

std::string SetValue::PopRandom() {
  std::string m;
  if (auto* t = std::get_if<MemberTable>(&rep_)) {
    uint32_t slot = t->RandomSlot(ShardRandom);
    m = std::string(t->member_view(slot));
    t->EraseSlot(slot);
    return m;
  }
  m = RandomMember();
  Remove(m);
  return m;
}

uint64_t SetValue::Scan(uint64_t cursor, size_t count,
                        absl::FunctionRef<void(std::string_view)> f) const {
  if (const auto* t = std::get_if<MemberTable>(&rep_)) {
    return t->Scan(cursor, count, [&](uint32_t slot) { f(t->member_view(slot)); });
  }
  ForEach(f);
  return 0;
}

size_t SetValue::MallocUsed() const {
  size_t n = sizeof(*this);
  switch (encoding()) {
    case Encoding::kIntSet: return n + std::get<IntSet>(rep_).bytes();
    case Encoding::kListpack: return n + std::get<Listpack>(rep_).MallocUsage();
    case Encoding::kHashtable: return n + std::get<MemberTable>(rep_).MallocUsed();
  }
  return n;
}

std::string_view SetValue::EncodingName() const {
  switch (encoding()) {
    case Encoding::kIntSet: return "intset";
    case Encoding::kListpack: return "listpack";
    case Encoding::kHashtable: return "hashtable";
  }
  return {};
}

void SetValue::ConvertToListpack() {
  Listpack lp;
  char buf[ListpackValue::kIntBufSize];
  for (int64_t v : std::get<IntSet>(rep_)) lp.Push(ListpackValue::Int(v).AsText(buf), ListEnd::kTail);
  rep_ = std::move(lp);
}

void SetValue::ConvertToHashtable() {
  MemberTable t;
  t.Reserve(size() + 1);
  ForEach([&](std::string_view m) { t.Insert(m); });
  rep_ = std::move(t);
}

std::unique_ptr<SetValue> SetValue::Clone() const {
  auto copy = std::make_unique<SetValue>();
  switch (encoding()) {
    case Encoding::kIntSet:
      copy->rep_ = std::get<IntSet>(rep_).Clone();
      break;
    case Encoding::kListpack:
      copy->rep_ = Listpack::Copy(std::get<Listpack>(rep_).bytes());
      break;
    case Encoding::kHashtable: {
      MemberTable t;
      t.Reserve(size());
      ForEach([&](std::string_view m) { t.Insert(m); });
      copy->rep_ = std::move(t);
      break;
    }
  }
  return copy;
}

}  // namespace dashkv
