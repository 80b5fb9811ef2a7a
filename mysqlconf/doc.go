// Package mysqlconf finds the option files a running MySQL/MariaDB server
// read, and so where a my.cnf drop-in is read by it and how to check one
// with that server's own binary and defaults.
//
// A server started by systemd from the distribution's package reads
// /etc/mysql/my.cnf, which includes /etc/mysql/mariadb.conf.d; one
// started with --defaults-file=/srv/db/my.cnf reads that file alone and
// never looks in /etc/mysql. A drop-in written to the distribution's
// directory then does nothing, and a check of the distribution's files
// passes a drop-in the server would refuse. Locate asks the server itself.
//
// # Finding the process
//
// Locate asks the server (SELECT @@pid_file, @@socket, @@port) and finds
// its process on this host: the pid of its pid file when that process
// holds the server's listening socket (its unix socket in
// /proc/net/unix, or its TCP port in LISTEN in /proc/net/tcp and tcp6,
// matched by inode to /proc/PID/fd), else the process that holds one of
// them. A server reached over TCP at an address of another host is not
// looked for, nor one whose process runs under another root directory
// (a container: its files are not this host's), and a process whose
// binary is not a server's (mysqld, mariadbd: a proxy holding a
// container's published port) is not taken: its binary is never run. The process gives its
// binary (/proc/PID/exe) and its command line (/proc/PID/cmdline), whose
// leading --no-defaults, --defaults-file, --defaults-extra-file and
// --defaults-group-suffix say which files it read (the server takes them
// only as its first arguments), and the rest of whose options override
// every file.
//
// # Reading the files
//
// The binary says which files it reads, in order, and which [groups]:
// the head of `BINARY <its defaults options> --help --verbose` ("Default
// options are read from the following files in the given order: ...",
// "The following groups are read: ...", ParseHelp); with --defaults-file
// it names that file alone. "~/" is the server's home (HOME of its
// environment, or its user's). Each file is read as the server reads
// it: settings of those groups in order, "!include FILE" and
// "!includedir DIR" (DIR's *.cnf files, sorted) followed where they
// stand, so that a setting after an "!includedir" line wins over the
// directory's. Reading is bounded: 64 files, 1 MiB each (through
// input.ReadFile: regular files only), 10 levels of includes (the
// server's own limit). The lines are read by changeset's option-file
// format; a file it cannot read is named in Notes, with the count of
// what was skipped.
//
// # The drop-in
//
// The drop-in is DropInName (99-stacktune.cnf) in the "!includedir"
// directory where a file of that name is read last, and Why says which
// file and line include it and how the files were found, for example:
//
//	my.cnf drop-in: /srv/db/conf.d/99-stacktune.cnf (the server reads /srv/db/conf.d through '!includedir' in /srv/db/my.cnf:12; found from its command line --defaults-file=/srv/db/my.cnf, pid 1234)
//
// A setting the server reads after it (a file sorted after it, a line
// after the "!includedir", a later file of the search order, the
// command line) wins over the drop-in's: Override names it, and apply
// refuses a change that it would undo at the next start.
//
// When the files include no directory, there is no drop-in: Why says so
// and asks for --mysql-conf, suggesting an "!includedir" line to add.
// stacktune does not write into the defaults file itself even though
// apply's transaction would back it up: that file is the operator's
// (datadir, socket, users' comments), its "!include" lines are what the
// drop-in format refuses, and a rollback would put back the whole file
// over any edit made since; a drop-in of its own is one file stacktune
// owns, that a person can read and delete. With --no-defaults the server
// reads no file at all, and Why says that its settings are on its
// command line.
//
// # The check
//
// Check is the server's binary with its own defaults options and
// --help --verbose (`/usr/sbin/mariadbd --defaults-file=/srv/db/my.cnf
// --help --verbose`), which reads the files as the server's next start
// does; the caller runs it as apply's strict check (a non-zero exit or an
// [ERROR] line fails). It runs with the caller's environment: a
// ~/.my.cnf is the caller's there, the server user's when the server
// starts.
//
// # Not on this host
//
// When the process is not found, Locate returns the distribution's
// guess (Distribution: /etc/mysql/mariadb.conf.d or mysql.conf.d, and the
// binary found in PATH or /usr/sbin), with Guess set and Why saying it is
// a guess, why, and that --mysql-conf and --mysql-check override it.
// Given takes the user's --mysql-conf and says whether the server reads
// it.
//
// MySQL 8.0's persisted variables (mysqld-auto.cnf in the data dir, read
// after every option file) and option prefixes (innodb_buffer_pool for
// innodb_buffer_pool_size) are not read.
package mysqlconf
