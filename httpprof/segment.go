package httpprof

// Typed wildcards for segments that are obviously values.
const (
	wildNum  = ":num"
	wildUUID = ":uuid"
	wildHash = ":hash"
	wildDate = ":date"
	wildName = ":name" // learned: a high-cardinality position
	wildLong = ":long" // a segment too long to be a route word
)

// maxSegmentBytes is the longest segment kept literally.
const maxSegmentBytes = 64

// classify returns the typed wildcard a segment stands for, or "" when it is
// a literal.
func classify(s []byte) string {
	n := len(s)
	if n == 0 {
		return ""
	}
	if n > maxSegmentBytes {
		return wildLong
	}
	digits, hex, dashes := 0, 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
			hex++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			hex++
		case c == '-':
			dashes++
		}
	}
	switch {
	case digits == n:
		if n == 8 && isDate8(s) {
			return wildDate
		}
		return wildNum
	case n == 36 && dashes == 4 && hex == 32 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-':
		return wildUUID
	case hex == n && n >= 16 && digits > 0:
		return wildHash
	case n == 10 && dashes == 2 && digits == 8 && s[4] == '-' && s[7] == '-':
		return wildDate
	}
	return ""
}

// isDate8 recognises YYYYMMDD with a plausible month and day.
func isDate8(s []byte) bool {
	y := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	m := int(s[4]-'0')*10 + int(s[5]-'0')
	d := int(s[6]-'0')*10 + int(s[7]-'0')
	return y >= 1970 && y <= 2100 && m >= 1 && m <= 12 && d >= 1 && d <= 31
}

// staticExt lists extensions whose requests count as static files.
var staticExt = map[string]bool{
	"css": true, "js": true, "mjs": true, "map": true, "png": true, "jpg": true, "jpeg": true, "gif": true,
	"webp": true, "avif": true, "svg": true, "ico": true, "bmp": true, "woff": true, "woff2": true, "ttf": true,
	"otf": true, "eot": true, "mp4": true, "webm": true, "mp3": true, "ogg": true, "wav": true, "pdf": true,
	"txt": true, "xml": true, "zip": true, "gz": true, "wasm": true, "html": true, "htm": true,
}

// isStatic reports whether a request path names a static file by its
// extension. It does not allocate.
func isStatic(path []byte) bool {
	for i := len(path) - 1; i >= 0; i-- {
		switch path[i] {
		case '.':
			ext := path[i+1:]
			if len(ext) == 0 || len(ext) > 5 {
				return false
			}
			var lower [5]byte
			for j, c := range ext {
				if c >= 'A' && c <= 'Z' {
					c += 32
				}
				lower[j] = c
			}
			return staticExt[string(lower[:len(ext)])]
		case '/':
			return false
		}
	}
	return false
}
