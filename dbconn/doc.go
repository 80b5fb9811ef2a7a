// Package dbconn opens read-only-minded connections to MySQL and MariaDB from
// go-sql-driver DSNs (`user:pass@unix(/run/mysqld/mysqld.sock)/db`,
// `user:pass@tcp(host:3306)/db`), with connect and read timeouts, and turns
// driver errors into messages a user can act on (unreachable server, wrong
// password, missing privilege). Mask hides the password of a DSN: stacktune
// never prints or stores one. CurrentDatabase reads a connection's
// default database (the DSN's), the schema that queries and DDL naming
// none apply to.
package dbconn
