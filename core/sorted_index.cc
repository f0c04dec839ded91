#include "core/sorted_index.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "core/base/logging.h"

namespace dashkv {

static_assert(std::endian::native == std::endian::little, "PackedMember inline layout");

// ---- PackedMember ----

PackedMember PackedMember::Make(std::string_view s) {
  if (s.size() <= kMaxInline) {
    uint8_t b[8] = {};
    b[0] = static_cast<uint8_t>(1 | (s.size() << 1));
    if (!s.empty()) std::memcpy(b + 1, s.data(), s.size());
    uint64_t bits;
    std::memcpy(&bits, b, 8);
    return PackedMember(bits);
  }
  uint8_t len_buf[10];
  size_t len_bytes = 0;
  for (uint64_t v = s.size();; v >>= 7) {
    uint8_t byte = v & 0x7f;
    if (v >= 0x80) byte |= 0x80;
    len_buf[len_bytes++] = byte;
    if (v < 0x80) break;
  }
  // operator new, not malloc: the server's memory accounting (core/memory.h) counts it.
  auto* blob = static_cast<uint8_t*>(::operator new(len_bytes + s.size()));
  std::memcpy(blob, len_buf, len_bytes);
  std::memcpy(blob + len_bytes, s.data(), s.size());
  uint64_t bits = reinterpret_cast<uintptr_t>(blob);
  DCHECK((bits & 1) == 0);
  return PackedMember(bits);
}

namespace {

// Decodes the LEB128 length at the head of a blob: returns (length, bytes of the prefix).
std::pair<size_t, size_t> BlobLength(const uint8_t* p) {
  size_t len = 0;
  size_t i = 0;
  int shift = 0;
  while (true) {
    uint8_t b = p[i++];
    len |= static_cast<size_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return {len, i};
    shift += 7;
  }
}

}  // namespace

void PackedMember::Free() {
  if (!is_inline()) ::operator delete(reinterpret_cast<void*>(bits_));
}

std::string_view PackedMember::view() const {
  if (is_inline()) {
    return {reinterpret_cast<const char*>(&bits_) + 1, static_cast<size_t>((bits_ >> 1) & 7)};
  }
  const auto* p = reinterpret_cast<const uint8_t*>(bits_);
  auto [len, prefix] = BlobLength(p);
  return {reinterpret_cast<const char*>(p + prefix), len};
}

size_t PackedMember::HeapBytes() const {
  if (is_inline()) return 0;
  auto [len, prefix] = BlobLength(reinterpret_cast<const uint8_t*>(bits_));
  return len + prefix;
}

// ---- Nodes ----

namespace {

constexpr uint32_t kT = 16;               // minimum degree
constexpr uint32_t kMaxKeys = 2 * kT - 1;  // 31
constexpr uint32_t kMinKeys = kT - 1;      // 15, except at the root

int CompareMembers(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

}  // namespace

struct SortedIndex::Slot {
  double score;
  PackedMember member;
};

struct SortedIndex::Node {
  uint16_t n;
  bool leaf;
  Slot keys[kMaxKeys];
};

namespace {

using Slot = SortedIndex::Slot;
using Node = SortedIndex::Node;

struct Inner : Node {
  Node* child[kMaxKeys + 1];
  uint32_t cnt[kMaxKeys + 1];  // elements in child[i]'s subtree
};

Inner* AsInner(Node* n) { return static_cast<Inner*>(n); }
const Inner* AsInner(const Node* n) { return static_cast<const Inner*>(n); }

// Compares a stored element with (score, member).
int Compare(const Slot& s, double score, std::string_view member) {
  if (s.score < score) return -1;
  if (s.score > score) return 1;
  return CompareMembers(s.member.view(), member);
}

// Returns the first key index whose element is >= (score, member).
uint32_t LowerBound(const Node* x, double score, std::string_view member) {
  uint32_t lo = 0, hi = x->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (Compare(x->keys[mid], score, member) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint64_t SumCounts(const Inner* x, uint32_t end) {
  uint64_t s = 0;
  for (uint32_t k = 0; k < end; ++k) s += x->cnt[k];
  return s;
}

uint64_t SubtreeSize(const Node* x) {
  return x->leaf ? x->n : x->n + SumCounts(AsInner(x), x->n + 1u);
}

// Moves the last element (and last child) of child i into the front of child i+1 through the
// separator key i.
void RotateRight(Inner* x, uint32_t i) {
  Node* left = x->child[i];
  Node* right = x->child[i + 1];
  std::memmove(right->keys + 1, right->keys, right->n * sizeof(Slot));
  right->keys[0] = x->keys[i];
  uint64_t moved = 1;
  if (!right->leaf) {
    Inner* l = AsInner(left);
    Inner* r = AsInner(right);
    std::memmove(r->child + 1, r->child, (r->n + 1u) * sizeof(Node*));
    std::memmove(r->cnt + 1, r->cnt, (r->n + 1u) * sizeof(uint32_t));
    r->child[0] = l->child[l->n];
    r->cnt[0] = l->cnt[l->n];
    moved += r->cnt[0];
  }
  x->keys[i] = left->keys[left->n - 1];
  left->n--;
  right->n++;
  x->cnt[i] -= static_cast<uint32_t>(moved);
  x->cnt[i + 1] += static_cast<uint32_t>(moved);
}

// Moves the first element (and first child) of child i+1 to the end of child i.
void RotateLeft(Inner* x, uint32_t i) {
  Node* left = x->child[i];
  Node* right = x->child[i + 1];
  left->keys[left->n] = x->keys[i];
  uint64_t moved = 1;
  if (!left->leaf) {
    Inner* l = AsInner(left);
    Inner* r = AsInner(right);
    l->child[l->n + 1] = r->child[0];
    l->cnt[l->n + 1] = r->cnt[0];
    moved += r->cnt[0];
    std::memmove(r->child, r->child + 1, r->n * sizeof(Node*));
    std::memmove(r->cnt, r->cnt + 1, r->n * sizeof(uint32_t));
  }
  x->keys[i] = right->keys[0];
  std::memmove(right->keys, right->keys + 1, (right->n - 1u) * sizeof(Slot));
  left->n++;
  right->n--;
  x->cnt[i] += static_cast<uint32_t>(moved);
  x->cnt[i + 1] -= static_cast<uint32_t>(moved);
}

}  // namespace

// ---- SortedIndex: allocation ----

namespace {

Node* NewNode(bool leaf, size_t* node_bytes) {
  size_t bytes = leaf ? sizeof(Node) : sizeof(Inner);
  auto* n = static_cast<Node*>(::operator new(bytes));  // counted by core/memory.h
  n->n = 0;
  n->leaf = leaf;
  *node_bytes += bytes;
  return n;
}

void FreeNode(Node* n, size_t* node_bytes) {
  *node_bytes -= n->leaf ? sizeof(Node) : sizeof(Inner);
  ::operator delete(n);
}

// Splits the full child i of x around its median, which moves up into x.
void SplitChild(Inner* x, uint32_t i, size_t* node_bytes) {
  Node* y = x->child[i];
  Node* z = NewNode(y->leaf, node_bytes);
  z->n = kT - 1;
  std::memcpy(z->keys, y->keys + kT, (kT - 1) * sizeof(Slot));
  if (!y->leaf) {
    std::memcpy(AsInner(z)->child, AsInner(y)->child + kT, kT * sizeof(Node*));
    std::memcpy(AsInner(z)->cnt, AsInner(y)->cnt + kT, kT * sizeof(uint32_t));
  }
  y->n = kT - 1;
  uint32_t tail = x->n - i;
  std::memmove(x->keys + i + 1, x->keys + i, tail * sizeof(Slot));
  std::memmove(x->child + i + 2, x->child + i + 1, tail * sizeof(Node*));
  std::memmove(x->cnt + i + 2, x->cnt + i + 1, tail * sizeof(uint32_t));
  x->keys[i] = y->keys[kT - 1];
  x->child[i + 1] = z;
  x->n++;
  uint32_t z_size = static_cast<uint32_t>(SubtreeSize(z));
  x->cnt[i + 1] = z_size;
  x->cnt[i] -= z_size + 1;
}

// Merges child i+1 and separator key i into child i (both children hold kMinKeys).
void Merge(Inner* x, uint32_t i, size_t* node_bytes) {
  Node* y = x->child[i];
  Node* z = x->child[i + 1];
  y->keys[y->n] = x->keys[i];
  std::memcpy(y->keys + y->n + 1, z->keys, z->n * sizeof(Slot));
  if (!y->leaf) {
    std::memcpy(AsInner(y)->child + y->n + 1, AsInner(z)->child, (z->n + 1u) * sizeof(Node*));
    std::memcpy(AsInner(y)->cnt + y->n + 1, AsInner(z)->cnt, (z->n + 1u) * sizeof(uint32_t));
  }
  y->n = static_cast<uint16_t>(y->n + 1 + z->n);
  x->cnt[i] += 1 + x->cnt[i + 1];
  uint32_t tail = x->n - i - 1;
  std::memmove(x->keys + i, x->keys + i + 1, tail * sizeof(Slot));
  std::memmove(x->child + i + 1, x->child + i + 2, tail * sizeof(Node*));
  std::memmove(x->cnt + i + 1, x->cnt + i + 2, tail * sizeof(uint32_t));
  x->n--;
  FreeNode(z, node_bytes);
}

// Gives child j of x at least kT keys, borrowing from a sibling or merging with one.
void FillChild(Inner* x, uint32_t j, size_t* node_bytes) {
  if (j > 0 && x->child[j - 1]->n >= kT) {
    RotateRight(x, j - 1);
  } else if (j < x->n && x->child[j + 1]->n >= kT) {
    RotateLeft(x, j);
  } else if (j < x->n) {
    Merge(x, j, node_bytes);
  } else {
    Merge(x, j - 1, node_bytes);
  }
}

}  // namespace

SortedIndex::SortedIndex(MemberOwnership ownership)
    : root_(NewNode(true, &node_bytes_)), owns_members_(ownership == MemberOwnership::kOwned) {}

void SortedIndex::ReleaseMember(PackedMember m) {
  if (!owns_members_) return;
  member_bytes_ -= m.HeapBytes();
  m.Free();
}

bool SortedIndex::InsertBorrowed(double score, PackedMember member) {
  DCHECK(!owns_members_);
  DCHECK(!std::isnan(score));
  return InsertSlot(score, member);
}

SortedIndex::~SortedIndex() {
  if (root_ != nullptr) FreeSubtree(root_);
}

SortedIndex::SortedIndex(SortedIndex&& other) noexcept
    : root_(std::exchange(other.root_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      node_bytes_(std::exchange(other.node_bytes_, 0)),
      member_bytes_(std::exchange(other.member_bytes_, 0)),
      owns_members_(other.owns_members_) {
  other.root_ = NewNode(true, &other.node_bytes_);
}

SortedIndex& SortedIndex::operator=(SortedIndex&& other) noexcept {
  if (this != &other) {
    std::swap(root_, other.root_);
    std::swap(size_, other.size_);
    std::swap(node_bytes_, other.node_bytes_);
    std::swap(member_bytes_, other.member_bytes_);
    std::swap(owns_members_, other.owns_members_);
    other.Clear();
  }
  return *this;
}

void SortedIndex::FreeSubtree(Node* x) {
  if (!x->leaf) {
    for (uint32_t j = 0; j <= x->n; ++j) FreeSubtree(AsInner(x)->child[j]);
  }
  for (uint32_t j = 0; j < x->n; ++j) {
    ReleaseMember(x->keys[j].member);
  }
  FreeNode(x, &node_bytes_);
}

void SortedIndex::Clear() {
  FreeSubtree(root_);
  root_ = NewNode(true, &node_bytes_);
  size_ = 0;
}

void SortedIndex::CollapseRoot() {
  while (!root_->leaf && root_->n == 0) {
    Node* c = AsInner(root_)->child[0];
    FreeNode(root_, &node_bytes_);
    root_ = c;
  }
}

// ---- Insert / delete ----

bool SortedIndex::InsertSlot(double score, PackedMember m) {
  std::string_view mv = m.view();
  if (root_->n == kMaxKeys) {
    Inner* r = AsInner(NewNode(false, &node_bytes_));
    r->child[0] = root_;
    r->cnt[0] = static_cast<uint32_t>(size_);
    root_ = r;
    SplitChild(r, 0, &node_bytes_);
  }
  Inner* path[Iterator::kMaxDepth];
  uint32_t path_idx[Iterator::kMaxDepth];
  int depth = 0;
  auto rollback = [&] {
    for (int k = 0; k < depth; ++k) path[k]->cnt[path_idx[k]]--;
    return false;
  };
  Node* x = root_;
  while (true) {
    uint32_t i = LowerBound(x, score, mv);
    if (i < x->n && Compare(x->keys[i], score, mv) == 0) return rollback();
    if (x->leaf) {
      std::memmove(x->keys + i + 1, x->keys + i, (x->n - i) * sizeof(Slot));
      x->keys[i] = Slot{score, m};
      x->n++;
      size_++;
      return true;
    }
    Inner* xi = AsInner(x);
    if (xi->child[i]->n == kMaxKeys) {
      SplitChild(xi, i, &node_bytes_);
      int c = Compare(xi->keys[i], score, mv);
      if (c == 0) return rollback();
      if (c < 0) ++i;
    }
    xi->cnt[i]++;
    CHECK(depth < Iterator::kMaxDepth);
    path[depth] = xi;
    path_idx[depth++] = i;
    x = xi->child[i];
  }
}

bool SortedIndex::Insert(double score, std::string_view member) {
  DCHECK(!std::isnan(score));
  PackedMember m = PackedMember::Make(member);
  if (!InsertSlot(score, m)) {
    m.Free();
    return false;
  }
  member_bytes_ += m.HeapBytes();
  return true;
}

SortedIndex::Slot SortedIndex::RemoveAtRank(Node* x, uint64_t r) {
  while (true) {
    if (x->leaf) {
      DCHECK(r < x->n);
      Slot s = x->keys[r];
      std::memmove(x->keys + r, x->keys + r + 1, (x->n - r - 1) * sizeof(Slot));
      x->n--;
      return s;
    }
    Inner* xi = AsInner(x);
    uint64_t rc = r;  // rank inside child j, or 0 when key j is the target
    uint32_t j = 0;
    bool in_child = false;
    for (;; ++j) {
      if (rc < xi->cnt[j]) {
        in_child = true;
        break;
      }
      rc -= xi->cnt[j];
      DCHECK(j < xi->n);
      if (rc == 0) break;
      rc -= 1;
    }
    if (in_child) {
      if (xi->child[j]->n < kT) {
        FillChild(xi, j, &node_bytes_);
        continue;  // re-locate rank r in x, whose children changed
      }
      xi->cnt[j]--;
      x = xi->child[j];
      r = rc;
      continue;
    }
    // Key j of an inner node: replace it by its predecessor or successor, or merge around it.
    Node* y = xi->child[j];
    Node* z = xi->child[j + 1];
    if (y->n >= kT) {
      Slot out = xi->keys[j];
      xi->cnt[j]--;
      xi->keys[j] = RemoveAtRank(y, xi->cnt[j]);
      return out;
    }
    if (z->n >= kT) {
      Slot out = xi->keys[j];
      xi->cnt[j + 1]--;
      xi->keys[j] = RemoveAtRank(z, 0);
      return out;
    }
    uint64_t in_y = xi->cnt[j];  // the key's rank inside the merged child
    Merge(xi, j, &node_bytes_);
    xi->cnt[j]--;
    x = y;
    r = in_y;
  }
}

bool SortedIndex::Delete(double score, std::string_view member) {
  auto rank = Rank(score, member);
  if (!rank) return false;
  Slot s = RemoveAtRank(root_, *rank);
  size_--;
  CollapseRoot();
  ReleaseMember(s.member);
  return true;
}

bool SortedIndex::UpdateScore(double old_score, std::string_view member, double new_score) {
  DCHECK(!std::isnan(new_score));
  auto rank = Rank(old_score, member);
  if (!rank) return false;
  Iterator it = Seek(*rank);
  Slot& slot = it.stack_[it.depth_ - 1].node->keys[it.stack_[it.depth_ - 1].idx];
  std::string_view mv = slot.member.view();
  bool after_prev = *rank == 0 || [&] {
    Iterator p = it;
    p.Prev();
    return Compare(p.stack_[p.depth_ - 1].node->keys[p.stack_[p.depth_ - 1].idx], new_score,
                   mv) < 0;
  }();
  bool before_next = *rank + 1 == size_ || [&] {
    Iterator n = it;
    n.Next();
    return Compare(n.stack_[n.depth_ - 1].node->keys[n.stack_[n.depth_ - 1].idx], new_score,
                   mv) > 0;
  }();
  if (after_prev && before_next) {
    slot.score = new_score;
    return true;
  }
  Slot s = RemoveAtRank(root_, *rank);
  size_--;
  CollapseRoot();
  if (!InsertSlot(new_score, s.member)) {
    DCHECK(false);  // REQUIRES violated: (new_score, member) was present.
    ReleaseMember(s.member);
  }
  return true;
}

// ---- Queries ----

std::optional<uint64_t> SortedIndex::Rank(double score, std::string_view member) const {
  uint64_t acc = 0;
  const Node* x = root_;
  while (true) {
    uint32_t i = LowerBound(x, score, member);
    uint64_t before = i + (x->leaf ? 0 : SumCounts(AsInner(x), i));
    if (i < x->n && Compare(x->keys[i], score, member) == 0) {
      return acc + before + (x->leaf ? 0 : AsInner(x)->cnt[i]);
    }
    if (x->leaf) return std::nullopt;
    acc += before;
    x = AsInner(x)->child[i];
  }
}

SortedIndex::Element SortedIndex::At(uint64_t rank) const {
  DCHECK(rank < size_);
  Iterator it = Seek(rank);
  return it.element();
}

template <typename Before>
uint64_t SortedIndex::CountBefore(Before before) const {
  uint64_t acc = 0;
  const Node* x = root_;
  while (true) {
    uint32_t lo = 0, hi = x->n;  // first key that is not `before`
    while (lo < hi) {
      uint32_t mid = (lo + hi) / 2;
      if (before(x->keys[mid])) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    acc += lo;
    if (x->leaf) return acc;
    acc += SumCounts(AsInner(x), lo);
    x = AsInner(x)->child[lo];
  }
}

uint64_t SortedIndex::ScoreLowerRank(double min, bool exclusive) const {
  if (exclusive) return CountBefore([min](const Slot& s) { return s.score <= min; });
  return CountBefore([min](const Slot& s) { return s.score < min; });
}

uint64_t SortedIndex::ScoreUpperRank(double max, bool exclusive) const {
  if (exclusive) return CountBefore([max](const Slot& s) { return s.score < max; });
  return CountBefore([max](const Slot& s) { return s.score <= max; });
}

std::pair<uint64_t, uint64_t> SortedIndex::ScoreRangeRanks(const ScoreRange& range) const {
  if (range.IsEmpty()) return {0, 0};
  uint64_t first = ScoreLowerRank(range.min, range.min_exclusive);
  uint64_t last = ScoreUpperRank(range.max, range.max_exclusive);
  return {first, last < first ? first : last};
}

uint64_t SortedIndex::LexLowerRank(const LexBound& min) const {
  if (min.kind == LexBound::Kind::kExclusive) {
    return CountBefore([&](const Slot& s) { return CompareToLexBound(s.member.view(), min) <= 0; });
  }
  return CountBefore([&](const Slot& s) { return CompareToLexBound(s.member.view(), min) < 0; });
}

uint64_t SortedIndex::LexUpperRank(const LexBound& max) const {
  if (max.kind == LexBound::Kind::kExclusive) {
    return CountBefore([&](const Slot& s) { return CompareToLexBound(s.member.view(), max) < 0; });
  }
  return CountBefore([&](const Slot& s) { return CompareToLexBound(s.member.view(), max) <= 0; });
}

std::pair<uint64_t, uint64_t> SortedIndex::LexRangeRanks(const LexRange& range) const {
  if (range.IsEmpty()) return {0, 0};
  uint64_t first = LexLowerRank(range.min);
  uint64_t last = LexUpperRank(range.max);
  return {first, last < first ? first : last};
}

uint64_t SortedIndex::DeleteRankRange(uint64_t first, uint64_t last, DeleteCallback on_delete) {
  if (last > size_) last = size_;
  if (first >= last) return 0;
  for (uint64_t k = first; k < last; ++k) {
    Slot s = RemoveAtRank(root_, first);
    size_--;
    CollapseRoot();
    on_delete(s.score, s.member.view());
    ReleaseMember(s.member);
  }
  return last - first;
}

uint64_t SortedIndex::DeleteScoreRange(const ScoreRange& range, DeleteCallback on_delete) {
  auto [first, last] = ScoreRangeRanks(range);
  return DeleteRankRange(first, last, on_delete);
}

uint64_t SortedIndex::DeleteLexRange(const LexRange& range, DeleteCallback on_delete) {
  auto [first, last] = LexRangeRanks(range);
  return DeleteRankRange(first, last, on_delete);
}

// ---- Iterator ----

SortedIndex::Iterator SortedIndex::Seek(uint64_t rank) const {
  Iterator it;
  if (rank >= size_) return it;
  Node* x = root_;
  uint64_t r = rank;
  while (true) {
    CHECK(it.depth_ < Iterator::kMaxDepth);
    if (x->leaf) {
      it.stack_[it.depth_++] = {x, static_cast<uint32_t>(r)};
      return it;
    }
    Inner* xi = AsInner(x);
    for (uint32_t j = 0;; ++j) {
      if (r < xi->cnt[j]) {
        it.stack_[it.depth_++] = {x, j};
        x = xi->child[j];
        break;
      }
      r -= xi->cnt[j];
      if (r == 0) {
        it.stack_[it.depth_++] = {x, j};
        return it;
      }
      r -= 1;
    }
  }
}

double SortedIndex::Iterator::score() const {
  const Frame& f = stack_[depth_ - 1];
  return f.node->keys[f.idx].score;
}

std::string_view SortedIndex::Iterator::member() const {
  const Frame& f = stack_[depth_ - 1];
  return f.node->keys[f.idx].member.view();
}

void SortedIndex::Iterator::Next() {
  Frame& top = stack_[depth_ - 1];
  if (!top.node->leaf) {
    top.idx += 1;  // the frame now means "inside child idx"
    Node* c = AsInner(top.node)->child[top.idx];
    while (!c->leaf) {
      stack_[depth_++] = {c, 0};
      c = AsInner(c)->child[0];
    }
    stack_[depth_++] = {c, 0};
    return;
  }
  if (top.idx + 1 < top.node->n) {
    top.idx++;
    return;
  }
  depth_--;
  while (depth_ > 0) {
    Frame& f = stack_[depth_ - 1];
    if (f.idx < f.node->n) return;  // coming out of child idx: the element is key idx
    depth_--;
  }
}

void SortedIndex::Iterator::Prev() {
  Frame& top = stack_[depth_ - 1];
  if (!top.node->leaf) {
    Node* c = AsInner(top.node)->child[top.idx];  // the frame now means "inside child idx"
    while (!c->leaf) {
      stack_[depth_++] = {c, c->n};
      c = AsInner(c)->child[c->n];
    }
    stack_[depth_++] = {c, c->n - 1u};
    return;
  }
  if (top.idx > 0) {
    top.idx--;
    return;
  }
  depth_--;
  while (depth_ > 0) {
    Frame& f = stack_[depth_ - 1];
    if (f.idx > 0) {  // coming out of child idx backwards: the element is key idx - 1
      f.idx--;
      return;
    }
    depth_--;
  }
}

// ---- Invariants ----

namespace {

struct CheckState {
  bool ok = true;
  int leaf_depth = -1;
  bool has_prev = false;
  double prev_score = 0;
  std::string prev_member;
};

uint64_t CheckNode(const Node* x, int depth, bool is_root, CheckState* st) {
  if (x->n > kMaxKeys || (!is_root && x->n < kMinKeys)) st->ok = false;
  if (x->leaf) {
    if (st->leaf_depth < 0) st->leaf_depth = depth;
    if (st->leaf_depth != depth) st->ok = false;
  }
  uint64_t total = x->n;
  for (uint32_t j = 0; j <= x->n; ++j) {
    if (!x->leaf) {
      uint64_t sub = CheckNode(AsInner(x)->child[j], depth + 1, false, st);
      if (sub != AsInner(x)->cnt[j]) st->ok = false;
      total += sub;
    }
    if (j == x->n) break;
    const Slot& s = x->keys[j];
    if (std::isnan(s.score)) st->ok = false;
    if (st->has_prev && Compare(s, st->prev_score, st->prev_member) <= 0) st->ok = false;
    st->has_prev = true;
    st->prev_score = s.score;
    st->prev_member.assign(s.member.view());
  }
  return total;
}

}  // namespace

bool SortedIndex::CheckInvariants() const {
  CheckState st;
  uint64_t total = CheckNode(root_, 0, true, &st);
  return st.ok && total == size_;
}

}  // namespace dashkv
