#include "io/resp_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace dashkv::io {
namespace {

using ::testing::ElementsAre;
using Status = RespParser::Status;
using Args = std::vector<std::string>;

// One parser outcome, copied out of the buffer. An empty `args` with !error is a kEmpty.
struct Event {
  Args args;
  std::string error;
  bool operator==(const Event&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Event& e) {
  if (!e.error.empty()) return os << "error(" << e.error << ")";
  os << "[";
  for (const auto& a : e.args) os << '"' << a << "\" ";
  return os << "]";
}

Event Cmd(Args args) { return Event{std::move(args), ""}; }
Event Empty() { return Event{}; }
Event Err(std::string e) { return Event{{}, std::move(e)}; }

// Simulates a connection: feeds `wire` in chunks ending at `cuts` (ascending), parses all it can
// after each chunk, consumes parsed bytes and, when `move_buffer`, moves the unconsumed bytes to a
// new allocation (and scribbles over the old one) between calls. Stops at the first error.
std::vector<Event> Feed(RespParser& parser, std::string_view wire, std::vector<size_t> cuts,
                        bool move_buffer = true) {
  std::vector<Event> events;
  cuts.push_back(wire.size());
  std::string buf;
  size_t fed = 0;
  size_t needed = 0;
  for (size_t cut : cuts) {
    if (cut < fed) continue;
    buf.append(wire.substr(fed, cut - fed));
    fed = cut;
    while (true) {
      Status st = parser.Parse(buf);
      if (st == Status::kNeedMore) {
        EXPECT_GT(parser.bytes_needed(), buf.size());
        needed = parser.bytes_needed();
        break;
      }
      if (st == Status::kError) {
        events.push_back(Err(std::string(parser.error())));
        return events;
      }
      EXPECT_GT(parser.consumed(), 0u);
      EXPECT_LE(parser.consumed(), buf.size());
      EXPECT_LE(needed, parser.consumed()) << "bytes_needed() was not a lower bound";
      needed = 0;
      Event e;
      if (st == Status::kCommand) {
        EXPECT_FALSE(parser.args().empty());
        for (std::string_view a : parser.args()) e.args.emplace_back(a);
      } else {
        EXPECT_TRUE(parser.args().empty());
      }
      events.push_back(std::move(e));
      buf.erase(0, parser.consumed());
    }
    if (move_buffer) {
      std::string moved(buf.size() + 16, '\0');
      moved.assign(buf);
      std::memset(buf.data(), 'Z', buf.size());
      buf.swap(moved);
    }
  }
  return events;
}

std::vector<Event> FeedAll(std::string_view wire, RespLimits limits = {}) {
  RespParser parser(limits);
  return Feed(parser, wire, {});
}

std::vector<Event> FeedByteByByte(std::string_view wire, RespLimits limits = {}) {
  RespParser parser(limits);
  std::vector<size_t> cuts;
  for (size_t i = 1; i < wire.size(); ++i) cuts.push_back(i);
  return Feed(parser, wire, cuts);
}

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

std::string MultiBulk(const Args& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += Bulk(a);
  return out;
}

struct Sample {
  std::string wire;
  std::vector<Event> events;
};

std::vector<Sample> Corpus() {
  std::string binary("a\r\nb\0c\r\n\r\n", 10);
  std::string large(70000, 'x');
  for (size_t i = 0; i < large.size(); i += 1000) large[i] = '\r';
  std::vector<Sample> corpus = {
      {MultiBulk({"SET", "key", "value"}), {Cmd({"SET", "key", "value"})}},
      {"*1\r\n$4\r\nPING\r\n", {Cmd({"PING"})}},
      {MultiBulk({"ECHO", binary}), {Cmd({"ECHO", binary})}},
      {"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", {Cmd({"ECHO", ""})}},
      {"*0\r\n", {Empty()}},
      {"*-1\r\n", {Empty()}},
      {"*-7\r\n", {Empty()}},
      {"\r\n", {Empty()}},
      {"\n", {Empty()}},
      {"   \t \r\n", {Empty()}},
      {"PING\r\n", {Cmd({"PING"})}},
      {"set a b\n", {Cmd({"set", "a", "b"})}},
      {"  echo   \"a b\"  'c d'\r\n", {Cmd({"echo", "a b", "c d"})}},
      {"echo \"\\x41\\x4g\\n\\r\\t\\b\\a\\\\\\\"\\q\"\r\n",
       {Cmd({"echo", "Ax4g\n\r\t\b\a\\\"q"})}},
      {"echo 'it\\'s' '\\n'\r\n", {Cmd({"echo", "it's", "\\n"})}},
      {"echo a\"b c\"\r\n", {Cmd({"echo", "ab c"})}},
      {"echo \x0b" "a\x0b" "b\r\n", {Cmd({"echo", "a\x0b" "b"})}},
      {"echo \"\" ''\r\n", {Cmd({"echo", "", ""})}},
      {"echo a\rb\r\r\n", {Cmd({"echo", "a", "b"})}},
      {"*1\r\n$4\r\nPINGxx", {Cmd({"PING"})}},  // the two bytes after data are not checked
      {"*1\rX$4\r\nPING\r\n", {Cmd({"PING"})}},  // nor the byte after a header's CR
      {MultiBulk({"SET", "big", large}), {Cmd({"SET", "big", large})}},
  };
  // A pipeline: many commands of all kinds in one buffer.
  Sample pipeline;
  for (int i = 0; i < 50; ++i) {
    const auto& s = corpus[i % 20];
    pipeline.wire += s.wire;
    pipeline.events.insert(pipeline.events.end(), s.events.begin(), s.events.end());
  }
  corpus.push_back(pipeline);
  return corpus;
}

TEST(RespParserTest, CorpusInOneBuffer) {
  for (const auto& s : Corpus()) {
    EXPECT_EQ(FeedAll(s.wire), s.events) << s.wire.substr(0, 80);
  }
}

TEST(RespParserTest, CorpusAtEverySplitPoint) {
  for (const auto& s : Corpus()) {
    const size_t step = s.wire.size() > 5000 ? 997 : 1;
    for (size_t cut = 0; cut <= s.wire.size(); cut += step) {
      RespParser parser;
      ASSERT_EQ(Feed(parser, s.wire, {cut}), s.events) << "cut " << cut << " of "
                                                        << s.wire.substr(0, 80);
    }
  }
}

TEST(RespParserTest, CorpusAtEveryPairOfSplitPoints) {
  for (const auto& s : Corpus()) {
    if (s.wire.size() > 64) continue;
    for (size_t a = 0; a <= s.wire.size(); ++a) {
      for (size_t b = a; b <= s.wire.size(); ++b) {
        RespParser parser;
        ASSERT_EQ(Feed(parser, s.wire, {a, b}), s.events) << a << "," << b << " " << s.wire;
      }
    }
  }
}

TEST(RespParserTest, CorpusByteByByte) {
  for (const auto& s : Corpus()) {
    if (s.wire.size() > 20000) continue;
    EXPECT_EQ(FeedByteByByte(s.wire), s.events) << s.wire.substr(0, 80);
  }
}

// CLIENT LIST's view of a partly received command: what is parsed (headers and complete
// arguments, which Redis has dropped from its query buffer) and the complete arguments' bytes.
TEST(RespParserTest, ReportsAPartlyReceivedCommand) {
  RespParser parser;
  EXPECT_EQ(parser.partial_parsed_bytes(), 0u);
  const std::string wire = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nab";
  ASSERT_EQ(parser.Parse(wire), Status::kNeedMore);
  EXPECT_EQ(parser.partial_parsed_bytes(), wire.size() - 2);  // all but "ab"
  EXPECT_EQ(parser.partial_arg_bytes(), 4u);                  // SET, k
  ASSERT_EQ(parser.Parse(wire + "cde\r\n"), Status::kCommand);
  EXPECT_EQ(parser.partial_parsed_bytes(), 0u);
  EXPECT_EQ(parser.partial_arg_bytes(), 0u);
}

// A buffer that ends right after a complete bulk of an unfinished command is read no further
// than its end (the connection's input buffer may end exactly there; ASan checks the read).
TEST(RespParserTest, ReadsNothingPastABufferEndingAfterABulk) {
  const std::string wire = "*2\r\n$1\r\na\r\n";
  auto exact = std::make_unique<char[]>(wire.size());
  std::memcpy(exact.get(), wire.data(), wire.size());
  RespParser parser;
  EXPECT_EQ(parser.Parse(std::string_view(exact.get(), wire.size())), Status::kNeedMore);
  const std::string whole = wire + "$1\r\nb\r\n";
  ASSERT_EQ(parser.Parse(whole), Status::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("a", "b"));
}

TEST(RespParserTest, ArgsAreViewsIntoTheBuffer) {
  std::string buf = MultiBulk({"SET", "key", "value"}) + "GET key\r\n";
  RespParser parser;
  ASSERT_EQ(parser.Parse(buf), Status::kCommand);
  ASSERT_EQ(parser.args().size(), 3u);
  EXPECT_EQ(parser.args()[2].data(), buf.data() + buf.find("value"));
  std::string_view rest = std::string_view(buf).substr(parser.consumed());
  ASSERT_EQ(parser.Parse(rest), Status::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("GET", "key"));
  EXPECT_EQ(parser.args()[1].data(), buf.data() + buf.rfind("key"));
  EXPECT_EQ(parser.consumed(), rest.size());
}

TEST(RespParserTest, BytesNeededCoversLargeBulk) {
  RespParser parser;
  std::string wire = MultiBulk({"SET", "k", std::string(1 << 20, 'v')});
  std::string head = wire.substr(0, 30);
  ASSERT_EQ(parser.Parse(head), Status::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), wire.size());
  ASSERT_EQ(parser.Parse(wire), Status::kCommand);
  EXPECT_EQ(parser.consumed(), wire.size());
  EXPECT_EQ(parser.args()[2].size(), 1u << 20);
}

TEST(RespParserTest, ManyArgsFedInSmallReads) {
  Args args(20000, "ab");
  args[0] = "RPUSH";
  std::string wire = MultiBulk(args);
  RespParser parser;
  std::vector<size_t> cuts;
  for (size_t i = 7; i < wire.size(); i += 7) cuts.push_back(i);
  auto events = Feed(parser, wire, cuts, /*move_buffer=*/false);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].args, args);
}

TEST(RespParserTest, ErrorTexts) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"*01\r\n", "Protocol error: invalid multibulk length"},
      {"*-0\r\n", "Protocol error: invalid multibulk length"},
      {"*+1\r\n", "Protocol error: invalid multibulk length"},
      {"*\r\n", "Protocol error: invalid multibulk length"},
      {"*1x\r\n", "Protocol error: invalid multibulk length"},
      {"* 1\r\n", "Protocol error: invalid multibulk length"},
      {"*3000000000\r\n", "Protocol error: invalid multibulk length"},
      {"*99999999999999999999\r\n", "Protocol error: invalid multibulk length"},
      {"*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$01\r\nx\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$1x\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$536870913\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\nx\r\n", "Protocol error: expected '$', got 'x'"},
      {"*2\r\n$1\r\na\r\n:1\r\n", "Protocol error: expected '$', got ':'"},
      {"*1\r\n\r\n", "Protocol error: expected '$', got '\r'"},
      {"ping \"a\"b\r\n", "Protocol error: unbalanced quotes in request"},
      {"echo \"a\r\n", "Protocol error: unbalanced quotes in request"},
      {"echo 'a\r\n", "Protocol error: unbalanced quotes in request"},
      {"echo 'a'b\r\n", "Protocol error: unbalanced quotes in request"},
      {"echo \"a\\\"\r\n", "Protocol error: unbalanced quotes in request"},
  };
  for (const auto& [wire, error] : cases) {
    EXPECT_THAT(FeedAll(wire), ElementsAre(Err(error))) << wire;
    EXPECT_THAT(FeedByteByByte(wire), ElementsAre(Err(error))) << wire;
  }
}

TEST(RespParserTest, CommandsBeforeAnErrorAreReturned) {
  std::string wire = "PING\r\n" + MultiBulk({"GET", "k"}) + "*1\r\n?\r\n";
  EXPECT_THAT(FeedAll(wire), ElementsAre(Cmd({"PING"}), Cmd({"GET", "k"}),
                                         Err("Protocol error: expected '$', got '?'")));
}

TEST(RespParserTest, IncompleteLinesWaitForTheByteAfterCr) {
  RespParser parser;
  EXPECT_EQ(parser.Parse("*1\r"), Status::kNeedMore);
  EXPECT_EQ(parser.Parse("*1\r\nx"), Status::kNeedMore);  // Redis waits for the full line
  EXPECT_EQ(parser.Parse("*1\r\nx\r"), Status::kNeedMore);
  EXPECT_EQ(parser.Parse("*1\r\nx\r\n"), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: expected '$', got 'x'");
}

TEST(RespParserTest, InlineLimit) {
  RespLimits limits;
  limits.max_inline_len = 1000;
  RespParser parser(limits);
  std::string line(1000, 'a');
  EXPECT_EQ(parser.Parse(line), Status::kNeedMore);
  line += 'a';
  EXPECT_EQ(parser.Parse(line), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: too big inline request");
  // A long line whose newline has already arrived is accepted, as in Redis.
  parser.Reset();
  std::string ok = "echo " + std::string(5000, 'b') + "\r\n";
  ASSERT_EQ(parser.Parse(ok), Status::kCommand);
  EXPECT_EQ(parser.args()[1].size(), 5000u);
}

TEST(RespParserTest, DefaultInlineLimitIs64K) {
  std::string line(64 * 1024, 'a');
  RespParser parser;
  EXPECT_EQ(parser.Parse(line), Status::kNeedMore);
  line += 'a';
  EXPECT_EQ(parser.Parse(line), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: too big inline request");
}

TEST(RespParserTest, HeaderLineLimits) {
  // Redis: an error once more than 64KB (counted from the line's start) wait without a CR.
  std::string mbulk = "*" + std::string(64 * 1024 - 1, '1');
  RespParser parser;
  EXPECT_EQ(parser.Parse(mbulk), Status::kNeedMore);
  mbulk += '1';
  EXPECT_EQ(parser.Parse(mbulk), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: too big mbulk count string");

  std::string bulk = "*1\r\n$" + std::string(64 * 1024 - 1, '1');
  parser.Reset();
  EXPECT_EQ(parser.Parse(bulk), Status::kNeedMore);
  bulk += '1';
  EXPECT_EQ(parser.Parse(bulk), Status::kError);
  EXPECT_EQ(parser.error(), "Protocol error: too big bulk count string");
}

TEST(RespParserTest, ConfiguredLengthLimits) {
  RespLimits limits;
  limits.max_bulk_len = 10;
  limits.max_multibulk_len = 3;
  EXPECT_THAT(FeedAll(MultiBulk({"a", std::string(10, 'x')}), limits),
              ElementsAre(Cmd({"a", std::string(10, 'x')})));
  EXPECT_THAT(FeedAll(MultiBulk({"a", std::string(11, 'x')}), limits),
              ElementsAre(Err("Protocol error: invalid bulk length")));
  EXPECT_THAT(FeedAll(MultiBulk({"a", "b", "c"}), limits), ElementsAre(Cmd({"a", "b", "c"})));
  EXPECT_THAT(FeedAll(MultiBulk({"a", "b", "c", "d"}), limits),
              ElementsAre(Err("Protocol error: invalid multibulk length")));
}

TEST(RespParserTest, NulEndsAnInlineLine) {
  EXPECT_THAT(FeedAll(std::string("echo a\0b c\r\n", 12)), ElementsAre(Cmd({"echo", "a"})));
}

TEST(RespParserTest, ResetForgetsPartialCommand) {
  RespParser parser;
  EXPECT_EQ(parser.Parse("*2\r\n$3\r\nGET\r\n"), Status::kNeedMore);
  parser.Reset();
  ASSERT_EQ(parser.Parse("PING\r\n"), Status::kCommand);
  EXPECT_THAT(parser.args(), ElementsAre("PING"));
}

// Random mixes of protocol fragments: must never crash, and parsing in one buffer must agree
// with parsing at random split points with buffer moves.
TEST(RespParserTest, RandomInputsAgreeAcrossSplits) {
  const std::vector<std::string> fragments = {
      "*",  "$",   "\r\n", "\r", "\n", "1",    "2",   "3",  "0",  "-",  "-1", "10", "a",
      " ",  "\"",  "'",    "\\", "x4", "\\x41", "GET", ":",  "\t", "*2\r\n", "$3\r\nfoo\r\n",
      "*1\r\n$4\r\nPING\r\n", "SET k v\r\n", std::string(1, '\0'), "\x0b", "99"};
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string wire;
    const int n = 1 + rng() % 40;
    for (int i = 0; i < n; ++i) wire += fragments[rng() % fragments.size()];
    if (rng() % 4 == 0) {
      for (char& c : wire) {
        if (rng() % 10 == 0) c = static_cast<char>(rng());
      }
    }
    auto whole = FeedAll(wire);
    std::vector<size_t> cuts;
    for (size_t i = 0; i < wire.size(); ++i) {
      if (rng() % 3 == 0) cuts.push_back(i);
    }
    RespParser parser;
    ASSERT_EQ(Feed(parser, wire, cuts), whole) << testing::PrintToString(wire);
  }
}

}  // namespace
}  // namespace dashkv::io
