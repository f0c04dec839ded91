// Tests for core/bitops.h. Tables were recorded from redis-server 7.0.15 (BITCOUNT, BITPOS and
// GETRANGE over an index grid; BITFIELD type/offset parsing; a BITFIELD trace); randomized tests
// cross-check against naive bit-by-bit models.
#include "core/bitops.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace dashkv {
namespace {

using namespace std::string_view_literals;

constexpr int64_t kGrid[] = {-100, -9, -3, -1, 0, 1, 2, 7, 9, 100, INT64_MIN, INT64_MAX};
constexpr size_t kGridSize = std::size(kGrid);

struct RangeRow {
  int str;
  bool bit_unit;
  int64_t start;
  int64_t want[kGridSize];
};

struct BitPosRow {
  int str;
  int bit;
  bool bit_unit;
  int64_t start;
  int64_t want[kGridSize + 1];  // [0]: no end given (byte unit only), then one per grid end
};

struct GetRangeRow {
  int str;
  int64_t start;
  std::string_view want[kGridSize];
};

struct ParseCase {
  std::string_view in;
  bool ok;
};

struct OffsetCase {
  std::string_view in;
  bool getbit_ok;
  bool bitfield_u8_ok;
};

enum class Op { kGet, kSet, kIncrBy };

struct TraceStep {
  Op op;
  std::string_view type;
  uint64_t offset;
  int64_t value;
  BitfieldOverflow overflow;
  std::optional<int64_t> reply;
  std::string_view hex;
};

const std::string_view kBitCountStrings[] = {"foobar"sv, ""sv, "\x00""\x01""\x80""\xff""U"sv};
// {string index, unit is bit, start, BITCOUNT for each end in kGrid}
const RangeRow kBitCountRows[] = {
    {0, false, -100, {4, 4, 19, 26, 4, 10, 16, 26, 26, 26, 0, 26}},
    {0, false, -9, {0, 4, 19, 26, 4, 10, 16, 26, 26, 26, 0, 26}},
    {0, false, -3, {0, 0, 3, 10, 0, 0, 0, 10, 10, 10, 0, 10}},
    {0, false, -1, {0, 0, 0, 4, 0, 0, 0, 4, 4, 4, 0, 4}},
    {0, false, 0, {4, 4, 19, 26, 4, 10, 16, 26, 26, 26, 4, 26}},
    {0, false, 1, {0, 0, 15, 22, 0, 6, 12, 22, 22, 22, 0, 22}},
    {0, false, 2, {0, 0, 9, 16, 0, 0, 6, 16, 16, 16, 0, 16}},
    {0, false, 7, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, false, 9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, false, 100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, false, INT64_MIN, {4, 4, 19, 26, 4, 10, 16, 26, 26, 26, 4, 26}},
    {0, false, INT64_MAX, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, true, -100, {0, 22, 25, 26, 0, 1, 2, 4, 5, 26, 0, 26}},
    {0, true, -9, {0, 1, 4, 5, 0, 0, 0, 0, 0, 5, 0, 5}},
    {0, true, -3, {0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1}},
    {0, true, -1, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, true, 0, {0, 22, 25, 26, 0, 1, 2, 4, 5, 26, 0, 26}},
    {0, true, 1, {0, 22, 25, 26, 0, 1, 2, 4, 5, 26, 0, 26}},
    {0, true, 2, {0, 21, 24, 25, 0, 0, 1, 3, 4, 25, 0, 25}},
    {0, true, 7, {0, 18, 21, 22, 0, 0, 0, 0, 1, 22, 0, 22}},
    {0, true, 9, {0, 18, 21, 22, 0, 0, 0, 0, 1, 22, 0, 22}},
    {0, true, 100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, true, INT64_MIN, {0, 22, 25, 26, 0, 1, 2, 4, 5, 26, 0, 26}},
    {0, true, INT64_MAX, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, -100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, -9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, -3, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, -1, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, 1, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, 2, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, 7, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, 9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, 100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, INT64_MIN, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, false, INT64_MAX, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, -100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, -9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, -3, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, -1, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, 1, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, 2, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, 7, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, 9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, 100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, INT64_MIN, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, true, INT64_MAX, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, false, -100, {0, 0, 2, 14, 0, 1, 2, 14, 14, 14, 0, 14}},
    {2, false, -9, {0, 0, 2, 14, 0, 1, 2, 14, 14, 14, 0, 14}},
    {2, false, -3, {0, 0, 1, 13, 0, 0, 1, 13, 13, 13, 0, 13}},
    {2, false, -1, {0, 0, 0, 4, 0, 0, 0, 4, 4, 4, 0, 4}},
    {2, false, 0, {0, 0, 2, 14, 0, 1, 2, 14, 14, 14, 0, 14}},
    {2, false, 1, {0, 0, 2, 14, 0, 1, 2, 14, 14, 14, 0, 14}},
    {2, false, 2, {0, 0, 1, 13, 0, 0, 1, 13, 13, 13, 0, 13}},
    {2, false, 7, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, false, 9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, false, 100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, false, INT64_MIN, {0, 0, 2, 14, 0, 1, 2, 14, 14, 14, 0, 14}},
    {2, false, INT64_MAX, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, true, -100, {0, 10, 13, 14, 0, 0, 0, 0, 0, 14, 0, 14}},
    {2, true, -9, {0, 1, 4, 5, 0, 0, 0, 0, 0, 5, 0, 5}},
    {2, true, -3, {0, 0, 1, 2, 0, 0, 0, 0, 0, 2, 0, 2}},
    {2, true, -1, {0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1}},
    {2, true, 0, {0, 10, 13, 14, 0, 0, 0, 0, 0, 14, 0, 14}},
    {2, true, 1, {0, 10, 13, 14, 0, 0, 0, 0, 0, 14, 0, 14}},
    {2, true, 2, {0, 10, 13, 14, 0, 0, 0, 0, 0, 14, 0, 14}},
    {2, true, 7, {0, 10, 13, 14, 0, 0, 0, 0, 0, 14, 0, 14}},
    {2, true, 9, {0, 10, 13, 14, 0, 0, 0, 0, 0, 14, 0, 14}},
    {2, true, 100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, true, INT64_MIN, {0, 10, 13, 14, 0, 0, 0, 0, 0, 14, 0, 14}},
    {2, true, INT64_MAX, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
};

const std::string_view kBitPosStrings[] = {
    "\xff""\xff""\xff"""sv, "\x00""\xff""\xf0"""sv, "\x0f""\x00""\xe1"""sv};
// {string index, bit, unit is bit, start, BITPOS with no end, then for each end in kGrid}
const BitPosRow kBitPosRows[] = {
    {0, 0, false, -100, {24, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, -9, {24, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, -3, {24, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, -1, {24, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, 0, {24, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, 1, {24, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, 2, {24, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, 7, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, 9, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, 100, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, INT64_MIN, {24, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, false, INT64_MAX, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, -100, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, -9, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, -3, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, -1, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, 0, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, 1, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, 2, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, 7, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, 9, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, 100, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, INT64_MIN, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 0, true, INT64_MAX, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 1, false, -100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, 1, false, -9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, 1, false, -3, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, 1, false, -1, {16, -1, -1, -1, 16, -1, -1, 16, 16, 16, 16, -1, 16}},
    {0, 1, false, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, 1, false, 1, {8, -1, -1, -1, 8, -1, 8, 8, 8, 8, 8, -1, 8}},
    {0, 1, false, 2, {16, -1, -1, -1, 16, -1, -1, 16, 16, 16, 16, -1, 16}},
    {0, 1, false, 7, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 1, false, 9, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 1, false, 100, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 1, false, INT64_MIN, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, 1, false, INT64_MAX, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 1, true, -100, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, 1, true, -9, {99, -1, 15, 15, 15, -1, -1, -1, -1, -1, 15, -1, 15}},
    {0, 1, true, -3, {99, -1, -1, 21, 21, -1, -1, -1, -1, -1, 21, -1, 21}},
    {0, 1, true, -1, {99, -1, -1, -1, 23, -1, -1, -1, -1, -1, 23, -1, 23}},
    {0, 1, true, 0, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, 1, true, 1, {99, -1, 1, 1, 1, -1, 1, 1, 1, 1, 1, -1, 1}},
    {0, 1, true, 2, {99, -1, 2, 2, 2, -1, -1, 2, 2, 2, 2, -1, 2}},
    {0, 1, true, 7, {99, -1, 7, 7, 7, -1, -1, -1, 7, 7, 7, -1, 7}},
    {0, 1, true, 9, {99, -1, 9, 9, 9, -1, -1, -1, -1, 9, 9, -1, 9}},
    {0, 1, true, 100, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {0, 1, true, INT64_MIN, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {0, 1, true, INT64_MAX, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 0, false, -100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, 0, false, -9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, 0, false, -3, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, 0, false, -1, {20, -1, -1, -1, 20, -1, -1, 20, 20, 20, 20, -1, 20}},
    {1, 0, false, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, 0, false, 1, {20, -1, -1, -1, 20, -1, -1, 20, 20, 20, 20, -1, 20}},
    {1, 0, false, 2, {20, -1, -1, -1, 20, -1, -1, 20, 20, 20, 20, -1, 20}},
    {1, 0, false, 7, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 0, false, 9, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 0, false, 100, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 0, false, INT64_MIN, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, 0, false, INT64_MAX, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 0, true, -100, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, 0, true, -9, {99, -1, -1, 20, 20, -1, -1, -1, -1, -1, 20, -1, 20}},
    {1, 0, true, -3, {99, -1, -1, 21, 21, -1, -1, -1, -1, -1, 21, -1, 21}},
    {1, 0, true, -1, {99, -1, -1, -1, 23, -1, -1, -1, -1, -1, 23, -1, 23}},
    {1, 0, true, 0, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, 0, true, 1, {99, -1, 1, 1, 1, -1, 1, 1, 1, 1, 1, -1, 1}},
    {1, 0, true, 2, {99, -1, 2, 2, 2, -1, -1, 2, 2, 2, 2, -1, 2}},
    {1, 0, true, 7, {99, -1, 7, 7, 7, -1, -1, -1, 7, 7, 7, -1, 7}},
    {1, 0, true, 9, {99, -1, -1, 20, 20, -1, -1, -1, -1, -1, 20, -1, 20}},
    {1, 0, true, 100, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 0, true, INT64_MIN, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {1, 0, true, INT64_MAX, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 1, false, -100, {8, -1, -1, -1, 8, -1, 8, 8, 8, 8, 8, -1, 8}},
    {1, 1, false, -9, {8, -1, -1, -1, 8, -1, 8, 8, 8, 8, 8, -1, 8}},
    {1, 1, false, -3, {8, -1, -1, -1, 8, -1, 8, 8, 8, 8, 8, -1, 8}},
    {1, 1, false, -1, {16, -1, -1, -1, 16, -1, -1, 16, 16, 16, 16, -1, 16}},
    {1, 1, false, 0, {8, -1, -1, -1, 8, -1, 8, 8, 8, 8, 8, -1, 8}},
    {1, 1, false, 1, {8, -1, -1, -1, 8, -1, 8, 8, 8, 8, 8, -1, 8}},
    {1, 1, false, 2, {16, -1, -1, -1, 16, -1, -1, 16, 16, 16, 16, -1, 16}},
    {1, 1, false, 7, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 1, false, 9, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 1, false, 100, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 1, false, INT64_MIN, {8, -1, -1, -1, 8, -1, 8, 8, 8, 8, 8, -1, 8}},
    {1, 1, false, INT64_MAX, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 1, true, -100, {99, -1, 8, 8, 8, -1, -1, -1, -1, 8, 8, -1, 8}},
    {1, 1, true, -9, {99, -1, 15, 15, 15, -1, -1, -1, -1, -1, 15, -1, 15}},
    {1, 1, true, -3, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 1, true, -1, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 1, true, 0, {99, -1, 8, 8, 8, -1, -1, -1, -1, 8, 8, -1, 8}},
    {1, 1, true, 1, {99, -1, 8, 8, 8, -1, -1, -1, -1, 8, 8, -1, 8}},
    {1, 1, true, 2, {99, -1, 8, 8, 8, -1, -1, -1, -1, 8, 8, -1, 8}},
    {1, 1, true, 7, {99, -1, 8, 8, 8, -1, -1, -1, -1, 8, 8, -1, 8}},
    {1, 1, true, 9, {99, -1, 9, 9, 9, -1, -1, -1, -1, 9, 9, -1, 9}},
    {1, 1, true, 100, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {1, 1, true, INT64_MIN, {99, -1, 8, 8, 8, -1, -1, -1, -1, 8, 8, -1, 8}},
    {1, 1, true, INT64_MAX, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 0, false, -100, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, 0, false, -9, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, 0, false, -3, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, 0, false, -1, {19, -1, -1, -1, 19, -1, -1, 19, 19, 19, 19, -1, 19}},
    {2, 0, false, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, 0, false, 1, {8, -1, -1, -1, 8, -1, 8, 8, 8, 8, 8, -1, 8}},
    {2, 0, false, 2, {19, -1, -1, -1, 19, -1, -1, 19, 19, 19, 19, -1, 19}},
    {2, 0, false, 7, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 0, false, 9, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 0, false, 100, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 0, false, INT64_MIN, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, 0, false, INT64_MAX, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 0, true, -100, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, 0, true, -9, {99, -1, 15, 15, 15, -1, -1, -1, -1, -1, 15, -1, 15}},
    {2, 0, true, -3, {99, -1, -1, 21, 21, -1, -1, -1, -1, -1, 21, -1, 21}},
    {2, 0, true, -1, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 0, true, 0, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, 0, true, 1, {99, -1, 1, 1, 1, -1, 1, 1, 1, 1, 1, -1, 1}},
    {2, 0, true, 2, {99, -1, 2, 2, 2, -1, -1, 2, 2, 2, 2, -1, 2}},
    {2, 0, true, 7, {99, -1, 8, 8, 8, -1, -1, -1, -1, 8, 8, -1, 8}},
    {2, 0, true, 9, {99, -1, 9, 9, 9, -1, -1, -1, -1, 9, 9, -1, 9}},
    {2, 0, true, 100, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 0, true, INT64_MIN, {99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {2, 0, true, INT64_MAX, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 1, false, -100, {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},
    {2, 1, false, -9, {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},
    {2, 1, false, -3, {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},
    {2, 1, false, -1, {16, -1, -1, -1, 16, -1, -1, 16, 16, 16, 16, -1, 16}},
    {2, 1, false, 0, {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},
    {2, 1, false, 1, {16, -1, -1, -1, 16, -1, -1, 16, 16, 16, 16, -1, 16}},
    {2, 1, false, 2, {16, -1, -1, -1, 16, -1, -1, 16, 16, 16, 16, -1, 16}},
    {2, 1, false, 7, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 1, false, 9, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 1, false, 100, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 1, false, INT64_MIN, {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},
    {2, 1, false, INT64_MAX, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 1, true, -100, {99, -1, 4, 4, 4, -1, -1, -1, 4, 4, 4, -1, 4}},
    {2, 1, true, -9, {99, -1, -1, 16, 16, -1, -1, -1, -1, -1, 16, -1, 16}},
    {2, 1, true, -3, {99, -1, -1, -1, 23, -1, -1, -1, -1, -1, 23, -1, 23}},
    {2, 1, true, -1, {99, -1, -1, -1, 23, -1, -1, -1, -1, -1, 23, -1, 23}},
    {2, 1, true, 0, {99, -1, 4, 4, 4, -1, -1, -1, 4, 4, 4, -1, 4}},
    {2, 1, true, 1, {99, -1, 4, 4, 4, -1, -1, -1, 4, 4, 4, -1, 4}},
    {2, 1, true, 2, {99, -1, 4, 4, 4, -1, -1, -1, 4, 4, 4, -1, 4}},
    {2, 1, true, 7, {99, -1, 7, 7, 7, -1, -1, -1, 7, 7, 7, -1, 7}},
    {2, 1, true, 9, {99, -1, -1, 16, 16, -1, -1, -1, -1, -1, 16, -1, 16}},
    {2, 1, true, 100, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
    {2, 1, true, INT64_MIN, {99, -1, 4, 4, 4, -1, -1, -1, 4, 4, 4, -1, 4}},
    {2, 1, true, INT64_MAX, {99, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}},
};

// {string index, BITPOS k 0, BITPOS k 1}
const int64_t kBitPosWhole[][3] = {
    {0, 24, 0},
    {1, 0, 8},
    {2, 0, 4},
};

const std::string_view kGetRangeStrings[] = {"0123456789"sv, ""sv};
const GetRangeRow kGetRangeRows[] = {
    {0, -100, {
      "0", "01", "01234567", "0123456789", "0", "01", "012", "01234567", "0123456789",
      "0123456789", "", "0123456789"}},
    {0, -9, {
      "", "1", "1234567", "123456789", "", "1", "12", "1234567", "123456789", "123456789", "",
      "123456789"}},
    {0, -3, {"", "", "7", "789", "", "", "", "7", "789", "789", "", "789"}},
    {0, -1, {"", "", "", "9", "", "", "", "", "9", "9", "", "9"}},
    {0, 0, {
      "0", "01", "01234567", "0123456789", "0", "01", "012", "01234567", "0123456789",
      "0123456789", "0", "0123456789"}},
    {0, 1, {
      "", "1", "1234567", "123456789", "", "1", "12", "1234567", "123456789", "123456789", "",
      "123456789"}},
    {0, 2, {
      "", "", "234567", "23456789", "", "", "2", "234567", "23456789", "23456789", "", "23456789"}},
    {0, 7, {"", "", "7", "789", "", "", "", "7", "789", "789", "", "789"}},
    {0, 9, {"", "", "", "9", "", "", "", "", "9", "9", "", "9"}},
    {0, 100, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {0, INT64_MIN, {
      "0", "01", "01234567", "0123456789", "0", "01", "012", "01234567", "0123456789",
      "0123456789", "0", "0123456789"}},
    {0, INT64_MAX, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, -100, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, -9, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, -3, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, -1, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, 0, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, 1, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, 2, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, 7, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, 9, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, 100, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, INT64_MIN, {"", "", "", "", "", "", "", "", "", "", "", ""}},
    {1, INT64_MAX, {"", "", "", "", "", "", "", "", "", "", "", ""}},
};

const ParseCase kBitfieldTypeCases[] = {
    {"i1"sv, true},
    {"i8"sv, true},
    {"i64"sv, true},
    {"u1"sv, true},
    {"u63"sv, true},
    {"u64"sv, false},
    {"i65"sv, false},
    {"i0"sv, false},
    {"u0"sv, false},
    {"I8"sv, false},
    {"U8"sv, false},
    {"x8"sv, false},
    {"i"sv, false},
    {""sv, false},
    {"i-1"sv, false},
    {"i08"sv, false},
    {"i+8"sv, false},
    {"8"sv, false},
    {"i8 "sv, false},
    {"i 8"sv, false},
    {"u16"sv, true},
    {"i32"sv, true},
};

// {offset, accepted by GETBIT, accepted by BITFIELD GET u8}
const OffsetCase kOffsetCases[] = {
    {"0"sv, true, true},
    {"1"sv, true, true},
    {"-1"sv, false, false},
    {"4294967295"sv, true, true},
    {"4294967296"sv, false, false},
    {"#0"sv, false, true},
    {"#1"sv, false, true},
    {"#-1"sv, false, false},
    {"#536870911"sv, false, true},
    {"#536870912"sv, false, false},
    {"#2305843009213693953"sv, false, true},
    {"01"sv, false, false},
    {" 1"sv, false, false},
    {"+1"sv, false, false},
    {"#"sv, false, false},
    {"#01"sv, false, false},
    {"abc"sv, false, false},
    {"9223372036854775807"sv, false, false},
    {"-9223372036854775808"sv, false, false},
    {"#1152921504606846976"sv, false, false},
};

// Short names for the trace table.
constexpr Op kG = Op::kGet, kS = Op::kSet, kI = Op::kIncrBy;
constexpr BitfieldOverflow kWrap = BitfieldOverflow::kWrap, kSat = BitfieldOverflow::kSat,
                           kFail = BitfieldOverflow::kFail;
constexpr std::nullopt_t kNil = std::nullopt;

// BITFIELD t <op> <type> <offset> [value] with OVERFLOW <ov>, one op per command, in order:
// {op, type, offset, value, overflow, reply (nullopt = nil), value of t afterwards in hex}
const TraceStep kBitfieldTrace[] = {
    {kS, "i8", 0, INT64_MIN, kSat, 0LL, "7f"},
    {kS, "i8", 0, -9223372036854775681, kSat, 127LL, "7f"},
    {kS, "i8", 0, -9223372036854775680, kSat, 127LL, "80"},
    {kS, "i8", 0, -1000, kSat, -128LL, "80"},
    {kS, "u8", 0, -1, kSat, 128LL, "ff"},
    {kS, "u8", 0, -1, kWrap, 255LL, "ff"},
    {kS, "u8", 0, -1, kFail, kNil, "ff"},
    {kS, "i64", 3, INT64_MIN, kSat, -576460752303423488LL, "f00000000000000000"},
    {kI, "i64", 3, -1, kSat, INT64_MIN, "f00000000000000000"},
    {kI, "i64", 3, -1, kWrap, INT64_MAX, "efffffffffffffffe0"},
    {kI, "u63", 1, INT64_MAX, kSat, INT64_MAX, "ffffffffffffffffe0"},
    {kI, "u63", 1, 1, kWrap, 0LL, "8000000000000000e0"},
    {kI, "i1", 100, 1, kFail, kNil, "8000000000000000e000000000"},
    {kI, "i1", 100, -1, kFail, -1LL, "8000000000000000e000000008"},
    {kI, "u1", 200, 1, kWrap, 1LL, "8000000000000000e00000000800000000000000000000000080"},
    {kI, "u1", 200, 1, kSat, 1LL, "8000000000000000e00000000800000000000000000000000080"},
    {kI, "u55", 119, 9223372036854775680, kWrap,
      36028797018963840LL, "8000000000000000e0000000080001fffffffffffe0000000080"},
    {kS, "u31", 47, 1000, kWrap, 14336LL, "80000000000000000fa00000080001fffffffffffe0000000080"},
    {kG, "u57", 10, 65536, kSat, 0LL, "80000000000000000fa00000080001fffffffffffe0000000080"},
    {kS, "u54", 15, -129, kFail, kNil, "80000000000000000fa00000080001fffffffffffe0000000080"},
    {kG, "u21", 50, -256, kSat, 7LL, "80000000000000000fa00000080001fffffffffffe0000000080"},
    {kG, "u30", 104, -716385622, kFail,
      32767LL, "80000000000000000fa00000080001fffffffffffe0000000080"},
    {kI, "i30", 7, 7, kSat, 7LL, "80000000380000000fa00000080001fffffffffffe0000000080"},
    {kG, "u1", 0, 2, kSat, 1LL, "80000000380000000fa00000080001fffffffffffe0000000080"},
    {kI, "u26", 50, 5308469, kSat,
      5308719LL, "800000003800051012f00000080001fffffffffffe0000000080"},
    {kG, "i2", 30, 7, kWrap, 0LL, "800000003800051012f00000080001fffffffffffe0000000080"},
    {kG, "i63", 48, 128, kFail,
      182406195909231616LL, "800000003800051012f00000080001fffffffffffe0000000080"},
    {kS, "i32", 54, 9223372036854775680, kSat,
      1141160960LL, "80000000380005fffffffc00080001fffffffffffe0000000080"},
    {kG, "i51", 25, 16, kWrap,
      3848296988671LL, "80000000380005fffffffc00080001fffffffffffe0000000080"},
    {kI, "i43", 98, 3, kWrap,
      1099515822082LL, "80000000380005fffffffc00080002000017fffffe0000000080"},
    {kS, "i48", 116, 9223372036854775680, kSat,
      35184397254655LL, "80000000380005fffffffc00080007fffffffffffe0000000080"},
    {kS, "u12", 79, -9, kFail, kNil, "80000000380005fffffffc00080007fffffffffffe0000000080"},
    {kS, "i26", 99, -46037269, kSat,
      16777471LL, "80000000380005fffffffc0010000007fffffffffe0000000080"},
    {kG, "i5", 65, 65536, kSat, -1LL, "80000000380005fffffffc0010000007fffffffffe0000000080"},
    {kI, "u39", 44, -395235010035, kWrap,
      155326110220LL, "80000000380485450b419c0010000007fffffffffe0000000080"},
    {kS, "i8", 4, 2147483647, kSat, 0LL, "87f00000380485450b419c0010000007fffffffffe0000000080"},
    {kS, "i63", 33, 15, kSat,
      4036497697618893824LL, "87f00000000000000000000f10000007fffffffffe0000000080"},
    {kI, "u45", 35, 1, kSat, 1LL, "87f00000000000000001000f10000007fffffffffe0000000080"},
    {kI, "u63", 19, 1000, kSat, 1004LL, "87f000000000000000fb000f10000007fffffffffe0000000080"},
    {kS, "u5", 94, -16, kSat, 24LL, "87f000000000000000fb000ff0000007fffffffffe0000000080"},
    {kI, "i61", 106, 1220561362553026350, kSat,
      1152921504606846975LL, "87f000000000000000fb000ff01ffffffffffffffe0000000080"},
    {kG, "u1", 65, 0, kSat, 0LL, "87f000000000000000fb000ff01ffffffffffffffe0000000080"},
    {kI, "i11", 7, 3, kSat, -61LL, "87f0c0000000000000fb000ff01ffffffffffffffe0000000080"},
    {kG, "i15", 124, 0, kSat, -1LL, "87f0c0000000000000fb000ff01ffffffffffffffe0000000080"},
    {kI, "i26", 87, -2147483648, kSat,
      -33554432LL, "87f0c0000000000000fb010000007ffffffffffffe0000000080"},
    {kS, "i32", 51, -2643901612, kFail,
      kNil, "87f0c0000000000000fb010000007ffffffffffffe0000000080"},
    {kI, "i18", 10, 28097, kWrap, -34367LL, "87f79c100000000000fb010000007ffffffffffffe0000000080"},
    {kG, "i36", 105, INT64_MIN, kSat,
      268435455LL, "87f79c100000000000fb010000007ffffffffffffe0000000080"},
    {kI, "u54", 115, -1, kSat,
      18014398509481979LL, "87f79c100000000000fb010000007ffffffffffffd8000000080"},
    {kG, "u18", 79, -9223372036854775803, kWrap,
      131584LL, "87f79c100000000000fb010000007ffffffffffffd8000000080"},
    {kS, "i16", 60, -53231, kFail, kNil, "87f79c100000000000fb010000007ffffffffffffd8000000080"},
    {kG, "i48", 50, 4611686018427387904, kSat,
      65799168LL, "87f79c100000000000fb010000007ffffffffffffd8000000080"},
    {kS, "u49", 9, 256, kSat,
      526048668155904LL, "878000000000400000fb010000007ffffffffffffd8000000080"},
    {kS, "i64", 99, 4294967296, kWrap,
      1125899906842623LL, "878000000000400000fb010000000000200000001d8000000080"},
    {kG, "i44", 52, 8, kWrap, 16449792LL, "878000000000400000fb010000000000200000001d8000000080"},
    {kS, "u16", 82, 1, kSat, 1024LL, "878000000000400000fb000040000000200000001d8000000080"},
    {kG, "i44", 70, 1, kWrap,
      4312147230720LL, "878000000000400000fb000040000000200000001d8000000080"},
    {kG, "i16", 35, INT64_MIN, kFail, 2LL, "878000000000400000fb000040000000200000001d8000000080"},
    {kI, "u32", 22, 2399920227, kFail,
      2399920243LL, "8780023c2f81cc0000fb000040000000200000001d8000000080"},
    {kS, "u54", 65, 65535, kFail,
      137988711383040LL, "8780023c2f81cc000000000001fffe00200000001d8000000080"},
    {kS, "i19", 69, 128, kSat, 0LL, "8780023c2f81cc000000800001fffe00200000001d8000000080"},
    {kG, "u39", 11, 65536, kFail,
      149995015LL, "8780023c2f81cc000000800001fffe00200000001d8000000080"},
    {kG, "i63", 117, 65536, kSat,
      -2305280059260151808LL, "8780023c2f81cc000000800001fffe00200000001d8000000080"},
    {kS, "i17", 121, 7, kWrap, 128LL, "8780023c2f81cc000000800001fffe0001c000001d8000000080"},
    {kI, "u1", 9, -128, kWrap, 0LL, "8780023c2f81cc000000800001fffe0001c000001d8000000080"},
    {kI, "i32", 26, 9223372036854775680, kWrap,
      -255981904LL, "8780023c2f81ac000000800001fffe0001c000001d8000000080"},
    {kI, "u45", 111, 2147483647, kFail,
      35049082454015LL, "8780023c2f81ac000000800001fffe0801bffff01d8000000080"},
    {kS, "u56", 55, 9223372036854775806, kFail,
      kNil, "8780023c2f81ac000000800001fffe0801bffff01d8000000080"},
    {kS, "i45", 80, 128, kWrap,
      -17592181850175LL, "8780023c2f81ac00000000000000040001bffff01d8000000080"},
    {kS, "u9", 33, 19, kSat, 190LL, "8780023c04c1ac00000000000000040001bffff01d8000000080"},
    {kG, "i54", 32, 1, kWrap,
      334711096344576LL, "8780023c04c1ac00000000000000040001bffff01d8000000080"},
    {kS, "u23", 92, INT64_MAX, kFail, kNil, "8780023c04c1ac00000000000000040001bffff01d8000000080"},
    {kI, "u44", 18, 1, kWrap,
      614200273665LL, "8780023c04c1ac04000000000000040001bffff01d8000000080"},
    {kI, "i8", 40, -159, kFail, kNil, "8780023c04c1ac04000000000000040001bffff01d8000000080"},
    {kG, "i1", 83, 2147483648, kFail, 0LL, "8780023c04c1ac04000000000000040001bffff01d8000000080"},
    {kI, "i64", 10, 7525457150674970707, kSat,
      7527972914995902547LL, "879a1e2edecd45ee14c000000000040001bffff01d8000000080"},
    {kI, "i25", 24, 0, kSat, 6143386LL, "879a1e2edecd45ee14c000000000040001bffff01d8000000080"},
    {kG, "u46", 103, 128, kFail,
      2147497983LL, "879a1e2edecd45ee14c000000000040001bffff01d8000000080"},
    {kI, "u1", 40, 1, kWrap, 0LL, "879a1e2ede4d45ee14c000000000040001bffff01d8000000080"},
    {kI, "u45", 110, -6075636060155, kFail,
      kNil, "879a1e2ede4d45ee14c000000000040001bffff01d8000000080"},
    {kS, "i44", 25, 32768, kFail,
      6441539255746LL, "879a1e000000040004c000000000040001bffff01d8000000080"},
    {kG, "i39", 103, 9223372036854775806, kWrap,
      16777327LL, "879a1e000000040004c000000000040001bffff01d8000000080"},
    {kI, "u32", 30, -4196953930, kFail,
      kNil, "879a1e000000040004c000000000040001bffff01d8000000080"},
    {kG, "u17", 129, 128, kFail, 1791LL, "879a1e000000040004c000000000040001bffff01d8000000080"},
    {kI, "i16", 130, INT64_MIN, kFail,
      kNil, "879a1e000000040004c000000000040001bffff01d8000000080"},
    {kG, "u52", 11, 100, kSat,
      3675667371655680LL, "879a1e000000040004c000000000040001bffff01d8000000080"},
    {kI, "u55", 14, -4611686018427387904, kSat,
      0LL, "879800000000000004c000000000040001bffff01d8000000080"},
    {kI, "u39", 73, 256, kFail,
      274877907200LL, "879800000000000004c000000100040001bffff01d8000000080"},
    {kI, "u1", 62, 100, kSat, 1LL, "879800000000000204c000000100040001bffff01d8000000080"},
    {kI, "i41", 12, -1000, kWrap,
      1099511626776LL, "8797ffffffe0c00204c000000100040001bffff01d8000000080"},
    {kS, "i8", 11, 4294967296, kWrap,
      -65LL, "87801fffffe0c00204c000000100040001bffff01d8000000080"},
    {kS, "u32", 116, 2, kSat, 1073748991LL, "87801fffffe0c00204c000000100000000002ff01d8000000080"},
    {kS, "i32", 116, 9223372036854775680, kFail,
      kNil, "87801fffffe0c00204c000000100000000002ff01d8000000080"},
    {kI, "i18", 32, 8, kFail, -117LL, "87801fffffe2c00204c000000100000000002ff01d8000000080"},
    {kI, "u40", 70, -9223372036854775803, kFail,
      kNil, "87801fffffe2c00204c000000100000000002ff01d8000000080"},
    {kS, "u8", 128, -56, kFail, kNil, "87801fffffe2c00204c000000100000000002ff01d8000000080"},
    {kG, "u32", 6, 7, kWrap, 3758620671LL, "87801fffffe2c00204c000000100000000002ff01d8000000080"},
    {kI, "i12", 41, -32768, kSat, -2048LL, "87801fffffc0000204c000000100000000002ff01d8000000080"},
    {kI, "i44", 34, 13881848788450, kFail,
      kNil, "87801fffffc0000204c000000100000000002ff01d8000000080"},
    {kS, "i34", 38, 12345678901234, kSat,
      -1073741308LL, "87801ffffdffffffffc000000100000000002ff01d8000000080"},
    {kI, "u48", 47, -32768, kFail,
      281474974580736LL, "87801ffffdffffffffbf00000100000000002ff01d8000000080"},
    {kG, "i1", 110, -4611686018427387904, kFail,
      0LL, "87801ffffdffffffffbf00000100000000002ff01d8000000080"},
    {kI, "i8", 20, -4611686018427387904, kFail,
      kNil, "87801ffffdffffffffbf00000100000000002ff01d8000000080"},
    {kI, "i64", 83, 8, kSat,
      8796093022217LL, "87801ffffdffffffffbf00000100000000012ff01d8000000080"},
    {kI, "u59", 71, 1000, kSat,
      503277258425762792LL, "87801ffffdffffffffbf0000010000fa00012ff01d8000000080"},
    {kI, "i16", 6, 65536, kFail, kNil, "87801ffffdffffffffbf0000010000fa00012ff01d8000000080"},
    {kI, "u48", 99, 9223372036854775680, kFail,
      kNil, "87801ffffdffffffffbf0000010000fa00012ff01d8000000080"},
    {kS, "i59", 72, -428756580365171530, kFail,
      kNil, "87801ffffdffffffffbf0000010000fa00012ff01d8000000080"},
    {kI, "u6", 70, 16, kWrap, 11LL, "87801ffffdfffffffcbf0000010000fa00012ff01d8000000080"},
    {kG, "u32", 62, 1971691068, kSat,
      4281319424LL, "87801ffffdfffffffcbf0000010000fa00012ff01d8000000080"},
    {kI, "u22", 126, -2, kFail, 2097168LL, "87801ffffdfffffffcbf0000010000fa00010ff01d8000000080"},
    {kG, "i45", 96, 30210321702282, kFail,
      137441001472LL, "87801ffffdfffffffcbf0000010000fa00010ff01d8000000080"},
    {kG, "u1", 107, -1, kWrap, 0LL, "87801ffffdfffffffcbf0000010000fa00010ff01d8000000080"},
    {kS, "u25", 82, 2147483648, kFail,
      kNil, "87801ffffdfffffffcbf0000010000fa00010ff01d8000000080"},
    {kI, "i8", 29, 16, kWrap, 15LL, "87801ff87dfffffffcbf0000010000fa00010ff01d8000000080"},
    {kG, "u2", 9, 128, kWrap, 0LL, "87801ff87dfffffffcbf0000010000fa00010ff01d8000000080"},
};


std::string Hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

int NaiveBit(std::string_view s, uint64_t i) {
  return i / 8 < s.size() ? (static_cast<unsigned char>(s[i / 8]) >> (7 - i % 8)) & 1 : 0;
}

TEST(BitopsTest, BitCountMatchesRedis) {
  for (const RangeRow& row : kBitCountRows) {
    const BitUnit unit = row.bit_unit ? BitUnit::kBit : BitUnit::kByte;
    for (size_t e = 0; e < kGridSize; ++e) {
      EXPECT_EQ(BitCount(kBitCountStrings[row.str], row.start, kGrid[e], unit),
                static_cast<uint64_t>(row.want[e]))
          << "str=" << row.str << " start=" << row.start << " end=" << kGrid[e]
          << " bit=" << row.bit_unit;
    }
  }
  EXPECT_EQ(BitCount("foobar"), 26u);
  EXPECT_EQ(BitCount(""), 0u);
}

TEST(BitopsTest, BitPosMatchesRedis) {
  for (const BitPosRow& row : kBitPosRows) {
    const BitUnit unit = row.bit_unit ? BitUnit::kBit : BitUnit::kByte;
    std::string_view s = kBitPosStrings[row.str];
    if (!row.bit_unit) {
      EXPECT_EQ(BitPos(s, row.bit, row.start, std::nullopt, unit), row.want[0])
          << "str=" << row.str << " bit=" << row.bit << " start=" << row.start;
    }
    for (size_t e = 0; e < kGridSize; ++e) {
      EXPECT_EQ(BitPos(s, row.bit, row.start, kGrid[e], unit), row.want[e + 1])
          << "str=" << row.str << " bit=" << row.bit << " start=" << row.start
          << " end=" << kGrid[e] << " unit_bit=" << row.bit_unit;
    }
  }
  EXPECT_EQ(BitPos("", 0), -1);  // an existing empty string (a missing key is the caller's)
  EXPECT_EQ(BitPos("", 1), -1);
  EXPECT_EQ(BitPos("", 0, 0, 0), -1);
  EXPECT_EQ(BitPos("", 0, -1, std::nullopt), -1);
  for (const auto& w : kBitPosWhole) {
    EXPECT_EQ(BitPos(kBitPosStrings[w[0]], 0), w[1]);
    EXPECT_EQ(BitPos(kBitPosStrings[w[0]], 1), w[2]);
  }
}

TEST(BitopsTest, GetRangeMatchesRedis) {
  for (const GetRangeRow& row : kGetRangeRows) {
    for (size_t e = 0; e < kGridSize; ++e) {
      EXPECT_EQ(GetRange(kGetRangeStrings[row.str], row.start, kGrid[e]), row.want[e])
          << "str=" << row.str << " start=" << row.start << " end=" << kGrid[e];
    }
  }
  EXPECT_EQ(GetRange("Hello", 0, -100), "H");  // Redis 7.0 clamps end to 0
}

TEST(BitopsTest, RandomRangesAgainstNaiveModel) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s(rng() % 40 + 1, '\0');
    const int density = static_cast<int>(rng() % 4);  // mostly-zero to mostly-one strings
    for (char& c : s) {
      uint64_t r = rng();
      c = static_cast<char>(density == 0 ? (r & rng() & rng()) : density == 3 ? (r | rng()) : r);
    }
    const uint64_t nbits = s.size() * 8;
    uint64_t a = rng() % nbits, b = rng() % nbits;
    if (a > b) std::swap(a, b);
    uint64_t count = 0;
    int64_t first[2] = {-1, -1};
    for (uint64_t i = a; i <= b; ++i) {
      const int v = NaiveBit(s, i);
      count += v;
      if (first[v] < 0) first[v] = static_cast<int64_t>(i);
    }
    ASSERT_EQ(BitCount(s, a, b, BitUnit::kBit), count);
    for (int bit = 0; bit < 2; ++bit) {
      ASSERT_EQ(BitPos(s, bit, a, b, BitUnit::kBit), first[bit]) << Hex(s) << " " << a << " " << b;
    }
    // Byte unit, no end: the zero padding after the string counts for bit 0.
    const uint64_t byte = a / 8;
    int64_t want0 = -1, want1 = -1;
    for (uint64_t i = byte * 8; i < nbits && (want0 < 0 || want1 < 0); ++i) {
      int64_t& w = NaiveBit(s, i) ? want1 : want0;
      if (w < 0) w = static_cast<int64_t>(i);
    }
    ASSERT_EQ(BitPos(s, 0, byte), want0 < 0 ? static_cast<int64_t>(nbits) : want0);
    ASSERT_EQ(BitPos(s, 1, byte), want1);
  }
}

TEST(BitopsTest, GetBitSetBit) {
  std::string s;
  EXPECT_EQ(GetBit(s, 0), 0);
  EXPECT_EQ(SetBit(s, 7, 1), 0);
  EXPECT_EQ(s, "\x01"sv);
  EXPECT_EQ(SetBit(s, 7, 1), 1);
  EXPECT_EQ(SetBit(s, 100, 1), 0);  // grows with zero bytes
  EXPECT_EQ(s.size(), 13u);
  EXPECT_EQ(GetBit(s, 100), 1);
  EXPECT_EQ(GetBit(s, 1000000), 0);
  EXPECT_EQ(SetBit(s, 7, 0), 1);
  EXPECT_EQ(s[0], '\0');

  std::mt19937_64 rng(1);
  std::vector<int> model;
  std::string t;
  for (int i = 0; i < 50000; ++i) {
    const uint64_t off = rng() % 2000;
    const int bit = static_cast<int>(rng() & 1);
    if (model.size() <= off) model.resize((off / 8 + 1) * 8, 0);
    ASSERT_EQ(SetBit(t, off, bit), model[off]);
    model[off] = bit;
    ASSERT_EQ(t.size() * 8, model.size());
    const uint64_t probe = rng() % 2100;
    ASSERT_EQ(GetBit(t, probe), probe < model.size() ? model[probe] : 0);
  }
}

TEST(BitopsTest, OffsetParsingMatchesRedis) {
  const BitfieldType u8{false, 8};
  for (const OffsetCase& c : kOffsetCases) {
    EXPECT_EQ(ParseBitOffset(c.in).has_value(), c.getbit_ok) << c.in;
    EXPECT_EQ(ParseBitfieldOffset(c.in, u8).has_value(), c.bitfield_u8_ok) << c.in;
  }
  EXPECT_EQ(ParseBitOffset("4294967295"), 4294967295u);  // 2^32 - 1: the last valid bit
  EXPECT_EQ(ParseBitfieldOffset("#3", BitfieldType{true, 5}), 15u);
  EXPECT_EQ(ParseBitfieldOffset("#2305843009213693953", u8), 8u);  // wraps like Redis (checked)
  EXPECT_EQ(ParseBitOffset("100", /*max_bytes=*/13), 100u);
  EXPECT_FALSE(ParseBitOffset("104", /*max_bytes=*/13));
}

TEST(BitopsTest, BitfieldTypeParsingMatchesRedis) {
  for (const ParseCase& c : kBitfieldTypeCases) {
    EXPECT_EQ(ParseBitfieldType(c.in).has_value(), c.ok) << c.in;
  }
  std::optional<BitfieldType> t = ParseBitfieldType("i64");
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->is_signed);
  EXPECT_EQ(t->bits, 64);
  t = ParseBitfieldType("u63");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->is_signed);
  EXPECT_EQ(t->bits, 63);
  EXPECT_EQ(ParseBitfieldOverflow("wrap"), BitfieldOverflow::kWrap);
  EXPECT_EQ(ParseBitfieldOverflow("SAT"), BitfieldOverflow::kSat);
  EXPECT_EQ(ParseBitfieldOverflow("Fail"), BitfieldOverflow::kFail);
  EXPECT_FALSE(ParseBitfieldOverflow("sats"));
}

TEST(BitopsTest, BitfieldTraceMatchesRedis) {
  std::string s;
  int step = 0;
  for (const TraceStep& t : kBitfieldTrace) {
    const BitfieldType type = ParseBitfieldType(t.type).value();
    std::optional<int64_t> reply;
    switch (t.op) {
      case Op::kGet:
        reply = BitfieldGet(s, t.offset, type);
        break;
      case Op::kSet:
        GrowForBit(s, t.offset + type.bits - 1);  // Redis grows before running write ops
        reply = BitfieldSet(s, t.offset, type, t.value, t.overflow);
        break;
      case Op::kIncrBy:
        GrowForBit(s, t.offset + type.bits - 1);
        reply = BitfieldIncrBy(s, t.offset, type, t.value, t.overflow);
        break;
    }
    EXPECT_EQ(reply, t.reply) << "step " << step << " " << t.type << " @" << t.offset;
    EXPECT_EQ(Hex(s), t.hex) << "step " << step;
    ++step;
  }
}

TEST(BitopsTest, BitfieldRandomAgainstNaiveModel) {
  std::mt19937_64 rng(8);
  std::string s(40, '\0');
  for (int iter = 0; iter < 20000; ++iter) {
    const bool is_signed = rng() & 1;
    const uint8_t bits = static_cast<uint8_t>(rng() % (is_signed ? 64 : 63) + 1);
    const BitfieldType type{is_signed, bits};
    const uint64_t off = rng() % (40 * 8 - bits + 1);
    const uint64_t raw = bits == 64 ? rng() : rng() & ((uint64_t{1} << bits) - 1);
    const std::string before = s;
    BitfieldSet(s, off, type, static_cast<int64_t>(raw), BitfieldOverflow::kWrap);
    // Naive check: the field reads back bit by bit, every other bit is unchanged.
    for (uint64_t i = 0; i < s.size() * 8; ++i) {
      const int want =
          (i >= off && i < off + bits) ? static_cast<int>((raw >> (bits - 1 - (i - off))) & 1)
                                       : NaiveBit(before, i);
      ASSERT_EQ(NaiveBit(s, i), want) << "bit " << i;
    }
    int64_t want = static_cast<int64_t>(raw);
    if (is_signed && bits < 64 && (raw >> (bits - 1)) != 0) {
      want -= int64_t{1} << (bits - 1);  // two steps: 1 << bits overflows for bits == 63
      want -= int64_t{1} << (bits - 1);
    }
    ASSERT_EQ(BitfieldGet(s, off, type), want);
  }
}

TEST(BitopsTest, BitOpAgainstNaiveModel) {
  std::mt19937_64 rng(4);
  for (int iter = 0; iter < 3000; ++iter) {
    const size_t n = rng() % 4 + 1;
    std::vector<std::string> srcs(n);
    std::vector<std::string_view> views;
    size_t max_len = 0;
    for (std::string& src : srcs) {
      src.resize(rng() % 40);
      for (char& c : src) c = static_cast<char>(rng());
      max_len = std::max(max_len, src.size());
      views.push_back(src);
    }
    auto at = [&](size_t k, size_t i) -> unsigned {
      return i < srcs[k].size() ? static_cast<unsigned char>(srcs[k][i]) : 0u;
    };
    for (BitOpKind kind : {BitOpKind::kAnd, BitOpKind::kOr, BitOpKind::kXor}) {
      std::string want(max_len, '\0');
      for (size_t i = 0; i < max_len; ++i) {
        unsigned v = at(0, i);
        for (size_t k = 1; k < n; ++k) {
          v = kind == BitOpKind::kAnd ? (v & at(k, i))
              : kind == BitOpKind::kOr ? (v | at(k, i))
                                       : (v ^ at(k, i));
        }
        want[i] = static_cast<char>(v);
      }
      ASSERT_EQ(BitOp(kind, views), want);
    }
    std::string want_not(srcs[0]);
    for (char& c : want_not) c = static_cast<char>(~c);
    ASSERT_EQ(BitOp(BitOpKind::kNot, std::span(views.data(), 1)), want_not);
  }
}

TEST(BitopsTest, BitOpRedisExamples) {
  // BITOP AND/OR/XOR/NOT dest "foobar" "abcdef" (Redis docs, checked).
  const std::string_view srcs[] = {"foobar", "abcdef"};
  EXPECT_EQ(BitOp(BitOpKind::kAnd, srcs), "`bc`ab");
  EXPECT_EQ(BitOp(BitOpKind::kOr, srcs), "goofev");
  EXPECT_EQ(BitOp(BitOpKind::kXor, srcs), "\x07\x0d\x0c\x06\x04\x14"sv);
  const std::string_view one[] = {"\x0f\xf0"sv};
  EXPECT_EQ(BitOp(BitOpKind::kNot, one), "\xf0\x0f"sv);
  const std::string_view uneven[] = {"\xff\xff\xff"sv, "\x0f"sv, ""sv};
  EXPECT_EQ(BitOp(BitOpKind::kAnd, uneven), "\x00\x00\x00"sv);
  EXPECT_EQ(BitOp(BitOpKind::kOr, uneven), "\xff\xff\xff"sv);
  EXPECT_EQ(BitOp(BitOpKind::kXor, uneven), "\xf0\xff\xff"sv);
}

TEST(BitopsTest, SetRangeAndLimits) {
  std::string s = "Hello World";
  EXPECT_EQ(SetRange(s, 6, "Redis"), 11u);
  EXPECT_EQ(s, "Hello Redis");
  std::string t;
  EXPECT_EQ(SetRange(t, 3, "ab"), 5u);
  EXPECT_EQ(t, "\0\0\0ab"sv);
  EXPECT_EQ(SetRange(t, 100, ""), 5u);  // empty value: no growth
  // Checked against Redis: SETRANGE k -1 x, SETRANGE k 536870912 a, SETRANGE k 536870912 "".
  EXPECT_EQ(CheckSetRange(-1, 1), StringOpError::kOffsetOutOfRange);
  EXPECT_EQ(CheckSetRange(-1, 0), StringOpError::kOffsetOutOfRange);
  EXPECT_EQ(CheckSetRange(536870912, 1), StringOpError::kTooLong);
  EXPECT_EQ(CheckSetRange(536870911, 1), StringOpError::kOk);
  EXPECT_EQ(CheckSetRange(536870911, 2), StringOpError::kTooLong);
  EXPECT_EQ(CheckSetRange(INT64_MAX, 0), StringOpError::kOk);
  EXPECT_EQ(CheckSetRange(INT64_MAX, 1), StringOpError::kTooLong);
  EXPECT_EQ(CheckStringLength(kProtoMaxBulkLen, 0), StringOpError::kOk);
  EXPECT_EQ(CheckStringLength(kProtoMaxBulkLen, 1), StringOpError::kTooLong);
  EXPECT_EQ(CheckStringLength(1, UINT64_MAX), StringOpError::kTooLong);
}

// Regression: a missing key is an empty view with a null data pointer (UBSan found a memcpy
// from it when it came first).
TEST(BitopsTest, BitOpWithEmptyNullFirstSource) {
  std::string_view missing;  // data() == nullptr
  std::string_view b("\x0f\xf0", 2);
  std::string_view srcs[] = {missing, b};
  EXPECT_EQ(BitOp(BitOpKind::kOr, srcs), std::string("\x0f\xf0", 2));
  EXPECT_EQ(BitOp(BitOpKind::kAnd, srcs), std::string("\x00\x00", 2));
  EXPECT_EQ(BitOp(BitOpKind::kXor, srcs), std::string("\x0f\xf0", 2));
  std::string_view only[] = {missing};
  EXPECT_EQ(BitOp(BitOpKind::kNot, only), "");
}

}  // namespace
}  // namespace dashkv
