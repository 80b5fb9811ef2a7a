package fingerprint

import (
	"crypto/md5"
	"unsafe"
)

const upperHex = "0123456789ABCDEF"

// ID returns the query ID of a fingerprint as pt-query-digest 3.2.1 prints
// it (the "checksum" of --output json and the "Query ID" of the report,
// without the "0x"): the MD5 of the fingerprint as 32 upper-case hex
// digits.
func ID(fingerprint string) string {
	var buf [32]byte
	fp := unsafe.Slice(unsafe.StringData(fingerprint), len(fingerprint))
	return string(AppendID(buf[:0], fp))
}

// AppendID appends ID(fingerprint) to dst without allocating when dst has
// room for 32 more bytes.
func AppendID(dst, fingerprint []byte) []byte {
	sum := md5.Sum(fingerprint)
	for _, b := range sum {
		dst = append(dst, upperHex[b>>4], upperHex[b&15])
	}
	return dst
}

// ShortID returns the older 16-digit form of the query ID: the last 16 hex
// digits of ID. pt-query-digest 2.x printed this form, and Percona's Go
// tools (go-mysql's query.Id) still do.
func ShortID(fingerprint string) string {
	return ID(fingerprint)[16:]
}
