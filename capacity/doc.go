// Package plan is stacktune's capacity math for a web stack of N web servers
// with a worker pool each, one MySQL server and memcached/Redis: from the
// target request rate, the workers and the mean response time it works out
// the settings that must grow with them, and shows every figure with its
// formula, the numbers it used, the setting to apply and where the rule comes
// from. Compute does the math, Write renders text, Markdown or JSON (it only
// formats). `stacktune plan` is the CLI.
//
// The figures come from two public write-ups (README, "Where the advice
// comes from"): the PHP + MySQL TIME_WAIT write-up, a capacity tuning of
// PHP + MySQL on CentOS 7 (100 Apache web servers, one MySQL, 900 req/s per
// web server), and the smartphone game backend's write-up, a game that cut
// its web servers from 40-60 to 5-30.
//
// # Inputs
//
// Rate is the target rate over all web servers; the load balancer is assumed
// to spread it evenly, so a web server sees Rate / Servers. Headroom (default
// 1) multiplies every rate-derived figure; counts bounded by the workers
// (max_connections, memcached -c) are exact maxima and take none. The TIME_WAIT write-up's
// "900 req/s on each of 100 servers" is Rate 90000, Servers 100.
//
// # Formulas
//
// With λ = Rate × Headroom (the planned rate), W the mean response time,
// S servers, P workers per server, T = 60 s:
//
//	concurrency        L = λ × W                           Little's law; warns when L > S × P (workers are
//	                                                       the bottleneck: throughput tops out at S × P / W)
//	                                                       or L > 0.8 × S × P; suggests ceil(L / (0.8 × S))
//	                                                       workers per server then
//	servers-needed     ceil(λ / measured per-server rate)  the PHP + MySQL TIME_WAIT write-up (935 req/s measured), the smartphone game backend; only
//	                                                       when a per-server rate is given
//	max-connections    S × P + admin connections           the PHP + MySQL TIME_WAIT write-up: 100 × 255 = 25500
//	open-files-limit   other files + max_connections       the PHP + MySQL TIME_WAIT write-up: (5000 - 151) + 25500 = 30349;
//	                   other files = max(5000 - 151,       MySQLOpenFiles, which the audit's
//	                   10 + 2 × table_open_cache)          mysql-open-files-limit uses too
//	mysqld-limitnofile = open_files_limit                  the PHP + MySQL TIME_WAIT write-up; set in a systemd drop-in
//	                                                       (systemctl edit), not with ulimit
//	thread-cache-size  min(max_connections, 16384, max(ceil(L), 8 + max_connections / 100 capped at 100))
//	                                                       a cached thread per connection open at once;
//	                                                       the smartphone game backend set it to max_connections; 16384 is
//	                                                       MySQL's maximum, 8 + max_connections / 100
//	                                                       (at most 100) its default. Persistent
//	                                                       connections: the default
//	time-wait-web      λ / S × T                           the PHP + MySQL TIME_WAIT write-up: 900 × 60 = 54000, one TIME_WAIT per
//	                                                       request on the web server (it closes first);
//	                                                       0 with persistent connections or when MySQL
//	                                                       closes first
//	  tcp_max_tw_buckets  max(current, next power of two ≥ count)
//	                                                       the PHP + MySQL TIME_WAIT write-up: 65536 for 54000; never lower it
//	                                                       (ip-sysctl.txt)
//	sockets-web        time-wait-web + live sockets        the PHP + MySQL TIME_WAIT write-up: 54000 + 1024 = 55024; live sockets
//	                                                       default to 4 per worker
//	port-range         ports = sockets-web, made even;     the PHP + MySQL TIME_WAIT write-up: 10511 65535 (see below); ours
//	                   range = (65536 - ports) .. 65535    10512 65535
//	time-wait-db       λ × T when MySQL closes first,      RFC 793: the side that closes first enters
//	                   else 0                              TIME_WAIT
//	cpu-workers        ceil(cores × W / C), at least cores  the smartphone game backend (50 → 20 PHP-FPM children on 8 cores):
//	                   (C = CPU time per request)          each busy worker keeps C / W of a core busy;
//	                                                       decrease when workers > 1.25 × that; the
//	                                                       cores cap a server at cores / C req/s. Only
//	                                                       with cores and C; the audit's app-workers
//	                                                       sizes with the same CPUWorkers
//	cache-connections  S × P × cache clients per worker    the smartphone game backend (web servers × PHP-FPM processes);
//	                   + 32                                memcached refuses a client when curr_conns +
//	                                                       reserved_fds ≥ -c - 1, reserved_fds being 5
//	                                                       per thread (memcached.c, thread.c)
//
// # Where the PHP + MySQL TIME_WAIT write-up needed interpretation
//
// Who holds TIME_WAIT: the side that closes first. The TIME_WAIT write-up's summary says
// non-persistent PHP connections close actively and leave TIME_WAIT sockets
// behind, and it measured them on the web server (43836 sockets to port 3306
// right after 100000 requests at 1555 req/s), so the default model puts one
// TIME_WAIT per request on the web server and none on MySQL. Closer "db"
// models the opposite.
//
// TIME_WAIT is 60 s: TCP_TIMEWAIT_LEN, compiled into Linux. tcp_fin_timeout
// tunes FIN-WAIT-2 and does not shorten TIME_WAIT (the PHP + MySQL TIME_WAIT write-up; the smartphone game backend thought
// otherwise).
//
// The 1024 live sockets: the PHP + MySQL TIME_WAIT write-up takes 4 × the httpd count, 256 × 4 —
// each worker has a client connection and a MySQL connection, doubled for
// client connections opened anew when keep-alive does not hold. So the
// default is LiveSocketsPerWorker (4) × workers. The write-up counted 256 httpd
// (prefork's default MaxClients) here but 255 for max_connections, so its
// 55024 is reproduced with LiveSockets 1024 given explicitly; derived from
// 255 workers it would be 54000 + 1020 = 55020.
//
// Port arithmetic: ip_local_port_range includes both ends, so a range holds
// high - low + 1 ports. The write-up's "32768 - 60999 = 28231" is the plain
// difference; the count is 28232 (the kernel's own comment in
// __inet_hash_connect reads "[32768, 60999] -> [32768, 61000["). Likewise
// 65535 - 55024 = 10511 gives 10511..65535, 55025 ports, one more than
// needed. The kernel then rounds the count down to an even number
// (remaining &= ~1U: connect() scans one parity, then the other), so the
// write-up's odd-sized range yields 55024 usable ports after all. plan makes the
// count even and starts at 65536 - 55024 = 10512: 55024 ports, all usable,
// ends of different parity as ip-sysctl.txt advises.
//
// tcp_max_tw_buckets: 4096 was the default on the write-up's host; the kernel's
// default is half the established-connection hash and grows with RAM. Past
// it TIME_WAIT sockets are destroyed at once with a warning; the manual says
// never to lower it.
//
// tcp_tw_reuse masks port exhaustion rather than removing it: with the
// range cut to 1000 ports the write-up's ab run failed 71193 of 100000
// requests. tcp_tw_recycle was removed in Linux 4.12; plan never suggests it.
//
// A TIME_WAIT socket holds no file descriptor, so the write-up's httpd
// LimitNOFILE=55024 is more than needed; plan sets no web-server file limit.
//
// Persistent connections (Options.Persistent) leave no TIME_WAIT per request:
// sockets per web server are the live ones only, and thread_cache_size falls
// back to MySQL's default. The PHP + MySQL TIME_WAIT write-up found PHP's persistent connections
// unusable in practice with transactions, which is why the default is false.
//
// The smartphone game backend's fleet (40 → 5-15 web servers) cannot be reproduced without its
// per-server rates; servers-needed is tested with made-up ones.
package capacity
