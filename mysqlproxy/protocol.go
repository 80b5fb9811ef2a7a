package mysqlproxy

import (
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
