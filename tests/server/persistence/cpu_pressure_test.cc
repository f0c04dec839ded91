// CpuPressure: the "some" total of a pressure file is parsed, and the waiting share is the
// total's growth over the wall time between samples, sampled at most every kSampleMs; a
// missing file means "unknown", never "no pressure".
#include "server/persistence/cpu_pressure.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace dashkv {
namespace {

TEST(CpuPressureTest, ParsesTheSomeLine) {
  EXPECT_EQ(ParsePressureSomeTotalUs("some avg10=1.00 avg60=0.50 avg300=0.10 total=12345\n"
                                     "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
            12345u);
  EXPECT_EQ(ParsePressureSomeTotalUs("some avg10=0.00 avg60=0.00 avg300=0.00 total=0"), 0u);
  EXPECT_FALSE(ParsePressureSomeTotalUs("full avg10=0.00 total=5\n"));
  EXPECT_FALSE(ParsePressureSomeTotalUs("some avg10=0.00 avg60=0.00 avg300=0.00\n"));
  EXPECT_FALSE(ParsePressureSomeTotalUs("some total=-4\n"));
  EXPECT_FALSE(ParsePressureSomeTotalUs("some total=12x\n"));
  EXPECT_FALSE(ParsePressureSomeTotalUs(""));
}

class CpuPressureFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("dashkv-psi-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void Write(uint64_t total_us) {
    std::ofstream(path_) << "some avg10=0.00 avg60=0.00 avg300=0.00 total=" << total_us
                         << "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
  }
  std::filesystem::path path_;
};

TEST_F(CpuPressureFileTest, ShareIsTheWaitOverTheWallTimeBetweenSamples) {
  CpuPressure p(path_.string());
  Write(1000);
  EXPECT_FALSE(p.WaitingShare(10'000));  // one sample: no interval yet
  Write(51'000);                           // 50 ms of waiting in the next 100 ms
  EXPECT_DOUBLE_EQ(*p.WaitingShare(10'100), 0.5);
  Write(1'000'000);
  EXPECT_DOUBLE_EQ(*p.WaitingShare(10'150), 0.5);  // sampled again only after kSampleMs
  EXPECT_DOUBLE_EQ(*p.WaitingShare(10'300), 1.0);  // more than the wall time: at most all of it
  EXPECT_DOUBLE_EQ(*p.WaitingShare(10'400), 0.0);  // no growth: nothing waited
}

TEST_F(CpuPressureFileTest, WithoutTheFileTheShareIsUnknown) {
  CpuPressure p(path_.string());
  EXPECT_FALSE(p.WaitingShare(10'000));
  Write(0);
  EXPECT_FALSE(p.WaitingShare(20'000));  // unavailable stays unavailable
  EXPECT_FALSE(p.WaitingShare(30'000));
}

}  // namespace
}  // namespace dashkv
