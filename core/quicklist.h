// QuickList: the list value type. A doubly linked list of listpack nodes, with inner nodes
// optionally compressed with zstd.
// Thread: owned by the shard thread that owns the value; no internal synchronization. zstd
// contexts and scratch buffers are cached per thread (see quicklist.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/listpack.h"

namespace dashkv {

// Design
//
// Nodes. Each node holds one listpack (Redis byte format) of `count` elements. A node is 32 bytes:
// prev/next links, a data pointer, the listpack's (uncompressed) byte size, the element count and
// flags. Node and data come from detail::ListAlloc (mimalloc).
//
// Node limit (`fill`, Redis's list-max-listpack-size): negative = byte limit per node (-1 4 KiB,
// -2 8 KiB, -3 16 KiB, -4 32 KiB, -5 64 KiB); positive = element count per node, with an 8 KiB
// safety byte limit as in Redis. An element whose entry alone exceeds the byte limit gets a node of
// its own that never takes other elements (Redis's "plain" node, kept here as a one-element
// listpack so every node is a listpack).
//
// Compression (`compress_depth` N, list-compress-depth): the N nodes at each end stay raw; every
// other node is compressed (zstd level 1, no checksum/size/dict fields) when that saves at least 8
// bytes and the node is >= 48 bytes; otherwise it is flagged "incompressible" until modified. A
// compressed node's data is [u32 compressed size][zstd frame]. Mutating a compressed node
// decompresses it in place and recompresses it afterwards; reads (iterators) decompress into the
// iterator's own buffer and leave the node compressed. Invariant (checked by CheckInvariants):
// nodes at positions [N, nodes - N) are compressed or incompressible, all others are raw.
//
// Merging: after deletions a node is merged with a neighbour when the two fit in one node; splits
// happen when inserting into a full node in its middle.
//
// Complexity: push/pop at either end O(node bytes) (one listpack memmove, bounded by the node
// limit) plus O(N) link walks with compression: independent of the list's length, so a queue
// (RPUSH + LPOP) costs O(1) per operation. Index/Set/Insert: O(nodes) walk from the nearer end +
// O(node bytes). DeleteRange: O(nodes touched). Remove: O(list).
class QuickList {
  struct Node;

 public:
  // Redis defaults: -2 (8 KiB nodes), depth 0 (no compression).
  static constexpr int kDefaultFill = -2;
  // Positive fill is capped like Redis (FILL_MAX).
  static constexpr int kMaxFill = 32767;

  // Settings are clamped: fill to [-5, kMaxFill] (0 acts as 1), depth to [0, 65535].
  explicit QuickList(int fill = kDefaultFill, int compress_depth = 0);
  ~QuickList();
  QuickList(QuickList&& other) noexcept;
  QuickList& operator=(QuickList&& other) noexcept;
  QuickList(const QuickList&) = delete;
  QuickList& operator=(const QuickList&) = delete;

  // Changes the node limit (applies to future inserts) and the compression depth (recompresses
  // the whole list: O(list)).
  void SetOptions(int fill, int compress_depth);
  int fill() const { return fill_; }
  int compress_depth() const { return depth_; }

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  size_t node_count() const { return nodes_; }

  // Adds v at one end.
  void Push(std::string_view v, ListEnd end);
  // Removes and returns the element at one end; nullopt when empty.
  std::optional<std::string> Pop(ListEnd end);
  // Returns a copy of the element at index (negative: from the tail); nullopt if out of range.
  std::optional<std::string> Index(long index) const;
  // Replaces the element at index; returns false if out of range. v must not point into the list.
  bool Set(long index, std::string_view v);
  // Inserts v before/after the first element (from the head) equal to pivot; returns false when
  // pivot is absent (LINSERT).
  bool Insert(std::string_view pivot, std::string_view v, Where where);
  // Inserts v so that it becomes the element at index (0..size()); REQUIRES: index in range.
  void InsertAt(size_t index, std::string_view v);
  // Deletes up to count elements from index start (negative: from the tail); returns how many.
  size_t DeleteRange(long start, size_t count);
  // Keeps only elements [start, stop] with Redis's LTRIM index rules.
  void Trim(long start, long stop);
  // Removes elements equal to v (LREM): count > 0 the first count from the head, count < 0 the
  // last |count| from the tail, 0 all. Returns how many were removed.
  size_t Remove(std::string_view v, long count);

  // Forward or backward cursor over elements. Values (string views) stay valid until the
  // iterator moves to another node or the list is modified; any list mutation invalidates the
  // iterator.
  class Iterator {
   public:
    bool Valid() const { return node_ != nullptr; }
    // REQUIRES: Valid().
    ListpackValue Value() const { return ListpackView(lp_).Get(pos_); }
    // Moves one element in the iteration direction.
    void Next();

   private:
    friend class QuickList;
    void Load(const Node* n);

    const Node* node_ = nullptr;
    const uint8_t* lp_ = nullptr;
    ListpackView::Pos pos_ = ListpackView::kNoPos;
    ListEnd toward_ = ListEnd::kTail;
    std::unique_ptr<uint8_t[]> buf_;  // decompressed node
    size_t buf_cap_ = 0;
  };

  // Returns an iterator at the `from` end, moving toward the other end.
  Iterator Begin(ListEnd from = ListEnd::kHead) const;
  // Returns an iterator at index (negative: from the tail) moving toward `toward`; invalid when
  // out of range.
  Iterator At(long index, ListEnd toward = ListEnd::kTail) const;

  struct Stats {
    size_t nodes = 0;
    size_t entries = 0;
    size_t compressed_nodes = 0;
    size_t uncompressed_bytes = 0;  // sum of the nodes' listpack sizes (ql_uncompressed_size)
    size_t stored_bytes = 0;        // sum of the nodes' data as stored (compressed or not)
    size_t max_node_bytes = 0;
    int fill = 0;                   // ql_listpack_max
    int compress_depth = 0;
    double avg_node_entries() const { return nodes ? double(entries) / nodes : 0; }
  };
  // Returns node statistics (DEBUG OBJECT); O(nodes).
  Stats GetStats() const;
  // Returns the heap bytes used by the nodes and their data (allocator usable sizes, excluding
  // the QuickList object itself); O(nodes).
  size_t BytesUsed() const;

  // Calls fn with each node's listpack bytes, head to tail (compressed nodes are decompressed
  // into a scratch buffer valid during the call). For RDB save.
  void ForEachNode(absl::FunctionRef<void(std::string_view listpack)> fn) const;
  // Appends a whole listpack as a tail node (RDB load); empty listpacks are dropped.
  // REQUIRES: lp was validated.
  void AppendNode(Listpack lp);

  // Returns true when links, counts, sizes and the compression invariant hold (tests).
  bool CheckInvariants() const;

 private:
  uint32_t NodeByteLimit() const;
  bool AllowInsert(const Node* n, uint32_t entry_bytes) const;
  bool IsLarge(uint32_t entry_bytes) const;
  bool AllowMerge(const Node* a, const Node* b) const;

  Node* NewNode(Listpack lp);
  void LinkAfter(Node* pos, Node* n);   // pos null: new head
  void LinkBefore(Node* pos, Node* n);  // pos null: new tail
  void Unlink(Node* n);                 // frees n
  std::pair<Node*, size_t> Locate(long index) const;

  // Pushes into node n at one end / inserts at local index; updates counters.
  void NodePush(Node* n, std::string_view v, ListEnd end);
  void InsertInNode(Node* n, size_t local, std::string_view v);
  // Merges a and b (= a->next) when they fit; returns the surviving node or nullptr.
  Node* TryMerge(Node* a, Node* b);
  Node* MergeAround(Node* n);

  void Decompress(Node* n);
  void Compress(Node* n);
  // Restores the compression invariant after `touched` changed (touched may be null).
  void Recompress(Node* touched);
  void RecompressAll();

  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t count_ = 0;
  uint32_t nodes_ = 0;
  int16_t fill_;
  uint16_t depth_;
};

}  // namespace dashkv
