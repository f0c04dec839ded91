// ServerServices: what connection-thread command handlers may use of the server, each part
// behind its own narrow interface (ConnCmdContext hands them out). The Server owns them all.
#pragma once

namespace dashkv {

namespace io {
class EnginePool;
}  // namespace io

class AclRegistry;
class ClientPause;
class ClientRegistry;
class MonitorFeed;
class FunctionStore;
class CommandRegistry;
class Config;
class MultiExec;
class PubSub;
class ScriptRunner;
class ScriptStore;
class ServerStats;
class ShardSet;
class SnapshotManager;
class TrackingHub;

struct ServerServices {
  Config& config;
  io::EnginePool& pool;
  ShardSet& shard_set;
  PubSub& pubsub;
  const CommandRegistry& registry;
  ServerStats& stats;
  ClientRegistry& clients;
  MultiExec& multi;
  SnapshotManager& snapshots;
  ScriptStore& scripts;
  FunctionStore& functions;
  ScriptRunner& scripting;
  AclRegistry& acl;
  ClientPause& pause;
  MonitorFeed& monitor;
  TrackingHub& tracking;
};

}  // namespace dashkv
