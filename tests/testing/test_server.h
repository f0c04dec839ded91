// TestServer: a real dashkv server (engines, shards, listener) inside the test process on an
// ephemeral loopback port, for command tests against N>1 shards (Dragonfly's BaseFamilyTest
// idea). Use with RespClient: `TestServer s(2); RespClient c(s.port()); c.Run({"SET","k","v"})`.
#pragma once

#include <memory>

#include "io/engine_pool.h"
#include "io/listener.h"
#include "server/config.h"
#include "server/server.h"
#include "tests/testing/resp_client.h"

namespace dashkv::testing {

class TestServer {
 public:
  // `extra_commands`: see Server's constructor.
  explicit TestServer(unsigned threads = 2,
                      void (*extra_commands)(CommandRegistry*) = nullptr) {
    config_.Init();
    config_.threads = threads;
    config_.maxmemory = 0;
    io::EngineOptions options;
    options.spin_us = 0;
    pool_ = std::make_unique<io::EnginePool>(threads, options);
    pool_->Start();
    server_ = std::make_unique<Server>(config_, *pool_, extra_commands);
    server_->StartBackgroundTasks();
    io::ListenerOptions lo;
    lo.bind = "127.0.0.1";
    lo.port = 0;
    listener_ = std::make_unique<io::Listener>(*pool_, *server_, lo);
    absl::Status st = listener_->Start();
    if (!st.ok()) std::abort();
  }
  ~TestServer() {
    listener_->Stop();
    server_->StopBackgroundTasks();
    pool_->Stop();
    pool_->Join();
    listener_.reset();
    pool_.reset();
    server_.reset();
  }

  uint16_t port() const { return listener_->port(); }
  Server& server() { return *server_; }
  io::EnginePool& pool() { return *pool_; }
  std::unique_ptr<RespClient> Connect() { return std::make_unique<RespClient>(port()); }

 private:
  Config config_;
  std::unique_ptr<io::EnginePool> pool_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<io::Listener> listener_;
};

}  // namespace dashkv::testing
