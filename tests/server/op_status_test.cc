// OpStatus tests: the texts of core/'s argument checks (mapped here, core/ has no Redis text) and
// of the subcommand errors, as redis-server 7.0.15 sends them.

#include "server/op_status.h"

#include <gtest/gtest.h>

#include <string>

#include "core/bitops.h"

namespace dashkv {
namespace {

TEST(OpStatusTest, StringOpErrorTexts) {
  EXPECT_EQ(StringOpErrorText(StringOpError::kOk), "");
  EXPECT_EQ(StringOpErrorText(StringOpError::kTooLong),
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  EXPECT_EQ(StringOpErrorText(StringOpError::kBitOffset),
            "ERR bit offset is not an integer or out of range");
  EXPECT_EQ(StringOpErrorText(StringOpError::kBitValue),
            "ERR bit is not an integer or out of range");
  EXPECT_EQ(StringOpErrorText(StringOpError::kBitposBit), "ERR The bit argument must be 1 or 0.");
  EXPECT_EQ(StringOpErrorText(StringOpError::kBitfieldType),
            "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
            "supported but i64 is.");
  EXPECT_EQ(StringOpErrorText(StringOpError::kBitfieldOverflow),
            "ERR Invalid OVERFLOW type specified");
  EXPECT_EQ(StringOpErrorText(StringOpError::kOffsetOutOfRange), "ERR offset is out of range");
}

TEST(OpStatusTest, SubcommandTexts) {
  EXPECT_EQ(UnknownSubcommandText("client", "foo"),
            "ERR unknown subcommand 'foo'. Try CLIENT HELP.");
  EXPECT_EQ(UnknownSubcommandText("Config", std::string(200, 'x')),
            "ERR unknown subcommand '" + std::string(128, 'x') + "'. Try CONFIG HELP.");
  EXPECT_EQ(SubcommandSyntaxText("pubsub", "CHANNELS"),
            "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB "
            "HELP.");
  EXPECT_EQ(WrongArgsText("client|kill"),
            "ERR wrong number of arguments for 'client|kill' command");
}

}  // namespace
}  // namespace dashkv
