#include "io/engine.h"

#include <absl/base/internal/raw_logging.h>
#include <pthread.h>
#include <sched.h>
#include <x86intrin.h>

#include <boost/asio/detail/thread_context.hpp>
#include <boost/asio/detail/thread_info_base.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/version.hpp>
#include <chrono>
#include <exception>
#include <new>

#include "core/base/logging.h"

// Loop() gives the thread asio's per-thread cache of freed blocks outside io_context::poll (see
// there), an internal of Boost.Asio: check it on an upgrade.
#if BOOST_ASIO_VERSION != 101800
#error "io/engine.cc relies on the thread call stack internals of Boost.Asio 1.18 (Boost 1.74)"
#endif

namespace dashkv::io {
namespace {

thread_local Engine* tls_current_engine = nullptr;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Inbox messages run per DrainInbox() call before the io_context gets a turn (fairness between
// cross-engine messages and socket completions).
constexpr size_t kMaxInboxBatch = 256;

}  // namespace

Engine::Engine(unsigned index, EngineOptions options)
    : index_(index), options_(options), context_(1), head_(&stub_), tail_(&stub_) {}

Engine::~Engine() {
  if (thread_.joinable()) {
    Stop();
    Join();
  }
  DiscardInbox();
}

Engine* Engine::Current() { return tls_current_engine; }

void Engine::Start() {
  CHECK(!thread_.joinable()) << "Engine::Start called twice";
  stopping_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this] { Loop(); });
}

void Engine::Stop() {
  stopping_.store(true, std::memory_order_seq_cst);
  Wake();  // unconditionally: the loop may be in run_one()
}

void Engine::Join() {
  if (thread_.joinable()) thread_.join();
}

void Engine::DiscardInbox() {
  CHECK(!thread_.joinable() || IsMyThread()) << "DiscardInbox on a running engine";
  Node* node = nullptr;
  while (Pop(&node) == PopResult::kItem) node->invoke(node, /*run=*/false);
}

void Engine::Push(Node* node) {
  node->next.store(nullptr, std::memory_order_relaxed);
  // seq_cst: this exchange is the "write" half of the store/load pair proved in Sleep().
  Node* prev = head_.exchange(node, std::memory_order_seq_cst);
  prev->next.store(node, std::memory_order_release);
  if (node == &stub_) return;  // the consumer re-inserting the stub; it is awake by definition
  // Read first, exchange only when set: producers to a busy engine never write this line.
  if (sleeping_.load(std::memory_order_seq_cst) &&
      sleeping_.exchange(false, std::memory_order_seq_cst)) {
    Wake();
  }
}

Engine::PopResult Engine::Pop(Node** out) {
  Node* tail = tail_;
  Node* next = tail->next.load(std::memory_order_acquire);
  if (tail == &stub_) {
    if (next == nullptr) {
      return head_.load(std::memory_order_acquire) == &stub_ ? PopResult::kEmpty
                                                             : PopResult::kRetry;
    }
    tail_ = next;
    tail = next;
    next = next->next.load(std::memory_order_acquire);
  }
  if (next != nullptr) {
    tail_ = next;
    *out = tail;
    return PopResult::kItem;
  }
  if (tail != head_.load(std::memory_order_acquire)) return PopResult::kRetry;
  // `tail` is the last node: put the stub behind it so that it can be unlinked.
  Push(&stub_);
  next = tail->next.load(std::memory_order_acquire);
  if (next != nullptr) {
    tail_ = next;
    *out = tail;
    return PopResult::kItem;
  }
  return PopResult::kRetry;
}

// Every pushed node that has not been popped is tail_ or reachable from it, and head_ is the
// last pushed node; so the inbox holds nothing (finished or half-pushed) iff both are the stub.
bool Engine::InboxEmpty() const {
  return tail_ == &stub_ && head_.load(std::memory_order_seq_cst) == &stub_;
}

size_t Engine::InboxDepth() const {
  DCHECK(IsMyThread());
  // Only this thread unlinks and frees nodes, so every node reachable from tail_ stays alive
  // during the walk; a producer between its exchange and its link is not reachable yet.
  size_t depth = 0;
  for (const Node* n = tail_; n != nullptr; n = n->next.load(std::memory_order_acquire)) {
    if (n != &stub_) ++depth;
  }
  return depth;
}

size_t Engine::DrainInbox() {
  size_t ran = 0;
  for (; ran < kMaxInboxBatch; ++ran) {
    Node* node = nullptr;
    if (Pop(&node) != PopResult::kItem) break;
    node->invoke(node, /*run=*/true);
  }
  return ran;
}

bool Engine::RunOnce() {
  const size_t ran_now = DrainInbox() + context_.poll();
  work_done_ += ran_now;
  bool ran = ran_now > 0;
  if (!deferred_.empty()) {
    // Tasks deferred from here on wait for the next turn.
    running_deferred_.swap(deferred_);
    for (Task& task : running_deferred_) std::move(task)();
    running_deferred_.clear();
    ran = true;
  }
  return ran;
}

void Engine::Wake() {
  boost::asio::post(context_, [] {});
}

// Why no Post is ever lost (the engine cannot sleep with a message in its inbox):
//  All accesses to sleeping_, the producer's exchange on head_ and the consumer's load of head_
//  below are seq_cst, so they appear in one total order S consistent with program order and
//  with the modification order of each atomic.
//  Producer P: (p1) exchange head_; (p2) load sleeping_; if true, (p3) exchange it to false and,
//  if it was still true, post a wake-up handler to the io_context.
//  Consumer C: (c1) store sleeping_ = true; (c2) load head_ (InboxEmpty); sleep in run_one()
//  only if the inbox looked empty; after waking, (c3) store sleeping_ = false.
//  - If p2 reads false, then c1 of the round in question comes after p2 in S (p2 read an older
//    value, so p2 is coherence-ordered before c1), hence p1 < p2 < c1 < c2 in S and c2 sees P's
//    node: C does not sleep.
//  - If p2 reads true and p3 returns true, P posts a wake-up after c1, so run_one() returns.
//  - If p2 reads true and p3 returns false, p3 read a false written by (a) another producer's
//    p3, which posted a wake-up for this same round, or (b) C's c3, meaning C is awake, and C's
//    next c1 follows p3 in the modification order, hence p1 < p3 < c1 < c2 in S: the next
//    emptiness check sees P's node.
//  A half-pushed node (p1 done, link not yet stored) makes head_ differ from the stub, so C
//  keeps looping (kRetry) instead of sleeping. Spurious wake-up handlers are harmless no-ops.
void Engine::Sleep() {
  sleeping_.store(true, std::memory_order_seq_cst);  // c1
  if (!InboxEmpty() || stopping_.load(std::memory_order_seq_cst)) {  // c2
    sleeping_.store(false, std::memory_order_seq_cst);
    return;
  }
  context_.run_one();
  sleeping_.store(false, std::memory_order_seq_cst);  // c3
}

void Engine::PinToCpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  int count = CPU_COUNT(&allowed);
  if (count <= 0) return;
  int wanted = static_cast<int>(index_ % static_cast<unsigned>(count));
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (wanted-- == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) {
        ABSL_RAW_LOG(WARNING, "engine %u: cannot pin to CPU %d", index_, cpu);
      }
      return;
    }
  }
}

void Engine::Loop() {
  tls_current_engine = this;
  // asio allocates a coroutine frame (and a posted handler) from a one-block cache of the
  // thread's innermost asio context, and only io_context::poll/run set one up, per call. A
  // coroutine resumed from the inbox (a hop's return, io/hop.h) would otherwise allocate and
  // free its frames (the dispatch's, the next read's) with operator new/delete: the thread
  // keeps a cache of its own for everything that runs outside poll. Its key is not the
  // io_context's, so asio still sees no io_context running on this thread there.
  boost::asio::detail::thread_context frame_cache_key;
  boost::asio::detail::thread_info_base frame_cache;
  boost::asio::detail::thread_context::thread_call_stack::context frame_cache_scope(
      &frame_cache_key, frame_cache);
  if (options_.background) {
    sched_param param{};
    if (sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
      ABSL_RAW_LOG(WARNING, "background engine: cannot switch to SCHED_IDLE");
    }
  } else if (options_.pin_cpus) {
    PinToCpu();
  }
  auto work = boost::asio::make_work_guard(context_);  // keeps run_one() blocking when idle
  const auto spin = std::chrono::microseconds(options_.spin_us);
  try {
    while (!stopping_.load(std::memory_order_acquire)) {
      if (RunOnce()) continue;
      const uint64_t idle_start = __rdtsc();
      bool ran = false;
      if (options_.spin_us > 0) {
        const auto deadline = std::chrono::steady_clock::now() + spin;
        do {
          // Yield rather than only pause: on an oversubscribed machine the thread that will
          // answer us may be waiting for this CPU (measured: spinning without yielding made
          // hops 20x slower than sleeping on a loaded 2-CPU VM).
          CpuRelax();
          std::this_thread::yield();
          ran = RunOnce();
        } while (!ran && !stopping_.load(std::memory_order_relaxed) &&
                 std::chrono::steady_clock::now() < deadline);
      }
      if (!ran) Sleep();
      idle_ticks_ += __rdtsc() - idle_start;
      ++idle_stretches_;
    }
  } catch (const std::bad_alloc& e) {
    // Commands catch their own allocation failures (server/server.h); one that reaches here
    // came from the server's own work (a message, a timer): out of memory, as Redis aborts.
    ABSL_RAW_LOG(FATAL, "engine %u: out of memory outside any command: %s", index_, e.what());
  } catch (const std::exception& e) {
    ABSL_RAW_LOG(FATAL, "engine %u: exception escaped a task (a bug): %s", index_, e.what());
  } catch (...) {
    ABSL_RAW_LOG(FATAL, "engine %u: unknown exception escaped a task (a bug)", index_);
  }
  tls_current_engine = nullptr;
}

}  // namespace dashkv::io
