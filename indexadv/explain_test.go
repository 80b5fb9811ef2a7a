package indexadv

import "testing"

func TestParseJSONPlan(t *testing.T) {
	cases := []struct {
		name, js      string
		access, key   string
		rows          int64
		filesort, tmp bool
	}{
		{"mariadb full scan and filesort", `{"query_block":{"select_id":1,"nested_loop":[{"read_sorted_file":{"filesort":{"sort_key":"relations.created_at desc","table":{"table_name":"relations","access_type":"ALL","rows":19982,"filtered":100}}}}]}}`,
			"ALL", "", 19982, true, false},
		{"mariadb index_merge", `{"query_block":{"select_id":1,"nested_loop":[{"read_sorted_file":{"filesort":{"sort_key":"x","table":{"table_name":"relations","access_type":"index_merge","possible_keys":["a","b"],"index_merge":{"sort_union":[{"range":{"key":"a","used_key_parts":["one"]}},{"range":{"key":"b","used_key_parts":["another"]}}]},"rows":34}}}}]}}`,
			"index_merge", "a,b", 34, true, false},
		{"mariadb group by", `{"query_block":{"select_id":1,"filesort":{"sort_key":"comments.entry_id","temporary_table":{"nested_loop":[{"table":{"table_name":"comments","access_type":"ALL","rows":10000}}]}}}}`,
			"ALL", "", 10000, true, true},
		{"mysql", `{"query_block":{"select_id":1,"ordering_operation":{"using_filesort":true,"using_temporary_table":false,"table":{"table_name":"t","access_type":"ref","key":"k","rows_examined_per_scan":12}}}}`,
			"ref", "k", 12, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParseJSONPlan([]byte(c.js))
			if err != nil {
				t.Fatal(err)
			}
			if tb := p.Tables[0]; tb.Access != c.access || tb.Key != c.key || p.Rows != c.rows || p.Filesort != c.filesort || p.Temporary != c.tmp {
				t.Errorf("got %+v", p)
			}
		})
	}
	join := `{"query_block":{"select_id":1,"nested_loop":[{"table":{"table_name":"c","access_type":"ALL","rows":10000}},{"table":{"table_name":"u","access_type":"eq_ref","key":"PRIMARY","rows":1}}]}}`
	p, err := ParseJSONPlan([]byte(join))
	if err != nil || len(p.Tables) != 2 || p.Tables[0].Table != "c" || p.Rows != 20000 {
		t.Errorf("join: %+v %v", p, err)
	}
	for _, bad := range []string{"", "{", `{"query_block":{}}`} {
		if _, err := ParseJSONPlan([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseJSONPlan(f *testing.F) {
	f.Add(`{"query_block":{"select_id":1,"nested_loop":[{"table":{"table_name":"c","access_type":"ALL","rows":10000}}]}}`)
	f.Add(`{"query_block":{"filesort":{"temporary_table":{"table":{"table_name":"t","rows":"12","index_merge":{"sort_union":[{"range":{"key":"a"}}]}}}}}}`)
	f.Add(`[1, {"table": {"table_name": 5}}]`)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseJSONPlan([]byte(s))
		if err == nil && (p == nil || len(p.Tables) == 0 || p.Rows < 1) {
			t.Fatalf("no error and no plan for %q", s)
		}
	})
}
