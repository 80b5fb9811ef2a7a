// Package refapptest helps tests count what the reference app's pages do:
// it replays the home page's friend checks against the database, reads
// what a served page renders, logs in and fetches pages, and writes
// scenarios for it. Only tests import it.
package refapptest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacktune/stacktune/fingerprint"
	"github.com/stacktune/stacktune/refstack/refapp"
	"github.com/stacktune/stacktune/sandbox"
)

// The reference app's statements the tests count (the app's own text).
const (
	QIsFriend       = "SELECT COUNT(1) FROM relations WHERE (one = ? AND another = ?) OR (one = ? AND another = ?)"
	qLatestEntries  = "SELECT id, user_id, private, title, body, created_at FROM entries ORDER BY created_at DESC LIMIT 1000"
	qLatestComments = "SELECT id, entry_id, user_id, comment, created_at FROM comments ORDER BY created_at DESC LIMIT 1000"
)

// IsFriendID is the merged class (fingerprint.MergedID) of the home
// page's per-row friend check.
var IsFriendID = fingerprint.MergedID(fingerprint.Fingerprint(QIsFriend))

// Scenario writes a scenario logging in as the given users and browsing
// the home page (and, with more, other pages that leave it as it is).
func Scenario(t testing.TB, base string, users []int, more bool) string {
	t.Helper()
	var names, pws []string
	for _, u := range users {
		names = append(names, refapp.AccountName(u))
		pws = append(pws, refapp.Password(u))
	}
	sc := fmt.Sprintf(`name: trace
base_url: %s
data:
  users: [%s]
  passwords: [%s]
session:
  login:
    url: /login
    form: {email: "{{users}}@example.com", password: "{{passwords}}"}
    expect: {status: 302}
steps:
  - name: home
    url: /
    weight: 3
    expect: {status: 200, selector: "#friend-entries"}
`, base, strings.Join(names, ", "), strings.Join(pws, ", "))
	if more {
		sc += `  - name: friends
    url: /friends
    weight: 1
    expect: {status: 200}
  - name: profile
    url: /profile/user00003
    weight: 1
    expect: {status: 200}
`
	}
	path := filepath.Join(t.TempDir(), "trace.yaml")
	if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// FriendChecks replays the home page of user me against the database, as
// the app builds it, and returns the number of friend checks (QIsFriend)
// it runs and what it renders: the entry ids of its friends' entries and,
// for its friends' comments, the entry ids they are on.
func FriendChecks(t testing.TB, db *sql.DB, me int) (checks int, entries, commentEntries []int) {
	t.Helper()
	friends := map[int]bool{}
	rows, err := db.Query("SELECT one, another FROM relations WHERE one = ? OR another = ?", me, me)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a, b int
		rows.Scan(&a, &b)
		if a == me {
			friends[b] = true
		} else {
			friends[a] = true
		}
	}
	rows.Close()
	rows, err = db.Query(qLatestEntries)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, user int
		var private bool
		var title, body string
		var at any
		rows.Scan(&id, &user, &private, &title, &body, &at)
		if len(entries) >= 10 {
			continue
		}
		checks++
		if friends[user] {
			entries = append(entries, id)
		}
	}
	rows.Close()
	type entry struct {
		user    int
		private bool
	}
	all := map[int]entry{}
	rows, err = db.Query("SELECT id, user_id, private FROM entries")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int
		var e entry
		rows.Scan(&id, &e.user, &e.private)
		all[id] = e
	}
	rows.Close()
	rows, err = db.Query(qLatestComments)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, entryID, user int
		var text string
		var at any
		rows.Scan(&id, &entryID, &user, &text, &at)
		if len(commentEntries) >= 10 {
			continue
		}
		checks++
		if !friends[user] {
			continue
		}
		e, ok := all[entryID]
		if !ok {
			continue
		}
		if e.private && e.user != me {
			checks++
			if !friends[e.user] {
				continue
			}
		}
		commentEntries = append(commentEntries, entryID)
	}
	rows.Close()
	return checks, entries, commentEntries
}

var (
	reFriendEntry   = regexp.MustCompile(`<li class="friend-entry">.*?<a class="entry-title" href="/diary/entry/(\d+)"`)
	reFriendComment = regexp.MustCompile(`<li class="friend-comment">.*? on <a href="/diary/entry/(\d+)"`)
)

// Rendered reads the entry ids of a home page's friends' entries and
// friends' comments.
func Rendered(page string) (entries, commentEntries []int) {
	for _, m := range reFriendEntry.FindAllStringSubmatch(page, -1) {
		var id int
		fmt.Sscan(m[1], &id)
		entries = append(entries, id)
	}
	for _, m := range reFriendComment.FindAllStringSubmatch(page, -1) {
		var id int
		fmt.Sscan(m[1], &id)
		commentEntries = append(commentEntries, id)
	}
	return entries, commentEntries
}

// HomePage logs in as user me and fetches the home page, with a
// traceparent header when trace (32 hex digits) is not "".
func HomePage(t testing.TB, base string, me int, trace string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(base+"/login", url.Values{"email": {refapp.Email(me)}, "password": {refapp.Password(me)}})
	if err != nil {
		t.Error(err)
		return ""
	}
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
	if trace != "" {
		req.Header.Set("traceparent", "00-"+trace+"-00f067aa0ba902b7-01")
	}
	resp, err = c.Do(req)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Errorf("user %d: home page %s", me, resp.Status)
	}
	return string(b)
}

// ExpectedChecks is the friend checks of user me's home page, after
// checking that the replay renders what the app at base serves: the
// count is the page's.
func ExpectedChecks(t testing.TB, db *sql.DB, base string, me int) int {
	t.Helper()
	n, entries, comments := FriendChecks(t, db, me)
	pe, pc := Rendered(HomePage(t, base, me, ""))
	if !slices.Equal(pe, entries) || !slices.Equal(pc, comments) {
		t.Fatalf("user %d: the replay renders entries %v and comments on %v, the page %v and %v", me, entries, comments, pe, pc)
	}
	if len(pe) == 0 || n < 20 {
		t.Fatalf("user %d: %d friend checks, %d friends' entries: the data set does not show the N+1", me, n, len(pe))
	}
	return n
}

// Load creates the reference app's database on m and loads its data (the
// tests' small set at scale 0, refapp.Generate's at a scale above it),
// returning a connection to it that the test's end closes.
func Load(t testing.TB, m *sandbox.MariaDB, scale int) *sql.DB {
	t.Helper()
	db, err := refapp.Load(context.Background(), m.DB(), m.DSN("refapp"), scale)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
