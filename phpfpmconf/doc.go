// Package phpfpmconf is the one owner of PHP-FPM's configuration: Load
// reads php-fpm.conf and the pool files its include directive names
// (bounded), into the global settings and the pools, each setting with
// its file and line; Value gives a pool's setting as PHP-FPM applies it
// (its default when the file does not set it, $pool substituted); Apply
// turns edits (a pool, a key, a value) into new contents of the files,
// everything else kept byte for byte. The collector, the audit's rules,
// the change set's validation and the PHP-FPM apply target all go through
// it.
//
// The format (php-fpm.conf(5), PHP's INI syntax as FPM reads it): lines
// "key = value", values optionally in double quotes; comments start with
// ';' (and '#'); "[name]" starts a section, "[global]" the global one,
// any other a pool; "include = glob" in the global section reads more
// files, relative to the main file's directory (PHP-FPM's prefix) unless
// absolute. Keys may carry a bracketed part (php_admin_value[memory_limit],
// env[PATH]).
//
// Bounds: a file is read only if it is a regular file of at most 1 MiB;
// includes read at most 256 files; a configuration has at most 100,000
// lines and 1,000 pools. Past a bound Load stops with an error naming
// the file.
package phpfpmconf
