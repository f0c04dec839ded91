// The RDB value serializer's sink protocol: big values leave in bounded pieces, and what was
// flushed concatenates to exactly what a collecting sink holds.
#include "server/persistence/value_serializer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/rdb_encoding.h"
#include "server/persistence/value_loader.h"
#include "server/values/set_value.h"

namespace dashkv {
namespace {

struct Flushed {
  std::string bytes;
  size_t calls = 0;
  size_t largest = 0;
  size_t deferred = 0;  // strings whose compression was left to the consumer
};

// Serializes `value` through a sink flushing at `threshold`; returns what it flushed, with the
// deferred strings encoded as the sink encodes the others (RdbLzf::kFull, the default), so the
// output equals WriteWhole's (`defer_lzf`).
Flushed WriteFlushing(const CompactObj& value, size_t threshold, bool defer_lzf = false) {
  Flushed out;
  RdbSink sink(threshold, [&](std::string& bytes, std::vector<LzfSpan>& spans) {
    EncodeLzfSpans(bytes, spans, RdbLzf::kFull, &out.bytes);
    out.largest = std::max(out.largest, bytes.size());
    out.deferred += spans.size();
    ++out.calls;
  });
  sink.set_defer_lzf(defer_lzf);
  WriteRdbValue(value, RdbWriteOptions{}, sink);
  sink.Flush();
  return out;
}

std::string WriteWhole(const CompactObj& value) {
  RdbSink sink;
  WriteRdbValue(value, RdbWriteOptions{}, sink);
  return *sink.buffer();
}

TEST(ValueSerializerTest, BigStringLeavesInPieces) {
  CompactObj big = CompactObj::FromString(std::string(10 * kRdbPieceSize + 123, 'b'));
  Flushed f = WriteFlushing(big, 4096);
  EXPECT_EQ(f.bytes, WriteWhole(big));
  EXPECT_GE(f.calls, 10u);
  EXPECT_LE(f.largest, 4096 + kRdbPieceSize);
  // Raw, not compressed: the length header, then the bytes.
  RdbReader r(f.bytes);
  EXPECT_EQ(*r.ReadByte(), kRdbString);
  EXPECT_EQ(*r.ReadString(), std::string(10 * kRdbPieceSize + 123, 'b'));
}

TEST(ValueSerializerTest, BigSetLeavesInPieces) {
  SetLimits limits;
  std::unique_ptr<SetValue> set = SetValue::Create("m", 100000, limits);
  for (int i = 0; i < 100000; ++i) set->Add(absl::StrCat("member-", i), limits);
  CompactObj obj;
  obj.SetObject(ObjType::kSet, 0, set.release());
  Flushed f = WriteFlushing(obj, 1024);
  std::string whole = WriteWhole(obj);
  EXPECT_EQ(f.bytes, whole);
  EXPECT_GT(f.calls, whole.size() / 2048);
  EXPECT_LE(f.largest, 1024u + 64);  // the threshold plus one element
  RdbReader r(f.bytes);
  absl::StatusOr<CompactObj> back = ReadRdbObject(r, ValueLimits{});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(AsSet(*back).size(), 100000u);
  EXPECT_EQ(r.remaining(), 0u);
}

// Regression: a hashtable set is written in its table's order, which is hash order; loading it
// into a table that grows on the way made every insert probe across a huge cluster (16 s for
// 200k members). The loader sizes the table for the whole count first. 500k members took
// minutes before; the bound is far above the fixed time even under sanitizers.
TEST(ValueSerializerTest, SetInTableOrderLoadsInLinearTime) {
  SetLimits limits;
  std::unique_ptr<SetValue> set = SetValue::Create("m", 1, limits);
  for (int i = 0; i < 500000; ++i) set->Add(absl::StrCat("member:", i), limits);
  CompactObj obj;
  obj.SetObject(ObjType::kSet, 0, set.release());
  std::string bytes = WriteWhole(obj);
  auto start = std::chrono::steady_clock::now();
  RdbReader r(bytes);
  absl::StatusOr<CompactObj> back = ReadRdbObject(r, ValueLimits{});
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(AsSet(*back).size(), 500000u);
  EXPECT_LT(elapsed, std::chrono::seconds(30));
}

// A snapshot writing under load leaves LZF to the file writer's thread: the raw strings and
// their spans, encoded there, must give exactly the bytes the shard would have written.
TEST(ValueSerializerTest, DeferredCompressionWritesTheSameBytes) {
  SetLimits limits;
  std::unique_ptr<SetValue> set = SetValue::Create("m", 5000, limits);
  for (int i = 0; i < 5000; ++i) set->Add(absl::StrCat("a-long-compressible-member-", i), limits);
  CompactObj big_set;
  big_set.SetObject(ObjType::kSet, 0, set.release());
  std::vector<CompactObj> values;
  values.push_back(CompactObj::FromString(std::string(1000, 'x')));       // compresses
  values.push_back(CompactObj::FromString("short"));                      // too short to try
  values.push_back(CompactObj::FromString("123456789"));                  // an integer
  values.push_back(CompactObj::FromString("abcdefghijklmnopqrstuvwxyz"));  // LZF does not pay
  values.push_back(CompactObj::FromString(std::string(3 * kRdbPieceSize, 'y')));  // raw pieces
  values.push_back(std::move(big_set));
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t threshold : {size_t(256), size_t(1) << 20}) {
      Flushed f = WriteFlushing(values[i], threshold, /*defer_lzf=*/true);
      EXPECT_EQ(f.bytes, WriteWhole(values[i])) << "value " << i << ", threshold " << threshold;
    }
  }
  EXPECT_EQ(WriteFlushing(values[0], 256, true).deferred, 1u);
  EXPECT_EQ(WriteFlushing(values[1], 256, true).deferred, 0u);
  EXPECT_EQ(WriteFlushing(values[5], 256, true).deferred, 5000u);
  EXPECT_EQ(WriteFlushing(values[0], 256, false).deferred, 0u);
}

// A snapshot stopped with bytes buffered (an abort) clears its sink: the next one's flush must
// not carry the old deferred strings, whose offsets point into bytes that are gone.
TEST(ValueSerializerTest, ClearDropsDeferredStrings) {
  std::vector<size_t> spans_per_flush;
  RdbSink sink(1 << 20, [&](std::string&, std::vector<LzfSpan>& spans) {
    spans_per_flush.push_back(spans.size());
  });
  sink.set_defer_lzf(true);
  sink.AppendString(std::string(100, 'a'), /*compress=*/true);
  ASSERT_EQ(sink.spans()->size(), 1u);
  sink.Clear();
  EXPECT_TRUE(sink.buffer()->empty());
  sink.Append("x");
  sink.Flush();
  EXPECT_EQ(spans_per_flush, std::vector<size_t>{0});
}

TEST(ValueSerializerTest, CollectingSinkNeverFlushes) {
  RdbSink sink;
  sink.Append("abc");
  sink.MaybeFlush();
  sink.Flush();
  EXPECT_EQ(*sink.buffer(), "abc");
}

}  // namespace
}  // namespace dashkv
