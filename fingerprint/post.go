package fingerprint

import "bytes"

// The passes in this file run on the finished, lower-cased fingerprint
// out[base:]. They only do work when their keyword occurs, which
// bytes.Index finds quickly.

var (
	kwUnion   = []byte("union")
	kwSelect  = []byte("select")
	kwLimit   = []byte("limit ?")
	kwOrderBy = []byte("order by ")
	kwAll     = []byte("all")
	kwAsc     = []byte("asc")
)

// splice replaces b[from:to] by r, in place when possible.
func splice(b []byte, from, to int, r []byte) []byte {
	d := len(r) - (to - from)
	if d <= 0 {
		copy(b[from:], r)
		copy(b[from+len(r):], b[to:])
		return b[:len(b)+d]
	}
	n := len(b)
	for i := 0; i < d; i++ {
		b = append(b, 0)
	}
	copy(b[to+d:], b[to:n])
	copy(b[from:], r)
	return b
}

// unionRep matches one "\sunion(?:\sall)?\s" + sel at pos, preferring the
// "union all" reading like Perl's greedy (?:\sall)?. It returns the end of
// the match and the end of the "\sunion..." part, or end < 0.
func unionRep(b []byte, pos int, sel []byte) (end, kwEnd int) {
	if pos >= len(b) || !isSpace(b[pos]) || !bytes.HasPrefix(b[pos+1:], kwUnion) {
		return -1, 0
	}
	k := pos + 6
	if k+4 < len(b) && isSpace(b[k]) && bytes.HasPrefix(b[k+1:], kwAll) &&
		isSpace(b[k+4]) && bytes.HasPrefix(b[k+5:], sel) {
		return k + 5 + len(sel), k + 4
	}
	if k < len(b) && isSpace(b[k]) && bytes.HasPrefix(b[k+1:], sel) {
		return k + 1 + len(sel), k
	}
	return -1, 0
}

// unionPass applies rule 18:
// s/\b(select\s.*?)(?:(\sunion(?:\sall)?)\s\1)+/$1 \/*repeat$2*\//g
func unionPass(b []byte, base int) []byte {
	if bytes.Index(b[base:], kwUnion) < 0 {
		return b
	}
	p := base
	prevWord := false // whether the original byte before p was a word byte
	firstUnion := -1  // the first "union" at or after q+8, when >= q+8
	for q := p; ; q++ {
		k := bytes.Index(b[q:], kwSelect)
		if k < 0 {
			return b
		}
		q += k
		if q+6 >= len(b) || !isSpace(b[q+6]) {
			continue
		}
		if q == p && prevWord || q > base && q != p && isWordB[b[q-1]] {
			continue
		}
		// Find the shortest $1 = b[q:e] (e >= q+7) followed by a repeat.
		if firstUnion < q+8 {
			if q+8 > len(b) {
				return b
			}
			k := bytes.Index(b[q+8:], kwUnion)
			if k < 0 {
				return b // no union left to repeat anything
			}
			firstUnion = q + 8 + k
		}
		end, kwEnd, e := -1, 0, 0
		for u := firstUnion; u < len(b); u++ {
			if u > firstUnion {
				k := bytes.Index(b[u:], kwUnion)
				if k < 0 {
					break
				}
				u += k
			}
			if e = u - 1; !isSpace(b[e]) {
				continue
			}
			if end, kwEnd = unionRep(b, e, b[q:e]); end >= 0 {
				break
			}
		}
		if end < 0 {
			continue
		}
		kwStart := e
		for {
			m, ke := unionRep(b, end, b[q:e])
			if m < 0 {
				break
			}
			kwStart, end, kwEnd = end, m, ke
		}
		var r [32]byte
		n := copy(r[:], " /*repeat")
		n += copy(r[n:], b[kwStart:kwEnd])
		n += copy(r[n:], "*/")
		prevWord = isWordB[b[end-1]]
		b = splice(b, e, end, r[:n])
		p = e + n
		q = p - 1
		firstUnion = -1
	}
}

// limitPass applies rule 19: the first "limit ?, ?", "limit ?,?" or
// "limit ? offset ?" becomes "limit ?".
func limitPass(b []byte, base int) []byte {
	for q := base; ; q++ {
		k := bytes.Index(b[q:], kwLimit)
		if k < 0 {
			return b
		}
		q += k
		if q > base && isWordB[b[q-1]] {
			continue
		}
		t := b[q+7:]
		switch {
		case len(t) >= 3 && t[0] == ',' && t[1] == ' ' && t[2] == '?':
			return splice(b, q+7, q+10, nil)
		case len(t) >= 2 && t[0] == ',' && t[1] == '?':
			return splice(b, q+7, q+9, nil)
		case bytes.HasPrefix(t, []byte(" offset ?")):
			return splice(b, q+7, q+16, nil)
		}
		return b
	}
}

// orderByPass applies rule 20: after the first "order by ", every
// "\s+asc" that follows is removed, as pt's
// s/\G(.+?)\s+ASC/$1/gi does (once, starting at the ORDER BY).
func orderByPass(b []byte, base int) []byte {
	q := base
	for {
		k := bytes.Index(b[q:], kwOrderBy)
		if k < 0 {
			return b
		}
		q += k
		if q == base || !isWordB[b[q-1]] {
			break
		}
		q++
	}
	r := q + len(kwOrderBy)
	w := r
	for {
		found := false
		for j := r + 1; j < len(b); j++ {
			if !isSpace(b[j]) {
				continue
			}
			k := j
			for k < len(b) && isSpace(b[k]) {
				k++
			}
			if bytes.HasPrefix(b[k:], kwAsc) {
				w += copy(b[w:], b[r:j])
				r = k + 3
				found = true
				break
			}
			j = k - 1
		}
		if !found {
			break
		}
	}
	if w == r {
		return b
	}
	w += copy(b[w:], b[r:])
	return b[:w]
}
