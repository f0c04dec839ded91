// PipelineRunner's multi-shard groups (server/tx/multi_part.h): gathering, locking, running the
// parts on their shards and combining the replies.
//
// Locking a group (server/tx/transaction.h has the scheme) takes the fewest messages it can:
//   - The connection's own shard first, synchronously (no message: it is this thread's). If it
//     grants and the group has one other shard, one message there takes that shard's locks
//     and, if granted, runs its parts and releases them at once: every lock of the group is
//     then held, so it may write. Then the local parts run and the local locks are released.
//     One round trip per group, reads and writes alike (--threads 2 always takes this path).
//   - With more shards, a group of reads locks and reads in one message per shard and
//     releases with one one-way message per shard (OnlyHop's scheme); a group that writes
//     acquires first (a write cannot be undone), then writes and releases in one message.
//   - Whenever a shard refuses, what was granted is given back and the group acquires as every
//     transaction does (in id order, waiting), then runs.
//   Refusing never waits, so none of the fast attempts can take part in a deadlock.
#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <exception>

#include "core/base/logging.h"
#include "io/connection.h"
#include "server/cycle_clock.h"
#include "server/pipeline_runner.h"
#include "server/server_stats.h"
#include "server/storage/shard_set.h"
#include "server/tx/lock_plan.h"
#include "server/tx/multi_part.h"
#include "server/tx/transaction.h"

namespace dashkv {

namespace asio = boost::asio;

namespace {

// The number of keys of a call of `spec` with `argc` arguments (fixed positions).
size_t NumKeys(const CommandSpec& spec, size_t argc) {
  const size_t last = spec.last_key < 0 ? argc + spec.last_key : size_t(spec.last_key);
  return last < size_t(spec.first_key) ? 0 : (last - spec.first_key) / spec.key_step + 1;
}

}  // namespace

void PipelineRunner::BeginMultiGroup(ConnState& state) {
  state.pending.clear();
  state.multi.key_shards.clear();
  state.multi.key_shards_at.clear();
}

bool PipelineRunner::AddMultiCmd(ConnState& state, const CommandSpec& spec, CmdArgs args) const {
  DCHECK(spec.multi_ops != nullptr);
  // A write runs as a group of its own (multi_part.h, Design: why).
  if (!state.pending.empty() &&
      (spec.HasFlag(kCmdWrite) || state.pending.back().spec->HasFlag(kCmdWrite))) {
    return false;
  }
  MultiGroupScratch& m = state.multi;
  const size_t at = m.key_shards.size();
  const size_t nkeys = NumKeys(spec, args.size());
  bool spans = false;
  for (size_t j = 0; j < nkeys; ++j) {
    const unsigned sid = shard_set_.ShardOf(args[spec.first_key + j * spec.key_step]);
    spans |= j > 0 && sid != m.key_shards[at];
    m.key_shards.push_back(static_cast<uint16_t>(sid));
  }
  if (!spans) {
    m.key_shards.resize(at);
    return false;
  }
  m.key_shards_at.push_back(static_cast<uint32_t>(at));
  state.pending.push_back(PendingCmd{&spec, args, 0, state.no_touch});
  return true;
}

void PipelineRunner::RunParts(Shard& shard, ConnState& state, int64_t now_ms) {
  const unsigned sid = shard.index();
  const unsigned db = state.db;
  MultiGroupScratch& m = state.multi;
  io::ReplyBuilder& rb = state.shard_replies[sid];
  std::vector<uint32_t>& ends = m.piece_ends[sid];
  std::vector<PartRecord>& records = m.records[sid];
  const std::span<const PendingCmd> cmds = state.pending;
  absl::InlinedVector<uint32_t, 16> keys;
  for (size_t k = 0; k < cmds.size(); ++k) {
    const PendingCmd& c = cmds[k];
    const CommandSpec& spec = *c.spec;
    const size_t at = m.key_shards_at[k];
    const size_t end = k + 1 < cmds.size() ? m.key_shards_at[k + 1] : m.key_shards.size();
    keys.clear();
    for (size_t j = at; j < end; ++j) {
      if (m.key_shards[j] == sid) keys.push_back(uint32_t(spec.first_key + (j - at) * spec.key_step));
    }
    if (keys.empty()) continue;
    ShardCmdContext ctx(shard, db, rb, now_ms, spec, services_.config);
    ctx.services = &services_;
    if (c.no_touch) [[unlikely]] ctx.db.set_no_touch(true);
    PartSink sink(rb, ends);
    const size_t reply_start = rb.size();
    const size_t pieces_before = ends.size();
    PartRecord rec;
    const uint64_t start = CycleClock::Now();
    try {
      spec.multi_ops->part(c.args, keys, ctx, sink);
    } catch (const std::exception& e) {
      // Out of memory (pipeline_runner.h): the call answers the error; its pieces are dropped.
      if (!IsAllocationFailure(e)) throw;
      rb.buffer().resize(reply_start);
      ends.resize(pieces_before);
      rec.failed = true;
    }
    if (c.no_touch) [[unlikely]] ctx.db.set_no_touch(false);
    shard.FinishChanges();  // the listeners hear each call's writes on their own
    rec.word = sink.word();
    rec.ticks = CycleClock::Now() - start;
    rec.pieces = static_cast<uint32_t>(ends.size() - pieces_before);
    records.push_back(rec);
  }
}

void PipelineRunner::CombineParts(ConnState& state, std::span<const unsigned> sids,
                                  io::ReplyBuilder& out) {
  MultiGroupScratch& m = state.multi;
  const std::span<const PendingCmd> cmds = state.pending;
  const unsigned my_engine = state.conn->engine().index();
  m.piece_cursors.assign(shard_set_.size(), 0);
  m.record_cursors.assign(shard_set_.size(), 0);
  absl::InlinedVector<int64_t, 8> words;
  absl::InlinedVector<std::pair<unsigned, uint32_t>, 8> piece_starts;  // (shard, first piece)
  for (size_t k = 0; k < cmds.size(); ++k) {
    const PendingCmd& c = cmds[k];
    const CommandSpec& spec = *c.spec;
    const size_t at = m.key_shards_at[k];
    const size_t end = k + 1 < cmds.size() ? m.key_shards_at[k + 1] : m.key_shards.size();
    const std::span<const uint16_t> key_shards(m.key_shards.data() + at, end - at);
    words.clear();
    piece_starts.clear();
    uint64_t ticks = 0;
    bool failed = false;
    for (unsigned sid : sids) {
      if (std::find(key_shards.begin(), key_shards.end(), sid) == key_shards.end()) continue;
      const PartRecord& rec = m.records[sid][m.record_cursors[sid]++];
      words.push_back(rec.word);
      ticks += rec.ticks;
      failed |= rec.failed;
      piece_starts.emplace_back(sid, m.piece_cursors[sid] + rec.pieces);
    }
    const uint64_t errors = out.error_count();
    if (failed) [[unlikely]] {
      SendStatus(out, OpStatus::kAllocationFailed);
    } else {
      PartReader reader(key_shards, spec.first_key, spec.key_step, state.shard_replies,
                        m.piece_ends, m.piece_cursors, words);
      spec.multi_ops->combine(c.args, reader, out);
    }
    // Every piece of the call is consumed, whatever Combine took.
    for (const auto& [sid, next] : piece_starts) m.piece_cursors[sid] = next;
    stats_.RecordCall(my_engine, spec, ticks, out.error_count() - errors, out, c.args, &state);
  }
}

asio::awaitable<void> PipelineRunner::RunMultiGroup(ConnState& state, io::ReplyBuilder& out,
                                                    int64_t now_ms) {
  const std::span<const PendingCmd> cmds = state.pending;
  MultiGroupScratch& m = state.multi;
  const unsigned db = state.db;
  const unsigned my_engine = state.conn->engine().index();
  KeyLocks locks(shard_set_);
  bool writes = false;
  for (size_t k = 0; k < cmds.size(); ++k) {
    const CommandSpec& spec = *cmds[k].spec;
    const LockMode mode = KeyLockMode(spec);
    writes |= mode == LockMode::kExclusive;
    const size_t at = m.key_shards_at[k];
    const size_t end = k + 1 < cmds.size() ? m.key_shards_at[k + 1] : m.key_shards.size();
    for (size_t j = at; j < end; ++j) {
      std::string_view key = cmds[k].args[spec.first_key + (j - at) * spec.key_step];
      locks.AddUnmerged(m.key_shards[j], LockHashOf(db, key), mode);
    }
  }
  locks.MergeDuplicates();
  const std::span<const unsigned> sids = locks.shards();
  // Each shard's replies, pieces and records, cleared before each attempt to run the parts.
  state.shard_replies.resize(shard_set_.size());
  m.piece_ends.resize(shard_set_.size());
  m.records.resize(shard_set_.size());
  auto reset = [&] {
    for (unsigned sid : sids) {
      state.shard_replies[sid].Clear();
      state.shard_replies[sid].set_version(out.version());
      m.piece_ends[sid].clear();
      m.records[sid].clear();
    }
  };
  reset();
  Shard& local = *Shard::Current();
  const bool has_local = std::find(sids.begin(), sids.end(), local.index()) != sids.end();
  bool done = false;
  if (has_local && sids.size() == 2) {
    // The local shard first, then lock-run-release on the other in one message.
    const unsigned remote = sids[0] == local.index() ? sids[1] : sids[0];
    if (locks.TryAcquireOn(local)) {
      BumpCounter(stats_.engine(my_engine).shard_hops);
      co_await shard_set_.HopTo(state.hop, remote, [this, &locks, &state, now_ms](Shard& shard) {
        if (!locks.TryAcquireOn(shard)) return;
        RunParts(shard, state, now_ms);
        locks.ReleaseOn(shard);
      });
      state.hop.RethrowIfFailed();
    }
    // Held if both granted (the remote shard ran and released); else gives back the grant.
    if (locks.SettleTryAcquire()) {
      RunParts(local, state, now_ms);
      locks.ReleaseOn(local);
      locks.Release();
      done = true;
    }
  } else if (!writes) {
    // Reads: lock and read in one message per shard, release one-way.
    BumpCounter(stats_.engine(my_engine).shard_hops, sids.size() - (has_local ? 1 : 0));
    co_await shard_set_.AwaitMany(sids, [&](Shard& shard) {
      if (locks.TryAcquireOn(shard)) RunParts(shard, state, now_ms);
    });
    if (locks.SettleTryAcquire()) {
      locks.Release();
      done = true;
    }
  }
  if (!done) {
    // Refused at once (or a write over three shards or more): acquire in ascending shard
    // order, waiting in id order. When the highest shard is another thread's, the message that
    // gets its locks runs its parts there and releases them; the rest run after.
    reset();
    auto run_and_release = [&](Shard& shard) {
      RunParts(shard, state, now_ms);
      locks.ReleaseOn(shard);
    };
    const bool last_remote = sids.back() != local.index();
    co_await locks.AcquireOrdered(/*but_last=*/last_remote);
    absl::InlinedVector<unsigned, 8> rest(sids.begin(), sids.end());
    if (last_remote) {
      BumpCounter(stats_.engine(my_engine).shard_hops);
      co_await locks.AcquireLastAndRun(run_and_release);
      rest.pop_back();
    }
    BumpCounter(stats_.engine(my_engine).shard_hops,
                rest.size() - (std::find(rest.begin(), rest.end(), local.index()) != rest.end()));
    co_await shard_set_.AwaitMany(rest, run_and_release);
    locks.Release();
  }
  CombineParts(state, sids, out);
}

}  // namespace dashkv
