// dashkv's entry point: flags -> Config -> EnginePool -> Server (ShardSet) -> Listener. Wiring
// only; waits for SIGINT/SIGTERM and shuts down cleanly.
#include <absl/flags/parse.h>
#include <absl/flags/usage.h>
#include "core/base/logging.h"
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "core/memory.h"
#include "io/engine_pool.h"
#include "io/listener.h"
#include "server/config.h"
#include "server/persistence/rdb_file_writer.h"
#include "server/persistence/snapshot_manager.h"
#include "server/scripting/script_runner.h"
#include "server/server.h"
#include "server/version.h"

int main(int argc, char** argv) {
  dashkv::InitMemoryAccounting();
  absl::SetProgramUsageMessage(
      "dashkv: a multi-threaded, Redis-compatible in-memory datastore.\n"
      "Usage: dashkv [/path/to/dashkv.conf] [--port 6379] [--threads N] [--maxmemory 4gb] "
      "[--dir .] ...\nThe flags given override the config file's settings.");
  const absl::flat_hash_set<std::string> given_flags = dashkv::CommandLineFlagNames(argc, argv);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() > 2) {
    std::cerr << "dashkv: at most one config file may be given\n";
    return 1;
  }
  const std::string config_file = positional.size() == 2 ? positional[1] : "";

  // Signals are taken by this thread only (sigwait below); engines inherit the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  dashkv::Config config;
  // A bad config file stops the start (Redis's layout, on stderr).
  if (absl::Status st = config.Load(config_file, given_flags); !st.ok()) {
    std::cerr << st.message() << std::endl;
    return 1;
  }
  if (absl::Status st = config.ConfigureTls(); !st.ok()) {
    LOG(ERROR) << st.message();
    LOG(ERROR) << "Failed to configure TLS. Check logs for more info.";
    return 1;
  }

  dashkv::io::EngineOptions engine_options;
  engine_options.spin_us = config.spin_us;
  engine_options.pin_cpus = config.pin_cpus;
  // Destruction order matters: the pool (whose io_contexts own the connections) goes before the
  // server the connections point to.
  std::unique_ptr<dashkv::Server> server;
  auto pool = std::make_unique<dashkv::io::EnginePool>(config.threads, engine_options);
  pool->Start();
  server = std::make_unique<dashkv::Server>(config, *pool);
  dashkv::RdbFileWriter::RemoveStaleTempFiles(config.dir());
  server->StartBackgroundTasks();

  dashkv::io::ListenerOptions listener_options;
  listener_options.bind = config.bind;
  listener_options.port = config.port;
  listener_options.conn.limits = &config.client_limits;
  listener_options.tls_port = config.tls_port.load();
  listener_options.tls = &config.tls_context;
  listener_options.tls_handshake_timeout =
      std::chrono::milliseconds(config.tls_handshake_timeout_ms);
  listener_options.protected_mode = [&config] { return config.ProtectedModeActive(); };
  auto listener = std::make_unique<dashkv::io::Listener>(*pool, *server, listener_options);
  server->clients().set_accept_pending([l = listener.get()] { l->AcceptPending(); });
  config.listen_tls = [l = listener.get()](uint16_t port) { return l->SetTlsPort(port); };
  // Stops everything in order and returns `rc`: the pool (whose io_contexts own the
  // connections) goes before the server the connections point to.
  auto shut_down = [&](bool listening, int rc) {
    if (listening) listener->Stop();
    server->StopBackgroundTasks();
    pool->Stop();
    pool->Join();
    server->snapshots().StopIo();
    config.listen_tls = nullptr;
    listener.reset();
    pool.reset();
    server.reset();
    return rc;
  };
  if (absl::Status st = server->RenameCommands(config.renamed_commands); !st.ok()) {
    std::cerr << st.message() << std::endl;
    return shut_down(false, 1);
  }
  if (absl::Status st = server->LoadAclAtStart(); !st.ok()) {
    LOG(ERROR) << "Aborting startup because of ACL errors: " << st.message();
    return shut_down(false, 1);
  }
  if (absl::Status st = listener->Start(); !st.ok()) {
    LOG(ERROR) << "cannot listen on " << config.bind << ":" << config.port << ": " << st;
    return shut_down(false, 1);
  }
  server->clients().port() = listener->port();
  LOG(INFO) << "dashkv " << dashkv::kDashkvVersion << " ready: " << config.threads
            << " threads, port " << listener->port()
            << (config.maxmemory.load() ? " maxmemory " + std::to_string(config.maxmemory.load())
                                        : "");

  // The snapshot of the last run, while clients may already connect (they get -LOADING). A
  // damaged file stops the start: the server never serves a half-loaded dataset.
  // SIGTERM/SIGINT during the load stop it (the loader looks for a pending one between
  // records: the signals are blocked in every thread, so they wait there) and the server
  // exits at once with status 0, saving nothing, as Redis does.
  auto signal_pending = [] {
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1;
  };
  absl::StatusOr<dashkv::LoadStats> loaded = server->snapshots().LoadAtStart(signal_pending);
  if (absl::IsCancelled(loaded.status())) {
    LOG(WARNING) << "Received shutdown signal during loading, exiting without saving ("
                 << loaded.status().message() << ")";
    return shut_down(true, 0);
  }
  if (!loaded.ok() && !absl::IsNotFound(loaded.status())) {
    LOG(ERROR) << "Fatal error loading the DB: " << loaded.status().message();
    LOG(ERROR) << "Terminating server after rdb file reading failure.";
    return shut_down(true, 1);
  }

  // SIGTERM/SIGINT (also raised by SHUTDOWN, which saves first itself): with a `save` schedule,
  // save the final snapshot; if that fails, keep running, as Redis does.
  for (;;) {
    int sig = 0;
    sigwait(&signals, &sig);
    LOG(INFO) << "signal " << sig << " received, shutting down";
    // A script still running (an endless loop) would hold its thread forever: stop it.
    server->services().scripting.KillAll();
    if (server->snapshots().shutdown_handled() || !config.has_save_points.load()) break;
    LOG(INFO) << "Saving the final RDB snapshot before exiting.";
    if (absl::Status st = server->snapshots().SaveBlocking(); st.ok()) break;
    LOG(WARNING) << "Error trying to save the DB, can't exit.";
  }
  return shut_down(true, 0);
}
