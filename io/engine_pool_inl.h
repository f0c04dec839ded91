// Template definitions of EnginePool (included at the end of engine_pool.h only).
//
// A hop is two inbox messages: the work goes to the target engine's inbox, and the coroutine's
// completion handler comes back through the caller engine's inbox (not asio's mutex-protected
// handler queue). The handler is invoked from the caller engine's loop, on the thread that owns
// the coroutine's executor, which is all asio's awaitable_handler needs.
#pragma once

#include <absl/container/inlined_vector.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>

#include "core/base/logging.h"

namespace dashkv::io {
namespace detail {

// The completion handler type asio's use_awaitable hands to an initiation for `Sig`.
template <typename Sig>
using AwaitableHandler =
    typename boost::asio::async_result<boost::asio::use_awaitable_t<>, Sig>::handler_type;

// The completion signature of a hop returning R (what it returned, or what it threw).
template <typename R>
struct HopSignature {
  using type = void(std::exception_ptr, std::optional<R>);
};
template <>
struct HopSignature<void> {
  using type = void(std::exception_ptr);
};

// The result signature of AwaitAsync<R> (no exception travels through it).
template <typename R>
struct AsyncSignature {
  using type = void(R);
};
template <>
struct AsyncSignature<void> {
  using type = void();
};

// Shared by the branches of one AwaitMany; lives in the awaiting coroutine's frame.
struct ManyState {
  // Remote branches still running, plus one held by the caller until it has suspended.
  std::atomic<size_t> pending{1};
  Engine* home = nullptr;
  std::optional<AwaitableHandler<void()>> handler;
  // The exception of the first branch that threw (written by the branch that sets `failed`,
  // read by the caller after every branch is done).
  std::atomic<bool> failed{false};
  std::exception_ptr error;

  // Records the exception being handled, unless another branch already did.
  void Fail() {
    if (!failed.exchange(true, std::memory_order_relaxed)) error = std::current_exception();
  }
  // Runs one branch; an exception it throws is kept for the caller.
  template <typename F>
  void Run(F& fn, unsigned j) {
    try {
      fn(j);
    } catch (...) {
      Fail();
    }
  }

  // Called by each finishing branch and once by the caller; the last one resumes the caller on
  // its own engine. acq_rel: the handler stored before the caller's release is seen by the
  // last branch, and every branch's writes are seen by the resumed caller.
  void Done() {
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      home->Post([this] {
        // Move the handler out first: resuming the coroutine destroys this state.
        AwaitableHandler<void()> h = std::move(*handler);
        h();
      });
    }
  }
};

}  // namespace detail

template <typename F, typename R>
boost::asio::awaitable<R> EnginePool::Await(unsigned i, F fn) {
  static_assert(!std::is_reference_v<R>, "Await: fn must return a value, not a reference");
  Engine* target = engines_[i].get();
  Engine* home = Engine::Current();
  if (home == target) {  // local: no hop
    if constexpr (std::is_void_v<R>) {
      fn();
      co_return;
    } else {
      co_return fn();
    }
  }
  CHECK(home != nullptr) << "EnginePool::Await called outside an engine thread";
  using Sig = typename detail::HopSignature<R>::type;
  // Runs after the coroutine has suspended (asio's use_awaitable guarantees it), so the
  // handler may be invoked from another thread's message as soon as it is posted. An exception
  // of fn is caught on the target and handed to the handler, which rethrows it in the awaiting
  // coroutine on its own engine (asio's use_awaitable does that for a non-null exception_ptr).
  auto initiation = [target, home, fnp = &fn](auto handler) {
    target->Post([target, home, fnp, h = std::move(handler)]() mutable {
      (void)target;
      std::exception_ptr error;
      if constexpr (std::is_void_v<R>) {
        try {
          (*fnp)();
        } catch (...) {
          error = std::current_exception();
        }
        home->Post([h = std::move(h), error = std::move(error)]() mutable {
          h(std::move(error));
        });
      } else {
        std::optional<R> r;
        try {
          r.emplace((*fnp)());
        } catch (...) {
          error = std::current_exception();
        }
        home->Post([h = std::move(h), error = std::move(error), r = std::move(r)]() mutable {
          h(std::move(error), std::move(r));
        });
      }
    });
  };
  if constexpr (std::is_void_v<R>) {
    co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, Sig>(
        std::move(initiation), boost::asio::use_awaitable);
  } else {
    co_return std::move(*co_await boost::asio::async_initiate<
                        const boost::asio::use_awaitable_t<>, Sig>(std::move(initiation),
                                                                   boost::asio::use_awaitable));
  }
}

template <typename R, typename F>
boost::asio::awaitable<R> EnginePool::AwaitAsync(unsigned i, F fn) {
  Engine* target = engines_[i].get();
  Engine* home = Engine::Current();
  CHECK(home != nullptr) << "EnginePool::AwaitAsync called outside an engine thread";
  using Sig = typename detail::AsyncSignature<R>::type;
  auto initiation = [target, home, fnp = &fn](auto handler) {
    target->Post([home, fnp, h = std::move(handler)]() mutable {
      if constexpr (std::is_void_v<R>) {
        (*fnp)(Completion<void>([home, h = std::move(h)]() mutable {
          home->Post([h = std::move(h)]() mutable { h(); });
        }));
      } else {
        (*fnp)(Completion<R>([home, h = std::move(h)](R r) mutable {
          home->Post([h = std::move(h), r = std::move(r)]() mutable { h(std::move(r)); });
        }));
      }
    });
  };
  if constexpr (std::is_void_v<R>) {
    co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, Sig>(
        std::move(initiation), boost::asio::use_awaitable);
  } else {
    co_return co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, Sig>(
        std::move(initiation), boost::asio::use_awaitable);
  }
}

template <typename F>
boost::asio::awaitable<void> EnginePool::AwaitMany(std::span<const unsigned> targets, F fn) {
  Engine* home = Engine::Current();
  CHECK(home != nullptr) << "EnginePool::AwaitMany called outside an engine thread";
  detail::ManyState state;
  state.home = home;
  bool local = false;
  for (unsigned j : targets) {
    Engine* target = engines_[j].get();
    if (target == home) {
      local = true;
      continue;
    }
    state.pending.fetch_add(1, std::memory_order_relaxed);
    target->Post([&state, &fn, j] {
      state.Run(fn, j);
      state.Done();
    });
  }
  if (local) state.Run(fn, home->index());
  // Every remote branch already done: no need to suspend. A branch touches nothing after its
  // decrement unless it is the last one, which it cannot be while we hold our count.
  if (state.pending.load(std::memory_order_acquire) != 1) {
    co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, void()>(
        [&state](auto handler) {
          state.handler.emplace(std::move(handler));
          state.Done();
        },
        boost::asio::use_awaitable);
  }
  // Every branch has finished (none is left to touch `state` or `fn`): rethrow here, on the
  // caller's engine, what one of them threw.
  if (state.failed.load(std::memory_order_relaxed)) std::rethrow_exception(state.error);
}

template <typename F>
boost::asio::awaitable<void> EnginePool::AwaitAll(F fn) {
  absl::InlinedVector<unsigned, 64> targets(size());
  for (unsigned j = 0; j < size(); ++j) targets[j] = j;
  co_await AwaitMany(std::span<const unsigned>(targets.data(), targets.size()), std::move(fn));
}

template <typename F>
void EnginePool::RunOnAllBlocking(F fn) {
  CHECK(Engine::Current() == nullptr)
      << "EnginePool::RunOnAllBlocking called from an engine thread (would deadlock)";
  std::mutex mu;
  std::condition_variable cv;
  unsigned pending = size();
  for (unsigned j = 0; j < size(); ++j) {
    engines_[j]->Post([&, j] {
      fn(j);
      std::lock_guard<std::mutex> lock(mu);  // notify under the lock: the waiter owns mu/cv
      if (--pending == 0) cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return pending == 0; });
}

}  // namespace dashkv::io
