package mysqlproxy

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
)

// Command is the kind of a Statement.
type Command uint8

// Commands a Statement reports.
const (
	// Query is a COM_QUERY: Text is the statement (one statement of a
	// multi-statement query when the results could be matched to them).
	Query Command = iota + 1
	// Execute is a COM_STMT_EXECUTE: Text is the prepared statement's
	// text (with ? for its parameters).
	Execute
	// Prepare is a COM_STMT_PREPARE: a round trip that runs nothing, but
	// takes time.
	Prepare
	// Other is any other command with a response (ping, init db, fetch,
	// reset, ...): Text is empty.
	Other
)

func (c Command) String() string {
	switch c {
	case Query:
		return "query"
	case Execute:
		return "execute"
	case Prepare:
		return "prepare"
	case Other:
		return "other"
	}
	return "unknown"
}

// Statement is one command the proxy saw, with its response.
type Statement struct {
	// Conn numbers the proxy's client connections from 1; ServerID is the
	// server's connection id (its processlist id, the slow log's
	// Thread_id).
	Conn     uint64
	ServerID uint32
	Command  Command
	// Text is the statement text, at most Options.MaxText bytes (Cut
	// says it was longer). It is valid only during the OnStatement call.
	Text []byte
	Cut  bool
	// Start is when the proxy read the command from the client, End when
	// it read the last packet of the server's response.
	Start, End time.Time
	// RowsSent are the result rows, RowsAffected the OK packets' affected
	// rows; Error is the server's error code (0: none).
	RowsSent, RowsAffected int64
	Error                  uint16
}

// Duration is End - Start.
func (s *Statement) Duration() time.Duration { return s.End.Sub(s.Start) }

// phases of a session.
type phase uint8

const (
	phaseAuth phase = iota
	phaseCommand
	phaseUntracked // passed through without recording
)

// response states of the command at the head of the queue.
type respState uint8

const (
	stStart      respState = iota // OK, ERR, LOCAL INFILE or a column count
	stColumns                     // column definitions
	stColEOF                      // the EOF after them
	stRows                        // rows up to the terminator
	stPrepareOK                   // the COM_STMT_PREPARE OK
	stParams                      // its parameter definitions
	stParamsEOF                   // and their EOF
	stPCols                       // its column definitions
	stPColsEOF                    // and their EOF
	stFieldList                   // COM_FIELD_LIST: definitions up to EOF
	stSingle                      // one packet
	stChangeUser                  // COM_CHANGE_USER: OK, ERR or an auth exchange
)

// result is one result of a command's response.
type result struct {
	end      time.Time
	rows     int64
	affected int64
	err      uint16
}

// pending is a command waiting for (the rest of) its response.
type pending struct {
	cmd    byte
	text   []byte
	cut    bool
	stmtID uint32
	start  time.Time
	// the prepared statement's parameter and column counts
	params, cols int
	results      []result
}

// session is the protocol state of one proxied connection: what each
// side's packets mean. Both directions' goroutines call it; it holds its
// own lock. It never changes a byte of what is forwarded: a state it
// cannot follow makes it stop recording (phaseUntracked), nothing else.
type session struct {
	mu       sync.Mutex
	conn     uint64
	serverID uint32
	caps     uint32 // negotiated
	phase    phase
	queue    []pending
	state    respState
	left     int // definitions left in stColumns, stParams, stPCols
	rows     int64
	infile   bool // the client is sending a LOCAL INFILE's data
	cCont    bool // the next client packet continues a large payload
	sCont    bool // the next server packet continues a large payload
	prepared map[uint32][]byte
	prepSize int
	lim      limits
	counts   *counters
	// lastServer is when the server's last packet was read (UnixNano).
	lastServer atomic.Int64
}

// limits bound what a session keeps.
type limits struct {
	maxText, maxPrepared, maxPending int
}

func newSession(conn uint64, serverID, caps uint32, lim limits, counts *counters) *session {
	return &session{conn: conn, serverID: serverID, caps: caps, prepared: map[uint32][]byte{}, lim: lim, counts: counts}
}

// authenticated reports a session past its first authentication.
func (s *session) authenticated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase != phaseAuth || len(s.queue) > 0 // a COM_CHANGE_USER's exchange is not the first
}

// busy reports a session whose client may rightly send nothing for idle:
// a command of its awaits (the rest of) a response, or it is sending a
// LOCAL INFILE's data, or the server sent something within idle.
func (s *session) busy(idle time.Duration) bool {
	if time.Since(time.Unix(0, s.lastServer.Load())) < idle {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) > 0 || s.infile
}

// untrack stops recording for good.
func (s *session) untrack() {
	if s.phase != phaseUntracked {
		s.phase = phaseUntracked
		s.queue, s.prepared = nil, nil
		s.counts.untracked.Add(1)
	}
}

// fromClient reads one client packet: its payload's length n and its
// first bytes p (the whole payload, up to maxText+1 bytes).
func (s *session) fromClient(n int, p []byte, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cCont {
		s.cCont = n == maxPayload
		return
	}
	s.cCont = n == maxPayload
	if s.phase != phaseCommand {
		return
	}
	if s.infile {
		if n == 0 {
			s.infile = false
		}
		return
	}
	if len(p) == 0 {
		s.untrack()
		return
	}
	pd := pending{cmd: p[0], start: now}
	switch p[0] {
	case comQuit, comStmtSendLongData:
		return
	case comStmtClose:
		if len(p) >= 5 {
			s.forget(binary.LittleEndian.Uint32(p[1:]))
		}
		return
	case comQuery, comStmtPrepare:
		pd.text, pd.cut = s.text(p[1:], n-1)
	case comStmtExecute, comStmtFetch, comStmtReset:
		if len(p) < 5 {
			s.untrack()
			return
		}
		pd.stmtID = binary.LittleEndian.Uint32(p[1:])
		if p[0] == comStmtExecute {
			t, ok := s.prepared[pd.stmtID]
			if !ok {
				s.counts.unknownStmt.Add(1)
				t = []byte("/* a statement prepared before the proxy recorded it */")
			}
			pd.text = t
		}
	case comResetConnection, comChangeUser:
		s.prepared, s.prepSize = map[uint32][]byte{}, 0
	case comBinlogDump, comBinlogDumpGTID, comRegisterSlave, comStmtBulkExecute:
		s.untrack() // streams and bulk layouts the proxy does not follow
		return
	}
	if len(s.queue) >= s.lim.maxPending {
		s.untrack()
		return
	}
	if len(s.queue) == 0 {
		s.begin(pd.cmd)
	}
	s.queue = append(s.queue, pd)
}

// text copies a statement's text, at most maxText bytes.
func (s *session) text(p []byte, n int) ([]byte, bool) {
	cut := n > len(p) || len(p) > s.lim.maxText
	if len(p) > s.lim.maxText {
		p = p[:s.lim.maxText]
	}
	if cut {
		s.counts.cut.Add(1)
	}
	return append([]byte(nil), p...), cut
}

func (s *session) forget(id uint32) {
	if t, ok := s.prepared[id]; ok {
		s.prepSize -= len(t)
		delete(s.prepared, id)
	}
}

// begin sets the response state for a command now at the head of the
// queue.
func (s *session) begin(cmd byte) {
	s.rows, s.left = 0, 0
	switch cmd {
	case comQuery, comStmtExecute:
		s.state = stStart
	case comStmtPrepare:
		s.state = stPrepareOK
	case comStmtFetch:
		s.state = stRows
	case comFieldList:
		s.state = stFieldList
	case comChangeUser:
		s.state = stChangeUser
	default:
		s.state = stSingle
	}
}

// fromServer reads one server packet (its payload's length n and its
// first bytes p) and returns the statements it completes.
func (s *session) fromServer(n int, p []byte, now time.Time, out []Statement) []Statement {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sCont {
		s.sCont = n == maxPayload
		return out
	}
	s.sCont = n == maxPayload
	switch s.phase {
	case phaseAuth:
		switch first(p) {
		case hdrOK:
			s.phase = phaseCommand
			if len(s.queue) > 0 && s.queue[0].cmd == comChangeUser {
				out = s.finish(now, out)
			}
		case hdrERR:
			if len(s.queue) > 0 && s.queue[0].cmd == comChangeUser {
				s.phase = phaseCommand
				out = s.finish(now, out)
			}
		}
		return out
	case phaseUntracked:
		return out
	}
	if len(s.queue) == 0 {
		if first(p) != hdrERR { // a server may send an ERR as it closes a connection
			s.untrack()
		}
		return out
	}
	pd := &s.queue[0]
	deprecateEOF := s.caps&capDeprecateEOF != 0
	bad := func() []Statement { s.untrack(); return out }
	switch s.state {
	case stSingle:
		pd.results = append(pd.results, result{end: now, err: errCode(p)})
		return s.finish(now, out)
	case stChangeUser:
		switch first(p) {
		case hdrOK, hdrERR:
			return s.finish(now, out)
		}
		s.phase = phaseAuth // an auth switch or more auth data
		return out
	case stStart:
		switch first(p) {
		case hdrOK:
			aff, status, ok := okStatus(p)
			if !ok {
				return bad()
			}
			pd.results = append(pd.results, result{end: now, affected: int64(aff)})
			if status&statusMoreResults == 0 {
				return s.finish(now, out)
			}
		case hdrERR:
			pd.results = append(pd.results, result{end: now, err: errCode(p)})
			return s.finish(now, out)
		case hdrInfile:
			s.infile = true
		default:
			cols, _, ok := lenenc(p, 0)
			if !ok || cols == 0 || cols > 1<<16 {
				return bad()
			}
			s.state, s.left, s.rows = stColumns, int(cols), 0
		}
	case stColumns:
		if s.left--; s.left == 0 {
			s.state = stRows
			if !deprecateEOF {
				s.state = stColEOF
			}
		}
	case stColEOF:
		status, ok := eofStatus(p)
		if first(p) != hdrEOF || !ok {
			return bad()
		}
		s.state = stRows
		if pd.cmd == comStmtExecute && status&statusCursorExists != 0 {
			pd.results = append(pd.results, result{end: now})
			return s.finish(now, out) // the rows come with COM_STMT_FETCH
		}
	case stRows:
		switch {
		case first(p) == hdrERR:
			pd.results = append(pd.results, result{end: now, rows: s.rows, err: errCode(p)})
			return s.finish(now, out)
		case first(p) == hdrEOF && n < maxPayload && (deprecateEOF || n < 9):
			var status uint16
			var ok bool
			if deprecateEOF {
				_, status, ok = okStatus(p)
			} else {
				status, ok = eofStatus(p)
			}
			if !ok {
				return bad()
			}
			pd.results = append(pd.results, result{end: now, rows: s.rows})
			s.rows = 0
			if status&statusMoreResults == 0 || pd.cmd == comStmtFetch {
				return s.finish(now, out)
			}
			s.state = stStart
		default:
			s.rows++
		}
	case stPrepareOK:
		if first(p) == hdrERR {
			pd.results = append(pd.results, result{end: now, err: errCode(p)})
			return s.finish(now, out)
		}
		if first(p) != hdrOK || len(p) < 12 {
			return bad()
		}
		id := binary.LittleEndian.Uint32(p[1:])
		pd.stmtID = id
		pd.cols, pd.params = int(binary.LittleEndian.Uint16(p[5:])), int(binary.LittleEndian.Uint16(p[7:]))
		s.remember(id, pd.text)
		pd.results = append(pd.results, result{end: now})
		return s.afterPrepare(stParams, now, out)
	case stParams:
		if s.left--; s.left == 0 {
			if !deprecateEOF {
				s.state = stParamsEOF
				return out
			}
			return s.afterPrepare(stPCols, now, out)
		}
	case stParamsEOF:
		if first(p) != hdrEOF {
			return bad()
		}
		return s.afterPrepare(stPCols, now, out)
	case stPCols:
		if s.left--; s.left == 0 {
			if !deprecateEOF {
				s.state = stPColsEOF
				return out
			}
			pd.results[0].end = now
			return s.finish(now, out)
		}
	case stPColsEOF:
		if first(p) != hdrEOF {
			return bad()
		}
		pd.results[0].end = now
		return s.finish(now, out)
	case stFieldList:
		if first(p) == hdrERR || (first(p) == hdrEOF && n < 9) {
			pd.results = append(pd.results, result{end: now})
			return s.finish(now, out)
		}
	}
	return out
}

// afterPrepare moves a COM_STMT_PREPARE's response on to its parameter
// definitions (from stParams) or its column definitions (from stPCols),
// skipping empty ones.
func (s *session) afterPrepare(next respState, now time.Time, out []Statement) []Statement {
	pd := &s.queue[0]
	if next == stParams && pd.params > 0 {
		s.state, s.left = stParams, pd.params
		return out
	}
	if pd.cols > 0 {
		s.state, s.left = stPCols, pd.cols
		return out
	}
	pd.results[0].end = now
	return s.finish(now, out)
}

// remember keeps a prepared statement's text, within the session's bound.
func (s *session) remember(id uint32, text []byte) {
	s.forget(id)
	if s.prepSize+len(text) > s.lim.maxPrepared {
		s.counts.preparedDropped.Add(1)
		return
	}
	s.prepared[id] = text
	s.prepSize += len(text)
}

// finish pops the head of the queue, appends its statements to out and
// sets up the next command's response.
func (s *session) finish(now time.Time, out []Statement) []Statement {
	pd := s.queue[0]
	copy(s.queue, s.queue[1:])
	s.queue = s.queue[:len(s.queue)-1]
	if len(s.queue) > 0 {
		s.begin(s.queue[0].cmd)
	}
	return s.statements(pd, now, out)
}

// statements turns a finished command into Statements: one per result of
// a multi-statement query when the results match its statements, else
// one.
func (s *session) statements(pd pending, now time.Time, out []Statement) []Statement {
	base := Statement{Conn: s.conn, ServerID: s.serverID, Start: pd.start, End: now, Text: pd.text, Cut: pd.cut}
	switch pd.cmd {
	case comQuery:
		base.Command = Query
	case comStmtExecute:
		base.Command = Execute
	case comStmtPrepare:
		base.Command = Prepare
	default:
		base.Command, base.Text, base.Cut = Other, nil, false
	}
	if pd.cmd == comQuery && len(pd.results) > 1 && !pd.cut {
		parts := splitStatements(pd.text)
		last := pd.results[len(pd.results)-1]
		if len(parts) == len(pd.results) || (last.err != 0 && len(pd.results) < len(parts)) {
			start := pd.start
			for i, r := range pd.results {
				st := base
				st.Text, st.Start, st.End = parts[i], start, r.end
				st.RowsSent, st.RowsAffected, st.Error = r.rows, r.affected, r.err
				out = append(out, st)
				start = r.end
			}
			return out
		}
	}
	for _, r := range pd.results {
		base.RowsSent += r.rows
		base.RowsAffected += r.affected
		if base.Error == 0 {
			base.Error = r.err
		}
	}
	if n := len(pd.results); n > 0 {
		base.End = pd.results[n-1].end
	}
	return append(out, base)
}

// errCode is an ERR packet's error code (0 for any other packet).
func errCode(p []byte) uint16 {
	if first(p) != hdrERR || len(p) < 3 {
		return 0
	}
	return binary.LittleEndian.Uint16(p[1:])
}
