// EnginePool: starts and stops N engines (plus one background engine), and is the one API for
// running work on another engine (Seastar's submit_to): Post (fire and forget), Await (a coroutine hop there and back),
// AwaitMany (parallel hops), RunOnAllBlocking (for non-engine threads: main, tests).
// Thread: Post/Await are thread-safe; Start/Stop/Join from the owning (main) thread.
#pragma once

#include <utility>

#include <absl/functional/any_invocable.h>

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "io/engine.h"

namespace dashkv::io {

// Returns the number of CPUs this process may use: the affinity mask, capped by a cgroup (v2
// cpu.max, v1 cfs quota) CPU quota, rounded up, at least 1.
unsigned AvailableCpus();

// The resumption of a coroutine suspended in EnginePool::AwaitAsync<R>: move-only, call once.
template <typename R>
class Completion {
 public:
  explicit Completion(absl::AnyInvocable<void(R)> fn) : fn_(std::move(fn)) {}
  void operator()(R value) { std::move(fn_)(std::move(value)); }

 private:
  absl::AnyInvocable<void(R)> fn_;
};
template <>
class Completion<void> {
 public:
  explicit Completion(absl::AnyInvocable<void()> fn) : fn_(std::move(fn)) {}
  void operator()() { std::move(fn_)(); }

 private:
  absl::AnyInvocable<void()> fn_;
};

class EnginePool {
 public:
  EnginePool(unsigned n, EngineOptions options = {});
  // Stops and joins the engines if needed; drops queued tasks of all engines before destroying
  // any io_context (a dropped coroutine handler posts its unwinding to its own engine).
  ~EnginePool();

  unsigned size() const { return static_cast<unsigned>(engines_.size()); }
  Engine& operator[](unsigned i) { return *engines_[i]; }
  // The background engine (EngineOptions::background; index size()): for work that may block
  // for milliseconds and must not delay the engines, such as refilling the shards' chunk
  // reserves. Not counted in size() and not reached by the RunOnAll/Await family.
  Engine& background() { return *background_; }

  void Start();
  void Stop();  // asks every engine to stop
  void Join();

  // Queues fn on engine i.
  template <typename F>
  void Post(unsigned i, F&& fn) {
    engines_[i]->Post(std::forward<F>(fn));
  }

  // Runs fn() on engine i and resumes the awaiting coroutine on its own executor with the
  // result. If the caller already runs on engine i, fn runs inline with no hop. An exception
  // fn throws is caught on engine i and rethrown in the awaiting coroutine (on its own engine),
  // as if fn had run inline: no exception escapes engine i's task.
  // REQUIRES: called from a coroutine on an engine thread. fn must not suspend.
  template <typename F, typename R = std::invoke_result_t<F&>>
  boost::asio::awaitable<R> Await(unsigned i, F fn);

  // Runs fn(done) on engine i, where `done` is a one-shot Completion<R>: fn (or whatever it
  // hands `done` to) calls it exactly once, now or later, from engine i's thread, and the
  // awaiting coroutine resumes on its own engine with the value. This is the hop for work that
  // has to wait on the target (an intent lock, a blocked pop): fn itself must not block.
  // Always suspends (even for the caller's own engine). REQUIRES: called from a coroutine on an
  // engine thread; `done` is called exactly once (dropping it leaks the coroutine); fn does not
  // throw (an exception escaping it aborts, see Engine).
  template <typename R, typename F>
  boost::asio::awaitable<R> AwaitAsync(unsigned i, F fn);

  // Runs fn(j) on each engine j in `targets` in parallel (inline for the caller's own engine,
  // after the others are posted) and resumes when all have finished. fn is called concurrently
  // on several engines (it usually writes to a per-engine slot). One message per remote target,
  // one back; no suspension at all when every target is the caller's own engine. If branches
  // throw, the others still run to the end, and then the awaiting coroutine rethrows the first
  // exception (caught on its engine, carried back as with Await).
  // REQUIRES: called from a coroutine on an engine thread; `targets` has no duplicates.
  template <typename F>
  boost::asio::awaitable<void> AwaitMany(std::span<const unsigned> targets, F fn);

  // Runs fn(j) on every engine and resumes when all have finished.
  template <typename F>
  boost::asio::awaitable<void> AwaitAll(F fn);

  // Runs fn(j) on every engine and blocks the calling (non-engine) thread until all finish.
  // REQUIRES: not called on an engine thread; the engines are started.
  template <typename F>
  void RunOnAllBlocking(F fn);

 private:
  std::vector<std::unique_ptr<Engine>> engines_;
  std::unique_ptr<Engine> background_;
};

}  // namespace dashkv::io

#include "io/engine_pool_inl.h"
