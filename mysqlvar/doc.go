// Package mysqlvar is stacktune's one owner of MySQL and MariaDB system
// variables: what a server is (flavour and version, Detect), which
// versions have which variables and which of them SET GLOBAL can change
// (the version table: Available, Dynamic, OptionName, Aliases), how
// values are written and compared (ParseSize, ParseInt, ParseBool, Equal,
// Literal, SetGlobal), and what a running server says about a variable
// before anything is set (ReadMeta: does it exist, is it read-only, its
// range, block size and allowed values, so a plan can say whether a value
// will be refused, clamped or rounded).
//
// Package collect reads the variables, advise reasons about them and
// produces changes, apply sets them: each of them asks this package, so
// the SET GLOBAL line the audit shows is the one apply runs, and "64M",
// "67108864" and a server's rounding of it compare the same everywhere.
//
// Names are compared folded (Norm: lower case, '-' as '_'), as the server
// and its option files do.
package mysqlvar
