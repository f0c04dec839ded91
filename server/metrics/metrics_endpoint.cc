#include "server/metrics/metrics_endpoint.h"

#include <absl/strings/escaping.h>

#include <optional>
#include <vector>

#include "core/base/clock.h"
#include "core/base/parse_int.h"
#include "core/numbers.h"
#include "core/str_util.h"
#include "server/acl/acl_conn.h"
#include "server/config.h"
#include "server/conn_state.h"
#include "server/metrics/info_metrics.h"
#include "server/metrics/prometheus_writer.h"
#include "server/metrics/thread_metrics.h"
#include "server/services.h"
#include "server/storage/shard_set.h"

namespace dashkv {
namespace {

using boost::asio::awaitable;

// The commands a scrape runs (arrays, not braced lists: g++ 12 cannot keep an
// initializer_list's array across a co_await).
constexpr std::string_view kConfigGetAll[] = {"CONFIG", "GET", "*"};
constexpr std::string_view kSlowlogLen[] = {"SLOWLOG", "LEN"};
constexpr std::string_view kSlowlogGetOne[] = {"SLOWLOG", "GET", "1"};
constexpr std::string_view kLatencyLatest[] = {"LATENCY", "LATEST"};
constexpr std::string_view kLatencyHistogram[] = {"LATENCY", "HISTOGRAM"};
constexpr std::string_view kInfoAll[] = {"INFO", "ALL"};

// The Prometheus text format's media type.
constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

// Credentials of an Authorization header: "Basic base64(user:password)" or "Bearer password".
struct Credentials {
  std::string user;  // empty: the default user (AUTH password)
  std::string password;
};

bool ParseAuthorization(std::string_view header, Credentials* out) {
  const size_t space = header.find(' ');
  if (space == std::string_view::npos) return false;
  const std::string_view scheme = header.substr(0, space);
  std::string_view token = header.substr(space + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  if (EqualsIgnoreCase(scheme, "bearer")) {
    out->password = std::string(token);
    return !token.empty();
  }
  std::string decoded;
  if (!EqualsIgnoreCase(scheme, "basic") ||
      !absl::Base64Unescape(absl::string_view(token.data(), token.size()), &decoded)) {
    return false;
  }
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  out->user = decoded.substr(0, colon);
  out->password = decoded.substr(colon + 1);
  return true;
}

void Refuse(io::HttpResponse& response, int status, std::string_view reason) {
  response.status = status;
  response.body = StrCat(reason, "\n");
  if (status == 401) {
    response.headers.emplace_back("WWW-Authenticate", "Basic realm=\"dashkv\", charset=\"UTF-8\"");
  }
}

// Whether `reply` is an array whose elements are at least `n` integers from `first` on.
bool HasIntegers(const io::RespReply& reply, size_t first, size_t n) {
  if (reply.type != io::RespReply::Type::kArray || reply.elements.size() < first + n) return false;
  for (size_t i = first; i < first + n; ++i) {
    if (reply.elements[i].type != io::RespReply::Type::kInteger) return false;
  }
  return true;
}

// The microseconds INFO's commandstats give commands whose name starts with `cmd`: how
// redis_exporter sums a command's latency histogram (its prefix match included, so "get"
// also counts "getex"; the same sums name the same series).
double TotalUsecWithPrefix(std::string_view info, std::string_view cmd) {
  double total = 0;
  size_t pos = 0;
  while ((pos = info.find("cmdstat_", pos)) != std::string_view::npos) {
    if (pos > 0 && info[pos - 1] != '\n') {
      pos += 8;
      continue;
    }
    std::string_view line = info.substr(pos + 8, info.find('\n', pos) - pos - 8);
    pos += 8;
    const size_t colon = line.find(':');
    const size_t usec = line.find(",usec=");
    if (colon == std::string_view::npos || usec == std::string_view::npos) continue;
    if (!line.substr(0, colon).starts_with(cmd)) continue;
    std::string_view digits = line.substr(usec + 6);
    digits = digits.substr(0, digits.find(','));
    if (std::optional<uint64_t> n = ParseUint64(digits)) total += static_cast<double>(*n);
  }
  return total;
}

// redis_commands_latencies_usec{cmd} from LATENCY HISTOGRAM's reply: per command, "calls" and
// "histogram_usec" (bucket upper bound -> cumulative count).
void AppendLatencyHistograms(const io::RespReply& reply, std::string_view info,
                             PrometheusWriter* out) {
  using Type = io::RespReply::Type;
  if (reply.type != Type::kArray) return;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    const io::RespReply& details = reply.elements[i + 1];
    if (details.type != Type::kArray || details.elements.size() < 4 ||
        details.elements[1].type != Type::kInteger ||
        details.elements[3].type != Type::kArray) {
      continue;
    }
    const std::string& cmd = reply.elements[i].str;
    std::vector<std::pair<double, double>> buckets;
    const std::vector<io::RespReply>& hist = details.elements[3].elements;
    for (size_t j = 0; j + 1 < hist.size(); j += 2) {
      buckets.emplace_back(static_cast<double>(hist[j].integer),
                           static_cast<double>(hist[j + 1].integer));
    }
    out->AddHistogram("redis_commands_latencies_usec", "A histogram of latencies per command",
                      {{"cmd", cmd}}, buckets, TotalUsecWithPrefix(info, cmd),
                      static_cast<double>(details.elements[1].integer));
  }
}

}  // namespace

awaitable<io::RespReply> MetricsEndpoint::Call(io::Connection& conn, ConnState& state,
                                               io::CmdArgs args) {
  io::ReplyBuilder out(io::RespVersion::kResp2);
  co_await dispatcher_.Dispatch(conn, state, std::span<const io::CmdArgs>(&args, 1), out);
  io::RespParseResult parsed = io::ParseRespReply(out.buffer(), out.buffer().size());
  if (!parsed.status.ok() || parsed.consumed == 0) {
    parsed.reply.type = io::RespReply::Type::kError;
    parsed.reply.str = "ERR unreadable reply";
  }
  co_return std::move(parsed.reply);
}

awaitable<unsigned> MetricsEndpoint::AppendCommandMetrics(io::Connection& conn, ConnState& state,
                                                          std::string_view info,
                                                          PrometheusWriter* out) {
  using Type = io::RespReply::Type;
  unsigned databases = 16;
  const io::RespReply config = co_await Call(conn, state, kConfigGetAll);
  if (config.type == Type::kArray) {
    for (size_t i = 0; i + 1 < config.elements.size(); i += 2) {
      const std::string& key = config.elements[i].str;
      const std::string& value = config.elements[i + 1].str;
      if (key == "databases") {
        const std::optional<int64_t> n = ParseInt64(value);
        if (n && *n > 0 && *n <= 1 << 20) databases = static_cast<unsigned>(*n);
      }
      if (key == "maxmemory" || key == "maxclients" || key == "io-threads") {
        const std::optional<double> v = ParseDouble(value);
        const std::string metric = key == "io-threads" ? "config_io_threads" : "config_" + key;
        if (v) out->Add("redis_" + metric, MetricType::kGauge, metric + " metric", *v);
      }
    }
  }
  const io::RespReply len = co_await Call(conn, state, kSlowlogLen);
  if (len.type == Type::kInteger) {
    out->Add("redis_slowlog_length", MetricType::kGauge, "Total slowlog",
             static_cast<double>(len.integer));
  }
  const io::RespReply last = co_await Call(conn, state, kSlowlogGetOne);
  if (last.type == Type::kArray) {
    double id = 0, duration_s = 0;
    if (!last.elements.empty() && HasIntegers(last.elements[0], 0, 3)) {
      id = static_cast<double>(last.elements[0].elements[0].integer);
      duration_s = static_cast<double>(last.elements[0].elements[2].integer) / 1e6;
    }
    out->Add("redis_slowlog_last_id", MetricType::kGauge, "Last id of slowlog", id);
    out->Add("redis_last_slow_execution_duration_seconds", MetricType::kGauge,
             "The amount of time needed for last slow execution, in seconds", duration_s);
  }
  const io::RespReply latest = co_await Call(conn, state, kLatencyLatest);
  if (latest.type == Type::kArray) {
    for (const io::RespReply& e : latest.elements) {
      if (!HasIntegers(e, 1, 3) || e.elements[0].type != Type::kBulkString) continue;
      const std::string& event = e.elements[0].str;
      out->Add("redis_latency_spike_last", MetricType::kGauge,
               "When the latency spike last occurred",
               static_cast<double>(e.elements[1].integer), {{"event_name", event}});
      out->Add("redis_latency_spike_duration_seconds", MetricType::kGauge,
               "Length of the last latency spike in seconds",
               static_cast<double>(e.elements[2].integer) / 1e3, {{"event_name", event}});
    }
  }
  const io::RespReply histograms = co_await Call(conn, state, kLatencyHistogram);
  AppendLatencyHistograms(histograms, info, out);
  co_return databases;
}

awaitable<void> MetricsEndpoint::Serve(io::Connection& conn, ConnState& state,
                                       const io::HttpRequest& request,
                                       io::HttpResponse& response) {
  if (request.path != "/metrics") {
    Refuse(response, 404, "Not Found: the metrics are at /metrics");
    co_return;
  }
  // Each request stands on its own credentials: back to what a fresh connection is.
  SetConnUser(state, services_.acl.default_user(), services_.acl.generation());
  state.SetAuthenticated(!services_.config.auth_required.load(std::memory_order_relaxed));
  if (!request.authorization.empty()) {
    Credentials creds;
    if (!ParseAuthorization(request.authorization, &creds)) {
      Refuse(response, 401, "Unauthorized: unreadable Authorization header");
      co_return;
    }
    std::string_view auth_args[] = {"AUTH", creds.user, creds.password};
    io::CmdArgs auth_cmd(auth_args);
    if (creds.user.empty()) {  // the one-argument form: AUTH <password>
      auth_args[1] = creds.password;
      auth_cmd = auth_cmd.first(2);
    }
    const io::RespReply auth = co_await Call(conn, state, auth_cmd);
    if (auth.is_error()) {
      Refuse(response, 401, StrCat("Unauthorized: ", auth.str));
      co_return;
    }
  }
  const io::RespReply info = co_await Call(conn, state, kInfoAll);
  if (info.is_error()) {
    if (info.str.starts_with("NOAUTH")) {
      Refuse(response, 401, StrCat("Unauthorized: ", info.str));
    } else if (info.str.starts_with("NOPERM")) {
      Refuse(response, 403, StrCat("Forbidden: ", info.str));
    } else {
      Refuse(response, 500, info.str);
    }
    co_return;
  }
  PrometheusWriter out;
  out.Add("redis_up", MetricType::kGauge, "Information about the Redis instance", 1);
  const unsigned databases = co_await AppendCommandMetrics(conn, state, info.str, &out);
  AppendInfoMetrics(info.str, databases, NowMs() / 1000, &out);
  // dashkv's own: gathered on each thread, by a hop there.
  std::vector<ThreadFigures> threads(services_.shard_set.size());
  co_await services_.shard_set.AwaitAll(
      [&](Shard& shard) { threads[shard.index()] = GatherThreadFigures(shard, services_); });
  AppendThreadMetrics(threads, &out);
  response.content_type = std::string(kContentType);
  response.body = out.Text();
}

}  // namespace dashkv
