#include "io/hop.h"

namespace dashkv::io {

void Hop::RunWork() {
  try {
    run_work_(work_);
  } catch (...) {
    error_ = std::current_exception();
  }
}

void Hop::Suspend(detail::HopFrame* frame) {
  home_ = Engine::Current();
  CHECK(home_ != nullptr) << "Hop::Run awaited outside an engine thread";
  if (target_ == home_) {
    RunWork();
    return;
  }
  thread_.emplace(frame->detach_thread());
  phase_ = Phase::kToTarget;
  ++hops_;
  target_->Push(this);
}

void Hop::Invoke(detail::InboxNode* node, bool run) {
  Hop* self = static_cast<Hop*>(node);
  if (self->phase_ == Phase::kToTarget && run) {
    self->RunWork();
    self->phase_ = Phase::kToHome;
    self->home_->Push(self);  // the node belongs to the home engine again: not touched here
    return;
  }
  // Home again (or dropped): the node is free for the next hop before the coroutine resumes,
  // and the stack moves out of it first, since resuming may end the coroutine and with it
  // the node's owner.
  detail::HopThread thread(std::move(*self->thread_));
  self->thread_.reset();
  self->phase_ = Phase::kIdle;
  if (run) thread.Resume();
  // Not run: the stack's destructor hands it to asio to unwind on the home executor.
}

}  // namespace dashkv::io
