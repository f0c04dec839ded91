// RdbSink: the byte stream the RDB serializers append to. DUMP collects a whole payload in it;
// a snapshot gives it a flush function so that a big value (a 1 GB string, a 10M-member set)
// leaves in bounded pieces: the serializer appends to buffer() and calls MaybeFlush() between
// elements and between pieces of a long string, so the buffer holds at most about `threshold`
// bytes plus one element.
// Thread: owned by its user (one serializer at a time).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace dashkv {

class RdbSink {
 public:
  // Takes the buffered bytes: it may move them out of `bytes`; the sink clears it after.
  using FlushFn = std::function<void(std::string& bytes)>;

  // Collects every byte in buffer() (nothing is ever flushed).
  RdbSink() = default;
  // Hands the buffered bytes to `flush` whenever MaybeFlush() finds `threshold` bytes or more,
  // and at Flush().
  RdbSink(size_t threshold, FlushFn flush) : threshold_(threshold), flush_(std::move(flush)) {}

  std::string* buffer() { return &buf_; }
  void Append(std::string_view bytes) { buf_.append(bytes); }

  // Flushes when the buffer has reached the threshold (no-op for a collecting sink).
  void MaybeFlush() {
    if (flush_ && buf_.size() >= threshold_) Flush();
  }
  // Hands every buffered byte to the flush function (no-op for a collecting sink).
  void Flush() {
    if (!flush_ || buf_.empty()) return;
    flush_(buf_);
    buf_.clear();
    if (buf_.capacity() < threshold_) buf_.reserve(threshold_ + threshold_ / 4);
  }

 private:
  std::string buf_;
  size_t threshold_ = 0;
  FlushFn flush_;
};

}  // namespace dashkv
