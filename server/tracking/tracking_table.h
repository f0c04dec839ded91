// TrackingTable: the client-side-caching state of one shard — which clients read which of its
// keys (default mode), and a mirror of every BCAST client's prefixes — and the change listener
// (server/storage/key_change.h) that turns a change of such a key into invalidations.
// Thread: owned by shard thread.
//
// Design
//  keys_: key name -> the clients that read it since it last changed (Redis's TrackingTable:
//  one table for all databases, keyed by name). A change of the key (a write that modified it,
//  any removal) queues one invalidation per client and forgets the key. Clients are stored
//  with their engine, so that no global lookup is needed to deliver; a client that has gone
//  stays until the key changes (as Redis), and the delivery drops it.
//  prefixes_: BCAST registrations (prefix, client, engine), posted to every shard by CLIENT
//  TRACKING before it replies. A changed key is matched against each; matches are grouped per
//  (client, prefix) so that the keys changed in one engine loop iteration leave as one message.
//  Invalidations collect in a per-engine outbox; the first one schedules a flush (a task
//  posted to this shard's own engine, which runs after the current command), which hands one
//  batch to each target engine.
//  The listener wants writes and removals only while it tracks a key or a prefix: with nobody
//  tracking, a change costs the seam's one branch.
//  Complexity: Remember O(clients of the key) (a client is stored once per key); a change
//  O(clients of the key + BCAST prefixes).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "server/pubsub/client_subscriptions.h"
#include "server/storage/key_change.h"
#include "server/tracking/client_tracking.h"

namespace dashkv {

class TrackingTable : public ChangeListener {
 public:
  // Hands a batch of invalidations to engine `engine`.
  using PostFn = std::function<void(unsigned engine, std::vector<Invalidation> batch)>;
  // Arranges for Flush() to run on this shard's thread after the current command.
  using ScheduleFn = std::function<void()>;

  TrackingTable(unsigned engines, PostFn post, ScheduleFn schedule);

  // Registers the table with the shard's listeners.
  void Attach(ChangeListeners* changes);

  // Remembers that `client` (on `engine`) read `key`.
  void Remember(std::string_view key, uint64_t client, unsigned engine);

  // Adds a BCAST registration. REQUIRES: the client has no registration for `prefix`.
  void AddPrefix(std::string_view prefix, uint64_t client, unsigned engine);
  // Drops every BCAST registration of `client`.
  void RemovePrefixes(uint64_t client);

  // Queues invalidations of `key` for its readers and the BCAST clients of its prefixes, and
  // forgets its readers. They are marked with the origin of the change (the shard's
  // ChangeListeners::origin, a ChangeOriginOf: the client whose command runs, for NOLOOP).
  void Invalidate(std::string_view key);
  // Forgets every tracked key without messages (FLUSHDB / FLUSHALL: the clients get one
  // invalidation with a null key list instead).
  void ClearKeys();
  // While more than `keep` keys are tracked, invalidates tracked keys, at most `effort` of
  // them (tracking-table-max-keys, applied by TrackingHub over all shards).
  void EnforceLimit(size_t keep, unsigned effort = 100);
  // Hands the queued invalidations to their engines.
  void Flush();

  // Any thread may read these figures (INFO).
  size_t keys() const { return num_keys_.load(std::memory_order_relaxed); }
  size_t items() const { return num_items_.load(std::memory_order_relaxed); }
  bool has_prefixes() const { return !prefixes_.empty(); }

  void AfterWrite(unsigned db, std::string_view key, bool modified) override;
  void AfterRemove(unsigned db, std::string_view key, RemoveReason reason) override;
  void BeforeFlush(unsigned db) override;

 private:
  struct Reader {
    uint64_t client;
    unsigned engine;
  };
  struct Prefix {
    std::string prefix;
    uint64_t client;
    unsigned engine;
    uint32_t group;  // the id of this registration's message group (never 0)
  };
  struct BcastKey {
    std::string key;
    uint64_t origin;
  };
  struct BcastPending {
    uint64_t client;
    unsigned engine;
    std::vector<BcastKey> keys;
  };

  void Queue(unsigned engine, Invalidation inv);
  void UpdateInterest();
  void UpdateCounts();

  ChangeListeners* changes_ = nullptr;
  unsigned slot_ = 0;
  bool interested_ = false;
  PostFn post_;
  ScheduleFn schedule_;
  bool flush_scheduled_ = false;
  PubSubNameMap<std::vector<Reader>> keys_;
  size_t items_ = 0;
  std::vector<Prefix> prefixes_;
  uint32_t next_group_ = 1;
  absl::flat_hash_map<uint32_t, BcastPending> bcast_pending_;  // by group
  std::vector<std::vector<Invalidation>> outbox_;  // by engine
  std::atomic<size_t> num_keys_{0};
  std::atomic<size_t> num_items_{0};
};

}  // namespace dashkv
