// Package sandbox starts and stops real, throwaway database and web servers
// for tests and demos: MariaDB (mariadbd), nginx, memcached, Redis
// (redis-server) and PHP-FPM (php-fpm8.2, one pool on a unix socket);
// and, for the fleet and load-engine tests, network
// namespaces (StartNetns: a host of its own on this machine, joined by a
// veth pair, with its own sockets and per-namespace sysctls; needs root),
// OpenSSH servers (StartSSHD, alone on a loopback port or in a namespace,
// with a fresh host key and only the given authorized keys), a fleet lab
// of such hosts with an unreachable one and one whose key does not match
// known_hosts (StartFleetLab), and headless Locust runs, a master with
// workers on loopback (RunLocust).
//
// The servers are the binaries shipped by the Debian packages
// "mariadb-server", "nginx", "memcached", "redis-server" and "php-fpm". They are looked
// up in PATH and then in /usr/sbin (plus /usr/bin and /sbin). When one is
// missing, Start* returns an error that wraps [ErrMissingBinary] and names the
// Debian package to install.
//
// # Isolation
//
// A sandboxed server never touches a system-wide instance and never reads
// system configuration: each one gets its own short temporary directory
// (for example /tmp/st-123456789) that holds its configuration, data, logs,
// pid file and unix socket, and it listens only on a free loopback port
// (127.0.0.1) picked at start. MariaDB runs with --no-defaults and its
// options on the command line, or with MariaDBOptions.ConfigFiles with
// --defaults-file=Dir()/my.cnf (which includes Dir()/conf.d), so /etc/mysql
// is never read; nginx gets its own configuration file, prefix and startup
// error log. A MariaDB or Redis already running on the standard
// ports is neither used nor disturbed.
//
// # Lifecycle
//
// Start* (StartMariaDB, StartNginx, StartMemcached, StartRedis) creates the
// directory, starts the server in its own process group, and waits until it
// really answers its protocol (a go-sql-driver/mysql Ping for MariaDB, an
// HTTP GET for nginx, "version" for memcached, PING for Redis). Waiting is
// bounded by the context and by the StartTimeout option (60s for MariaDB,
// 10s for the others). If the port picked turns out to be taken by the time
// the server binds it, start is retried with another port. On any failure
// everything started so far is stopped and removed, and the error includes
// the last lines of the server's own error log.
//
// Stop sends SIGTERM to the server's whole process group, waits a grace
// period, sends SIGKILL if the server is still running, reaps it and removes
// the temporary directory (a directory supplied by the caller through the Dir
// option is left in place). If the server died on its own, Stop kills the
// helper processes it left behind in its group. Servers are also started with Pdeathsig=SIGKILL
// so that they die with the process that started them, for example when a
// test binary is killed; that covers the server's main process, while
// helper processes such as nginx workers rely on Stop.
//
// # Changing a running server's configuration
//
// The demo and the tests change a server's configuration the way an
// operator does, and check it first:
//
//   - MariaDB with ConfigFiles: add a *.cnf file to ConfDir(), validate
//     it with CheckConfig (mariadbd --help --verbose on the same files;
//     MariaDB 10.11 has no --validate-config), then Restart, which stops
//     the server gracefully and starts it again on the same data dir,
//     socket and port. DB() reconnects by itself. ServerDefaults gives
//     mariadbd's compiled-in defaults, as a packaged server has, instead
//     of the sandbox's small ones.
//   - nginx: edit ConfigPath() (or check a candidate file with
//     TestConfig), validate with Test (nginx -t), then Reload (SIGHUP).
//   - PHP-FPM: edit PoolPath(), validate with Test (php-fpm -t), then
//     Reload (SIGUSR2: the master re-reads its files and starts new
//     workers; Reload waits until it logs it is ready again). Request
//     runs a script, /status or /ping over FastCGI on the pool's socket
//     (package internal/fastcgi), with no web server in front. It runs
//     with -n, so no php.ini under /etc/php is read: extensions an app
//     needs are named in PHPFPMOptions.Extensions (mysqlnd, mysqli).
//   - memcached has no configuration file: Restart it with other
//     MemcachedOptions, for example Socket to move it from TCP to a unix
//     socket in the same Dir().
//
// The test helpers NewMariaDB, NewNginx, NewMemcached and NewRedis start a
// server, register its Stop with t.Cleanup and call t.Fatal with the full
// error when the server cannot start. They never skip: a missing binary is a
// missing install step and must fail loudly.
//
// # MariaDB data directory template
//
// Initialising a MariaDB data directory (mariadb-install-db) is done once per
// mariadbd version and cached in os.TempDir() as
// stacktune-mariadb-template-<version>-<hash>; the directory is built
// elsewhere and renamed into place, so concurrent test processes can share
// it safely. Each server gets a fresh copy of the template. The root account
// is created with --auth-root-authentication-method=normal, so root has an
// empty password over both the unix socket and TCP.
//
// # Concurrency
//
// Start* functions may be called concurrently; each server has its own
// directory and port. A server value's accessors may be called from any
// goroutine, and Stop is idempotent and safe to call from any goroutine,
// any number of times: every call returns after the server is gone, with the
// same result.
package sandbox
