package fingerprint

// Differential tests against Percona Toolkit 3.2.1, the reference this
// package must agree with class for class. They need pt-query-digest and
// pt-fingerprint (Debian package percona-toolkit) and fail, rather than
// skip, without them.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// ptTool returns the path of a Percona Toolkit program or fails the test.
func ptTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not in PATH (%v): install the Debian package percona-toolkit", name, err)
	}
	return path
}

// ptClass is one class of pt-query-digest --output json.
type ptClass struct {
	Fingerprint string `json:"fingerprint"`
	Checksum    string `json:"checksum"`
	Example     struct {
		Query string `json:"query"`
	} `json:"example"`
}

// Limits of pt-query-digest's JSON report (JSONReportFormatter), in
// characters: longer examples and fingerprints are cut.
const (
	ptMaxQueryLength       = 10000
	ptMaxFingerprintLength = 5000
)

// latin1Bytes undoes the encoding of pt-query-digest's JSON: Perl reads the
// log as bytes and JSON->utf8 encodes each byte as the code point of the
// same value.
func latin1Bytes(t *testing.T, s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			t.Fatalf("code point %U in pt-query-digest JSON: not a byte string", r)
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// ptKnownDifferences lists the classes of testdata/slowlogs, by file and
// checksum, where Fingerprint(example query) is not pt's fingerprint for a
// good reason. Every other mismatch fails.
var ptKnownDifferences = map[string]string{
	"slow027.log/1FE1379FE2A31B8D16219655761820A2": "the query is select and a string literal of more than " +
		"10000 characters: pt's example is cut at 10000 characters, inside the string, and without its " +
		"closing quote the cut example does not fingerprint to select ?",
}

// TestPTQueryDigestSlowLogs runs pt-query-digest on every slow log of
// testdata/slowlogs and checks each class: the fingerprint of its example
// query, the ID of its fingerprint, and the ID of our fingerprint.
func TestPTQueryDigestSlowLogs(t *testing.T) {
	tool := ptTool(t, "pt-query-digest")
	logs, err := filepath.Glob("../testdata/slowlogs/*.log")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no slow logs in ../testdata/slowlogs: %v", err)
	}
	total, matched := 0, 0
	usedKnown := map[string]bool{}
	for _, log := range logs {
		t.Run(filepath.Base(log), func(t *testing.T) {
			// --order-by bytes:sum, because the default Query_time:sum
			// leaves out classes whose events have no Query_time; the
			// example is then the longest query of the class. --limit 100%
			// lists every class.
			cmd := exec.Command(tool, "--no-version-check", "--type", "slowlog",
				"--output", "json", "--limit", "100%", "--order-by", "bytes:sum", log)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, stderr.Bytes())
			}
			var report struct {
				Classes []ptClass `json:"classes"`
			}
			if len(bytes.TrimSpace(out)) > 0 {
				if err := json.Unmarshal(out, &report); err != nil {
					t.Fatalf("pt-query-digest JSON: %v\n%s", err, out)
				}
			}
			for i, c := range report.Classes {
				total++
				key := filepath.Base(log) + "/" + c.Checksum
				t.Run(fmt.Sprintf("%02d_%s", i, c.Checksum), func(t *testing.T) {
					query := latin1Bytes(t, c.Example.Query)
					ptFP := latin1Bytes(t, c.Fingerprint)
					queryCut := utf8.RuneCountInString(c.Example.Query) >= ptMaxQueryLength
					fpCut := utf8.RuneCountInString(c.Fingerprint) >= ptMaxFingerprintLength

					if !fpCut {
						if id := ID(ptFP); id != c.Checksum {
							t.Errorf("ID(pt fingerprint %q) = %s, pt checksum %s", ptFP, id, c.Checksum)
						}
					}
					got := Fingerprint(query)
					same := got == ptFP || fpCut && strings.HasPrefix(got, ptFP)
					if ID(got) != c.Checksum {
						same = false
					}
					if reason, ok := ptKnownDifferences[key]; ok {
						usedKnown[key] = true
						if same {
							t.Errorf("listed as a known difference (%s) but matches: remove it from ptKnownDifferences", reason)
						}
						t.Logf("known difference: %s", reason)
						return
					}
					if !same {
						hint := ""
						if queryCut {
							hint = " (pt cut the example query at 10000 characters: add it to ptKnownDifferences)"
						}
						t.Errorf("Fingerprint(%q)\n  = %q (ID %s)\npt: %q (checksum %s)%s",
							clip(query), clip(got), ID(got), clip(ptFP), c.Checksum, hint)
						return
					}
					matched++
				})
			}
		})
	}
	for key := range ptKnownDifferences {
		if !usedKnown[key] {
			t.Errorf("ptKnownDifferences has %s, which is not a class of testdata/slowlogs", key)
		}
	}
	t.Logf("%d of %d pt-query-digest classes matched, %d known differences", matched, total, len(ptKnownDifferences))
	if total == 0 {
		t.Error("pt-query-digest reported no classes at all")
	}
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= 300 {
		return s
	}
	return s[:150] + fmt.Sprintf("...(%d bytes)...", len(s)-300) + s[len(s)-150:]
}

// ptFingerprintDifferences lists the table cases where pt-fingerprint 3.2.1
// does not agree with pt-query-digest 3.2.1 (whose fingerprints are the
// want values), with what pt-fingerprint prints instead ("" if the case
// cannot be given to it).
var ptFingerprintDifferences = map[string]struct{ reason, ptFingerprint string }{
	"booleans": {
		"pt-fingerprint 3.2.1 ships an older QueryRewriter without the true/false rule of pt-query-digest 3.2.1 (rule 11)",
		"select * from t where a = true and b = false",
	},
	"empty": {"pt-fingerprint refuses an empty --query and skips empty queries in files", ""},
}

// ptFileSafe reports whether pt-fingerprint reads q unchanged from a file of
// ";\n"-terminated queries: it splits at ";\n", blanks lines that start
// with "#", strips leading whitespace, skips queries that do not start with
// a word character, and its chomp then removes ";\n" instead of "\n".
func ptFileSafe(q, want string) bool {
	return q != "" && isWordB[q[0]] &&
		!strings.Contains(q, ";\n") && !strings.HasSuffix(q, "\n") &&
		!strings.Contains(q, "\n#") && !strings.Contains(want, "\n")
}

// TestPTFingerprintTable runs every case of the table through pt-fingerprint:
// the cases it can read from a file in one batch, the others one by one
// with --query.
func TestPTFingerprintTable(t *testing.T) {
	tool := ptTool(t, "pt-fingerprint")
	want := func(tc fingerprintCase) string {
		if d, ok := ptFingerprintDifferences[tc.name]; ok {
			return d.ptFingerprint
		}
		return tc.want
	}
	var batch, single []fingerprintCase
	for _, tc := range fingerprintCases {
		switch {
		case tc.in == "":
			// Cannot be given to pt-fingerprint; see ptFingerprintDifferences.
		case ptFileSafe(tc.in, tc.want):
			batch = append(batch, tc)
		default:
			single = append(single, tc)
		}
	}
	check := func(t *testing.T, tc fingerprintCase, pt string) {
		t.Helper()
		if pt != want(tc) {
			t.Errorf("pt-fingerprint(%q) = %q, want %q", tc.in, pt, want(tc))
		}
		if got := Fingerprint(tc.in); got != tc.want {
			t.Errorf("Fingerprint(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	var file bytes.Buffer
	for _, tc := range batch {
		file.WriteString(tc.in + ";\n")
	}
	path := filepath.Join(t.TempDir(), "queries.sql")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, path).Output()
	if err != nil {
		t.Fatalf("pt-fingerprint %s: %v", path, err)
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) != len(batch)+1 || lines[len(batch)] != "" {
		t.Fatalf("pt-fingerprint printed %d lines for %d queries:\n%s", len(lines)-1, len(batch), out)
	}
	for i, tc := range batch {
		t.Run("file/"+tc.name, func(t *testing.T) { check(t, tc, lines[i]) })
	}
	for _, tc := range single {
		t.Run("query/"+tc.name, func(t *testing.T) {
			cmd := exec.Command(tool, "--query="+tc.in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			// pt-fingerprint --query exits with the value of its last
			// print, 1, on success.
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && stderr.Len() == 0 {
				err = nil
			}
			if err != nil {
				t.Fatalf("pt-fingerprint --query=%q: %v\n%s", tc.in, err, stderr.Bytes())
			}
			check(t, tc, strings.TrimSuffix(string(out), "\n"))
		})
	}
	if len(batch) < len(fingerprintCases)/2 {
		t.Errorf("only %d of %d cases went through the batch", len(batch), len(fingerprintCases))
	}
}

// ptRewriterScript loads pt-query-digest as a Perl module and fingerprints
// hex-encoded queries, one per line, with the QueryRewriter and the options
// pt-query-digest itself uses. Hex keeps every byte (newlines, NULs,
// invalid UTF-8) intact.
const ptRewriterScript = `
use strict;
my $tool = shift @ARGV;
require $tool;
my $qr = QueryRewriter->new(QueryParser => QueryParser->new(), match_embedded_numbers => 0);
binmode STDIN;
binmode STDOUT;
while (my $l = <STDIN>) {
	chomp $l;
	print unpack("H*", $qr->fingerprint(pack("H*", $l))), "\n";
}
`

// ptRewrite returns pt-query-digest's fingerprints of queries.
func ptRewrite(t *testing.T, queries []string) []string {
	t.Helper()
	tool := ptTool(t, "pt-query-digest")
	var in bytes.Buffer
	for _, q := range queries {
		in.WriteString(hex.EncodeToString([]byte(q)))
		in.WriteByte('\n')
	}
	cmd := exec.Command("perl", "-e", ptRewriterScript, tool)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perl QueryRewriter of %s: %v\n%s", tool, err, stderr.Bytes())
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) != len(queries)+1 {
		t.Fatalf("got %d fingerprints for %d queries\n%s", len(lines)-1, len(queries), stderr.Bytes())
	}
	fps := make([]string, len(queries))
	for i := range queries {
		b, err := hex.DecodeString(lines[i])
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		fps[i] = string(b)
	}
	return fps
}

// TestPTRewriterTable checks the want column of the table against
// pt-query-digest's own fingerprint code.
func TestPTRewriterTable(t *testing.T) {
	queries := make([]string, len(fingerprintCases))
	for i, tc := range fingerprintCases {
		queries[i] = tc.in
	}
	for i, pt := range ptRewrite(t, queries) {
		if tc := fingerprintCases[i]; pt != tc.want {
			t.Errorf("%s: pt-query-digest fingerprints %q as %q, the table says %q", tc.name, tc.in, pt, tc.want)
		}
	}
}

// ptTokens are the pieces random queries are made of: the syntax every rule
// looks at, in both cases, plus bytes that are not ASCII.
var ptTokens = []string{
	"select ", "SELECT ", " from t", " FROM `tbl_2` ", " where ", "a", "b", "x", "X", "f", "t1", "db1.", "sbtest12",
	" ", "  ", "\n", "\t", "\r\n", "\v", "\f", "'", "\"", "\\", "\\'", "''", "/*", "*/", "/*!40001 ", "/**/", "--", "-- ", "#", "\n#",
	"-", "+", "1", "42", "0x1F", "0XAB", "x'ab'", "b'01'", "1.5", ".5", "1e-5", "?", "k=k+1",
	"null", "NULL", "true", "False", "in", " IN ", "(", ")", ",", "(1, 2)", "('a','b')", "values", "VALUE", " VALUES (1),(2)",
	" union ", " UNION ALL ", "all ", "select 1", "select a from t", " limit ", "LIMIT 1, 2", " offset ", "order by ", " ORDER BY a ", " asc", " ASC", "ascii",
	"use ", "USE db", "call ", "CALL p(1)", "insert into t", "INSERT IGNORE INTO t", "REPLACE INTO t ", "ignore",
	"administrator command: ", "/*db.tbl:1/2*/", "SELECT /*!40001 SQL_NO_CACHE */ * FROM `t`",
	"\xc3\xa9", "\xa0", "\x85", "\x00", ";", "`", "*", "/", "_", "=", ".", "@",
}

// TestPTRewriterRandom compares Fingerprint with pt-query-digest's
// fingerprint code on thousands of random token soups, where the rules
// interact in ways no hand-written table covers, plus the fuzz corpus.
func TestPTRewriterRandom(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	queries := make([]string, 0, n)
	for range n {
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			b.WriteString(ptTokens[rng.IntN(len(ptTokens))])
		}
		queries = append(queries, b.String())
	}
	corpus, _ := filepath.Glob("testdata/fuzz/FuzzFingerprint/*")
	for _, path := range corpus {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		q, err := parseCorpusString(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		queries = append(queries, q)
	}
	bad := 0
	for i, pt := range ptRewrite(t, queries) {
		if got := Fingerprint(queries[i]); got != pt {
			if bad++; bad <= 20 {
				t.Errorf("Fingerprint(%q)\n     = %q\npt-query-digest: %q", queries[i], got, pt)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d random queries differ", bad, len(queries))
	}
}

// parseCorpusString reads a one-string file of the fuzzing engine
// ("go test fuzz v1" and a Go string literal).
func parseCorpusString(data []byte) (string, error) {
	head, lit, ok := strings.Cut(string(data), "\n")
	if !ok || head != "go test fuzz v1" {
		return "", fmt.Errorf("not a fuzz corpus file")
	}
	lit = strings.TrimSpace(lit)
	if !strings.HasPrefix(lit, "string(") || !strings.HasSuffix(lit, ")") {
		return "", fmt.Errorf("not a single string: %s", lit)
	}
	var s string
	if _, err := fmt.Sscanf(lit[len("string("):len(lit)-1], "%q", &s); err != nil {
		return "", err
	}
	return s, nil
}
