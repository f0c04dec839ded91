// TrackingHub: server-assisted client-side caching (CLIENT TRACKING, Redis 7.0) across threads.
// Owns the shards' TrackingTables and routes their invalidations to the clients' engines.
// Owned by the Server.
// Thread: tables_[i] is touched only on shard i's thread and locals_[e] only on engine e (as
// PubSub's tables); the counters are atomics; the global prefix registry (INFO's
// tracking_total_prefixes only) is behind a mutex taken by CLIENT TRACKING and disconnects.
//
// Design
//  Read side: a read-only command of a client whose ConnState::tracking_now has kTrackingReads
//  remembers its keys in the table of the shard that runs it, after it ran (same thread, so no
//  change can slip in between). A coordinator command (keys on several shards) posts the
//  keys to their shards before it reads: a change in between costs a spare invalidation,
//  never a missed one.
//  Change side: the tables queue invalidations per target engine and flush them after the
//  current command, one message per engine. Each is marked with the change's origin (for
//  NOLOOP): the shard's ChangeListeners::origin, set around a shard command of a client with
//  tracking on (BeginCommand); the hops of a command whose keys span shards carry it
//  themselves (ConnState::change_origin, through the client's ShardSet::View), so nothing is
//  set or carried for a client without tracking. On the client's engine the hub finds the
//  client by id (gone: dropped), applies NOLOOP and the mode, and writes
//  `>2 invalidate [keys]` (RESP3), or sends it to the redirect client on that client's engine
//  (`message __redis__:invalidate [keys]` when it is a RESP2 client in subscribed mode); a
//  redirect client that has gone breaks the redirect (`tracking-redir-broken` to a RESP3
//  tracking client, flag R).
//  FLUSHDB / FLUSHALL: every table forgets its keys and every tracking client gets one
//  invalidation with a null key list.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <absl/base/thread_annotations.h>
#include <absl/container/flat_hash_map.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/engine_pool.h"
#include "io/reply_builder.h"
#include "io/service.h"
#include "server/conn_state.h"
#include "server/tracking/client_tracking.h"
#include "server/tracking/tracking_table.h"

namespace dashkv {

class Shard;
class ShardSet;
struct CommandSpec;

// What CLIENT TRACKING ON asks for (already checked against the client's state).
struct TrackingRequest {
  uint64_t redirect = 0;
  unsigned redirect_engine = 0;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  std::vector<std::string> prefixes;
};

class TrackingHub {
 public:
  // `max_keys`: tracking-table-max-keys (0: no limit), for the keys of all shards together.
  TrackingHub(io::EnginePool& pool, const std::atomic<int64_t>* max_keys);
  TrackingHub(const TrackingHub&) = delete;
  TrackingHub& operator=(const TrackingHub&) = delete;
  ~TrackingHub();

  // Creates every shard's table and registers it with the shard's listeners. Call from a
  // non-engine thread before the shards serve commands. The tables outlive the shards.
  void AttachShards(ShardSet& shards);

  // --- Connections (REQUIRES: on the connection's engine) ---
  void AddClient(unsigned engine, ConnState* state);
  // Turns tracking off and forgets the client.
  void RemoveClient(unsigned engine, ConnState* state);
  // Turns tracking on (or changes its options) as CLIENT TRACKING ON does; returns once every
  // shard holds the BCAST prefixes.
  boost::asio::awaitable<void> Enable(ConnState& state, TrackingRequest request);
  // Turns tracking off (CLIENT TRACKING OFF, RESET); no-op when off.
  void Disable(ConnState& state);
  // Returns the engine of client `id`, or nullopt when it is not connected.
  boost::asio::awaitable<std::optional<unsigned>> FindClient(uint64_t id);
  // Sets CLIENT CACHING's flag for the next command or transaction.
  void SetCaching(ConnState& state, bool caching);
  // Recomputes state.tracking_now, tracking_opt and change_origin from its tracking state.
  static void Refresh(ConnState& state);

  // Dispatch: a batch starts / ends (its replies are in `out`: the held-back invalidations
  // join them). Cheap no-ops unless the client tracks.
  static void BeginBatch(ConnState& state) {
    if (state.tracking != nullptr) [[unlikely]] state.tracking->dispatching = true;
  }
  static void EndBatch(ConnState& state, io::ReplyBuilder& out) {
    if (state.tracking != nullptr) [[unlikely]] FlushDeferred(state, out);
  }
  // The connection parks in a blocking command: the held-back invalidations join `out` (its
  // earlier replies, which the caller sends now), and later ones are written as they come, as
  // Redis writes to a blocked client. Returns whether it did (then call Unpark when the
  // command resumes).
  static bool Park(ConnState& state, io::ReplyBuilder& out) {
    if (state.tracking == nullptr || !state.tracking->dispatching) return false;
    FlushDeferred(state, out);
    return true;
  }
  static void Unpark(ConnState& state) { state.tracking->dispatching = true; }
  // After command `args` ran in OPTIN/OPTOUT mode: CLIENT CACHING's flag lasts for one command
  // (a whole MULTI ... EXEC), CLIENT subcommands excepted, as in Redis.
  static void AfterCommand(ConnState& state, io::CmdArgs args);

  // --- Shards (REQUIRES: on the shard's thread) ---
  TrackingTable& table(unsigned sid) { return *tables_[sid]; }
  // A command of `client` (tracking_now != 0), or a call of a script it runs (`by_script`), is
  // about to run on `shard`: the changes it makes are marked as its own (NOLOOP; the shard's
  // ChangeListeners::origin). Returns the mark it replaces, for EndCommand.
  static uint64_t BeginCommand(Shard& shard, const ConnState& client, bool by_script);
  // It ran: remembers its keys if it reads and the client tracks reads, and puts back
  // `outer_origin`.
  void EndCommand(Shard& shard, const ConnState& client, const CommandSpec& spec,
                  io::CmdArgs args, uint64_t outer_origin);

  // A coordinator read-only command of a client that tracks reads is about to run: posts its
  // keys to their shards. REQUIRES: on the connection's engine.
  void RememberCoordKeys(const ConnState& client, const CommandSpec& spec, io::CmdArgs args);

  // FLUSHDB / FLUSHALL: sends every tracking client an invalidation with a null key list.
  // REQUIRES: on an engine thread.
  void InvalidateAll();

  // INFO.
  int64_t tracking_clients() const { return clients_.load(std::memory_order_relaxed); }
  size_t total_keys() const;
  size_t total_items() const;
  size_t total_prefixes() const;

 private:
  struct alignas(64) Local {
    absl::flat_hash_map<uint64_t, ConnState*> clients;  // every client of the engine, by id
  };

  // Invalidates keys of shard `sid` while all shards together track more than
  // tracking-table-max-keys. REQUIRES: on the shard's thread.
  void EnforceMaxKeys(unsigned sid);
  // Ends the batch of a client that has tracked: appends the held-back invalidations.
  static void FlushDeferred(ConnState& state, io::ReplyBuilder& out);
  // Delivers a batch of invalidations to the clients of engine `engine`. REQUIRES: on it.
  void Deliver(unsigned engine, std::vector<Invalidation> batch);
  // Sends the invalidation `value` (the RESP of its key array, or of null) to the tracking
  // client `state` or its redirect. REQUIRES: on the client's engine.
  void Send(ConnState& state, std::string value);
  // Runs fn on engine `engine`: inline when the caller runs there.
  template <typename F>
  void RunOn(unsigned engine, F fn);

  io::EnginePool& pool_;
  ShardSet* shards_ = nullptr;
  const std::atomic<int64_t>* max_keys_;
  std::vector<std::unique_ptr<TrackingTable>> tables_;  // by shard
  std::vector<Local> locals_;                          // by engine
  std::atomic<int64_t> clients_{0};
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, uint32_t> prefix_clients_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dashkv
