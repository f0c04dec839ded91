#include "core/quicklist.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/base/logging.h"

namespace dashkv {

struct QuickList::Node {
  Node* prev;
  Node* next;
  uint8_t* data;           // raw listpack, or [u32 size][zstd frame] when compressed
  uint32_t raw_bytes;      // listpack size (also when compressed)
  uint16_t count;          // elements
  uint8_t compressed;      // data holds a zstd frame
  uint8_t incompressible;  // a compression attempt did not pay off since the last change
};

namespace {

constexpr uint32_t kMinCompressBytes = 48;
constexpr uint32_t kMinCompressGain = 8;
constexpr uint32_t kSafetyByteLimit = 8192;
constexpr uint16_t kMaxNodeCount = 65534;  // keeps the listpack header count exact
constexpr int kZstdLevel = 1;

// Per-thread zstd contexts and output scratch: contexts are costly to create, so each thread
// keeps one pair. This is a cache, not shared state: nothing survives between calls.
class ZstdCache {
 public:
  ZstdCache() : cctx_(ZSTD_createCCtx()), dctx_(ZSTD_createDCtx()) {
    CHECK(cctx_ != nullptr && dctx_ != nullptr);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, kZstdLevel);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 0);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_contentSizeFlag, 0);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_dictIDFlag, 0);
  }
  ~ZstdCache() {
    ZSTD_freeCCtx(cctx_);
    ZSTD_freeDCtx(dctx_);
  }
  ZstdCache(const ZstdCache&) = delete;
  ZstdCache& operator=(const ZstdCache&) = delete;

  // Compresses src into the scratch buffer; returns the frame size or 0 on failure.
  size_t Compress(const uint8_t* src, size_t n) {
    size_t bound = ZSTD_compressBound(n);
    if (bound > cap_) {
      buf_.reset(new uint8_t[bound]);
      cap_ = bound;
    }
    size_t r = ZSTD_compress2(cctx_, buf_.get(), cap_, src, n);
    return ZSTD_isError(r) ? 0 : r;
  }
  const uint8_t* scratch() const { return buf_.get(); }

  void Decompress(const uint8_t* blob, uint8_t* dst, uint32_t raw_bytes) {
    uint32_t zsize;
    std::memcpy(&zsize, blob, 4);
    size_t r = ZSTD_decompressDCtx(dctx_, dst, raw_bytes, blob + 4, zsize);
    CHECK(!ZSTD_isError(r) && r == raw_bytes);
  }

 private:
  ZSTD_CCtx* cctx_;
  ZSTD_DCtx* dctx_;
  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_ = 0;
};

ZstdCache& Zstd() {
  thread_local ZstdCache cache;
  return cache;
}

// Mutable listpack access to a raw node; writes buffer, size and count back when destroyed.
template <typename N>
class NodeLp {
 public:
  explicit NodeLp(N* n) : n_(n), lp_(Listpack::Adopt(n->data)) { DCHECK(!n->compressed); }
  ~NodeLp() {
    n_->raw_bytes = lp_.total_bytes();
    n_->count = static_cast<uint16_t>(lp_.size());
    n_->incompressible = 0;
    n_->data = lp_.Release();
  }
  NodeLp(const NodeLp&) = delete;
  NodeLp& operator=(const NodeLp&) = delete;
  Listpack* operator->() { return &lp_; }

 private:
  N* n_;
  Listpack lp_;
};

// A node's listpack bytes for reading: the node data, or a decompressed copy in buf.
template <typename N>
const uint8_t* Readable(const N* n, std::unique_ptr<uint8_t[]>* buf, size_t* cap) {
  if (!n->compressed) return n->data;
  if (*cap < n->raw_bytes) {
    buf->reset(new uint8_t[n->raw_bytes]);
    *cap = n->raw_bytes;
  }
  Zstd().Decompress(n->data, buf->get(), n->raw_bytes);
  return buf->get();
}

}  // namespace

// ----- construction -----

QuickList::QuickList(int fill, int compress_depth) {
  static_assert(sizeof(void*) != 8 || sizeof(Node) == 32, "a node should stay 32 bytes");
  fill_ = static_cast<int16_t>(std::clamp(fill, -5, kMaxFill));
  depth_ = static_cast<uint16_t>(std::clamp(compress_depth, 0, 65535));
}

QuickList::~QuickList() {
  for (Node* n = head_; n != nullptr;) {
    Node* next = n->next;
    detail::ListFree(n->data);
    detail::ListFree(n);
    n = next;
  }
}

QuickList::QuickList(QuickList&& o) noexcept
    : head_(std::exchange(o.head_, nullptr)),
      tail_(std::exchange(o.tail_, nullptr)),
      count_(std::exchange(o.count_, 0)),
      nodes_(std::exchange(o.nodes_, 0)),
      fill_(o.fill_),
      depth_(o.depth_) {}

QuickList& QuickList::operator=(QuickList&& o) noexcept {
  if (this != &o) {
    this->~QuickList();
    new (this) QuickList(std::move(o));
  }
  return *this;
}

void QuickList::SetOptions(int fill, int compress_depth) {
  fill_ = static_cast<int16_t>(std::clamp(fill, -5, kMaxFill));
  depth_ = static_cast<uint16_t>(std::clamp(compress_depth, 0, 65535));
  RecompressAll();
}

// ----- limits -----

uint32_t QuickList::NodeByteLimit() const {
  return fill_ < 0 ? 4096u << (-fill_ - 1) : kSafetyByteLimit;
}

bool QuickList::AllowInsert(const Node* n, uint32_t entry_bytes) const {
  if (n->count >= kMaxNodeCount) return false;
  if (uint64_t{n->raw_bytes} + entry_bytes > NodeByteLimit()) return false;
  return fill_ < 0 || n->count < std::max<int>(fill_, 1);
}

bool QuickList::IsLarge(uint32_t entry_bytes) const {
  return uint64_t{entry_bytes} + ListpackView::kEmptySize > NodeByteLimit();
}

bool QuickList::AllowMerge(const Node* a, const Node* b) const {
  uint32_t count = uint32_t{a->count} + b->count;
  if (count > kMaxNodeCount) return false;
  if (uint64_t{a->raw_bytes} + b->raw_bytes - ListpackView::kEmptySize > NodeByteLimit()) {
    return false;
  }
  return fill_ < 0 || count <= static_cast<uint32_t>(std::max<int>(fill_, 1));
}

// ----- nodes and links -----

QuickList::Node* QuickList::NewNode(Listpack lp) {
  auto* n = static_cast<Node*>(detail::ListAlloc(sizeof(Node)));
  CHECK(n != nullptr);
  n->prev = n->next = nullptr;
  n->raw_bytes = lp.total_bytes();
  n->count = static_cast<uint16_t>(lp.size());
  n->compressed = 0;
  n->incompressible = 0;
  n->data = lp.Release();
  return n;
}

void QuickList::LinkAfter(Node* pos, Node* n) {
  if (pos == nullptr) {
    n->prev = nullptr;
    n->next = head_;
    if (head_ != nullptr) head_->prev = n; else tail_ = n;
    head_ = n;
  } else {
    n->prev = pos;
    n->next = pos->next;
    if (pos->next != nullptr) pos->next->prev = n; else tail_ = n;
    pos->next = n;
  }
  ++nodes_;
}

void QuickList::LinkBefore(Node* pos, Node* n) { LinkAfter(pos ? pos->prev : tail_, n); }

void QuickList::Unlink(Node* n) {
  if (n->prev != nullptr) n->prev->next = n->next; else head_ = n->next;
  if (n->next != nullptr) n->next->prev = n->prev; else tail_ = n->prev;
  --nodes_;
  detail::ListFree(n->data);
  detail::ListFree(n);
}

std::pair<QuickList::Node*, size_t> QuickList::Locate(long index) const {
  long n = static_cast<long>(count_);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return {nullptr, 0};
  size_t i = static_cast<size_t>(index);
  if (i < count_ / 2) {
    Node* x = head_;
    while (i >= x->count) {
      i -= x->count;
      x = x->next;
    }
    return {x, i};
  }
  size_t from_tail = count_ - 1 - i;
  Node* x = tail_;
  while (from_tail >= x->count) {
    from_tail -= x->count;
    x = x->prev;
  }
  return {x, x->count - 1 - from_tail};
}

// ----- compression -----

void QuickList::Decompress(Node* n) {
  if (!n->compressed) return;
  auto* raw = static_cast<uint8_t*>(detail::ListAlloc(n->raw_bytes));
  CHECK(raw != nullptr);
  Zstd().Decompress(n->data, raw, n->raw_bytes);
  detail::ListFree(n->data);
  n->data = raw;
  n->compressed = 0;
}

void QuickList::Compress(Node* n) {
  if (n->compressed || n->incompressible) return;
  if (n->raw_bytes < kMinCompressBytes) {
    n->incompressible = 1;
    return;
  }
  ZstdCache& z = Zstd();
  size_t zsize = z.Compress(n->data, n->raw_bytes);
  if (zsize == 0 || zsize + 4 + kMinCompressGain > n->raw_bytes) {
    n->incompressible = 1;
    return;
  }
  auto* blob = static_cast<uint8_t*>(detail::ListAlloc(zsize + 4));
  CHECK(blob != nullptr);
  uint32_t z32 = static_cast<uint32_t>(zsize);
  std::memcpy(blob, &z32, 4);
  std::memcpy(blob + 4, z.scratch(), zsize);
  detail::ListFree(n->data);
  n->data = blob;
  n->compressed = 1;
}

void QuickList::Recompress(Node* touched) {
  if (depth_ == 0) return;
  Node* f = head_;
  Node* b = tail_;
  bool touched_at_end = false;
  for (unsigned i = 0; i < depth_ && f != nullptr; ++i) {
    Decompress(f);
    Decompress(b);
    touched_at_end |= f == touched || b == touched;
    f = f->next;
    b = b->prev;
  }
  if (nodes_ <= 2u * depth_) return;
  Compress(f);
  Compress(b);
  if (touched != nullptr && !touched_at_end) Compress(touched);
}

void QuickList::RecompressAll() {
  size_t i = 0;
  for (Node* n = head_; n != nullptr; n = n->next, ++i) {
    bool at_end = depth_ == 0 || i < depth_ || i + depth_ >= nodes_;
    if (at_end) {
      Decompress(n);
    } else {
      n->incompressible = 0;
      Compress(n);
    }
  }
}

// ----- mutations -----

void QuickList::NodePush(Node* n, std::string_view v, ListEnd end) {
  Decompress(n);
  {
    NodeLp lp(n);
    lp->Push(v, end);
  }
  ++count_;
}

void QuickList::Push(std::string_view v, ListEnd end) {
  uint32_t eb = ListpackView::EncodedSize(v);
  Node* n = end == ListEnd::kHead ? head_ : tail_;
  if (n != nullptr && AllowInsert(n, eb)) {
    bool was_compressed = n->compressed;
    NodePush(n, v, end);
    if (was_compressed) Recompress(n);
    return;
  }
  Listpack lp;
  lp.Push(v, ListEnd::kTail);
  Node* nn = NewNode(std::move(lp));
  if (end == ListEnd::kHead) LinkAfter(nullptr, nn); else LinkAfter(tail_, nn);
  ++count_;
  Recompress(nn);
}

std::optional<std::string> QuickList::Pop(ListEnd end) {
  if (count_ == 0) return std::nullopt;
  Node* n = end == ListEnd::kHead ? head_ : tail_;
  Decompress(n);
  std::string out;
  {
    NodeLp lp(n);
    Listpack::Pos p = end == ListEnd::kHead ? lp->First() : lp->Last();
    out = lp->Get(p).ToString();
    lp->Delete(p);
  }
  --count_;
  if (n->count == 0) {
    Unlink(n);
    Recompress(nullptr);
  } else {
    Node* m = end == ListEnd::kHead ? TryMerge(n, n->next) : TryMerge(n->prev, n);
    Recompress(m != nullptr ? m : n);
  }
  return out;
}

QuickList::Node* QuickList::TryMerge(Node* a, Node* b) {
  if (a == nullptr || b == nullptr || !AllowMerge(a, b)) return nullptr;
  Decompress(a);
  Decompress(b);
  {
    NodeLp lp(a);
    lp->Append(ListpackView(b->data));
  }
  Unlink(b);
  return a;
}

QuickList::Node* QuickList::MergeAround(Node* n) {
  if (Node* m = TryMerge(n->prev, n)) n = m;
  if (Node* m = TryMerge(n, n->next)) n = m;
  return n;
}

bool QuickList::Set(long index, std::string_view v) {
  auto [n, local] = Locate(index);
  if (n == nullptr) return false;
  uint32_t eb = ListpackView::EncodedSize(v);
  Decompress(n);
  uint32_t old = ListpackView(n->data).EntryBytes(ListpackView(n->data).Seek(local));
  if (n->count == 1 || (!IsLarge(eb) && n->raw_bytes - old + eb <= NodeByteLimit())) {
    {
      NodeLp lp(n);
      lp->Replace(lp->Seek(static_cast<long>(local)), v);
    }
    Recompress(n);
    return true;
  }
  // The new value does not fit in place: delete, then insert with the split/merge rules.
  {
    NodeLp lp(n);
    lp->DeleteRange(static_cast<long>(local), 1);
  }
  --count_;
  Recompress(n);
  InsertInNode(n, local, v);
  return true;
}

void QuickList::InsertInNode(Node* n, size_t local, std::string_view v) {
  uint32_t eb = ListpackView::EncodedSize(v);
  bool large = IsLarge(eb);
  bool at_head = local == 0;
  bool at_tail = local == n->count;
  ++count_;
  if (!large && AllowInsert(n, eb)) {
    Decompress(n);
    {
      NodeLp lp(n);
      if (at_tail) lp->Push(v, ListEnd::kTail);
      else lp->Insert(lp->Seek(static_cast<long>(local)), Where::kBefore, v);
    }
    Recompress(n);
    return;
  }
  if (!large && at_tail && n->next != nullptr && AllowInsert(n->next, eb)) {
    --count_;
    NodePush(n->next, v, ListEnd::kHead);
    Recompress(n->next);
    return;
  }
  if (!large && at_head && n->prev != nullptr && AllowInsert(n->prev, eb)) {
    --count_;
    NodePush(n->prev, v, ListEnd::kTail);
    Recompress(n->prev);
    return;
  }
  auto single = [&] {
    Listpack lp;
    lp.Push(v, ListEnd::kTail);
    return NewNode(std::move(lp));
  };
  if (at_tail || at_head) {
    Node* nn = single();
    if (at_tail) LinkAfter(n, nn); else LinkBefore(n, nn);
    Recompress(nn);
    return;
  }
  // Split n at local: n keeps [0, local), r takes [local, count).
  Decompress(n);
  Listpack right;
  {
    NodeLp lp(n);
    right = lp->SplitAt(lp->Seek(static_cast<long>(local)));
  }
  Node* r = NewNode(std::move(right));
  LinkAfter(n, r);
  Node* nn = nullptr;
  --count_;
  if (!large && AllowInsert(n, eb)) {
    NodePush(n, v, ListEnd::kTail);
  } else if (!large && AllowInsert(r, eb)) {
    NodePush(r, v, ListEnd::kHead);
  } else {
    nn = single();
    LinkAfter(n, nn);
    ++count_;
  }
  if (Node* m = TryMerge(n->prev, n)) n = m;
  if (Node* m = TryMerge(r, r->next)) r = m;
  Recompress(n);
  Recompress(r);
  if (nn != nullptr) Recompress(nn);
}

void QuickList::InsertAt(size_t index, std::string_view v) {
  DCHECK(index <= count_);
  if (index == count_) {
    Push(v, ListEnd::kTail);
    return;
  }
  if (index == 0) {
    Push(v, ListEnd::kHead);
    return;
  }
  auto [n, local] = Locate(static_cast<long>(index));
  InsertInNode(n, local, v);
}

bool QuickList::Insert(std::string_view pivot, std::string_view v, Where where) {
  std::unique_ptr<uint8_t[]> buf;
  size_t cap = 0;
  for (Node* n = head_; n != nullptr; n = n->next) {
    ListpackView lv(Readable(n, &buf, &cap));
    ListpackView::Pos p = lv.Find(pivot, lv.First());
    if (p == ListpackView::kNoPos) continue;
    size_t local = 0;
    for (ListpackView::Pos q = lv.First(); q != p; q = lv.Next(q)) ++local;
    InsertInNode(n, where == Where::kBefore ? local : local + 1, v);
    return true;
  }
  return false;
}

size_t QuickList::DeleteRange(long start, size_t count) {
  if (start < 0) start = std::max(0L, start + static_cast<long>(count_));
  if (count == 0 || static_cast<size_t>(start) >= count_) return 0;
  size_t remaining = std::min(count, count_ - static_cast<size_t>(start));
  size_t deleted = remaining;
  auto [n, local] = Locate(start);
  Node* left = local > 0 ? n : n->prev;  // survives: partially trimmed or untouched
  while (remaining > 0) {
    Node* next = n->next;
    if (local == 0 && remaining >= n->count) {
      remaining -= n->count;
      count_ -= n->count;
      Unlink(n);
    } else {
      size_t del = std::min<size_t>(remaining, n->count - local);
      Decompress(n);
      {
        NodeLp lp(n);
        lp->DeleteRange(static_cast<long>(local), del);
      }
      remaining -= del;
      count_ -= del;
    }
    local = 0;
    n = next;
  }
  if (left != nullptr) left = MergeAround(left);
  Node* right = left != nullptr ? left->next : head_;
  if (right != nullptr) right = MergeAround(right);
  Recompress(left);
  Recompress(right);
  return deleted;
}

void QuickList::Trim(long start, long stop) {
  long len = static_cast<long>(count_);
  if (start < 0) start += len;
  if (stop < 0) stop += len;
  if (start < 0) start = 0;
  size_t ltrim, rtrim;
  if (start > stop || start >= len) {
    ltrim = static_cast<size_t>(len);
    rtrim = 0;
  } else {
    if (stop >= len) stop = len - 1;
    ltrim = static_cast<size_t>(start);
    rtrim = static_cast<size_t>(len - stop - 1);
  }
  if (rtrim > 0) DeleteRange(static_cast<long>(count_ - rtrim), rtrim);
  if (ltrim > 0) DeleteRange(0, ltrim);
}

size_t QuickList::Remove(std::string_view v, long count) {
  // |count| without negating LONG_MIN (LREM key -9223372036854775808 v).
  size_t limit = count < 0 ? static_cast<size_t>(-(count + 1)) + 1 : static_cast<size_t>(count);
  ListEnd from = count >= 0 ? ListEnd::kHead : ListEnd::kTail;
  std::unique_ptr<uint8_t[]> buf;
  size_t cap = 0;
  size_t removed = 0;
  Node* n = from == ListEnd::kHead ? head_ : tail_;
  while (n != nullptr && (limit == 0 || removed < limit)) {
    Node* next = from == ListEnd::kHead ? n->next : n->prev;
    ListpackView lv(Readable(n, &buf, &cap));
    if (lv.Find(v, lv.First()) != ListpackView::kNoPos) {
      Decompress(n);
      size_t k;
      {
        NodeLp lp(n);
        k = lp->RemoveMatches(v, limit == 0 ? 0 : limit - removed, from);
      }
      removed += k;
      count_ -= k;
      if (n->count == 0) {
        Unlink(n);
        Recompress(nullptr);
      } else {
        // Merge only with the already visited neighbour, so `next` stays valid.
        Node* m = from == ListEnd::kHead ? TryMerge(n->prev, n) : TryMerge(n, n->next);
        Recompress(m != nullptr ? m : n);
      }
    }
    n = next;
  }
  return removed;
}

void QuickList::AppendNode(Listpack lp) {
  if (lp.empty()) return;
  if (lp.size() > kMaxNodeCount) {
    for (auto p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) {
      Push(lp.Get(p).ToString(), ListEnd::kTail);
    }
    return;
  }
  Node* n = NewNode(std::move(lp));
  LinkAfter(tail_, n);
  count_ += n->count;
  Recompress(n);
}

// ----- reads -----

std::optional<std::string> QuickList::Index(long index) const {
  Iterator it = At(index);
  if (!it.Valid()) return std::nullopt;
  return it.Value().ToString();
}

void QuickList::Iterator::Load(const Node* n) {
  node_ = n;
  lp_ = n == nullptr ? nullptr : Readable(n, &buf_, &buf_cap_);
}

void QuickList::Iterator::Next() {
  ListpackView lv(lp_);
  pos_ = toward_ == ListEnd::kTail ? lv.Next(pos_) : lv.Prev(pos_);
  if (pos_ != ListpackView::kNoPos) return;
  Load(toward_ == ListEnd::kTail ? node_->next : node_->prev);
  if (node_ == nullptr) return;
  ListpackView nv(lp_);
  pos_ = toward_ == ListEnd::kTail ? nv.First() : nv.Last();
}

QuickList::Iterator QuickList::Begin(ListEnd from) const {
  Iterator it;
  it.toward_ = from == ListEnd::kHead ? ListEnd::kTail : ListEnd::kHead;
  it.Load(from == ListEnd::kHead ? head_ : tail_);
  if (it.node_ != nullptr) {
    ListpackView lv(it.lp_);
    it.pos_ = from == ListEnd::kHead ? lv.First() : lv.Last();
  }
  return it;
}

QuickList::Iterator QuickList::At(long index, ListEnd toward) const {
  Iterator it;
  it.toward_ = toward;
  auto [n, local] = Locate(index);
  if (n == nullptr) return it;
  it.Load(n);
  it.pos_ = ListpackView(it.lp_).Seek(static_cast<long>(local));
  return it;
}

QuickList::Stats QuickList::GetStats() const {
  Stats s;
  s.fill = fill_;
  s.compress_depth = depth_;
  for (const Node* n = head_; n != nullptr; n = n->next) {
    ++s.nodes;
    s.entries += n->count;
    s.compressed_nodes += n->compressed;
    s.uncompressed_bytes += n->raw_bytes;
    s.max_node_bytes = std::max<size_t>(s.max_node_bytes, n->raw_bytes);
    if (n->compressed) {
      uint32_t z;
      std::memcpy(&z, n->data, 4);
      s.stored_bytes += z + 4;
    } else {
      s.stored_bytes += n->raw_bytes;
    }
  }
  return s;
}

size_t QuickList::BytesUsed() const {
  size_t total = 0;
  for (const Node* n = head_; n != nullptr; n = n->next) {
    total += detail::ListUsableSize(n) + detail::ListUsableSize(n->data);
  }
  return total;
}

void QuickList::ForEachNode(absl::FunctionRef<void(std::string_view)> fn) const {
  std::unique_ptr<uint8_t[]> buf;
  size_t cap = 0;
  for (const Node* n = head_; n != nullptr; n = n->next) {
    const uint8_t* d = Readable(n, &buf, &cap);
    fn({reinterpret_cast<const char*>(d), n->raw_bytes});
  }
}

bool QuickList::CheckInvariants() const {
  std::unique_ptr<uint8_t[]> buf;
  size_t cap = 0;
  size_t total = 0, i = 0;
  const Node* prev = nullptr;
  for (const Node* n = head_; n != nullptr; prev = n, n = n->next, ++i) {
    if (n->prev != prev || n->count == 0) return false;
    ListpackView lv(Readable(n, &buf, &cap));
    if (lv.total_bytes() != n->raw_bytes || lv.size() != n->count) return false;
    if (!ListpackView::Validate(lv.bytes())) return false;
    bool at_end = depth_ == 0 || i < depth_ || i + depth_ >= nodes_;
    if (at_end ? n->compressed != 0 : !(n->compressed || n->incompressible)) return false;
    total += n->count;
  }
  return prev == tail_ && i == nodes_ && total == count_;
}

}  // namespace dashkv
