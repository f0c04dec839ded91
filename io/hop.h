// Hop: a reusable message that takes a piece of work from a coroutine on one engine to another
// engine and resumes the coroutine on its own engine, without allocating: the message is the
// Hop itself (an inbox node its owner keeps), the work is stored inline in it, and the coroutine
// waits in it directly instead of in asio's use_awaitable machinery (no initiation frame, no
// completion handler, no message allocated per direction).
// Thread: engine-local to the engine of the coroutine using it ("home"), except that while a
// hop is in flight the target engine runs the work and sends the node back.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/version.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <type_traits>

#include "core/base/logging.h"
#include "io/engine.h"

// The waiting coroutine is held as asio's own awaitable_thread (what a use_awaitable handler
// holds), which is an internal of Boost.Asio's coroutine support: check it on an upgrade.
#if BOOST_ASIO_VERSION != 101800
#error "io/hop.h relies on the awaitable internals of Boost.Asio 1.18 (Boost 1.74)"
#endif

namespace dashkv::io {

namespace detail {

using HopExecutor = boost::asio::any_io_executor;
using HopFrame = boost::asio::detail::awaitable_frame_base<HopExecutor>;
using HopThreadBase = boost::asio::detail::awaitable_thread<HopExecutor>;

// A suspended coroutine stack (asio's "thread of execution"), resumed the way asio's
// awaitable_handler resumes one, minus the result (the work hands its results over itself).
class HopThread : public HopThreadBase {
 public:
  explicit HopThread(HopThreadBase* from) : HopThreadBase(std::move(*from)) {}
  // Resumes the coroutine that suspended in the hop. REQUIRES: on its executor's thread.
  void Resume() {
    top_of_stack_->attach_thread(this);
    pump();
  }
};

}  // namespace detail

// Design
//  `co_await hop.Run(target, fn)` stores fn in the node; asio then calls Start::operator() once
//  the coroutine has suspended, which moves the coroutine's stack (awaitable_thread) into the
//  node and pushes the node into the target's inbox (io/engine.h). The target runs fn and
//  pushes the same node into the home engine's inbox; the home engine's loop resumes the
//  coroutine. So a hop costs two lock-free pushes and no allocation, and the node is never
//  freed by another thread. The node is touched by one thread at a time: home until it is
//  pushed to the target, the target until it is pushed back (each push publishes, each pop
//  acquires).
//  Lifetime: while a hop is in flight the node owns the coroutine's stack, and that stack owns
//  (through its frames) whatever owns the Hop (a connection's state), so the Hop outlives the
//  hop: a connection closed meanwhile is torn down only after the coroutine has resumed and
//  returned. A node that DiscardInbox drops at shutdown, in either direction, hands the stack
//  to asio, which destroys it through the home executor (as for a dropped use_awaitable
//  handler).
//  One hop at a time per Hop: a coroutine that needs several in parallel uses
//  EnginePool::AwaitMany.
class Hop final : private detail::InboxNode {
 public:
  // The largest work a hop carries (bytes): a lambda capturing a few references and scalars.
  static constexpr size_t kMaxWork = 96;

  // What co_await takes: asio's awaitable runs it once the coroutine has suspended (its
  // await_transform for an async operation's initiation).
  struct Start {
    Hop* hop;
    detail::HopThreadBase* operator()(detail::HopFrame* frame) const {
      hop->Suspend(frame);
      return nullptr;
    }
  };

  Hop() { invoke = &Invoke; }
  Hop(const Hop&) = delete;
  Hop& operator=(const Hop&) = delete;

  // Returns the awaitable of a hop: `co_await hop.Run(target, fn)` runs fn() on `target` and
  // resumes the coroutine on the calling engine once fn has returned; fn runs inline, with no
  // suspension, when `target` is the calling engine. fn hands its results back through what it
  // captures by reference (the coroutine's frame is alive and untouched meanwhile). An
  // exception fn throws is kept for RethrowIfFailed, which the caller calls after co_await.
  // REQUIRES: co_awaited at once from an asio::awaitable coroutine on an engine thread; no hop
  // of this node in flight; fn trivially copyable and destructible, at most kMaxWork bytes;
  // fn must not suspend.
  template <typename F>
  [[nodiscard]] Start Run(Engine& target, F fn) {
    static_assert(std::is_trivially_copyable_v<F> && std::is_trivially_destructible_v<F>,
                  "Hop::Run: capture references and scalars only");
    static_assert(sizeof(F) <= kMaxWork && alignof(F) <= alignof(std::max_align_t),
                  "Hop::Run: the work does not fit in the node");
    DCHECK(!in_flight());
    ::new (static_cast<void*>(work_)) F(fn);
    run_work_ = [](void* p) { (*std::launder(static_cast<F*>(p)))(); };
    target_ = &target;
    return Start{this};
  }

  // Rethrows, on the calling engine, what the work of the last hop threw, if anything.
  void RethrowIfFailed() {
    if (error_) [[unlikely]] std::rethrow_exception(std::exchange(error_, nullptr));
  }

  // Whether a hop is on its way (the coroutine suspended in it). Engine-local (home).
  bool in_flight() const { return phase_ != Phase::kIdle; }
  // Returns the number of hops that suspended (the work ran on another engine).
  uint64_t hops() const { return hops_; }

 private:
  enum class Phase : uint8_t { kIdle, kToTarget, kToHome };

  // Runs when the coroutine has suspended: runs the work inline for the home engine (the
  // coroutine stays attached to its stack and asio resumes it at once), else sends the node.
  void Suspend(detail::HopFrame* frame);
  // The inbox entry point, on the target (run the work, send the node home) and on the home
  // engine (resume the coroutine); with run false, drops the hop (see Design).
  static void Invoke(detail::InboxNode* node, bool run);
  void RunWork();

  Phase phase_ = Phase::kIdle;
  Engine* target_ = nullptr;
  Engine* home_ = nullptr;
  void (*run_work_)(void*) = nullptr;
  std::exception_ptr error_;
  uint64_t hops_ = 0;
  std::optional<detail::HopThread> thread_;  // the suspended coroutine while in flight
  alignas(std::max_align_t) unsigned char work_[kMaxWork];
};

}  // namespace dashkv::io
