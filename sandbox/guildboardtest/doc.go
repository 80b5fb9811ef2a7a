// Package guildboardtest starts, for a test, the whole stack of the third
// test app, testdata/guildboard: a PHP 8.2 game-backend board (players,
// guilds, memberships, posts, items; mysqli, no framework) that stacktune
// has never seen, in another language than the reference app and the
// bookshop (both Go). Its faults, at the top of testdata/guildboard/
// index.php: an N+1 of 1000 author queries on the board page with a code
// fix behind a config switch, a missing index on the inventory page (one
// full scan per request, not an N+1), one lookup statement run 150, 20 and
// 1 times per request on three pages, a page that burns CPU in
// rank_players() and a page that waits on an aggregate. The app measures
// every request itself (statement counts, DB time, getrusage CPU, wall
// time) in response headers and in a JSON-lines log, the truth that
// stacktune's figures are compared with. Only tests import this package,
// so the binary links neither it nor package testing.
//
// # The stack
//
// Start builds it from scratch on throwaway servers of sandbox,
// each stopped at the end of the test:
//
//   - MariaDB with its distribution defaults (performance_schema OFF,
//     sandbox.MariaDBOptions{ConfigFiles, ServerDefaults}: mariadbd runs
//     with --defaults-file=my.cnf, which !includedir's conf.d, where
//     MySQLConf is the drop-in stacktune writes); database guildboard, the
//     app's user guildboard@127.0.0.1 over TCP;
//   - PHP-FPM with one pool (sandbox.PHPFPM, mysqlnd and mysqli loaded);
//   - nginx (sandbox.Nginx, full configuration of its own) passing every
//     request to the pool's socket with fastcgi_pass, to the app's
//     index.php, and logging each with $request_time in log_format timed.
//
// The app is copied to a temporary directory (AppDir) with its
// settings.json (the DB and the request log) written there, and POST
// /initialize loads its data (about 410,000 rows: 10 to 20 s on this busy
// two-core machine, nearly all of it InnoDB's inserts); later calls only
// delete the posts a run added. TopRanked, the player GET /ranking puts
// first, is computed in Go from the data (rank_players() again), for the
// scenario's check. The request log is emptied once Start returns.
//
// # What a test gets
//
// Stack holds the servers, the base URL, the DSNs (root over the socket,
// the app's user over TCP), the nginx configuration and access log, the
// PHP-FPM configuration and pool file (PHPFPMPIDs: the master and its
// workers), the request log, a scenario file (Scenario: every page by
// weight with content checks, a login per virtual user, POST /initialize
// before each run) and Commands: the command lines stacktune runs (as
// --mysql-restart, --mysql-check, --nginx-test, --nginx-reload,
// --php-fpm-test, --php-fpm-reload, --app-restart take them: parsed as
// apply.ParseCommandLine does, run without a shell) and the app's code
// switch (FixOn, FixOff: fix.sh on|off, flipping the board's N+1 fix in
// config.json, which the app reads per request). TuneFlags is the stack's
// wiring as flags of stacktune tune (the test checks that tune takes them).
//
// A sandbox server belongs to the test process, so the restarts and
// reloads go through a control socket the harness serves for the test
// (curl --unix-socket ... /mysql/restart, /nginx/reload, /php-fpm/reload;
// curl is in scripts/setup.sh's list): each answers once the server is
// back (sandbox's Restart and Reload wait for it), and fails with the
// server's error.
//
// # The truth
//
// ReadRequests reads the app's request log (one JSON object per line,
// every field checked, bounded), FromHeaders one response's headers, and
// Summarize groups requests by route ("GET /guilds/{id}/board"): calls per
// request of each statement (by the app's statement id, with its SQL text
// and fingerprint.Fingerprint of it), mean CPU, DB and wall time. The
// statement ids and routes tests need are constants here (StmtBoardAuthor,
// RouteMembers, ...), with the SQL text of the main statements (SQLPlayerName, ...);
// the end-to-end test checks them against what the app logs.
package guildboardtest
