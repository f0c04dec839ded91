// The RDB value serializer's sink protocol: big values leave in bounded pieces, and what was
// flushed concatenates to exactly what a collecting sink holds.
#include "server/persistence/value_serializer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

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
};

// Serializes `value` through a sink flushing at `threshold`; returns what it flushed.
Flushed WriteFlushing(const CompactObj& value, size_t threshold) {
  Flushed out;
  RdbSink sink(threshold, [&](std::string& bytes) {
    out.bytes.append(bytes);
    out.largest = std::max(out.largest, bytes.size());
    ++out.calls;
  });
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

TEST(ValueSerializerTest, CollectingSinkNeverFlushes) {
  RdbSink sink;
  sink.Append("abc");
  sink.MaybeFlush();
  sink.Flush();
  EXPECT_EQ(*sink.buffer(), "abc");
}

}  // namespace
}  // namespace dashkv
