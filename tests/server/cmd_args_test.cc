// ArgParser unit tests (its integers are ParseInt64's, tested in tests/core/base/).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "server/cmd_args.h"

namespace dashkv {
namespace {

// Keeps the argument strings alive for a parser.
struct Args {
  explicit Args(std::vector<std::string> v) : strs(std::move(v)) {
    for (const auto& s : strs) views.push_back(s);
  }
  CmdArgs span() const { return CmdArgs(views); }
  std::vector<std::string> strs;
  std::vector<std::string_view> views;
};

TEST(ArgParserTest, WalksOptions) {
  Args a({"SET", "k", "v", "ex", "10", "NX", "GET"});
  ArgParser p(a.span(), 3);
  EXPECT_EQ(p.position(), 3u);
  EXPECT_EQ(p.remaining(), 4u);
  EXPECT_TRUE(p.HasNext());
  EXPECT_FALSE(p.Check("PX"));
  EXPECT_TRUE(p.Check("EX"));  // any case
  EXPECT_EQ(p.NextInt(), 10);
  EXPECT_EQ(p.Peek(), "NX");
  EXPECT_TRUE(p.Check("nx"));
  EXPECT_EQ(p.Next(), "GET");
  EXPECT_FALSE(p.HasNext());
  EXPECT_FALSE(p.HasError());
  EXPECT_EQ(p.error(), OpStatus::kOk);
  EXPECT_EQ(p.remaining(), 0u);
  EXPECT_EQ(p.Peek(), "");
  EXPECT_FALSE(p.Check("GET"));
  // Reading past the end is a syntax error.
  EXPECT_EQ(p.Next(), "");
  EXPECT_TRUE(p.HasError());
  EXPECT_EQ(p.error(), OpStatus::kSyntaxError);
}

TEST(ArgParserTest, DefaultStartIsAfterTheCommandName) {
  Args a({"CMD", "x"});
  ArgParser p(a.span());
  EXPECT_EQ(p.Next(), "x");
}

TEST(ArgParserTest, IntErrorsAreStickyAndCustomizable) {
  Args a({"CMD", "abc", "5", "x"});
  ArgParser p(a.span());
  EXPECT_EQ(p.NextInt(), 0);
  EXPECT_TRUE(p.HasError());
  EXPECT_EQ(p.error(), OpStatus::kNotAnInteger);
  // After the first error everything is a no-op with neutral values.
  EXPECT_FALSE(p.HasNext());
  EXPECT_EQ(p.NextInt(), 0);
  EXPECT_FALSE(p.Check("5"));
  p.SetError(OpStatus::kSyntaxError);
  EXPECT_EQ(p.error(), OpStatus::kNotAnInteger);  // the first error wins

  ArgParser q(a.span());
  EXPECT_EQ(q.NextInt(OpStatus::kBitOffset), 0);
  EXPECT_EQ(q.error(), OpStatus::kBitOffset);

  Args missing({"CMD"});
  ArgParser m(missing.span());
  EXPECT_EQ(m.NextInt(), 0);
  EXPECT_EQ(m.error(), OpStatus::kSyntaxError);  // a missing value is a syntax error

  Args strict({"CMD", "01", "-0", "+1"});
  for (size_t i = 1; i < 4; ++i) {
    ArgParser s(strict.span(), i);
    s.NextInt();
    EXPECT_EQ(s.error(), OpStatus::kNotAnInteger) << strict.strs[i];
  }
}

TEST(ArgParserTest, Doubles) {
  Args a({"CMD", "1.5", "-2", "1e3", "inf", "-inf", ".5", "5."});
  ArgParser p(a.span());
  EXPECT_EQ(p.NextDouble(), 1.5);
  EXPECT_EQ(p.NextDouble(), -2.0);
  EXPECT_EQ(p.NextDouble(), 1000.0);
  EXPECT_TRUE(std::isinf(p.NextDouble()));
  EXPECT_EQ(p.NextDouble(), -INFINITY);
  EXPECT_EQ(p.NextDouble(), 0.5);
  EXPECT_EQ(p.NextDouble(), 5.0);
  EXPECT_FALSE(p.HasError());
  for (std::string bad : {"nan", "abc", "", " 1", "1.5x", "1,5"}) {
    Args b({"CMD", bad});
    ArgParser q(b.span());
    EXPECT_EQ(q.NextDouble(), 0.0) << bad;
    EXPECT_EQ(q.error(), OpStatus::kNotAFloat) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace dashkv
