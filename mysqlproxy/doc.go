// Package mysqlproxy is a MySQL/MariaDB protocol pass-through that
// reports every statement an application runs, with its connection and
// its exact start and end, without any change to the application but its
// DSN: the app connects to the proxy, the proxy to the server, and bytes
// go through unchanged. stacktune's trace run (package reqtrace) points an
// app at it to tell which HTTP request ran which statements.
//
// # What it reads
//
// The proxy frames packets in both directions (a 3-byte length and a
// sequence id; a payload of 16 MiB - 1 bytes continues in the next packet,
// so packets of any size go through, copied as they are read) and keeps,
// per connection, the protocol state that gives each packet its meaning
// (session): the handshake (the server's greeting gives the server's
// connection id), the authentication exchange whatever the plugin
// (caching_sha2_password's extra round trips, auth switch requests,
// COM_CHANGE_USER), then commands and their responses. It reports:
//
//   - COM_QUERY with its text: OK, ERR, or result sets (column count,
//     definitions, the EOF or, with CLIENT_DEPRECATE_EOF, the OK that ends
//     them, rows); a multi-statement query's results are matched to its
//     statements (cut at the semicolons outside strings, identifiers and
//     comments) and reported one by one when they match, as one statement
//     when they do not (a CALL returning several results); LOAD DATA
//     LOCAL INFILE's data is passed through;
//   - COM_STMT_PREPARE (the statement id is mapped to its text) and
//     COM_STMT_EXECUTE (reported with that text; binary rows counted),
//     COM_STMT_CLOSE and COM_RESET_CONNECTION forget texts;
//   - any other command with a response, as Other.
//
// Each Statement has the proxy's and the server's connection ids, the
// time the command was read from the client and the time the last packet
// of its response was read from the server, rows sent, rows affected and
// the error code.
//
// # Connecting
//
// The proxy greets a client itself, with the server's last greeting (read
// once, from a connection it closes at once, when it has none yet) and a
// scramble of its own, and connects to the server only once the client's
// handshake response has come: a socket that never authenticates costs
// the server nothing. The response goes to the server with its auth data
// emptied and an authentication plugin no server has (deferredPlugin), so
// the server answers with an auth switch request carrying its own plugin
// and scramble, and the client authenticates with the server through it
// as it would directly. A client without CLIENT_PLUGIN_AUTH (none since
// MySQL 5.5) is refused. The client sees the proxy's connection number in
// its greeting, not the server's (CONNECTION_ID() still answers the
// server's).
//
// # What it refuses or strips
//
// The proxy must see plain packets, so it removes from the server's
// greeting the capabilities that would hide or reshape them: TLS
// (CLIENT_SSL), compression (zlib and zstd), query attributes, optional
// result-set metadata and MariaDB's extended capabilities (progress
// reports, bulk execution, cached metadata). A client that asks for one
// anyway (tls=true, compress=true) gets an ERR packet saying why, before
// anything reaches the server; a client that prefers TLS goes on without
// it. A pre-4.1 client is refused the same way.
//
// # Bounds
//
// Memory per connection is bounded: 16 KiB buffers each way, the
// statement text kept up to Options.MaxText bytes (the rest is forwarded,
// not kept; Statement.Cut says so), prepared statements' texts up to
// Options.MaxPrepared bytes, at most 64 commands awaiting a response.
// Options.MaxConns bounds the connections to the server (64 by default,
// well under a server's default max_connections of 151; MaxConnsFor sizes
// it from what the server has free) and Options.MaxHandshakes the clients
// still in their handshake: past either, a client gets error 1040 (Too
// many connections). A client must have authenticated within
// Options.HandshakeTimeout (10 s by default), and one idle between
// commands for Options.IdleTimeout (when set) is closed. Each is counted
// in Stats (OverCap, HandshakeTimeouts, IdleClosed). A response
// the state machine cannot follow (or a binlog stream) never breaks the
// connection: the proxy goes on forwarding its packets and stops
// recording it (Stats.Untracked). Everything skipped is counted in Stats.
//
// # Cost
//
// Every packet is read into user space and written again, so each round
// trip pays two more socket hops; bench/tracebench measures the latency it
// adds to the reference app's requests.
package mysqlproxy
