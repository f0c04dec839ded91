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
#include <vector>
#include <type_traits>

namespace dashkv::io {

struct EngineOptions {
  // Microseconds an idle engine keeps polling its inbox and io_context before it sleeps in the
  // kernel. Saves the ~50 us wake-up of a cross-thread hop when engines are busy; costs CPU when
  // idle. 0 disables spinning.
  uint32_t spin_us = 30;
  // Pin engine i to the i-th CPU the process may use.
  bool pin_cpus = false;
  // A background engine: never pinned, and scheduled SCHED_IDLE, so its thread only gets CPU
  // time no other thread wants (for work that must not delay the engines serving clients, such
  // as faulting in memory ahead of need).
  bool background = false;
};

namespace detail {

// A message in an engine's inbox: the intrusive link plus a type-erased "run (or drop) and free
// myself" function, so one Post costs exactly one allocation.
struct InboxNode {
  std::atomic<InboxNode*> next{nullptr};
  // Runs the task when `run` is true, then deletes the node (or, for a node its owner keeps,
  // hands it on: io/hop.h).
  void (*invoke)(InboxNode* self, bool run) = nullptr;
};

template <typename F>
struct TaskNode final : InboxNode {
  explicit TaskNode(F&& f) : fn(std::move(f)) { invoke = &Invoke; }
  explicit TaskNode(const F& f) : fn(f) { invoke = &Invoke; }
  static void Invoke(InboxNode* node, bool run) {
    auto* self = static_cast<TaskNode*>(node);
    if (run) std::move(self->fn)();
    delete self;
  }
  F fn;
};

}  // namespace detail

class Hop;

// Design
//  The inbox is an intrusive multi-producer single-consumer queue (Vyukov): producers swing
//  head_ with one atomic exchange and then link the previous node to theirs; the consumer walks
//  from tail_ without atomic read-modify-writes. A stub node lets the queue become empty.
//  A producer that finds the engine possibly asleep (sleeping_) posts one wake-up handler
//  through asio; while the engine is busy or spinning, messages cost no lock and no syscall.
//  The loop: drain inbox, poll io_context, repeat; when both are empty, spin up to spin_us, then
//  block in io_context::run_one() (a work guard keeps run_one from returning for lack of work).
//  No lost wake-up: see the proof in engine.cc (Engine::Sleep).
//  Tasks must not throw: an exception escaping a task or an asio handler aborts the process
//  (std::bad_alloc logged as out of memory, anything else as a bug). Work that may fail for
//  lack of memory catches at its own boundary (EnginePool::Await carries an exception of the
//  awaited function back to the awaiting coroutine; the server fails the one command).
// The traffic of one engine's connections (INFO total_net_input_bytes, total_reads_processed
// ...): written only by the engine's thread (no read-modify-write), read by any thread.
struct NetCounters {
  std::atomic<uint64_t> input_bytes{0};
  std::atomic<uint64_t> output_bytes{0};
  std::atomic<uint64_t> reads{0};   // reads that returned data
  std::atomic<uint64_t> writes{0};  // writes that sent data

  void AddRead(uint64_t n) { Bump(reads, 1), Bump(input_bytes, n); }
  void AddWrite(uint64_t n) { Bump(writes, 1), Bump(output_bytes, n); }
  void Reset() {
    for (auto* c : {&input_bytes, &output_bytes, &reads, &writes}) {
      c->store(0, std::memory_order_relaxed);
    }
  }

 private:
  static void Bump(std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

class Engine {
 public:
  using Task = absl::AnyInvocable<void() &&>;

  Engine(unsigned index, EngineOptions options);
  // Stops and joins the thread if still running, then drops (without running) queued tasks.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  unsigned index() const { return index_; }
  boost::asio::io_context& context() { return context_; }
  bool IsMyThread() const { return Current() == this; }
  // Returns the engine whose thread is calling, or nullptr on other threads.
  static Engine* Current();
  // Its connections' traffic. Written on this engine's thread only.
  NetCounters& net() { return net_; }

  // Queues `task` to run on this engine's thread, after tasks queued earlier by the same
  // producer. Never runs it inline. Thread-safe, lock-free on the fast path.
  void Post(Task task) { Push(new detail::TaskNode<Task>(std::move(task))); }
  // Same, for any callable `void()`: stores it in the message itself (one allocation).
  template <typename F>
    requires(!std::is_same_v<std::decay_t<F>, Task>)
  void Post(F&& fn) {
    Push(new detail::TaskNode<std::decay_t<F>>(std::forward<F>(fn)));
  }

  // Queues `task` to run once at the end of the current loop turn, after the inbox batch and
  // the ready socket handlers, so that a task that keeps deferring itself (background work in
  // slices) gets one slice per turn and never starves them. The engine does not sleep while a
  // deferred task waits. REQUIRES: called on this engine's thread.
  void Defer(Task task) { deferred_.push_back(std::move(task)); }

  // Starts the thread. REQUIRES: not started.
  void Start();
  // Makes the loop return after the current task; Join() waits for the thread. Thread-safe.
  void Stop();
  void Join();

  // Drops (destroys without running) every queued task. REQUIRES: the thread is not running.
  void DiscardInbox();

  // Returns the number of messages waiting in the inbox now (a message being pushed at this
  // very moment may be missed). O(messages): for sampling (/metrics), not for the hot path.
  // REQUIRES: called on this engine's thread.
  size_t InboxDepth() const;

  // Returns the number of inbox messages and io_context handlers (socket completions, timers,
  // posts) this engine has run; deferred tasks are not counted. Lets background work that runs
  // in deferred slices tell a turn that served something from an idle one.
  // REQUIRES: called on this engine's thread.
  uint64_t work_done() const { return work_done_; }
  // Returns the time this engine's loop has spent with nothing to run (spinning or asleep), in
  // time-stamp counter ticks (server/cycle_clock.h converts them), and the number of such idle
  // stretches. REQUIRES: called on this engine's thread.
  uint64_t idle_ticks() const { return idle_ticks_; }
  uint64_t idle_stretches() const { return idle_stretches_; }

 private:
  friend class Hop;  // pushes itself (a node it owns) as a hop's two messages
  using Node = detail::InboxNode;
  enum class PopResult { kItem, kEmpty, kRetry };

  void Push(Node* node);
  // Pops one node into *out. kRetry: a producer is between its exchange and its link.
  PopResult Pop(Node** out);
  bool InboxEmpty() const;
  void Loop();
  bool RunOnce();     // drains the inbox and polls io_context; true if anything ran
  size_t DrainInbox();  // returns the number of messages it ran
  void Sleep();
  void Wake();
  void PinToCpu();

  unsigned index_;
  EngineOptions options_;
  boost::asio::io_context context_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  alignas(64) std::atomic<bool> sleeping_{false};
  alignas(64) std::atomic<Node*> head_;  // producers push here
  alignas(64) Node* tail_;               // consumer pops here
  Node stub_;
  NetCounters net_;
  uint64_t work_done_ = 0;      // engine-local (work_done())
  uint64_t idle_ticks_ = 0;     // engine-local (idle_ticks())
  uint64_t idle_stretches_ = 0;  // engine-local (idle_stretches())
  std::vector<Task> deferred_;  // engine-local (Defer)
  std::vector<Task> running_deferred_;
};

}  // namespace dashkv::io
