package main

import (
	"io"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	if _, err := parseFlags([]string{"--rounds", "3"}, io.Discard); err == nil {
		t.Error("3 rounds accepted")
	}
	if _, err := parseFlags([]string{"--upstream", "pipe"}, io.Discard); err == nil {
		t.Error("an unknown upstream accepted")
	}
	c, err := parseFlags([]string{"--rounds", "50", "--record=false"}, io.Discard)
	if err != nil || c.rounds != 50 || c.record || c.upstream != "tcp" {
		t.Errorf("%+v %v", c, err)
	}
}

func TestTable(t *testing.T) {
	ms := func(v ...int) *sample {
		s := &sample{}
		for _, x := range v {
			s.lat = append(s.lat, time.Duration(x)*time.Millisecond)
		}
		return s
	}
	res := map[string]map[string]*sample{"direct": {}, "proxy": {}}
	for _, p := range pages {
		res["direct"][p], res["proxy"][p] = ms(10, 10, 10, 12, 30), ms(11, 12, 12, 13, 40)
	}
	rows := table(res, map[string]float64{"/": 100})
	if rows[0].direct[0] != 10*time.Millisecond || rows[0].proxy[0] != 12*time.Millisecond || rows[0].overhead != 2*time.Millisecond || rows[0].perStmt != 20*time.Microsecond {
		t.Errorf("%+v", rows[0])
	}
	if rows[1].perStmt != 0 {
		t.Errorf("no statements, yet %v per statement", rows[1].perStmt)
	}
}
