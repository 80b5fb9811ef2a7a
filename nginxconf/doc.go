// Package nginxconf is stacktune's one owner of nginx configurations:
// it reads them into one tree of directives, says which values nginx
// applies in a block, and edits them. Packages collect (the nginx layer of
// a snapshot), accesslog (log_format), diagnose and apply ask it, and keep
// no directive type, tree, listen parser, log_format lookup or
// inheritance rule of their own.
//
// # Reading: the tree
//
// Load reads a configuration with its includes; Parse reads text that is
// not on disk, optionally without following includes. Every directive is
// a *Directive, the one directive type: Name, Args, File and Line, IsBlock,
// Parent (the block it is in) and, for a block, Children and
// ChildrenNamed, in nginx's reading order with the directives of an
// included file in the place of its include. Config.Main is the main
// context, the root of the tree; Descendants walks a block, Directives
// lists the whole configuration, Within and Enclosing look outward.
// Label is a directive as a context names it ("location /api"), Path a
// block as edit contexts and the audit name it ("http>server>location
// /api"); the context a directive is in is its Parent's Path. Listing is
// the configuration as a snapshot lists it, written to JSON and read back
// as a tree of the same Directives (detached from the files).
//
// # What directives say
//
// ParseListen reads a listen directive (address, port, unix socket,
// backlog and the other parameters); Apply tells two listen directives
// apart by the same reading. ParseAccessLog reads an access_log
// directive (off, or the path, the format's name and the parameters);
// PassKind and PassTarget a *_pass directive (the handler it makes, the
// upstream or host it names, a unix socket). Config.LogFormat is the one log_format
// lookup, with nginx's rules: the http context's formats (a snippet's top
// level is the http context), the predefined combined (CombinedLogFormat),
// and a name defined twice, combined included, refused as nginx refuses
// it. Config.Upstreams reads the http context's upstream blocks (servers,
// keepalive), Config.MapDefault the value a map's variable takes for a
// request without what the map reads.
//
// # The binary's defaults
//
// ParseBuild reads nginx -V (the version, the configure arguments);
// Defaults are the settings the audit reads at each level (Config.Block:
// main, events, http) with nginx's default for that build, as they
// changed between versions (keepalive_requests 100 before 1.19.10, and
// others) and as configure set them (client_body_temp_path).
//
// # Effective values
//
// Config.Effective(block, name) gives the directives named name that
// nginx applies in block, Config.Value the arguments of the one that
// applies (the last), and Config.Overrides the places inside a block that
// set a directive again; ParseSize reads a size value as nginx's size
// directives take it (16k, 1m). The inheritance rules, listed in inherit.go with
// their sources in nginx's documentation: a directive set in a block
// applies in the blocks inside it unless one sets it again (the nearest
// block that has it decides); directives that repeat (access_log,
// proxy_set_header, add_header, ...) are replaced as a whole list, never
// merged; root and alias are one setting; listen, server_name, the
// location, server and upstream blocks, the rewrite module's directives
// and the content handlers are not inherited (the *_pass handlers reach
// only the if {} and limit_except {} blocks of their location).
//
// # Editing
//
// Apply puts directives (Edits: the nginx changes of a change set, each
// naming its context) into a real nginx configuration and returns the new
// content of the files that change, for a caller to write atomically
// (internal/atomicfile) after nginx -t; Current reads what an edit would
// replace, so a plan can see whether the advice still fits the file.
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
//
// # Bounds
//
// Reading is bounded, since collect and audit run on production hosts and
// a configuration may be wrong or hostile. Load reads only regular files:
// the main file or an include (also a glob's match) that is a device
// (/dev/zero), a FIFO, a socket or a directory is an error, found by stat
// before anything is opened (opening a FIFO blocks, opening a device may
// act) and checked again on what was opened. No file is read past
// MaxFileBytes (16 MiB; one byte more at most, whatever stat says its
// size is), and at most MaxTotalBytes (64 MiB) is parsed in all, a file
// included twice counting twice. Blocks nest at most MaxBlockDepth (100)
// deep, across includes; includes nest at most MaxIncludeDepth (32) deep
// (a loop ends there); include directives read at most MaxIncludeReads
// (10,000) files in all, and one glob may match no more; a configuration
// has at most MaxDirectives (500,000) directives, MaxWords (2,000,000)
// words and MaxContextEntries (2,000,000) entries in the paths of the
// blocks that hold directives. Past a bound Load stops with an error
// naming the file and line (the main file alone when it is the main
// file), having read no more.
// Directives and Descendants take time and memory linear in the
// directives (the tree's own directives, no copies); Path builds a
// block's path when asked, at most MaxBlockDepth labels long, and a reader
// that names the context of every directive (the nginx collector, once
// per block) builds at most MaxContextEntries path entries; Apply compares
// a block's path without building it. Memory follows: the wrong
// configurations refused early (include /dev/zero, a FIFO, 20,000 nested
// blocks, include loops, runaway globs, a file past 16 MiB, 64 MiB across
// includes) take under 100 MB; the worst configuration the bounds let
// through (64 MiB of text in 1 MiB block labels, 500,000 directives,
// 2,000,000 path entries) about 240 MB for Load and Directives together,
// the text being held as read and as words. Tests measure each in a child
// process (peak RSS) and require under 100 MB and 450 MB. nginx itself
// is looser: it reads /dev/zero as empty (it reads as many bytes as stat
// says), takes blocks thousands deep, and crashes on an include loop or
// 20,000 nested blocks.
package nginxconf
