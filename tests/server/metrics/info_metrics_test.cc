#include "server/metrics/info_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "server/metrics/prometheus_writer.h"

namespace dashkv {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// INFO text in Redis 7.0's layout (what redis_exporter parses).
constexpr std::string_view kInfo =
    "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nos:Linux 6 x86_64\r\n"
    "process_id:42\r\nrun_id:abc\r\ntcp_port:6379\r\nuptime_in_seconds:100\r\n"
    "\r\n# Clients\r\nconnected_clients:3\r\ncluster_connections:0\r\nblocked_clients:1\r\n"
    "\r\n# Memory\r\nused_memory:1048576\r\nmaxmemory_policy:noeviction\r\n"
    "mem_fragmentation_ratio:1.25\r\n"
    "\r\n# Persistence\r\nrdb_last_bgsave_status:ok\r\naof_last_write_status:err\r\n"
    "\r\n# Stats\r\ntotal_commands_processed:17\r\nkeyspace_hits:5\r\nkeyspace_misses:2\r\n"
    "expired_keys:1\r\nevicted_keys:0\r\nlatest_fork_usec:2500\r\ndashkv_shard_hops:9\r\n"
    "\r\n# Replication\r\nrole:master\r\nconnected_slaves:0\r\n"
    "\r\n# CPU\r\nused_cpu_sys:0.500000\r\n"
    "\r\n# Commandstats\r\n"
    "cmdstat_get:calls=10,usec=20,usec_per_call=2.00,rejected_calls=1,failed_calls=2\r\n"
    "cmdstat_client|id:calls=1,usec=3,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n"
    "\r\n# Errorstats\r\nerrorstat_ERR:count=4\r\nerrorstat_WRONGTYPE:count=1\r\n"
    "\r\n# Latencystats\r\nlatency_percentiles_usec_get:p50=1.003,p99=2.007,p99.9=3.001\r\n"
    "\r\n# Cluster\r\ncluster_enabled:0\r\n"
    "\r\n# Keyspace\r\ndb0:keys=7,expires=2,avg_ttl=1500\r\ndb3:keys=1,expires=0,avg_ttl=0\r\n";

std::string Metrics(std::string_view info = kInfo, unsigned dbs = 4) {
  PrometheusWriter w;
  AppendInfoMetrics(info, dbs, 1000, &w);
  return w.Text();
}

TEST(InfoMetricsTest, MappedFieldsKeepRedisExporterNamesAndTypes) {
  const std::string m = Metrics();
  EXPECT_THAT(m, HasSubstr("# HELP redis_connected_clients connected_clients metric\n"
                           "# TYPE redis_connected_clients gauge\nredis_connected_clients 3\n"));
  // Go's number format, as redis_exporter prints: exponent form from 1e6 on.
  EXPECT_THAT(m, HasSubstr("# TYPE redis_memory_used_bytes gauge\nredis_memory_used_bytes "
                           "1.048576e+06\n"));
  EXPECT_THAT(m, HasSubstr("# HELP redis_commands_processed_total commands_processed_total "
                           "metric\n# TYPE redis_commands_processed_total counter\n"
                           "redis_commands_processed_total 17\n"));
  EXPECT_THAT(m, HasSubstr("redis_keyspace_hits_total 5\n"));
  EXPECT_THAT(m, HasSubstr("redis_keyspace_misses_total 2\n"));
  EXPECT_THAT(m, HasSubstr("redis_expired_keys_total 1\n"));
  EXPECT_THAT(m, HasSubstr("redis_blocked_clients 1\n"));
  EXPECT_THAT(m, HasSubstr("redis_mem_fragmentation_ratio 1.25\n"));
  EXPECT_THAT(m, HasSubstr("redis_uptime_in_seconds 100\n"));
  EXPECT_THAT(m, HasSubstr("redis_cpu_sys_seconds_total 0.5\n"));
  EXPECT_THAT(m, HasSubstr("redis_rdb_last_bgsave_status 1\n"));   // "ok"
  EXPECT_THAT(m, HasSubstr("redis_aof_last_write_status 0\n"));    // "err"
  EXPECT_THAT(m, HasSubstr("redis_latest_fork_seconds 0.0025\n"));  // renamed, in seconds
  EXPECT_THAT(m, HasSubstr("redis_cluster_enabled 0\n"));           // "cluster_" prefix
  EXPECT_THAT(m, HasSubstr("redis_cluster_connections 0\n"));
  EXPECT_THAT(m, HasSubstr("redis_start_time_seconds 900\n"));
  // Fields redis_exporter does not export stay out.
  EXPECT_THAT(m, Not(HasSubstr("dashkv_shard_hops")));
  EXPECT_THAT(m, Not(HasSubstr("redis_redis_version")));
}

TEST(InfoMetricsTest, PerCommandPerErrorAndPerDb) {
  const std::string m = Metrics();
  EXPECT_THAT(m, HasSubstr("# TYPE redis_commands_total counter\n"
                           "redis_commands_total{cmd=\"get\"} 10\n"
                           "redis_commands_total{cmd=\"client|id\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("redis_commands_duration_seconds_total{cmd=\"get\"} 2e-05\n"));
  EXPECT_THAT(m, HasSubstr("redis_commands_rejected_calls_total{cmd=\"get\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("redis_commands_failed_calls_total{cmd=\"get\"} 2\n"));
  EXPECT_THAT(m, HasSubstr("redis_errors_total{err=\"ERR\"} 4\n"));
  EXPECT_THAT(m, HasSubstr("redis_errors_total{err=\"WRONGTYPE\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("redis_db_keys{db=\"db0\"} 7\n"));
  EXPECT_THAT(m, HasSubstr("redis_db_keys_expiring{db=\"db0\"} 2\n"));
  EXPECT_THAT(m, HasSubstr("redis_db_avg_ttl_seconds{db=\"db0\"} 1.5\n"));
  EXPECT_THAT(m, HasSubstr("redis_db_keys{db=\"db3\"} 1\n"));
  // Databases without keys are padded with 0 up to the database count.
  EXPECT_THAT(m, HasSubstr("redis_db_keys{db=\"db1\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("redis_db_keys_expiring{db=\"db2\"} 0\n"));
  EXPECT_THAT(m, Not(HasSubstr("db=\"db4\"")));
  EXPECT_THAT(m, HasSubstr("# TYPE redis_latency_percentiles_usec summary\n"
                           "redis_latency_percentiles_usec{cmd=\"get\",quantile=\"50\"} 1.003\n"
                           "redis_latency_percentiles_usec{cmd=\"get\",quantile=\"99\"} 2.007\n"
                           "redis_latency_percentiles_usec{cmd=\"get\",quantile=\"99.9\"} 3.001\n"
                           "redis_latency_percentiles_usec_sum{cmd=\"get\"} 20\n"
                           "redis_latency_percentiles_usec_count{cmd=\"get\"} 10\n"));
  // Labels sorted by name, as Go's client writes them.
  EXPECT_THAT(m, HasSubstr("redis_instance_info{maxmemory_policy=\"noeviction\","
                           "os=\"Linux 6 x86_64\",process_id=\"42\",redis_build_id=\"\","
                           "redis_mode=\"standalone\",redis_version=\"7.0.15\","
                           "role=\"master\",run_id=\"abc\",tcp_port=\"6379\"} 1\n"));
}

TEST(InfoMetricsTest, FamiliesAreSortedAndDeclaredOnce) {
  const std::string m = Metrics();
  std::string last;
  size_t pos = 0;
  while ((pos = m.find("# TYPE ", pos)) != std::string::npos) {
    pos += 7;
    std::string name = m.substr(pos, m.find(' ', pos) - pos);
    EXPECT_LT(last, name);
    last = name;
  }
}

TEST(PrometheusWriterTest, Histogram) {
  PrometheusWriter w;
  w.AddHistogram("h", "a histogram", {{"cmd", "get"}}, {{1, 2}, {1048576, 5}}, 30, 6);
  EXPECT_EQ(w.Text(),
            "# HELP h a histogram\n# TYPE h histogram\n"
            "h_bucket{cmd=\"get\",le=\"1\"} 2\n"
            "h_bucket{cmd=\"get\",le=\"1.048576e+06\"} 5\n"
            "h_bucket{cmd=\"get\",le=\"+Inf\"} 6\n"
            "h_sum{cmd=\"get\"} 30\nh_count{cmd=\"get\"} 6\n");
}

TEST(PrometheusWriterTest, FormatsValuesAndEscapesLabels) {
  EXPECT_EQ(PrometheusWriter::FormatValue(3), "3");
  EXPECT_EQ(PrometheusWriter::FormatValue(0.1), "0.1");
  EXPECT_EQ(PrometheusWriter::FormatValue(1e21), "1e+21");
  EXPECT_EQ(PrometheusWriter::FormatValue(999999), "999999");
  EXPECT_EQ(PrometheusWriter::FormatValue(1000000), "1e+06");
  EXPECT_EQ(PrometheusWriter::FormatValue(123456789), "1.23456789e+08");
  EXPECT_EQ(PrometheusWriter::FormatValue(0.0001), "0.0001");
  EXPECT_EQ(PrometheusWriter::FormatValue(0.00002), "2e-05");
  EXPECT_EQ(PrometheusWriter::FormatValue(-2.5), "-2.5");
  EXPECT_EQ(PrometheusWriter::FormatValue(0), "0");
  EXPECT_EQ(PrometheusWriter::FormatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(PrometheusWriter::EscapeLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  PrometheusWriter w;
  w.Add("m", MetricType::kCounter, "help \\ with\nnewline", 1, {{"l", "x\"y"}});
  w.Add("m", MetricType::kGauge, "another type: dropped", 2);
  EXPECT_EQ(w.Text(), "# HELP m help \\\\ with\\nnewline\n# TYPE m counter\nm{l=\"x\\\"y\"} 1\n");
}

}  // namespace
}  // namespace dashkv
