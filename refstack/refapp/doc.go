// Package refapp is the reference stack of `stacktune demo`: a small social
// network modelled on the ISUCON5 qualifier app, written the way a first
// version is written, so that stacktune's digests, index advice, audit and
// bench have something real to find and to prove fixed.
//
// # Design
//
// Generate drops and recreates the tables (Schema) in the current database
// of a *sql.DB and loads them deterministically from a fixed PRNG seed:
// scale 1 is 1000 users with profiles, about 20k relations (each pair
// stored once, in either order), 10k diary entries (every fourth private,
// see IsPrivate), 30k comments and 30k footprints, all dated in the year
// before Epoch. User n is AccountName(n) (user00001), logs in with
// Email(n) and Password(n); passwords are stored as
// hex(sha512(password+salt)). The last generated id of each table is kept
// in table generated, so GET /initialize can delete what a run added.
//
// Start serves the app with net/http and html/template on Config.Listen
// (host:port, or "unix:/path" for a unix socket), talks to MySQL/MariaDB
// through Config.DSN (TCP or unix socket, go-sql-driver/mysql syntax) and,
// when Config.Memcached is set, caches users in memcached (host:port or a
// socket path) through a minimal text-protocol client, naively by default
// and batched with Config.CacheBatch (see below); Server.CacheStats counts
// the client's round trips, gets, keys requested, hits and sets, so a test
// or the demo can show the batching. A Config can live in a JSON file
// that a tool edits: LoadConfig reads it (unknown keys are an error),
// Config.Write writes it ("listen", "dsn", "memcached", "cache_batch").
// With Config.SQLTags, every statement ends with the
// sqlcommenter tags of its request (route, action, framework, driver and
// W3C traceparent), as an app instrumented with OpenTelemetry's
// sqlcommenter sends them (package reqtrace groups them by request).
// GenerateSmall loads the tests' small data set for other packages'
// tests. Sessions live in
// the server's memory, keyed by a random id in the refapp_session cookie.
// Every page but /login and /initialize needs a session and redirects to
// /login (302) without one.
//
//	GET  /login                        login form (#login-form)
//	POST /login                        form email, password: 302 to /, or 401 (#login-error)
//	GET  /logout                       302 to /login
//	GET  /                             home: #welcome, #profile (#prof-account-name,
//	                                   #friends-count), #entries li.entry,
//	                                   #comments-for-me li.comment-for-me,
//	                                   #friend-entries li.friend-entry,
//	                                   #friend-comments li.friend-comment,
//	                                   #footprints li.footprint
//	GET  /profile/{account_name}       #profile, #profile-account-name, #profile-friend,
//	                                   #profile-entries li.entry (leaves a footprint)
//	GET  /diary/entries/{account_name} #diary-owner, #diary-entries article.entry
//	                                   (.comment-count; leaves a footprint)
//	GET  /diary/entry/{id}             #entry-title, #entry-body, #entry-comments li.comment,
//	                                   #comment-form; 403 for a stranger's private entry, 404
//	POST /diary/comment/{id}           form comment: 302 to /diary/entry/{id}
//	GET  /footprints                   #footprints-title, #footprints li.footprint
//	GET  /friends                      #friends li.friend
//	GET  /initialize                   deletes rows added since Generate: 200 "ok"
//
// scenario.yaml is the bench scenario (package scenario): each virtual user
// logs in as one of user00001..user00100 (users and passwords lists, bound
// row by row), then browses by weight, and every step checks its page's
// markers, so a "fix" that breaks a page fails the run. Its entry_ids are
// public generated entries, valid at every scale.
//
// # Deliberate faults
//
// Each is what a first version does; the fix is what stacktune should find
// and prove (with the public write-up that reports it; README, "Where the
// advice comes from").
//
//   - Friends by `SELECT ... FROM relations WHERE one = ? OR another = ?
//     ORDER BY created_at DESC` with no index on one or another: a full
//     scan and a filesort on every home and /friends page. Fix: two
//     indexes, (one, created_at) and (another, created_at), giving
//     index_merge sort_union (the ISUCON5 qualifier write-up).
//   - isFriend as one query per row (N+1): the home page scans the latest
//     1000 entries and 1000 comments and asks the database, per row,
//     whether its author is a friend, each query another full scan of
//     relations. Fix: load the friend set once (and the indexes above);
//     Config.FriendSet has this fix, and Fixes lists it with the
//     statement it removes, for a tool that finds that statement's N+1.
//   - User lookups per entry, comment, footprint and friend (N+1), and an
//     entry lookup per comment on the home page. Fix: one query with IN,
//     or a join (the ISUCON5 runner-up; the smartphone game backend).
//   - Comment counts per entry on /diary/entries (N+1), over comments
//     with no index on entry_id; the entry page's comments scan the table
//     too. Fix: an index on comments (entry_id, created_at) and one
//     grouped count.
//   - The latest comments by `ORDER BY created_at DESC LIMIT 1000` with no
//     index on comments.created_at: a filesort of the whole table. Fix: an
//     index on created_at.
//   - Footprints with no index at all: every page view inserts one, and
//     the footprint list groups the whole table by owner and day. Fix: an
//     index on footprints (user_id, created_at).
//   - The memcached cache fetches one user at a time (one round trip per
//     row) although a multi-get exists, writes the value back with set on
//     every read, hit or miss, and never expires it: the home page makes
//     about a hundred round trips. Fix: one multi-get per page, set (or
//     add) only on a miss, a TTL of an hour at most (the smartphone game backend), which is what
//     Config.CacheBatch switches on (TTL CacheTTL, 3600 s): two round
//     trips on a warm cache (the session's user, then the page's users),
//     the same HTML. The database lookups of the misses stay one per user.
//   - Everything over TCP on loopback: the app reaches MariaDB and
//     memcached through host:port, and nginx would reach the app the same
//     way. Fix: unix sockets for all three (Config.Listen "unix:...",
//     a unix(...) DSN, a socket path for Memcached) (the ISUCON5 qualifier write-up;
//     the smartphone game backend).
//   - The database pool keeps database/sql's defaults (2 idle
//     connections, unlimited open, no interpolateParams): connections
//     churn under load and every query is a prepare, execute and close.
//     Fix: SetMaxIdleConns to the open limit, interpolateParams=true.
//   - Sessions in process memory: one app process only. (Left as is: the
//     demo runs one process.)
package refapp
