// Multi-shard commands as parts: how MGET, MSET, DEL, UNLINK, EXISTS and TOUCH run their keys
// of one shard inside a pipelined multi-shard group (PipelineRunner::RunMultiGroup), and how
// the connection builds each one's reply from its parts.
// Thread: a part runs on its shard's thread; Combine on the connection's thread, after every
// part of the group ran.
//
// Design
//   A group is a run of consecutive pipelined calls whose keys span shards. It takes the intent
//   locks of all its calls' keys at once (server/tx/transaction.h) and sends one message per
//   shard per step, not one per call: the shard runs, in request order, the part of every call
//   that has keys there. Each part writes what its call's reply needs: reply pieces into the
//   shard's reply builder (one per key: MGET's values) and one word (a count, a status). Then
//   the connection walks the calls in order and each call's Combine takes its pieces and words
//   back in the same order the shards wrote them. Every call of the group is atomic because
//   the group holds every lock of every call until its last part ran (strict two-phase
//   locking); the calls are serialized in request order because each shard runs them in that
//   order.
//
//   Reads group; a write (MSET, DEL, UNLINK) runs as a group of its own. A group holds its
//   locks for a round trip, and a write's are exclusive: 16 MSETs of 10 random keys in one
//   group from each of 50 connections kept ~8% of a 100,000-key space locked, so nearly every
//   group met a lock, fell back to the ordered acquisition and paid its extra messages (server
//   CPU per MSET went up 25% against one transaction per call, bench/e2e/tx_interleaved.py).
//   Alone, a write still takes one round trip (the local shard first, multi_group.cc) where it
//   took two. Sharing messages between writes needs an order that makes conflicting groups
//   queue rather than refuse (VLL's or Dragonfly's shard queues in transaction id order, with
//   every group placed in all its shards' queues atomically), not locks taken by trial.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "io/reply_builder.h"
#include "server/cmd_args.h"

namespace dashkv {

class ShardCmdContext;

// What one part leaves on its shard (one per part, in request order).
struct PartRecord {
  int64_t word = 0;     // the part's count or status
  uint64_t ticks = 0;   // CycleClock ticks it ran (its call's run time, INFO commandstats)
  uint32_t pieces = 0;  // reply pieces it ended
  bool failed = false;  // it ran out of memory (its pieces are dropped)
};

// Where a part writes: reply pieces into ctx.rb, ended by EndPiece, and its word.
// Thread: the part's shard, for the duration of the part.
class PartSink {
 public:
  PartSink(io::ReplyBuilder& rb, std::vector<uint32_t>& piece_ends)
      : rb_(rb), piece_ends_(piece_ends) {}
  // Ends the reply piece written to the shard's builder since the previous piece.
  void EndPiece() { piece_ends_.push_back(static_cast<uint32_t>(rb_.size())); }
  void set_word(int64_t word) { word_ = word; }
  int64_t word() const { return word_; }

 private:
  io::ReplyBuilder& rb_;
  std::vector<uint32_t>& piece_ends_;
  int64_t word_ = 0;
};

// The parts of one call of a group, for its Combine. Thread: the connection's thread.
class PartReader {
 public:
  // `key_shards`: the shard of each of the call's keys (args[first + j * step] is key j);
  // `buffers`, `piece_ends`, `cursors`: per shard, its reply buffer, its piece ends and the next
  // piece to read (advanced here); `words`: the call's parts' words.
  PartReader(std::span<const uint16_t> key_shards, size_t first, size_t step,
             std::span<const io::ReplyBuilder> buffers,
             std::span<const std::vector<uint32_t>> piece_ends, std::span<uint32_t> cursors,
             std::span<const int64_t> words)
      : key_shards_(key_shards), first_(first), step_(step), buffers_(buffers),
        piece_ends_(piece_ends), cursors_(cursors), words_(words) {}

  // Returns the next reply piece of the part on the shard that owns key args[arg_index].
  std::string_view NextPiece(size_t arg_index) {
    const unsigned sid = key_shards_[(arg_index - first_) / step_];
    uint32_t& c = cursors_[sid];
    const uint32_t begin = c == 0 ? 0 : piece_ends_[sid][c - 1];
    const uint32_t end = piece_ends_[sid][c++];
    return std::string_view(buffers_[sid].buffer()).substr(begin, end - begin);
  }
  // The words of the call's parts, one per shard it has keys on.
  std::span<const int64_t> words() const { return words_; }

 private:
  std::span<const uint16_t> key_shards_;
  size_t first_;
  size_t step_;
  std::span<const io::ReplyBuilder> buffers_;
  std::span<const std::vector<uint32_t>> piece_ends_;
  std::span<uint32_t> cursors_;
  std::span<const int64_t> words_;
};

// A multi-key command's part and combine functions (CommandSpec::multi_ops).
struct MultiShardOps {
  // Returns whether the call may join a group; else it runs alone (its handler answers, e.g.,
  // the arity error MSET checks itself). nullptr: every call may.
  bool (*accepts)(CmdArgs args) = nullptr;
  // Runs the call's work on the keys args[i], i in `keys` (ascending), of ctx.shard. Must not
  // throw but for allocation failures (its pieces are then dropped).
  void (*part)(CmdArgs args, std::span<const uint32_t> keys, ShardCmdContext& ctx,
               PartSink& sink) = nullptr;
  // Sends the call's reply to `out` from its parts.
  void (*combine)(CmdArgs args, PartReader& parts, io::ReplyBuilder& out) = nullptr;
};

// Scratch space of a multi-shard group, kept per connection to avoid allocations per batch.
// Thread: engine-local (the connection's thread); each shard writes only its own slots.
struct MultiGroupScratch {
  std::vector<uint16_t> key_shards;     // the shard of every key of the group's calls
  std::vector<uint32_t> key_shards_at;  // per call: the index of its first key in key_shards
  std::vector<std::vector<uint32_t>> piece_ends;  // per shard: end of each reply piece
  std::vector<std::vector<PartRecord>> records;   // per shard: its parts in request order
  std::vector<uint32_t> piece_cursors;            // per shard (Combine)
  std::vector<uint32_t> record_cursors;           // per shard (Combine)
};

}  // namespace dashkv
