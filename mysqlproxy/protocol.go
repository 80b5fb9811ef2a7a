package mysqlproxy

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
)

// maxPayload is the largest payload of one packet: a payload of exactly
// this length continues in the next packet.
const maxPayload = 0xFFFFFF

// Capability flags (the client/server protocol's CLIENT_*).
const (
	capLongPassword        uint32 = 1 << 0 // on MySQL's side; MariaDB servers clear it to announce extended capabilities
	capConnectWithDB       uint32 = 1 << 3
	capCompress            uint32 = 1 << 5
	capProtocol41          uint32 = 1 << 9
	capSSL                 uint32 = 1 << 11
	capSecureConnection    uint32 = 1 << 15
	capMultiStatements     uint32 = 1 << 16
	capPluginAuth          uint32 = 1 << 19
	capConnectAttrs        uint32 = 1 << 20
	capPluginAuthLenenc    uint32 = 1 << 21
	capDeprecateEOF        uint32 = 1 << 24
	capOptionalMetadata    uint32 = 1 << 25
	capZstd                uint32 = 1 << 26
	capQueryAttributes     uint32 = 1 << 27
	capSSLVerifyServerCert uint32 = 1 << 30
)

// stripped are the capabilities the proxy removes from the server's
// greeting, so that clients do not ask for them: TLS and compression (the
// proxy reads the statements, so it must see plain packets), query
// attributes and optional result-set metadata (they change the layout of
// COM_QUERY and of result sets).
const stripped = capSSL | capCompress | capZstd | capQueryAttributes | capOptionalMetadata | capSSLVerifyServerCert

// Command bytes.
const (
	comQuit             = 0x01
	comInitDB           = 0x02
	comQuery            = 0x03
	comFieldList        = 0x04
	comStatistics       = 0x09
	comChangeUser       = 0x11
	comBinlogDump       = 0x12
	comRegisterSlave    = 0x15
	comStmtPrepare      = 0x16
	comStmtExecute      = 0x17
	comStmtSendLongData = 0x18
	comStmtClose        = 0x19
	comStmtReset        = 0x1a
	comStmtFetch        = 0x1c
	comBinlogDumpGTID   = 0x1e
	comResetConnection  = 0x1f
	comStmtBulkExecute  = 0xfa
)

// Server status flags.
const (
	statusCursorExists = 0x0040
	statusMoreResults  = 0x0008
)

// Packet headers of responses.
const (
	hdrOK     = 0x00
	hdrInfile = 0xfb
	hdrEOF    = 0xfe
	hdrERR    = 0xff
)

// errMalformed is a packet the proxy cannot read: the connection is then
// passed through without recording.
var errMalformed = errors.New("malformed packet")

// greeting is what the proxy reads from the server's initial handshake.
type greeting struct {
	connID uint32
	caps   uint32 // as the server sent them
	// lowOff is the offset of the lower capability bytes in the payload;
	// upper are at lowOff+5 (-1: the greeting has none), MariaDB's
	// extended capabilities at lowOff+14 (-1: none).
	lowOff, upOff, extOff int
}

// parseGreeting reads a protocol-10 initial handshake.
func parseGreeting(p []byte) (greeting, error) {
	var g greeting
	if len(p) < 1 || p[0] != 10 {
		return g, fmt.Errorf("%w: handshake protocol %d (only 10 is known)", errMalformed, first(p))
	}
	i := 1
	for i < len(p) && p[i] != 0 {
		i++
	}
	i++ // the NUL after the server version
	if i+4+8+1+2 > len(p) {
		return g, fmt.Errorf("%w: short handshake", errMalformed)
	}
	g.connID = binary.LittleEndian.Uint32(p[i:])
	i += 4 + 8 + 1
	g.lowOff, g.upOff, g.extOff = i, -1, -1
	g.caps = uint32(binary.LittleEndian.Uint16(p[i:]))
	i += 2
	if i+1+2+2 <= len(p) {
		g.upOff = i + 3
		g.caps |= uint32(binary.LittleEndian.Uint16(p[g.upOff:])) << 16
	}
	if g.caps&capLongPassword == 0 && i+16 <= len(p) {
		g.extOff = i + 12 // charset 1, status 2, upper caps 2, auth data length 1, reserved 6
	}
	return g, nil
}

// rewriteGreeting removes the stripped capabilities (and MariaDB's
// extended ones, and extra) from the greeting p, in place.
func rewriteGreeting(p []byte, g greeting, extra uint32) {
	c := g.caps &^ (stripped | extra)
	binary.LittleEndian.PutUint16(p[g.lowOff:], uint16(c))
	if g.upOff >= 0 {
		binary.LittleEndian.PutUint16(p[g.upOff:], uint16(c>>16))
	}
	if g.extOff >= 0 {
		binary.LittleEndian.PutUint32(p[g.extOff:], 0)
	}
}

// ownGreeting puts the proxy's connection number and a scramble of its
// own (printable, without NUL or '$', as servers make them) in the
// greeting p, in place: the client computes its first auth response over
// it, which the proxy then drops (deferAuth).
func ownGreeting(p []byte, conn uint32) {
	i := bytes.IndexByte(p, 0) + 1 // after the server version
	if i == 0 || i+4+8 > len(p) {
		return
	}
	binary.LittleEndian.PutUint32(p[i:], conn)
	scramble(p[i+4 : i+12])
	// charset 1, status 2, upper caps 2, auth data length 1, reserved 10,
	// then the rest of the scramble and its NUL.
	j := i + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10
	if j >= len(p) {
		return
	}
	k := bytes.IndexByte(p[j:], 0)
	if k < 0 {
		return
	}
	scramble(p[j : j+k])
}

func scramble(b []byte) {
	rand.Read(b)
	for i := range b {
		b[i] = '%' + b[i]%('~'-'%'+1)
	}
}

// handshake is what the proxy reads from the client's handshake response.
type handshake struct {
	caps uint32
	ext  uint32 // MariaDB's extended capabilities (0 when none)
}

// parseHandshake reads the client's handshake response (or SSL request).
func parseHandshake(p []byte) (handshake, error) {
	var h handshake
	if len(p) < 2 {
		return h, fmt.Errorf("%w: short handshake response", errMalformed)
	}
	h.caps = uint32(binary.LittleEndian.Uint16(p))
	if h.caps&capProtocol41 == 0 {
		return h, nil
	}
	if len(p) < 32 {
		return h, fmt.Errorf("%w: short handshake response", errMalformed)
	}
	h.caps = binary.LittleEndian.Uint32(p)
	if h.caps&capLongPassword == 0 {
		h.ext = binary.LittleEndian.Uint32(p[28:])
	}
	return h, nil
}

// deferredPlugin is the authentication plugin the proxy names in the
// handshake response it sends the server in place of the client's: no
// server has it, so the server always answers with an auth switch request
// carrying its own plugin and scramble, which the client then answers
// itself. The client computed its first answer over the proxy's greeting
// (the proxy greets before it connects to the server), so that answer
// cannot go to the server.
const deferredPlugin = "stacktune_trace_proxy"

// deferAuth returns the handshake response p (a protocol-4.1 one, with
// CLIENT_PLUGIN_AUTH) with its auth response emptied and its plugin
// replaced by deferredPlugin; the username, database, attributes and
// capabilities stay as they are.
func deferAuth(p []byte, caps uint32) ([]byte, error) {
	bad := fmt.Errorf("%w: a handshake response cut short", errMalformed)
	i := 32
	if i > len(p) {
		return nil, bad
	}
	user := bytes.IndexByte(p[i:], 0) // the username
	if user < 0 {
		return nil, bad
	}
	i += user + 1
	authStart := i
	var empty []byte
	switch {
	case caps&capPluginAuthLenenc != 0:
		n, j, ok := lenenc(p, i)
		if !ok || n > uint64(len(p)-j) {
			return nil, bad
		}
		i, empty = j+int(n), []byte{0}
	case caps&capSecureConnection != 0:
		if i >= len(p) || int(p[i]) > len(p)-i-1 {
			return nil, bad
		}
		i, empty = i+1+int(p[i]), []byte{0}
	default:
		j := bytes.IndexByte(p[i:], 0)
		if j < 0 {
			return nil, bad
		}
		i, empty = i+j+1, []byte{0}
	}
	dbStart := i
	if caps&capConnectWithDB != 0 {
		j := bytes.IndexByte(p[i:], 0)
		if j < 0 {
			return nil, bad
		}
		i += j + 1
	}
	dbEnd := i
	if i < len(p) { // the plugin name (some clients leave it out)
		j := bytes.IndexByte(p[i:], 0)
		if j < 0 {
			return nil, bad
		}
		i += j + 1
	}
	out := make([]byte, 0, len(p)+len(deferredPlugin)+2)
	out = append(out, p[:authStart]...)
	out = append(out, empty...)
	out = append(out, p[dbStart:dbEnd]...)
	out = append(out, deferredPlugin...)
	out = append(out, 0)
	return append(out, p[i:]...), nil
}

// refusal says why the proxy refuses what a client asked, "" when it
// does not.
func (h handshake) refusal() string {
	switch {
	case h.caps&capProtocol41 == 0:
		return "the client speaks the pre-4.1 protocol, which the proxy does not read"
	case h.caps&capSSL != 0:
		return "the client asks for TLS: the proxy reads the statements, so it passes no TLS (connect to it without TLS; it offers none)"
	case h.caps&(capCompress|capZstd) != 0:
		return "the client asks for compression: the proxy reads the statements, so it passes no compression (connect to it without compression; it offers none)"
	case h.caps&(capQueryAttributes|capOptionalMetadata) != 0 || h.ext != 0:
		return "the client asks for protocol extensions the proxy did not offer"
	case h.caps&capPluginAuth == 0:
		return "the client does not support authentication plugins (CLIENT_PLUGIN_AUTH), which the proxy needs to have the server authenticate it"
	}
	return ""
}

// errPacket is an ERR packet's payload.
func errPacket(code uint16, state, msg string) []byte {
	p := []byte{hdrERR, byte(code), byte(code >> 8), '#'}
	p = append(p, (state + "00000")[:5]...)
	return append(p, msg...)
}

// lenenc reads a length-encoded integer at p[i:], returning it and the
// offset after it.
func lenenc(p []byte, i int) (uint64, int, bool) {
	if i >= len(p) {
		return 0, i, false
	}
	switch c := p[i]; {
	case c < 0xfb:
		return uint64(c), i + 1, true
	case c == 0xfc && i+3 <= len(p):
		return uint64(binary.LittleEndian.Uint16(p[i+1:])), i + 3, true
	case c == 0xfd && i+4 <= len(p):
		return uint64(p[i+1]) | uint64(p[i+2])<<8 | uint64(p[i+3])<<16, i + 4, true
	case c == 0xfe && i+9 <= len(p):
		return binary.LittleEndian.Uint64(p[i+1:]), i + 9, true
	}
	return 0, i, false
}

// okStatus reads an OK packet's affected rows and status flags.
func okStatus(p []byte) (affected uint64, status uint16, ok bool) {
	affected, i, ok := lenenc(p, 1)
	if !ok {
		return 0, 0, false
	}
	if _, i, ok = lenenc(p, i); !ok || i+2 > len(p) {
		return 0, 0, false
	}
	return affected, binary.LittleEndian.Uint16(p[i:]), true
}

// eofStatus reads an EOF packet's status flags.
func eofStatus(p []byte) (uint16, bool) {
	if len(p) < 5 {
		return 0, false
	}
	return binary.LittleEndian.Uint16(p[3:]), true
}

func first(p []byte) int {
	if len(p) == 0 {
		return -1
	}
	return int(p[0])
}
