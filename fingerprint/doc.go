// Package fingerprint turns a SQL statement into its class: the normalised
// "fingerprint" and the query ID, following the rules of pt-query-digest
// (Percona Toolkit 3.2.1, default options, in particular without
// --preserve-embedded-numbers), so that a class here and a class in a
// pt-query-digest report are the same class with the same ID.
//
// The fingerprinter is a single-pass byte scanner (no regular expressions):
// it is on the hot path of every slow-log event. [Append] does not allocate
// when dst has room; [Fingerprint] allocates only the returned string.
//
// # Rules
//
// pt-query-digest fingerprints with a fixed sequence of regular-expression
// substitutions (QueryRewriter::fingerprint). This package reproduces the
// result of that sequence, quirks included, because a "better" fingerprint
// would put queries in different classes than pt-query-digest does. The
// rules below are applied in this order; each one sees the output of the
// previous ones. "Word" means a run of ASCII letters, digits and
// underscores (Perl's \w on bytes), "whitespace" means space, \t, \n, \v, \f
// and \r (Perl's \s on bytes).
//
//  1. mysqldump. A query that starts exactly (case and spacing included)
//     with "SELECT /*!40001 SQL_NO_CACHE */ * FROM `" is "mysqldump".
//     "select /*!40001 sql_no_cache */ * from `film`" is not.
//
//  2. Percona Toolkit. A query containing a checksum comment
//     /*word.word:digit/digit*/ anywhere, as pt-table-checksum writes them,
//     is "percona-toolkit":
//     "SELECT /*sakila.film:1/3*/ COUNT(*) ..." -> "percona-toolkit".
//
//  3. Administrator commands. A query starting with
//     "administrator command: " is its own fingerprint, unchanged (not even
//     lower-cased): "administrator command: Init DB".
//
//  4. Stored procedures. "\s*call\s+NAME(" (any case) becomes "call NAME",
//     lower-cased, where NAME is the longest run of non-whitespace before a
//     "(": "CALL sp_update(1, 'a')" -> "call sp_update",
//     "call f(g(1))" -> "call f(g". The whitespace after "call" is kept as
//     it is. With a space before the parenthesis the rule does not apply:
//     "CALL foo (1)" -> "call foo (?)".
//
//  5. Multi-row INSERT/REPLACE. If the query starts with INSERT or REPLACE,
//     optionally " IGNORE" (one space), whitespace, INTO, and has a
//     VALUES (...) list followed by ", (" then everything after the first
//     row is cut off, before any other rule runs (so comments and strings
//     are not considered): "INSERT INTO t (a) VALUES (1),(2) ON DUPLICATE
//     KEY UPDATE a=VALUES(a)" -> "insert into t (a) values(?+)", and
//     "INSERT INTO t VALUES ('a),(b'),(2)" -> "insert into t values ('a)".
//     "INSERT LOW_PRIORITY INTO ..." is not cut (but see rule 17).
//
//  6. Block comments. "/*" followed by any byte but "!", up to the next
//     "*/", is removed, even inside string literals. Version comments
//     "/*!40101 ... */" stay (and go through the other rules):
//     "SELECT /*!40101 SQL_NO_CACHE */ a" -> "select /*!? sql_no_cache */ a".
//     "/**/" does not end itself: "select /**/ 1 /* x */ from t" ->
//     "select from t". An unterminated "/*" is kept.
//
//  7. Line comments. "--" (no space needed) or "#" up to the end of the
//     line is removed, unless a quote (' or ") follows on the same line:
//     "SELECT a -- the a\nFROM t" -> "select a from t",
//     "SELECT 5--3\nFROM t" -> "select ? from t",
//     "SELECT 1 -- it's" -> "select ? ? it's".
//
//  8. USE. If what is left is exactly "use" (any case), one space and one
//     run of non-whitespace, optionally followed by a final newline, the
//     fingerprint is "use ?" (plus that newline) and no other rule runs:
//     "USE sakila" -> "use ?", "use db1;" -> "use ?", but
//     "use `my db`" -> "use `my db`".
//
//  9. Escaped quotes. A backslash followed by ' or " is removed together
//     with the quote, wherever it is: SELECT 'it\'s' -> select ?. A
//     string ending in an escaped backslash therefore loses its end:
//     SELECT 'c:\\' FROM t -> select 'c:\ from t.
//
//  10. Strings. First every "..." (first " to the next ") becomes ?, then
//     every '...'; a string may span lines. A doubled quote ends one string
//     and starts another: 'it' and 's' written without a space between
//     them give ??. Since double quotes go first,
//     SELECT 'a"b', "c" -> select 'a?c". An unpaired quote stays.
//
//  11. Booleans. The words true and false (any case) become ?:
//     "WHERE a = TRUE" -> "where a = ?"; "true_flag" stays.
//
//  12. Numbers. Anywhere, not only at word starts, a digit, "+" or "-"
//     and all the bytes of [0-9a-f.xb+-] after it become one ?. Digits in
//     identifiers are replaced too: "sbtest12" -> "sbtest?",
//     "k=k+1" -> "k=k?", "a - 1" -> "a ? ?", "1.5e-3" -> "?",
//     "0x1F" -> "?f" (upper-case hex digits are not part of the number),
//     "1E5" -> "?e?", "12foo" -> "?oo".
//
//  13. x?, b? and .? become ?. A lower-case x or b or a dot right before a
//     ? (from rules 10 to 12, or a ? in the query) is absorbed, once:
//     "x'ab'" -> "?", "b'01'" -> "?", ".5" -> "?", "a.b1" -> "a.?",
//     "db1.tbl2" -> "d?tbl?", "X'AB'" -> "x?".
//
//  14. Whitespace. Leading whitespace is removed, then one final "\n",
//     then every run of space, \t, \n, \r and \f becomes one space (\v is
//     kept as it is). Other trailing whitespace stays as one space, and a
//     trailing semicolon stays: "SELECT 1  " -> "select ? ",
//     "SELECT 1\n" -> "select ?", "SELECT 1;" -> "select ?;".
//
//  15. Lower case. ASCII letters are lower-cased; other bytes, such as
//     UTF-8 sequences, are not changed.
//
//  16. NULL. The word null becomes ?: "a IS NULL" -> "a is ?"; "nullable"
//     and "nullif" stay, "null1" -> "??" (rule 12 made "null?").
//
//  17. IN and VALUES lists. The words in, value and values followed by one
//     or more "(...)" groups that contain only ?, commas and whitespace
//     (groups separated by commas and whitespace) become "in(?+)",
//     "value(?+)" and "values(?+)": "id IN (1, 2, 3)" -> "id in(?+)",
//     "IN ()" -> "in(?+)", "VALUES (1, 'a', NULL)" -> "values(?+)". Lists
//     with anything else stay: "IN (SELECT id FROM u)",
//     "VALUES (1, NOW())" -> "values (?, now())",
//     "IN ((1, 2), (3, 4))" -> "in ((?, ?), (?, ?))".
//
//  18. Repeated UNION. "select X union select X" (with union all, and any
//     number of repeats) becomes "select X /*repeat union*/" (or
//     "/*repeat union all*/"), X being the shortest text after "select "
//     for which this matches; the repeat only has to begin with X:
//     "SELECT a FROM t UNION SELECT a FROM t WHERE b = 1" ->
//     "select a from t /*repeat union*/ where b = ?". Different selects
//     stay.
//
//  19. LIMIT. The first "limit ?, ?", "limit ?,?" or "limit ? offset ?"
//     becomes "limit ?"; later ones stay:
//     "... LIMIT 1, 2) x LIMIT 3,4" -> "... limit ?) x limit ?,?".
//
//  20. ORDER BY ... ASC. After the first "order by ", every whitespace
//     followed by "asc" is removed, even when asc only begins a word:
//     "ORDER BY a ASC, b DESC" -> "order by a, b desc",
//     "ORDER BY a, ascii(b)" -> "order by a,ii(b)". An asc before the
//     ORDER BY stays.
//
// pt-query-digest does not fingerprint an empty query (or the query "0");
// Fingerprint returns "" and "?" for them.
//
// # Query IDs
//
// [ID] is the query ID of pt-query-digest 3.2.1: the MD5 of the fingerprint
// as 32 upper-case hex digits (the "checksum" of --output json, the "Query
// ID" of the report without "0x"). [ShortID] is the older 16-digit form
// (the last 16 digits), still used by Percona's Go tools.
//
// # Differences from pt-fingerprint
//
// pt-fingerprint 3.2.1 ships an older copy of the fingerprint code without
// rule 11: it leaves true and false as they are. This package follows
// pt-query-digest.
package fingerprint
