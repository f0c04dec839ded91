// MetricsEndpoint: what the server answers over HTTP on its RESP port (io/connection.h says
// how a connection turns to HTTP). GET /metrics: the Prometheus text — redis_exporter's metrics
// (server/metrics/info_metrics.h), built from INFO ALL, the slow log and the latency monitor,
// plus dashkv's per-thread metrics (server/metrics/thread_metrics.h). Every other path: 404.
//
// Access: a scrape needs what INFO needs. Each request starts as a fresh connection would (the
// default user, authenticated when it has no password) and may carry credentials: "Basic"
// (user:password, an empty user meaning the default one) or "Bearer" (the default user's
// password). They are checked by running AUTH, and the metrics by running INFO ALL, through
// the normal command path, so ACL rules, the ACL LOG, MONITOR and the command statistics see
// a scrape as they see redis_exporter's. A refused AUTH or -NOAUTH answers 401 (with a Basic
// challenge), -NOPERM 403. Protected mode refuses a non-loopback scraper at accept, before any
// byte is read, as it refuses every client.
// Thread: shared by every engine; Serve runs on the connection's engine and keeps no state.
#pragma once

#include <utility>  // before asio: awaitable.hpp uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "io/connection.h"
#include "io/http_request.h"
#include "io/http_response.h"
#include "io/resp_client.h"
#include "io/service.h"

namespace dashkv {

class ConnState;
class PrometheusWriter;
struct ServerServices;

class MetricsEndpoint {
 public:
  // `dispatcher` runs commands for the connection (the Server). Both must outlive this.
  MetricsEndpoint(const ServerServices& services, io::Service& dispatcher)
      : services_(services), dispatcher_(dispatcher) {}

  // Answers `request` (a GET or HEAD without a body) from `conn`, whose server state is
  // `state`. May suspend (commands, hops to every thread).
  boost::asio::awaitable<void> Serve(io::Connection& conn, ConnState& state,
                                     const io::HttpRequest& request,
                                     io::HttpResponse& response);

 private:
  // Runs one command as the connection's client would and returns its reply.
  boost::asio::awaitable<io::RespReply> Call(io::Connection& conn, ConnState& state,
                                             io::CmdArgs args);
  // Appends what redis_exporter reads besides INFO, as it reads it: CONFIG GET * (the
  // redis_config_* gauges; returns the number of databases, 16 when refused), SLOWLOG LEN and
  // GET 1, LATENCY LATEST and HISTOGRAM (`info`: INFO ALL's text, for the histograms' sums).
  // A refused command leaves its metrics out.
  boost::asio::awaitable<unsigned> AppendCommandMetrics(io::Connection& conn, ConnState& state,
                                                        std::string_view info,
                                                        PrometheusWriter* out);

  const ServerServices& services_;
  io::Service& dispatcher_;
};

}  // namespace dashkv
