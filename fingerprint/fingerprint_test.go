package fingerprint

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"
)

// fingerprintCase is a hand-written case. want was checked against
// pt-query-digest 3.2.1 (its QueryRewriter::fingerprint, see
// TestPTRewriterTable); rule is the number of the rule in doc.go that the
// case is about (0: a plain query).
type fingerprintCase struct {
	rule     int
	name, in string
	want     string
}

var fingerprintCases = []fingerprintCase{
	{1, "mysqldump", "SELECT /*!40001 SQL_NO_CACHE */ * FROM `film`", "mysqldump"},
	{1, "mysqldump needs exact case", "select /*!40001 sql_no_cache */ * from `film`", "select /*!? sql_no_cache */ * from `film`"},
	{2, "pt-table-checksum chunk", "SELECT /*sakila.film:1/3*/ COUNT(*) AS cnt FROM `sakila`.`film` WHERE 1=1", "percona-toolkit"},
	{2, "toolkit comment anywhere", "REPLACE INTO `percona`.`checksums` SELECT 'a' /*db.t:2/9*/", "percona-toolkit"},
	{3, "admin command kept verbatim", "administrator command: Init DB", "administrator command: Init DB"},
	{3, "admin command case sensitive", "Administrator command: Quit", "administrator command: quit"},
	{4, "call", "CALL sp_update(1, 'a', @out)", "call sp_update"},
	{4, "call leading space", "  call db1.Proc2('x')", "call db1.proc2"},
	{4, "call up to last paren", "call f(g(1))", "call f(g"},
	{4, "call with space before paren", "CALL foo (1)", "call foo (?)"},
	{5, "multi-row insert", "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z')", "insert into t (a, b) values(?+)"},
	{5, "insert ignore multi-row", "INSERT IGNORE INTO t VALUES (1),(2)", "insert ignore into t values(?+)"},
	{5, "replace multi-row", "REPLACE INTO t VALUES(1,2) ,\n(3,4)", "replace into t values(?+)"},
	{5, "multi-row cuts ON DUPLICATE KEY UPDATE", "INSERT INTO t (a) VALUES (1),(2) ON DUPLICATE KEY UPDATE a=VALUES(a)", "insert into t (a) values(?+)"},
	{5, "single-row keeps ON DUPLICATE KEY UPDATE", "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a=VALUES(a)", "insert into t (a) values(?+) on duplicate key update a=values(a)"},
	{5, "insert cut inside a string", "INSERT INTO t VALUES ('a),(b'),(2)", "insert into t values ('a)"},
	{5, "insert low_priority not shortened", "INSERT LOW_PRIORITY INTO t VALUES (1),(2)", "insert low_priority into t values(?+)"},
	{6, "block comment", "SELECT /* hint */ a FROM t", "select a from t"},
	{6, "leading block comment", "/* app:checkout */ SELECT a FROM t", "select a from t"},
	{6, "version comment kept", "SELECT /*!40101 SQL_NO_CACHE */ a FROM t", "select /*!? sql_no_cache */ a from t"},
	{6, "comment markers inside strings", "SELECT '/*', '*/' FROM t", "select ? from t"},
	{6, "empty comment swallows to next close", "select /**/ 1 /* x */ from t", "select from t"},
	{6, "multi-line comment", "SELECT a /* one\ntwo */ FROM t", "select a from t"},
	{7, "dash comment", "SELECT a FROM t -- trailing", "select a from t "},
	{7, "hash comment", "SELECT a FROM t # trailing", "select a from t "},
	{7, "dash comment mid query", "SELECT a -- the a column\nFROM t", "select a from t"},
	{7, "dash without space is a comment", "SELECT 5--3\nFROM t", "select ? from t"},
	{7, "comment blocked by quote later on the line", "SELECT 1 -- it's", "select ? ? it's"},
	{7, "dashes in string", "SELECT '--x' FROM t", "select ? from t"},
	{8, "use", "USE sakila", "use ?"},
	{8, "use with semicolon", "use db1;", "use ?"},
	{8, "use with space in name is not abstracted", "use `my db`", "use `my db`"},
	{8, "use with trailing newline", "use db\n", "use ?\n"},
	{10, "single and double quoted", "SELECT 'a', \"b\" FROM t", "select ?, ? from t"},
	{10, "doubled quote is two strings", "SELECT 'it''s'", "select ??"},
	{9, "backslash escaped quote", "SELECT 'it\\'s', \"say \\\"hi\\\"\"", "select ?, ?"},
	{9, "escaped backslash before quote", "SELECT 'c:\\\\' FROM t", "select 'c:\\ from t"},
	{10, "double quotes first", "SELECT 'a\"b', \"c\" FROM t", "select 'a?c\" from t"},
	{10, "single quote inside double", "SELECT \"it's\" FROM t", "select ? from t"},
	{10, "unterminated string", "SELECT 'abc FROM t", "select 'abc from t"},
	{10, "multi-line string", "SELECT 'a\nb' FROM t", "select ? from t"},
	{11, "booleans", "SELECT * FROM t WHERE a = TRUE AND b = false", "select * from t where a = ? and b = ?"},
	{11, "boolean-like identifiers kept", "SELECT true_flag, falsey FROM t", "select true_flag, falsey from t"},
	{12, "integers and decimals", "SELECT 1, 1.5, 12345678901234 FROM t", "select ?, ?, ? from t"},
	{12, "signs", "SELECT -2, +3, a-1, a - 1 FROM t", "select ?, ?, a?, a ? ? from t"},
	{12, "exponent", "SELECT 1e5, 1.5e-3, 1E5", "select ?, ?, ?e?"},
	{12, "hex", "SELECT 0x1f, 0x1F, 0XFF", "select ?, ?f, ?xff"},
	{12, "digits in identifiers", "SELECT c FROM sbtest12 WHERE id=5023", "select c from sbtest? where id=?"},
	{12, "identifier starting with digits", "select 12_13_foo from (select 12foo from 123_bar) as 123baz", "select ?_?_foo from (select ?oo from ?_bar) as ?z"},
	{12, "increment", "UPDATE sbtest2 SET k=k+1 WHERE id=4988", "update sbtest? set k=k? where id=?"},
	{12, "numbers in backticks", "SELECT * FROM `tbl_2009` JOIN `tbl_2010`", "select * from `tbl_?` join `tbl_?`"},
	{13, "hex and bit strings", "SELECT X'AB', x'ab', b'01', B'01'", "select x?, ?, ?, b?"},
	{13, "leading dot decimal", "SELECT .5, a.b1", "select ?, a.?"},
	{13, "db and table numbers", "SELECT * FROM db1.tbl2 JOIN idx3", "select * from d?tbl? join id?"},
	{14, "whitespace collapsed", "SELECT\ta,\n\n  b\r\nFROM   t", "select a, b from t"},
	{14, "leading whitespace", "\n\t  SELECT 1", "select ?"},
	{14, "trailing newline chomped", "SELECT 1\n", "select ?"},
	{14, "trailing whitespace kept as one space", "SELECT 1  ", "select ? "},
	{14, "two trailing newlines", "SELECT 1\n\n", "select ? "},
	{14, "trailing semicolon kept", "SELECT 1;", "select ?;"},
	{14, "vertical tab not collapsed", "SELECT\va\v\vFROM t", "select\va\v\vfrom t"},
	{15, "lowercase ascii only", "SELECT Name, \xc3\x89T\xc3\x89 FROM Users", "select name, \xc3\x89t\xc3\x89 from users"},
	{16, "null", "SELECT * FROM t WHERE a IS NULL OR b = null", "select * from t where a is ? or b = ?"},
	{16, "null-like identifiers kept", "SELECT nullable, NULLIF(a, 1), is_null FROM t", "select nullable, nullif(a, ?), is_null from t"},
	{16, "null next to a number", "SELECT null1, 1null", "select ??, ??"},
	{17, "in list", "SELECT * FROM t WHERE id IN (1, 2, 3)", "select * from t where id in(?+)"},
	{17, "in list of strings", "SELECT * FROM t WHERE id IN ('a','b') AND x in(NULL)", "select * from t where id in(?+) and x in(?+)"},
	{17, "in subquery kept", "SELECT * FROM t WHERE id IN (SELECT id FROM u)", "select * from t where id in (select id from u)"},
	{17, "row constructor in", "SELECT * FROM t WHERE (a, b) IN ((1, 2), (3, 4))", "select * from t where (a, b) in ((?, ?), (?, ?))"},
	{17, "empty in list", "SELECT * FROM t WHERE id IN ()", "select * from t where id in(?+)"},
	{17, "values list", "INSERT INTO t VALUES (1, 'a', NULL)", "insert into t values(?+)"},
	{17, "value keyword", "INSERT INTO t VALUE (1)", "insert into t value(?+)"},
	{17, "values with function kept", "INSERT INTO t VALUES (1, NOW())", "insert into t values (?, now())"},
	{17, "repeated groups", "SELECT * FROM t WHERE a IN (1) (2) , (3)", "select * from t where a in(?+)"},
	{17, "in inside a word is not a list", "SELECT min(1), join (1) FROM t", "select min(?), join (?) from t"},
	{18, "union of identical selects", "SELECT a FROM t UNION SELECT a FROM t", "select a from t /*repeat union*/"},
	{18, "union all repeated", "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3", "select ? /*repeat union all*/"},
	{18, "union of different selects", "SELECT a FROM t UNION SELECT b FROM u", "select a from t union select b from u"},
	{18, "union prefix match", "SELECT a FROM t UNION SELECT a FROM t WHERE b = 1", "select a from t /*repeat union*/ where b = ?"},
	{18, "union in subquery", "SELECT * FROM (SELECT 1 UNION SELECT 2) x", "select * from (select ? /*repeat union*/) x"},
	{19, "limit", "SELECT * FROM t LIMIT 10", "select * from t limit ?"},
	{19, "limit offset comma", "SELECT * FROM t LIMIT 10, 20", "select * from t limit ?"},
	{19, "limit offset keyword", "SELECT * FROM t LIMIT 10 OFFSET 20", "select * from t limit ?"},
	{19, "only first limit", "SELECT * FROM (SELECT a FROM t LIMIT 1, 2) x LIMIT 3,4", "select * from (select a from t limit ?) x limit ?,?"},
	{20, "order by asc removed", "SELECT * FROM t ORDER BY a ASC, b DESC, c ASC", "select * from t order by a, b desc, c"},
	{20, "asc before order by kept", "SELECT a asc FROM t ORDER BY b ASC", "select a asc from t order by b"},
	{20, "asc prefix removed", "SELECT * FROM t ORDER BY a, ascii(b)", "select * from t order by a,ii(b)"},
	{20, "order by without asc", "SELECT DISTINCT c FROM sbtest3 WHERE id BETWEEN 4983 AND 5082 ORDER BY c", "select distinct c from sbtest? where id between ? and ? order by c"},
	{0, "begin", "BEGIN", "begin"},
	{0, "commit", "COMMIT", "commit"},
	{0, "sysbench insert", "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5041, 5023, '83868641912-28773972837-60736120486-75162659906', '67847967377-48000963322-62604785301-91415491898')", "insert into sbtest? (id, k, c, pad) values(?+)"},
	{0, "sysbench sum", "SELECT SUM(k) FROM sbtest6 WHERE id BETWEEN 4996 AND 5095", "select sum(k) from sbtest? where id between ? and ?"},
	{0, "placeholders", "SELECT * FROM t WHERE a = ? AND b = x?", "select * from t where a = ? and b = ?"},
	{0, "set names", "SET NAMES utf8mb4", "set names utf?m?"},
	{0, "show", "SHOW /*!50002 GLOBAL */ STATUS LIKE 'Threads%'", "show /*!? global */ status like ?"},
	{0, "empty", "", ""},
	{0, "only whitespace", " \n ", ""},
	{0, "only a comment", "/* nothing */", ""},
}

func TestFingerprint(t *testing.T) {
	for _, tc := range fingerprintCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fingerprint(tc.in); got != tc.want {
				t.Errorf("rule %d: Fingerprint(%q)\n got %q\nwant %q", tc.rule, tc.in, got, tc.want)
			}
			prefix := []byte("prefix:")
			got := Append(prefix, []byte(tc.in))
			if string(got) != "prefix:"+tc.want {
				t.Errorf("Append(%q, %q) = %q, want %q", "prefix:", tc.in, got, "prefix:"+tc.want)
			}
		})
	}
}

// TestFingerprintCoversRules keeps the table honest: every rule of doc.go
// has at least one case.
func TestFingerprintCoversRules(t *testing.T) {
	seen := map[int]int{}
	for _, tc := range fingerprintCases {
		seen[tc.rule]++
	}
	for r := 1; r <= 20; r++ {
		if seen[r] == 0 {
			t.Errorf("no case for rule %d", r)
		}
	}
	if len(fingerprintCases) < 60 {
		t.Errorf("only %d cases", len(fingerprintCases))
	}
}

func TestID(t *testing.T) {
	// Values from pt-query-digest --output json (testdata/slowlogs).
	for fp, want := range map[string]string{
		"select ?":                        "1FE1379FE2A31B8D16219655761820A2",
		"begin":                           "8D589AFA4DFAEEED85FFF5AA78E5FF6A",
		"administrator command: Quit":     "EDBC971AEC392917AA353644DE4C4CB4",
		"select * from t where id in(?+)": "3595840CD2CB16F1B2414E722E8A89DD",
		"update foo.bar set biz = ?":      "32F63B9B2CE5A9B1B211BA2B8D6D065C",
		"insert into d?onch (word?, vid?) values(?+)": "C38B763B233A1E63C22D235B07D1D774",
	} {
		if got := ID(fp); got != want {
			t.Errorf("ID(%q) = %s, want %s", fp, got, want)
		}
		if got := ShortID(fp); got != want[16:] {
			t.Errorf("ShortID(%q) = %s, want %s", fp, got, want[16:])
		}
		if got := AppendID([]byte("0x"), []byte(fp)); string(got) != "0x"+want {
			t.Errorf("AppendID(0x, %q) = %s", fp, got)
		}
	}
}

func TestAppendDoesNotAllocate(t *testing.T) {
	var queries [][]byte
	for _, tc := range fingerprintCases {
		queries = append(queries, []byte(tc.in))
	}
	queries = append(queries, sysbenchQueries...)
	dst := make([]byte, 0, 4096)
	for _, q := range queries {
		if n := testing.AllocsPerRun(20, func() { dst = Append(dst[:0], q) }); n != 0 {
			t.Errorf("Append(%q) allocates %v times", q, n)
		}
	}
	fp := []byte("select c from sbtest? where id=?")
	if n := testing.AllocsPerRun(20, func() { dst = AppendID(dst[:0], fp) }); n != 0 {
		t.Errorf("AppendID allocates %v times", n)
	}
}

// maxLen bounds the length of a fingerprint. pt's output can be longer
// than its input: "in()" becomes "in(?+)" (so "in()in()..." grows by half),
// "select ? union select ?" becomes "select ? /*repeat union*/", and a
// checksum comment of 11 bytes becomes "percona-toolkit".
func maxLen(n int) int { return n + n/2 + 16 }

func FuzzFingerprint(f *testing.F) {
	for _, tc := range fingerprintCases {
		f.Add(tc.in)
	}
	for _, q := range sysbenchQueries {
		f.Add(string(q))
	}
	f.Fuzz(func(t *testing.T, q string) {
		fp := Fingerprint(q)
		if again := Fingerprint(q); again != fp {
			t.Fatalf("not deterministic: %q then %q", fp, again)
		}
		if got := Append(nil, []byte(q)); string(got) != fp {
			t.Fatalf("Append(nil, %q) = %q, Fingerprint = %q", q, got, fp)
		}
		pre := []byte("pre ")
		if got := Append(pre, []byte(q)); string(got) != "pre "+fp {
			t.Fatalf("Append(%q, %q) = %q, Fingerprint = %q", pre, q, got, fp)
		}
		// The capacity documented for Append is enough, also for the
		// intermediate states of the buffer.
		room := make([]byte, 0, maxLen(len(q)))
		if got := Append(room, []byte(q)); cap(got) != cap(room) {
			t.Fatalf("Append reallocated a buffer of %d bytes for %q", cap(room), q)
		}
		if len(fp) > maxLen(len(q)) {
			t.Fatalf("fingerprint of %d bytes for %d bytes of query: %q -> %q", len(fp), len(q), q, fp)
		}
		// Everything but an administrator command is lower-cased (ASCII
		// only, as Perl's lc on bytes).
		admin := strings.HasPrefix(q, "administrator command: ")
		if !admin && fp != asciiLower(fp) {
			t.Fatalf("not lower case: %q -> %q", q, fp)
		}
		sum := md5.Sum([]byte(fp))
		if id := ID(fp); id != strings.ToUpper(hex.EncodeToString(sum[:])) {
			t.Fatalf("ID(%q) = %s", fp, id)
		}
		// Whitespace is collapsed to spaces, except in the verbatim
		// administrator command, in "use ?\n" and in the "call name" part.
		if strings.ContainsAny(fp, "\n\t\r\f") && !admin && fp != "use ?\n" && !strings.HasPrefix(fp, "call") {
			t.Fatalf("whitespace not collapsed: %q -> %q", q, fp)
		}
	})
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
