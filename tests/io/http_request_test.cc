#include "io/http_request.h"

#include <gtest/gtest.h>

#include <string>

#include "io/http_response.h"

namespace dashkv::io {
namespace {

using Status = HttpRequestParser::Status;

TEST(SniffHttpTest, RequestLinesAreHttp) {
  EXPECT_EQ(SniffHttp("GET /metrics HTTP/1.1\r\n"), HttpSniff::kHttp);
  EXPECT_EQ(SniffHttp("GET /metrics HTTP/1.0\n"), HttpSniff::kHttp);
  EXPECT_EQ(SniffHttp("POST /x HTTP/1.1\r\nHost: a\r\n\r\n"), HttpSniff::kHttp);
  EXPECT_EQ(SniffHttp("HEAD http://h:1/metrics?x=1 HTTP/1.1\r\n"), HttpSniff::kHttp);
}

TEST(SniffHttpTest, RespAndInlineCommandsAreNot) {
  EXPECT_EQ(SniffHttp("*1\r\n$4\r\nPING\r\n"), HttpSniff::kNotHttp);
  EXPECT_EQ(SniffHttp("*"), HttpSniff::kNotHttp);
  EXPECT_EQ(SniffHttp("GET key\r\n"), HttpSniff::kNotHttp);
  EXPECT_EQ(SniffHttp("GET /metrics\r\n"), HttpSniff::kNotHttp);  // an inline GET of "/metrics"
  EXPECT_EQ(SniffHttp("SET a b\r\n"), HttpSniff::kNotHttp);
  EXPECT_EQ(SniffHttp("PING\r\n"), HttpSniff::kNotHttp);
  EXPECT_EQ(SniffHttp("GET a HTTP/2.0\r\n"), HttpSniff::kNotHttp);
  EXPECT_EQ(SniffHttp("GET a HTTP/1.1 x\r\n"), HttpSniff::kNotHttp);
  EXPECT_EQ(SniffHttp("GET  /metrics HTTP/1.1\r\n"), HttpSniff::kNotHttp);  // two spaces
  EXPECT_EQ(SniffHttp("\r\n"), HttpSniff::kNotHttp);
  EXPECT_EQ(SniffHttp(" GET / HTTP/1.1\r\n"), HttpSniff::kNotHttp);
}

TEST(SniffHttpTest, WaitsForTheWholeFirstLine) {
  const std::string line = "GET /metrics HTTP/1.1\r\n";
  for (size_t n = 0; n + 1 < line.size(); ++n) {
    EXPECT_EQ(SniffHttp(line.substr(0, n)), HttpSniff::kNeedMore) << n;
  }
  EXPECT_EQ(SniffHttp("GET key"), HttpSniff::kNeedMore);  // maybe "GET key HTTP/1.1"
}

TEST(SniffHttpTest, AnEndlessFirstLineIsNotHttp) {
  std::string line = "GET /" + std::string(kMaxHttpHead, 'a');
  EXPECT_EQ(SniffHttp(line), HttpSniff::kNotHttp);
}

TEST(HttpRequestParserTest, ParsesAHead) {
  HttpRequestParser p;
  const std::string head =
      "GET /metrics?x=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization:  Basic abc \r\n"
      "Accept: text/plain\r\n\r\nGET";
  ASSERT_EQ(p.Parse(head), Status::kRequest);
  EXPECT_EQ(p.consumed(), head.size() - 3);
  const HttpRequest& r = p.request();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/metrics?x=1");
  EXPECT_EQ(r.path, "/metrics");
  EXPECT_EQ(r.minor_version, 1);
  EXPECT_TRUE(r.keep_alive);
  EXPECT_FALSE(r.has_body);
  EXPECT_EQ(r.authorization, "Basic abc");
}

TEST(HttpRequestParserTest, ConnectionHeaderDecidesKeepAlive) {
  struct Case {
    std::string head;
    bool keep_alive;
  };
  for (const Case& c : {
           Case{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true},
           Case{"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", false},
           Case{"GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, CLOSE\r\n\r\n", false},
           Case{"GET / HTTP/1.0\r\n\r\n", false},
           Case{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true},
       }) {
    HttpRequestParser p;
    ASSERT_EQ(p.Parse(c.head), Status::kRequest) << c.head;
    EXPECT_EQ(p.request().keep_alive, c.keep_alive) << c.head;
  }
}

TEST(HttpRequestParserTest, BareLineFeedsAndLeadingEmptyLines) {
  HttpRequestParser p;
  const std::string head = "\r\n\nGET /a HTTP/1.0\nX: y\n\n";
  ASSERT_EQ(p.Parse(head), Status::kRequest);
  EXPECT_EQ(p.consumed(), head.size());
  EXPECT_EQ(p.request().path, "/a");
}

TEST(HttpRequestParserTest, AbsoluteFormTarget) {
  HttpRequestParser p;
  ASSERT_EQ(p.Parse("GET http://h:9/metrics?q HTTP/1.1\r\nHost: h\r\n\r\n"), Status::kRequest);
  EXPECT_EQ(p.request().path, "/metrics");
  ASSERT_EQ(p.Parse("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n"), Status::kRequest);
  EXPECT_EQ(p.request().path, "/");
}

TEST(HttpRequestParserTest, BodiesAreAnnounced) {
  HttpRequestParser p;
  ASSERT_EQ(p.Parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"), Status::kRequest);
  EXPECT_FALSE(p.request().has_body);
  ASSERT_EQ(p.Parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
            Status::kRequest);
  EXPECT_TRUE(p.request().has_body);
  EXPECT_EQ(p.request().content_length, UINT64_MAX);
  ASSERT_EQ(p.Parse("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Status::kRequest);
  EXPECT_TRUE(p.request().has_body);
}

TEST(HttpRequestParserTest, MalformedHeadsAreRefused) {
  struct Case {
    std::string head;
    int status;
  };
  for (const Case& c : {
           Case{"GET / HTTP/1.1\r\n\r\n", 400},                              // no Host
           Case{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},        // two Hosts
           Case{"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400},        // obs-fold
           Case{"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400},                  // space before ':'
           Case{"GET / HTTP/1.1\r\nHost a\r\n\r\n", 400},                    // no colon
           Case{"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400},                // bare CR
           Case{"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400},
           Case{"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                400},
           Case{"GET metrics HTTP/1.1\r\nHost: a\r\n\r\n", 400},             // no path
           Case{"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
           Case{"GET / HTTPS/1.1\r\nHost: a\r\n\r\n", 400},
       }) {
    HttpRequestParser p;
    ASSERT_EQ(p.Parse(c.head), Status::kError) << c.head;
    EXPECT_EQ(p.error_status(), c.status) << c.head;
  }
}

TEST(HttpRequestParserTest, ABadRequestLineIsRefusedBeforeTheHeadEnds) {
  HttpRequestParser p;
  ASSERT_EQ(p.Parse("*1\r\n$4\r\nPING\r\n"), Status::kError);  // RESP on an HTTP connection
  EXPECT_EQ(p.error_status(), 400);
  HttpRequestParser q;
  ASSERT_EQ(q.Parse("GET / HTTP/1.1\r\nHo"), Status::kNeedMore);
  ASSERT_EQ(q.Parse("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), Status::kRequest);
  HttpRequestParser r;  // the request line arrives in pieces
  ASSERT_EQ(r.Parse("GET / HT"), Status::kNeedMore);
  ASSERT_EQ(r.Parse("GET / HTTX/1.1\r\n"), Status::kError);
  EXPECT_EQ(r.error_status(), 400);
}

TEST(HttpRequestParserTest, ByteByByteIsTheSameRequest) {
  const std::string head = "GET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
  HttpRequestParser p;
  for (size_t n = 0; n < head.size(); ++n) {
    ASSERT_EQ(p.Parse(std::string_view(head).substr(0, n)), Status::kNeedMore) << n;
  }
  ASSERT_EQ(p.Parse(head), Status::kRequest);
  EXPECT_EQ(p.consumed(), head.size());
  EXPECT_FALSE(p.request().keep_alive);
}

TEST(HttpRequestParserTest, AnEndlessHeadIsCut) {
  HttpRequestParser p;
  std::string head = "GET / HTTP/1.1\r\nHost: a\r\nX-Long: ";
  head += std::string(kMaxHttpHead, 'x');
  ASSERT_EQ(p.Parse(head), Status::kError);
  EXPECT_EQ(p.error_status(), 431);
  // Endless empty lines count too.
  HttpRequestParser q;
  ASSERT_EQ(q.Parse(std::string(kMaxHttpHead + 2, '\n')), Status::kError);
  EXPECT_EQ(q.error_status(), 431);
}

TEST(HttpResponseTest, EncodesStatusHeadersAndBody) {
  HttpResponse r;
  r.status = 405;
  r.body = "no\n";
  r.headers.emplace_back("Allow", "GET, HEAD");
  std::string out;
  AppendHttpResponse(r, /*head_only=*/false, /*keep_alive=*/true, &out);
  EXPECT_TRUE(out.starts_with("HTTP/1.1 405 Method Not Allowed\r\nDate: ")) << out;
  EXPECT_NE(out.find("\r\nContent-Length: 3\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\nConnection: keep-alive\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("\r\n\r\nno\n")) << out;
  std::string head;
  AppendHttpResponse(r, /*head_only=*/true, /*keep_alive=*/false, &head);
  EXPECT_NE(head.find("\r\nContent-Length: 3\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nConnection: close\r\n"), std::string::npos) << head;
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << head;
}

}  // namespace
}  // namespace dashkv::io
