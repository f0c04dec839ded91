// RdbSink: the byte stream the RDB serializers append to. DUMP collects a whole payload in it;
// a snapshot gives it a flush function so that a big value (a 1 GB string, a 10M-member set)
// leaves in bounded pieces: the serializer appends to buffer() and calls MaybeFlush() between
// elements and between pieces of a long string, so the buffer holds at most about `threshold`
// bytes plus one element.
// A snapshot may also defer LZF compression (set_defer_lzf): a string that would be compressed
// is then appended raw, without its length, and recorded as an LzfSpan; whoever writes the bytes
// encodes each span with AppendRdbString (EncodeLzfSpans), so the compression runs on the
// writer's thread instead of the serializer's.
// Thread: owned by its user (one serializer at a time).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/rdb_encoding.h"

namespace dashkv {

// A string in a buffer whose RDB string encoding (LZF or raw, with its length) is still to be
// written in place of its raw bytes.
struct LzfSpan {
  size_t offset;
  size_t size;
};

// Returns `bytes` with each span (in increasing offsets, inside `bytes`) replaced by its RDB
// string encoding, LZF-compressed as `lzf` says (AppendRdbString). Appends to `out`.
void EncodeLzfSpans(std::string_view bytes, const std::vector<LzfSpan>& spans, RdbLzf lzf,
                    std::string* out);

class RdbSink {
 public:
  // Takes the buffered bytes and their deferred strings: it may move them out of `bytes` and
  // `spans`; the sink clears both after.
  using FlushFn = std::function<void(std::string& bytes, std::vector<LzfSpan>& spans)>;

  // Collects every byte in buffer() (nothing is ever flushed).
  RdbSink() = default;
  // Hands the buffered bytes to `flush` whenever MaybeFlush() finds `threshold` bytes or more,
  // and at Flush().
  RdbSink(size_t threshold, FlushFn flush) : threshold_(threshold), flush_(std::move(flush)) {}

  std::string* buffer() { return &buf_; }
  void Append(std::string_view bytes) { buf_.append(bytes); }
  // Appends `s` in its RDB string encoding (AppendRdbString, LZF as set_lzf() says when
  // `compress`), or, while LZF is deferred and `s` is one LZF may shorten, raw as an LzfSpan.
  void AppendString(std::string_view s, bool compress);

  // How strings appended with `compress` try LZF here (default kFull, as Redis: DUMP).
  // A snapshot's sink probes (RdbLzf::kProbe), as its writer does for the deferred ones.
  void set_lzf(RdbLzf lzf) { lzf_ = lzf; }

  // Strings appended while this is on leave compressed by the flush function's consumer.
  // Only for a sink with a flush function.
  void set_defer_lzf(bool on) { defer_lzf_ = on; }
  std::vector<LzfSpan>* spans() { return &spans_; }

  // Drops the buffered bytes and their deferred strings (a stopped snapshot).
  void Clear() {
    buf_.clear();
    spans_.clear();
  }

  // Flushes when the buffer has reached the threshold (no-op for a collecting sink).
  void MaybeFlush() {
    if (flush_ && buf_.size() >= threshold_) Flush();
  }
  // Hands every buffered byte to the flush function (no-op for a collecting sink).
  void Flush() {
    if (!flush_ || buf_.empty()) return;
    flush_(buf_, spans_);
    buf_.clear();
    spans_.clear();
    if (buf_.capacity() < threshold_) buf_.reserve(threshold_ + threshold_ / 4);
  }

 private:
  std::string buf_;
  std::vector<LzfSpan> spans_;
  bool defer_lzf_ = false;
  RdbLzf lzf_ = RdbLzf::kFull;
  size_t threshold_ = 0;
  FlushFn flush_;
};

}  // namespace dashkv
