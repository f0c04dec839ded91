#include "server/values/hash_value.h"

#include <absl/container/flat_hash_set.h>
#include <absl/random/random.h>

#include <algorithm>

#include "core/base/logging.h"

namespace dashkv {

namespace {
absl::BitGen& Rng() {
  thread_local absl::BitGen gen;
  return gen;
}
}  // namespace

Listpack::Pos HashValue::FindInListpack(std::string_view field) const {
  Listpack::Pos first = lp_.First();
  if (first == Listpack::kNoPos) return Listpack::kNoPos;
  return lp_.Find(field, first, 1);
}

std::optional<std::string_view> HashValue::Get(std::string_view field,
                                               std::string* scratch) const {
  if (is_map_) {
    const CompactObj* v = map_.Find(field);
    if (v == nullptr) return std::nullopt;
    return v->GetString(scratch);
  }
  Listpack::Pos p = FindInListpack(field);
  if (p == Listpack::kNoPos) return std::nullopt;
  ListpackValue v = lp_.Get(lp_.Next(p));
  if (!v.is_int()) return v.str_value();
  scratch->clear();
  v.AppendTo(scratch);
  return std::string_view(*scratch);
}

bool HashValue::Contains(std::string_view field) const {
  return is_map_ ? map_.Find(field) != nullptr : FindInListpack(field) != Listpack::kNoPos;
}

bool HashValue::Set(std::string_view field, std::string_view value, const Limits& limits,
                    SetMode mode) {
  if (!is_map_ && (field.size() > limits.max_value || value.size() > limits.max_value)) {
    ConvertToMap();
  }
  if (is_map_) {
    return mode == SetMode::kIfMissing ? map_.SetIfMissing(field, value) : map_.Set(field, value);
  }
  Listpack::Pos p = FindInListpack(field);
  if (p != Listpack::kNoPos) {
    if (mode == SetMode::kAlways) lp_.Replace(lp_.Next(p), value);
    return false;
  }
  if (size() + 1 > limits.max_entries) {
    ConvertToMap();
    return map_.Set(field, value);
  }
  lp_.Push(field, ListEnd::kTail);
  lp_.Push(value, ListEnd::kTail);
  return true;
}

bool HashValue::Delete(std::string_view field) {
  if (is_map_) return map_.Erase(field);
  Listpack::Pos p = FindInListpack(field);
  if (p == Listpack::kNoPos) return false;
  lp_.DeleteRange(p, 2);
  return true;
}

void HashValue::ForEach(PairFn fn) const {
  if (is_map_) {
    std::string fs, vs;
    map_.ForEach([&](const CompactObj& f, const CompactObj& v) {
      fn(f.GetString(&fs), v.GetString(&vs));
    });
    return;
  }
  char fbuf[ListpackValue::kIntBufSize], vbuf[ListpackValue::kIntBufSize];
  for (Listpack::Pos p = lp_.First(); p != Listpack::kNoPos;) {
    Listpack::Pos vp = lp_.Next(p);
    fn(lp_.Get(p).AsText(fbuf), lp_.Get(vp).AsText(vbuf));
    p = lp_.Next(vp);
  }
}

uint64_t HashValue::Scan(uint64_t cursor, size_t count, PairFn fn) const {
  if (!is_map_) {
    ForEach(fn);
    return 0;
  }
  size_t seen = 0;
  std::string fs, vs;
  // Bound the buckets visited so that a sparse table cannot make one call O(buckets).
  size_t max_buckets = count > SIZE_MAX / 10 ? SIZE_MAX : count * 10;
  do {
    cursor = map_.Scan(cursor, [&](const CompactObj& f, const CompactObj& v) {
      fn(f.GetString(&fs), v.GetString(&vs));
      ++seen;
    });
  } while (cursor != 0 && seen < count && --max_buckets > 0);
  return cursor;
}

void HashValue::ForEachRandom(
    uint64_t draws, absl::FunctionRef<bool(std::string_view, std::string_view)> fn) const {
  DCHECK(!empty());
  absl::BitGen& gen = Rng();
  const size_t n = size();
  if (!is_map_) {
    // Listpack: index the fields once, then draw positions.
    std::vector<Listpack::Pos> fields;
    fields.reserve(n);
    for (Listpack::Pos p = lp_.First(); p != Listpack::kNoPos; p = lp_.Next(lp_.Next(p))) {
      fields.push_back(p);
    }
    char fbuf[ListpackValue::kIntBufSize], vbuf[ListpackValue::kIntBufSize];
    for (uint64_t i = 0; i < draws; ++i) {
      Listpack::Pos p = fields[absl::Uniform<size_t>(gen, 0, n)];
      if (!fn(lp_.Get(p).AsText(fbuf), lp_.Get(lp_.Next(p)).AsText(vbuf))) return;
    }
    return;
  }
  std::string fs, vs;
  if (draws < n / 4) {
    // Few draws from a large table: uniform table draws, no O(size) index.
    bool go_on = true;
    auto rand = [&] { return absl::Uniform<uint64_t>(gen); };
    for (uint64_t i = 0; i < draws && go_on; ++i) {
      map_.RandomEntry(rand, [&](const CompactObj& f, const CompactObj& v) {
        go_on = fn(f.GetString(&fs), v.GetString(&vs));
      });
    }
    return;
  }
  std::vector<std::pair<const CompactObj*, const CompactObj*>> entries;
  entries.reserve(n);
  map_.ForEach([&](const CompactObj& f, const CompactObj& v) { entries.emplace_back(&f, &v); });
  for (uint64_t i = 0; i < draws; ++i) {
    const auto& [f, v] = entries[absl::Uniform<size_t>(gen, 0, n)];
    if (!fn(f->GetString(&fs), v->GetString(&vs))) return;
  }
}

std::vector<std::pair<std::string, std::string>> HashValue::RandomDistinct(uint64_t count) const {
  DCHECK(count < size());
  std::vector<std::pair<std::string, std::string>> out;
  absl::BitGen& gen = Rng();
  const size_t n = size();
  if (is_map_ && count * 3 <= n) {
    // Sparse: uniform table draws, duplicates skipped.
    auto rand = [&] { return absl::Uniform<uint64_t>(gen); };
    absl::flat_hash_set<std::string> picked;
    while (out.size() < count) {
      map_.RandomEntry(rand, [&](const CompactObj& f, const CompactObj& v) {
        std::string fs = f.ToString();
        if (picked.insert(fs).second) out.emplace_back(std::move(fs), v.ToString());
      });
    }
    return out;
  }
  out.reserve(n);
  ForEach([&](std::string_view f, std::string_view v) { out.emplace_back(f, v); });
  // Partial Fisher-Yates: the first `count` slots become a uniform sample.
  for (size_t i = 0; i < count; ++i) std::swap(out[i], out[absl::Uniform<size_t>(gen, i, n)]);
  out.resize(count);
  return out;
}

void HashValue::ConvertToMap() {
  if (is_map_) return;
  StringMap map;
  ForEach([&](std::string_view f, std::string_view v) { map.Set(f, v); });
  map_ = std::move(map);
  detail::ListFree(lp_.Release());
  is_map_ = true;
}

size_t HashValue::MallocUsed() const {
  return sizeof(HashValue) + (is_map_ ? map_.MallocUsed() : lp_.MallocUsage());
}

std::string_view HashValue::EncodingName() const { return is_map_ ? "hashtable" : "listpack"; }

std::unique_ptr<HashValue> HashValue::Clone() const {
  auto copy = std::make_unique<HashValue>();
  if (!is_map_) {
    copy->lp_ = Listpack::Copy(lp_.bytes());
    return copy;
  }
  map_.ForEach([&](const CompactObj& field, const CompactObj& value) {
    std::string f, v;
    copy->map_.Set(field.GetString(&f), value.GetString(&v));
  });
  detail::ListFree(copy->lp_.Release());
  copy->is_map_ = true;
  return copy;
}

}  // namespace dashkv
