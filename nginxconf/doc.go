// Package nginxconf puts directives (Edits: the nginx changes of a
// change set, each naming its context) into a real nginx configuration
// and returns the new content of the files that change, for a caller to
// write atomically (internal/atomicfile) after nginx -t; Current reads
// what an edit would replace, so a plan can see whether the advice still
// fits the file.
//
// Load reads nginx.conf and every file it includes (include
// paths relative to the directory of nginx.conf, as with nginx -p DIR -c
// DIR/nginx.conf; globs in lexical order without hidden files) with the
// byte offsets of every directive, so that Apply changes only the text it
// must and keeps everything else byte for byte: comments, blank lines,
// indentation, quoting.
//
// A context names one block:
//
//   - "nginx main context (top of nginx.conf)": the top level;
//   - "nginx events {}", "nginx http {}": that block, wherever it is
//     (also inside an included file);
//   - "nginx upstream NAME {} (FILE:LINE)": the upstream block NAME;
//   - "nginx http>server>location / (FILE:LINE)": the block of that path
//     that starts on that line of FILE (the path the configuration was
//     read from; compared cleaned, absolute, or as the same file), or
//     holds the directive on that line (the listen or access_log the
//     audit points at); when the line no longer matches (lines moved),
//     the block of that path in FILE spanning the line, or the only
//     block of that path.
//
// Load is also stacktune's one reader of nginx configurations for
// reading alone: Directives lists every directive in nginx's reading order
// with its context, file and line (package accesslog's ReadNginxConfig,
// which the nginx collector uses), and Parse reads text that is not on
// disk, optionally without following includes.
//
// A context that names no block, or more than one, is an error, and Apply
// then returns no file at all.
//
// Each directive replaces the directive of the same name in its block:
// the first one (in the block's own file or a file it includes) has its
// text replaced in place, later ones are deleted. Some directives may
// repeat in a block and are told apart by their first argument
// (proxy_set_header, add_header, fastcgi_param, uwsgi_param, scgi_param,
// grpc_set_header, set, log_format, env, load_module, include, ...;
// header names compare case-insensitively); listen is told apart by its
// address and port ("80", "*:80" and "0.0.0.0:80" are one). Several
// directives of the same name for one block in one Apply replace all of
// that name together (upstream NAME with "server unix:/run/app.sock;"
// replaces every server of the upstream). A directive that is not there
// yet is inserted on a line of its own before the block's closing brace,
// indented like its siblings (inline when the brace shares its line);
// in the main context after the last top-level directive of nginx.conf
// before its first block (events, http). A new log_format goes first in
// its block instead, since nginx needs a format defined above the
// access_log naming it. Lines are inserted with the file's line ends.
//
// Applying the same edits to the result changes nothing. A change to a
// file read more than once (included from two places) is refused, since
// it would change every place including it.
package nginxconf
