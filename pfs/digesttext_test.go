package pfs

import (
	"testing"

	"github.com/stacktune/stacktune/fingerprint"
)

// TestDigestTextMatchesSlowLogClass checks that DIGEST_TEXT as MariaDB and
// MySQL write it lands in the same class as the statement in a slow log.
func TestDigestTextMatchesSlowLogClass(t *testing.T) {
	cases := []struct{ name, digestText, query string }{
		{"or scan", "SELECT * FROM `relations` WHERE ONE = ? OR `another` = ? ORDER BY `created_at` DESC ",
			"SELECT * FROM relations WHERE one = 517 OR another = 517 ORDER BY created_at DESC"},
		{"column list", "SELECT `id` , `account_name` , `nick_name` FROM `users` WHERE `id` = ? ",
			"SELECT id, account_name, nick_name FROM users WHERE id = 823"},
		{"function and in list", "SELECT COUNT ( * ) FROM `comments` WHERE `entry_id` IN (...) ",
			"SELECT COUNT(*) FROM comments WHERE entry_id IN (4760,4758,4757)"},
		{"limit", "SELECT `id` , `body` , `created_at` FROM `entries` WHERE `user_id` = ? ORDER BY `created_at` DESC LIMIT ? ",
			"SELECT id, body, created_at FROM entries WHERE user_id = 12 ORDER BY created_at DESC LIMIT 5"},
		{"update", "UPDATE `users` SET `nick_name` = ? WHERE `id` = ? ",
			"UPDATE users SET nick_name = 'x' WHERE id = 3"},
		{"quoted identifier that needs quotes", "SELECT `a b` FROM `t` ", "SELECT `a b` FROM t"},
		{"mysql 8 multi-row values", "INSERT INTO `t` ( `a` , `b` ) VALUES (...) /* , ... */ ",
			"INSERT INTO t (a, b) VALUES (1, 2), (3, 4)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sql := digestTextToSQL(tc.digestText)
			got, want := fingerprint.Fingerprint(sql), fingerprint.Fingerprint(tc.query)
			if got != want {
				t.Errorf("digest text %q\n  as SQL %q\n  fingerprints to %q\n  slow log query gives %q", tc.digestText, sql, got, want)
			}
		})
	}
}
