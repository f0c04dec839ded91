// Config file tests: Redis's argument splitting (quotes, escapes), reading files with includes
// and their errors (line numbers, loops, missing files, hostile bytes), Config::Load applying a
// file (units, multi-argument directives, flags over the file) and CONFIG REWRITE's text
// (comments and order kept, as redis-server 7.0.15 rewrites a file).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/str_util.h"
#include "server/config.h"
#include "server/config_file.h"

namespace dashkv {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Split(std::string_view line) {
  auto args = SplitConfigArgs(line);
  EXPECT_TRUE(args.has_value()) << line;
  return args.value_or(std::vector<std::string>{"<unbalanced>"});
}

TEST(SplitConfigArgsTest, PlainWords) {
  EXPECT_THAT(Split("save 900 1 300 10"), ElementsAre("save", "900", "1", "300", "10"));
  EXPECT_THAT(Split("  bind\t127.0.0.1   ::1  "), ElementsAre("bind", "127.0.0.1", "::1"));
  EXPECT_THAT(Split(""), ElementsAre());
  EXPECT_THAT(Split("   "), ElementsAre());
}

TEST(SplitConfigArgsTest, DoubleQuotesAndEscapes) {
  EXPECT_THAT(Split(R"(dbfilename "my dump.rdb")"), ElementsAre("dbfilename", "my dump.rdb"));
  EXPECT_THAT(Split(R"(save "")"), ElementsAre("save", ""));
  EXPECT_THAT(Split(R"(x "a\nb\tc\rd\\e\"f")"), ElementsAre("x", "a\nb\tc\rd\\e\"f"));
  EXPECT_THAT(Split(R"(x "\x41\x7a\x00z")"), ElementsAre("x", std::string("Az\0z", 4)));
  EXPECT_THAT(Split(R"(x "\a\b\q")"), ElementsAre("x", "\a\bq"));
  // \x without two hex digits is an ordinary escape of 'x'.
  EXPECT_THAT(Split(R"(x "\xZZ")"), ElementsAre("x", "xZZ"));
  // A quote inside a word opens a quoted part of the same argument.
  EXPECT_THAT(Split(R"(x ab"c d")"), ElementsAre("x", "abc d"));
}

TEST(SplitConfigArgsTest, SingleQuotes) {
  EXPECT_THAT(Split(R"(requirepass 'it\'s "x" \n')"),
              ElementsAre("requirepass", "it's \"x\" \\n"));
}

TEST(SplitConfigArgsTest, UnbalancedQuotes) {
  for (std::string_view bad : {R"(dbfilename "abc)", R"(x 'abc)", R"(x "a"b)", R"(x 'a'b)",
                               R"(x "abc\")"}) {
    EXPECT_EQ(SplitConfigArgs(bad), std::nullopt) << bad;
  }
}

TEST(SplitConfigArgsTest, NulByteEndsTheLine) {
  EXPECT_THAT(Split(std::string_view("port 1\0 2", 9)), ElementsAre("port", "1"));
}

TEST(QuoteConfigStringTest, EscapesLikeRedis) {
  EXPECT_EQ(QuoteConfigString("/tmp/x"), "\"/tmp/x\"");
  EXPECT_EQ(QuoteConfigString("a b\"c\\\n\x01\xff"), R"("a b\"c\\\n\x01\xff")");
  // What QuoteConfigString writes, SplitConfigArgs reads back.
  std::string hostile = "q\"\\\r\n\t\a\b\x7f\x80 '";
  EXPECT_THAT(Split("x " + QuoteConfigString(hostile)), ElementsAre("x", hostile));
}

TEST(FormatConfigMemoryTest, Units) {
  EXPECT_EQ(FormatConfigMemory(0), "0");
  EXPECT_EQ(FormatConfigMemory(1000), "1000");
  EXPECT_EQ(FormatConfigMemory(4096), "4kb");
  EXPECT_EQ(FormatConfigMemory(100LL << 20), "100mb");
  EXPECT_EQ(FormatConfigMemory(3LL << 30), "3gb");
  EXPECT_EQ(FormatConfigMemory((1LL << 30) + 1024), "1048577kb");
}

// A scratch directory with files written by the test.
class ConfigDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dashkv-config-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, std::string_view text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string dir_;
};

TEST_F(ConfigDirTest, ReadsDirectivesWithLineNumbers) {
  std::string path = Write("a.conf", "# comment\n\n  PORT 7000  \r\nsave 900 1\n   # indented\n");
  auto lines = ReadConfigFile(path);
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0].line, 3);
  EXPECT_THAT((*lines)[0].args, ElementsAre("port", "7000"));  // the name in lower case
  EXPECT_EQ((*lines)[0].text, "PORT 7000");
  EXPECT_EQ((*lines)[1].line, 4);
}

TEST_F(ConfigDirTest, IncludesInPlace) {
  Write("inc.conf", "hz 20\n");
  Write("glob-b.conf", "timeout 2\n");
  Write("glob-a.conf", "timeout 1\n");
  std::string path = Write("main.conf", "port 1\ninclude " + dir_ + "/inc.conf\nport 2\n"
                                        "include " + dir_ + "/glob-*.conf\n"
                                        "include " + dir_ + "/none-*.conf\n");
  auto lines = ReadConfigFile(path);
  ASSERT_TRUE(lines.ok()) << lines.status();
  std::vector<std::string> seen;
  for (const ConfigLine& l : *lines) seen.push_back(l.args[0] + " " + l.args[1]);
  EXPECT_THAT(seen, ElementsAre("port 1", "hz 20", "port 2", "timeout 1", "timeout 2"));
  EXPECT_EQ((*lines)[1].file, dir_ + "/inc.conf");
  EXPECT_EQ((*lines)[1].line, 1);
}

TEST_F(ConfigDirTest, Errors) {
  auto missing = ReadConfigFile(dir_ + "/nope.conf");
  EXPECT_EQ(missing.status().message(),
            "Fatal error, can't open config file '" + dir_ + "/nope.conf': No such file or "
            "directory");
  std::string inc_missing = Write("m.conf", "port 1\ninclude " + dir_ + "/gone.conf\n");
  EXPECT_THAT(std::string(ReadConfigFile(inc_missing).status().message()),
              HasSubstr("can't open config file '" + dir_ + "/gone.conf'"));
  std::string quotes = Write("q.conf", "# c\nport 1\ndbfilename \"abc\n");
  EXPECT_EQ(ReadConfigFile(quotes).status().message(),
            "\n*** FATAL CONFIG FILE ERROR (dashkv 0.1.0) ***\nReading the configuration file " +
                quotes + ", at line 3\n>>> 'dbfilename \"abc'\nUnbalanced quotes in configuration "
                "line");
  std::string bad_include = Write("bi.conf", "include\n");
  EXPECT_THAT(std::string(ReadConfigFile(bad_include).status().message()),
              HasSubstr("Bad directive or wrong number of arguments"));
}

TEST_F(ConfigDirTest, IncludeLoopsAreRefused) {
  std::string self = Write("self.conf", "include " + dir_ + "/self.conf\n");
  EXPECT_THAT(std::string(ReadConfigFile(self).status().message()), HasSubstr("include loop"));
  Write("b.conf", "hz 5\ninclude " + dir_ + "/a.conf\n");
  std::string a = Write("a.conf", "include " + dir_ + "/b.conf\n");
  EXPECT_THAT(std::string(ReadConfigFile(a).status().message()), HasSubstr("include loop"));
  // The same file twice, not nested, is no loop.
  Write("leaf.conf", "hz 5\n");
  std::string twice = Write("twice.conf", "include " + dir_ + "/leaf.conf\ninclude " + dir_ +
                                              "/leaf.conf\n");
  auto lines = ReadConfigFile(twice);
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_EQ(lines->size(), 2u);
}

TEST_F(ConfigDirTest, HostileFiles) {
  // A huge line is read whole; binary bytes are only bytes.
  std::string big(4 << 20, 'x');
  std::string path = Write("big.conf", "requirepass " + big + "\nx\xff\x01 y\n");
  auto lines = ReadConfigFile(path);
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0].args[1].size(), big.size());
  EXPECT_EQ((*lines)[1].args[0], "x\xff\x01");
  // A file past the limit is refused, not truncated.
  std::ofstream(dir_ + "/huge.conf") << std::string(kMaxConfigFileBytes + 1, '#');
  EXPECT_THAT(std::string(ReadConfigFile(dir_ + "/huge.conf").status().message()),
              HasSubstr("larger than"));
  // A directory is not a config file.
  EXPECT_FALSE(ReadConfigFile(dir_).ok());
}

TEST_F(ConfigDirTest, LoadAppliesFileWithUnitsAndMultiArgs) {
  std::string path =
      Write("s.conf", "maxmemory 1gb\nproto-max-bulk-len 2mb\nsave 900 1\nsave \"300 10\"\n"
                      "client-output-buffer-limit pubsub 1k 2kb 3\nhash-max-ziplist-entries 7\n"
                      "bind 127.0.0.1 ::1\nport 7123\nenable-debug-command no\n"
                      "user alice on \">a b\" ~*\nuser bob off\n"
                      "rename-command debug \"\"\nrdbcompression NO\n");
  Config config;
  ASSERT_TRUE(config.Load(path, {}).ok());
  EXPECT_EQ(config.maxmemory.load(), 1LL << 30);
  EXPECT_EQ(config.proto_max_bulk_len.load(), 2LL << 20);
  EXPECT_THAT(config.save_points(), ElementsAre(SavePoint{900, 1}, SavePoint{300, 10}));
  EXPECT_EQ(config.OutputLimitsText(),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 1000 2048 3");
  EXPECT_EQ(config.hash_max_listpack_entries.load(), 7);
  EXPECT_EQ(config.bind, "127.0.0.1 ::1");
  EXPECT_EQ(config.port, 7123);
  EXPECT_EQ(config.enable_debug_command, ProtectedAction::kNo);
  EXPECT_FALSE(config.rdbcompression.load());
  ASSERT_EQ(config.acl_user_lines.size(), 2u);
  EXPECT_THAT(config.acl_user_lines[0], ElementsAre("alice", "on", ">a b", "~*"));
  EXPECT_THAT(config.acl_user_lines[1], ElementsAre("bob", "off"));
  ASSERT_EQ(config.renamed_commands.size(), 1u);
  EXPECT_EQ(config.renamed_commands[0].from, "debug");
  EXPECT_EQ(config.renamed_commands[0].to, "");
  EXPECT_EQ(config.renamed_commands[0].line.line, 12);
  EXPECT_EQ(config.config_file(), path);
}

TEST_F(ConfigDirTest, SaveEmptyClearsAndLaterLinesAdd) {
  Config config;
  ASSERT_TRUE(config.Load(Write("s.conf", "save 1 1\nsave \"\"\nsave 2 2\n"), {}).ok());
  EXPECT_THAT(config.save_points(), ElementsAre(SavePoint{2, 2}));
}

TEST_F(ConfigDirTest, FlagsGivenOverrideTheFile) {
  std::string path = Write("f.conf", "port 7001\nhz 33\n");
  Config config;
  // "port" counts as given (even at its default value); hz does not.
  ASSERT_TRUE(config.Load(path, {"port"}).ok());
  EXPECT_EQ(config.port, 6379);
  EXPECT_EQ(config.hz.load(), 33);
}

TEST_F(ConfigDirTest, LoadErrorsNameFileAndLine) {
  struct Case {
    std::string line;
    std::string reason;
  };
  const Case cases[] = {
      {"foo bar", "Bad directive or wrong number of arguments"},
      {"port 70000", "argument must be between 0 and 65535 inclusive"},
      {"port", "wrong number of arguments"},
      {"port 1 2", "wrong number of arguments"},
      {"save 1", "Invalid save parameters"},
      {"rdbcompression maybe", "argument must be 'yes' or 'no'"},
      {"maxmemory 10zb", "argument must be a memory value"},
      {"hz abc", "argument couldn't be parsed into an integer"},
      {"enable-debug-command sometimes",
       "argument(s) must be one of the following: no, yes, local"},
      {"maxmemory-policy foo",
       "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, "
       "volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
      {"user", "Bad directive or wrong number of arguments"},
      {"rename-command get", "Bad directive or wrong number of arguments"},
  };
  for (const Case& c : cases) {
    std::string path = Write("e.conf", "# first\n\n" + c.line + "\n");
    Config config;
    absl::Status st = config.Load(path, {});
    EXPECT_EQ(st.message(), "\n*** FATAL CONFIG FILE ERROR (dashkv 0.1.0) ***\n"
                            "Reading the configuration file " + path + ", at line 3\n>>> '" +
                                c.line + "'\n" + c.reason)
        << c.line;
  }
}

// Options for RewriteConfigText tests: port, save, hz (alias "frequency"), dir.
std::optional<std::string> TestCanonical(std::string_view name) {
  std::string lower = AsciiStrToLower(name);
  if (lower == "frequency") return std::string("hz");
  for (const char* known : {"port", "save", "hz", "dir", "include", "rename-command", "user"}) {
    if (lower == known) return lower;
  }
  return std::nullopt;
}

TEST(RewriteConfigTextTest, KeepsCommentsAndOrderAppendsNewOnes) {
  const std::string old_text =
      "# top comment\nport 7401\n\nsave 900 1\n# mid\nFREQUENCY 100\nsave 60 10000\n"
      "  include other.conf  \nnosuch directive\nbad \"quote\n";
  std::vector<RewriteOption> options = {
      {"port", {"port 7401"}, true},
      {"save", {"save 3600 1"}, true},
      {"hz", {"hz 20"}, true},
      {"dir", {"dir \"/tmp\""}, true},
  };
  EXPECT_EQ(RewriteConfigText(old_text, options, TestCanonical),
            "# top comment\nport 7401\n\nsave 3600 1\n# mid\nhz 20\n\ninclude other.conf\n"
            "# ??? nosuch directive\n# ??? bad \"quote\n\n# Generated by CONFIG REWRITE\n"
            "dir \"/tmp\"\n");
}

TEST(RewriteConfigTextTest, MoreLinesThanBeforeAndTheSignatureOnce) {
  const std::string old_text = "save 1 1\n\n# Generated by CONFIG REWRITE\nhz 5\n";
  std::vector<RewriteOption> options = {
      {"save", {"save 1 1", "save 2 2", "save 3 3"}, true},
      {"hz", {"hz 5"}, false},
      {"port", {"port 1"}, true},
  };
  EXPECT_EQ(RewriteConfigText(old_text, options, TestCanonical),
            "save 1 1\n\n# Generated by CONFIG REWRITE\nhz 5\n\nsave 2 2\nsave 3 3\nport 1\n");
}

TEST(RewriteConfigTextTest, DefaultsStayInPlaceAndAreNotAdded) {
  // An option at its default (force false) keeps its line, rewritten; one the file does not
  // mention is not added; an option with no lines (bind at its default) loses its old ones.
  const std::string old_text = "hz 10\ndir /x\n";
  std::vector<RewriteOption> options = {
      {"hz", {"hz 10"}, false},
      {"port", {"port 6379"}, false},
      {"dir", {}, true},
  };
  EXPECT_EQ(RewriteConfigText(old_text, options, TestCanonical), "hz 10\n\n");
  EXPECT_EQ(RewriteConfigText("", options, TestCanonical), "");
}

TEST_F(ConfigDirTest, RewriteRoundTrip) {
  std::string path = Write("r.conf", "# keep me\nport 7402\nmaxmemory 100mb\n"
                                     "hash-max-ziplist-entries 100\n# and me\nsave 900 1\n"
                                     "user alice on\nrename-command flushall \"\"\n");
  Config config;
  ASSERT_TRUE(config.Load(path, {}).ok());
  EXPECT_EQ(config.Set({{"maxmemory", "1gb"}, {"hz", "20"}, {"dbfilename", "a b.rdb"},
                        {"hash-max-listpack-entries", "512"}},
                       /*local_client=*/true),
            "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set "
            "protected config");
  EXPECT_EQ(config.Set({{"maxmemory", "1gb"}, {"hz", "20"}, {"requirepass", "p\"w"},
                        {"hash-max-listpack-entries", "512"}}),
            "");
  EXPECT_EQ(config.Rewrite(), "");
  std::string text = Read(path);
  EXPECT_EQ(text.substr(0, text.find("\n# Generated by CONFIG REWRITE\n")),
            "# keep me\nport 7402\nmaxmemory 1gb\nhash-max-listpack-entries 512\n# and me\n"
            "save 900 1\nuser alice on\nrename-command flushall \"\"\n");
  EXPECT_THAT(text, HasSubstr("\nhz 20\n"));
  EXPECT_THAT(text, HasSubstr("\nrequirepass \"p\\\"w\"\n"));
  EXPECT_THAT(text, HasSubstr("\ndir \"" + config.dir() + "\"\n"));
  // The rewritten file loads back to the same settings. Rewriting again changes nothing but
  // the blank line Redis's reader adds after the file's last newline (redis-server 7.0.15's
  // second rewrite ends the same way); from then on the text is stable.
  Config again;
  ASSERT_TRUE(again.Load(path, {}).ok());
  EXPECT_EQ(again.maxmemory.load(), 1LL << 30);
  EXPECT_EQ(again.hz.load(), 20);
  EXPECT_EQ(again.requirepass(), "p\"w");
  EXPECT_EQ(again.hash_max_listpack_entries.load(), 512);
  EXPECT_EQ(again.Rewrite(), "");
  EXPECT_EQ(Read(path), text + "\n");
  EXPECT_EQ(again.Rewrite(), "");
  EXPECT_EQ(Read(path), text + "\n");
}

TEST(ConfigRewriteTest, NeedsAConfigFile) {
  Config config;
  config.Init();
  EXPECT_EQ(config.Rewrite(), "ERR The server is running without a config file");
}

TEST(IsLocalPeerTest, OnlyRedisLoopbackAddresses) {
  EXPECT_TRUE(IsLocalPeer("127.0.0.1:5000"));
  EXPECT_TRUE(IsLocalPeer("[::1]:5000"));
  EXPECT_FALSE(IsLocalPeer("127.0.0.2:5000"));
  EXPECT_FALSE(IsLocalPeer("192.0.2.2:5000"));
  EXPECT_FALSE(IsLocalPeer("[fd00::2]:5000"));
  EXPECT_FALSE(IsLocalPeer("[::ffff:127.0.0.1]:5000"));
  EXPECT_FALSE(IsLocalPeer(""));
}

}  // namespace
}  // namespace dashkv
