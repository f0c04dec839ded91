// Engine: one OS thread running one boost::asio::io_context. The only place threads start.
// Engine i owns shard i (server/); this file knows nothing of shards.
// Thread: Post() is thread-safe (lock-free MPSC inbox); everything else is engine-local unless
// stated.
#pragma once

#include <utility>  // asio's awaitable.hpp uses std::exchange without including it

#include <absl/functional/any_invocable.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <thread>

namespace dashkv::io {

struct EngineOptions {
  // Microseconds an idle engine keeps polling its inbox and io_context before it sleeps in the
  // kernel. Saves the ~50 us wake-up of a cross-thread hop when engines are busy; costs CPU when
  // idle. 0 disables spinning.
  uint32_t spin_us = 30;
  // Pin engine i to the i-th CPU the process may use.
  bool pin_cpus = false;
};

// Design
//  The inbox is an intrusive multi-producer single-consumer queue (Vyukov). A producer that
//  finds the engine possibly asleep (an atomic flag) posts one wake-up handler through asio;
//  while the engine is busy or spinning, messages cost no lock and no syscall. The loop:
//  drain inbox, poll io_context, repeat; when both are empty, spin up to spin_us, then block in
//  io_context::run_one().
class Engine {
 public:
  using Task = absl::AnyInvocable<void() &&>;

  Engine(unsigned index, EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  unsigned index() const { return index_; }
  boost::asio::io_context& context() { return context_; }
  bool IsMyThread() const { return Current() == this; }
  // Returns the engine whose thread is calling, or nullptr on other threads.
  static Engine* Current();

  // Queues `task` to run on this engine's thread, after tasks queued earlier by the same
  // producer. Never runs it inline. Thread-safe, lock-free on the fast path.
  void Post(Task task);

  // Starts the thread. REQUIRES: not started.
  void Start();
  // Makes the loop return after the current task; Join() waits for the thread.
  void Stop();
  void Join();

 private:
  // (implementation detail: MPSC node type, loop, counters)
  struct Node;
  void Loop();
  bool DrainInbox();  // returns true if it ran anything
  unsigned index_;
  EngineOptions options_;
  boost::asio::io_context context_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> sleeping_{false};
  alignas(64) std::atomic<Node*> head_;  // producers push here
  alignas(64) Node* tail_;               // consumer pops here
  Node* stub_;
};

}  // namespace dashkv::io
