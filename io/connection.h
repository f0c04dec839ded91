// Connection: one client socket for its whole life on one engine: read -> parse -> dispatch a
// batch to the Service -> write all replies with one socket write. StreamConnection<Stream> is
// the concrete class for one stream type: a plain TCP socket or a TlsStream.
// Thread: engine-local.
//
// Design
//  One input buffer kept contiguous: [in_start_, in_end_) is unconsumed input. After a batch the
//  consumed prefix is skipped (reset to 0 when everything was consumed); bytes are moved to the
//  front only when the free tail is too small, and the buffer grows only when compaction cannot
//  make enough room. Growth follows the bytes that really arrived: at most to twice the
//  unconsumed input (plus one initial size), however long a bulk string the client declared, so
//  a declared length commits memory only as its bytes come (the copies stay O(total) by the
//  doubling), and doubles after a read that filled it (so a pipelining client soon reads a
//  batch at once). It starts at 4 KiB, allocated at the first read, so an idle connection costs
//  little; above 256 KiB it shrinks back once drained. It is never zero-filled.
//  Limits (proto-max-bulk-len, client-query-buffer-limit, whether a password is required) are
//  read from the shared ClientLimits before each parse, so CONFIG SET applies to every open
//  connection at once. A client that has not authenticated while a password is required gets
//  Redis's stricter limits (multibulk of at most 10 elements, bulks of at most 16 KiB), has its
//  commands parsed one at a time (an AUTH takes effect for the next command of the pipeline),
//  and stops being read while more than 64 KiB of its output is unsent.
//  Every complete command in the buffer goes into one batch (argument views into the buffer)
//  and one Service::Dispatch call; all replies go out with one async write. A protocol error
//  sends the replies of the commands before it, then "-ERR <error>", then closes (as Redis).
//  QUIT ends the batch (later pipelined commands are not run) and closes after the replies.
//  Out-of-band output (pub/sub messages) enters through SendAsync at any time, also while the
//  connection waits in a read or in a hop: it joins the background writer's queue between
//  whole replies, so pushes that arrive in one engine loop iteration leave in one write.
//  Output waiting for the writer is checked against the connection's output limit
//  (client-output-buffer-limit); a client over it is disconnected.
//  HTTP: a fresh connection whose first line is an HTTP/1.x request line (io/http_request.h:
//  "GET /metrics HTTP/1.1", never an inline command such as "GET key") speaks HTTP for the rest
//  of its life: each request head is parsed within a fixed bound, GET/HEAD requests without a
//  body go to Service::ServeHttp, others are answered here (405, 413, or the parser's 400/431
//  with a close); responses leave in request order, keep-alive as the client asks. Until the
//  first line decides, RESP parsing waits (a RESP array decides at its first byte).
//  Connection holds the state and everything that does not touch the stream; the read loop,
//  the writes and the peer watch live in StreamConnection<Stream>, compiled once per stream
//  type, so a plain connection runs exactly the code it would without TLS (no branch, no
//  virtual call per read or write; only the rare paths — a push flush, a close, a peer watch —
//  enter the stream code through a virtual call).
#pragma once

#include <utility>

#include <absl/functional/any_invocable.h>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/client_limits.h"
#include "io/http_request.h"
#include "io/output_limit.h"
#include "io/reply_builder.h"
#include "io/resp_parser.h"
#include "io/service.h"

namespace dashkv::io {

class Engine;

struct ConnectionOptions {
  // Must outlive the connection; nullptr: the defaults of ClientLimits.
  const ClientLimits* limits = nullptr;
};

class Connection {
 public:
  virtual ~Connection();

  // Calls Service::OnConnect: from now on the server knows the client (CLIENT LIST/KILL). The
  // Listener calls it in the task that receives the socket, before the first read. Idempotent.
  void Register();
  // Serves the client until it disconnects, sends QUIT, or violates the protocol. Calls
  // Register() first (if not done) and Service::OnDisconnect last. Call once, on the engine.
  virtual boost::asio::awaitable<void> Run() = 0;

  uint64_t id() const { return id_; }
  Engine& engine() { return engine_; }
  const std::string& remote_address() const { return remote_; }  // "ip:port"
  const std::string& local_address() const { return local_; }
  int fd() const { return fd_; }  // the TCP socket's descriptor; -1 once closed
  RespVersion resp_version() const { return reply_.version(); }
  void set_resp_version(RespVersion v) { reply_.set_version(v); }
  // Whether the client has authenticated (AUTH/HELLO). While it has not and a password is
  // required, Redis's unauthenticated input limits apply (see Design). The server keeps it in
  // step with its own state.
  void set_authenticated(bool authenticated) { authenticated_ = authenticated; }
  // Closes the connection once the replies of the current batch are written.
  void RequestClose() { close_requested_ = true; }
  bool close_requested() const { return close_requested_; }
  // Closes the socket now (CLIENT KILL on this engine); Run() returns soon after.
  void Shutdown();
  // Milliseconds since the epoch (wall clock) of creation and of the last command.
  int64_t created_ms() const { return created_ms_; }
  int64_t last_command_ms() const { return last_command_ms_; }
  // Input received and not parsed into commands yet (Redis's qbuf of another client): while a
  // batch runs (the client is parked in it), the input after the batch; between batches, the
  // part of a partly received command that is not a complete argument yet.
  size_t query_buffer_size() const;
  // All input not consumed yet, the running batch's included (Redis's qbuf of the client that
  // asks: its buffer is trimmed after the batch).
  size_t unconsumed_input() const { return in_end_ - in_start_ + parked_in_.size(); }
  size_t query_buffer_free() const;
  // Bytes allocated for the input buffer (0 while none is allocated).
  size_t query_buffer_capacity() const { return in_cap_; }
  // Between batches: the length of the complete arguments of a partly received command
  // (Redis's argv-mem for a client whose command has not fully arrived); 0 while a batch runs.
  size_t partial_arg_bytes() const { return batch_.empty() ? parser_.partial_arg_bytes() : 0; }
  size_t output_buffer_size() const { return reply_.size() + pending_.size() + queued_.size(); }
  // Output figures for CLIENT LIST: replies of the running batch not handed to the socket yet
  // (obl), output the socket has not taken (omem: what client-output-buffer-limit checks) and
  // the number of buffers holding it (oll, 0 to 2), the reply buffer's allocation (rbs).
  size_t reply_buffer_used() const { return reply_.size(); }
  size_t unsent_output() const { return pending_.size() + queued_.size(); }
  size_t unsent_buffers() const { return (pending_.empty() ? 0 : 1) + (queued_.empty() ? 0 : 1); }
  size_t reply_buffer_capacity() const { return reply_.capacity(); }
  // Bytes this connection has allocated: the object, its input and output buffers and its
  // per-batch scratch vectors.
  size_t memory_bytes() const;
  // Whether the connection reads the socket (CLIENT LIST events=r; it stops while a slow
  // reader's output drains) and has output waiting for the socket to take it (events=w).
  bool reading() const { return !waiting_for_writer_ && !closed_; }
  bool writing() const { return writing_; }
  // Number of commands in the batch being dispatched (for INFO/CLIENT LIST).
  size_t batch_size() const { return batch_.size(); }
  // Watches the socket while a command is parked (a blocked BLPOP): bytes the client sends
  // meanwhile are kept and parsed after the current batch; on_close runs once, on this engine,
  // if the peer closes or the socket fails or is shut down before StopWatchingPeer().
  void WatchPeer(absl::AnyInvocable<void()> on_close);
  void StopWatchingPeer();
  // The server's per-connection state (nullptr before Run() has called OnConnect).
  ConnectionState* state() { return state_.get(); }

  // Queues `bytes` (one or more whole RESP frames, e.g. pub/sub messages) for the client, to
  // be written after the replies already queued and before those of later batches. Works while
  // the connection is idle in a read or suspended in a command; dropped once the connection is
  // closing. May disconnect the client when its output limit is exceeded (see
  // set_output_limit). REQUIRES: called on the connection's engine. Must not block.
  void SendAsync(std::string_view bytes);
  // Selects the output buffer limit class that applies from now on (nullptr: none). `limit`
  // must outlive the connection. REQUIRES: called on the connection's engine.
  void set_output_limit(const OutputLimitClass* limit) { output_limit_ = limit; }

 protected:
  // Reads the addresses of `socket` and sets its options (no delay, keepalive, non-blocking).
  // REQUIRES: `socket` is open and belongs to engine.context(); runs on that engine.
  Connection(boost::asio::ip::tcp::socket& socket, Engine& engine, Service& service,
             ConnectionOptions options);

  enum class BatchEnd : uint8_t {
    kNeedMore,  // every complete command is in the batch; read more
    kCut,       // the batch ended early (QUIT, decoded inline args): parse again after it
    kError,     // protocol error after the batch's commands
  };
  // Parses complete commands from in_ into batch_; *end_pos is where parsing stopped.
  BatchEnd ParseBatch(size_t* end_pos);
  // Ensures free bytes after the unconsumed input for the next read: kMinRead, or what the
  // parser still needs but at most as much again as has arrived; compacts or grows in_ only
  // when needed.
  void MakeRoom();
  // Accounts for `n` bytes a read placed at in_end_: the network counter, the filled flag.
  void Received(size_t n);
  // Replaces in_ by a buffer of `capacity` bytes (uninitialized) holding the unconsumed input
  // at its front. REQUIRES: capacity >= unconsumed input.
  void Reallocate(size_t capacity);
  // Whether Redis's unauthenticated limits apply now.
  bool Unauthenticated() const;
  // Forgets consumed input once all of it is consumed; releases an oversized idle buffer.
  void TrimInput();
  // Closes the stream once (CloseStream); Run() sees an error and returns.
  void CloseSocket();
  virtual void CloseStream() = 0;
  // Writes the pushes collected in queued_ (posted by SendAsync): directly when the socket
  // takes them, else through the background writer.
  virtual void FlushPushes() = 0;
  // Disconnects the client when the output waiting for the writer exceeds its output limit.
  void CheckOutputLimit();
  // Waits until the background writer has sent everything (or failed).
  boost::asio::awaitable<void> WaitForWriter();

  Engine& engine_;
  Service& service_;
  const ClientLimits& limits_;
  RespParser parser_;
  ReplyBuilder reply_;
  std::unique_ptr<ConnectionState> state_;
  std::string remote_, local_;
  uint64_t id_;
  int fd_ = -1;
  int64_t created_ms_ = 0;
  int64_t last_command_ms_ = 0;
  bool close_requested_ = false;
  bool closed_ = false;
  bool registered_ = false;     // Register() has run
  bool authenticated_ = false;  // see set_authenticated
  std::unique_ptr<char[]> in_;  // input buffer: [in_start_, in_end_) is unconsumed input
  size_t in_cap_ = 0;            // bytes allocated at in_
  size_t in_start_ = 0;  // first unconsumed byte of in_
  size_t in_end_ = 0;    // end of valid data in in_
  size_t in_needed_ = 0;  // after kNeedMore: bytes the unconsumed input must reach
  size_t batch_end_ = 0;  // where the input of the batch being dispatched ends
  bool input_filled_ = false;  // the last read filled in_ to its end
  // Reused per batch (no allocation in the steady state): the args of all commands of the
  // batch, each command's [begin, end) in args_, and the spans handed to Dispatch.
  std::vector<std::string_view> args_;
  std::vector<std::pair<uint32_t, uint32_t>> cmd_ranges_;
  std::vector<CmdArgs> batch_;
  // Output the background writer owns: pending_ is being written, queued_ collects replies of
  // later batches meanwhile. writer_done_ is cancelled when the writer (or a posted
  // FlushPushes) finishes while WaitForWriter waits.
  bool writing_ = false;
  bool write_failed_ = false;
  std::string pending_;
  std::string queued_;
  std::unique_ptr<boost::asio::steady_timer> writer_done_;
  bool finishing_ = false;  // Run() left its loop: SendAsync drops output
  // SendAsync has posted FlushPushes (queued_ holds pushes; later output queues behind them).
  bool push_flush_posted_ = false;
  bool waiting_for_writer_ = false;  // WaitForWriter is suspended on writer_done_
  const OutputLimitClass* output_limit_ = nullptr;
  OutputLimitTracker limit_tracker_;
  // Peer watch (WatchPeer): shared with the pending socket wait, which may outlive a watch and
  // even the connection (conn is cleared then).
  struct PeerWatch {
    Connection* conn = nullptr;
    bool active = false;
    bool armed = false;  // a socket wait is pending
    absl::AnyInvocable<void()> on_close;
  };
  // Waits for the socket to become readable and drains it into parked_in_ (see WatchPeer).
  virtual void ArmPeerWatch() = 0;
  // Runs the watch's on_close once (the peer is gone).
  static void PeerClosed(PeerWatch& watch);
  // Appends bytes read while a command was parked to the input; returns whether there were any.
  bool TakeParkedInput();
  std::shared_ptr<PeerWatch> watch_;
  std::string parked_in_;  // input read by the peer watch, not parsed yet
};

// The connection for one stream type: boost::asio::ip::tcp::socket or TlsStream (instantiated
// for both in connection.cc). The stream is ready for data (a TLS handshake has completed).
template <typename Stream>
class StreamConnection final : public Connection {
 public:
  StreamConnection(Stream stream, Engine& engine, Service& service, ConnectionOptions options);
  ~StreamConnection() override;

  boost::asio::awaitable<void> Run() override;

 private:
  void CloseStream() override;
  void FlushPushes() override;
  void ArmPeerWatch() override;
  // Sends reply_: directly when the socket takes it all, else hands the rest to the background
  // writer so that reading (and serving later commands) goes on while the client is slow to
  // read — a client may send a large pipeline before it reads any reply, as Redis allows.
  void Flush();
  // Starts the background writer on pending_. REQUIRES: !writing_.
  void StartWriter();
  // The background writer: sends pending_, then whatever was queued meanwhile.
  boost::asio::awaitable<void> WriteLoop();
  // Reads until the first line says whether the client speaks HTTP (kHttp) or RESP (kNotHttp),
  // keeping what it read as unconsumed input; kNeedMore: the client left first.
  boost::asio::awaitable<HttpSniff> ReadFirstLine();
  // Serves HTTP requests (see Design) from the unconsumed input on, until the client or a
  // response closes the connection.
  boost::asio::awaitable<void> ServeHttp();

  Stream stream_;
};

}  // namespace dashkv::io
