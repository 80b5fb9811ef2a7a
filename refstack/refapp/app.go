package refapp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Config says where the app listens and what it talks to. As a file
// (LoadConfig, Write) it is a JSON object with the keys in the field tags,
// for example:
//
//	{
//	  "listen": "unix:/tmp/st-1/app.sock",
//	  "dsn": "root@unix(/tmp/st-2/mysqld.sock)/refapp",
//	  "memcached": "/tmp/st-3/memcached.sock",
//	  "cache_batch": true
//	}
type Config struct {
	// Listen is "host:port" (default "127.0.0.1:0", a free port) or
	// "unix:/path/to.sock".
	Listen string `json:"listen"`
	// DSN is a go-sql-driver/mysql DSN selecting the generated database,
	// over TCP (root@tcp(127.0.0.1:3306)/refapp) or a unix socket
	// (root@unix(/run/mysqld/mysqld.sock)/refapp). parseTime is forced on.
	DSN string `json:"dsn"`
	// Memcached is "" for no cache, host:port for TCP, or a socket path
	// (starting with '/').
	Memcached string `json:"memcached"`
	// CacheBatch fixes the cache's deliberate faults: each page fetches
	// the users it shows with one multi-get (get k1 k2 ...), writes a
	// user back only on a miss, with a TTL of CacheTTL seconds. False (the
	// default) keeps the first version's one get and one set per user
	// shown, with no expiry. Pages are the same either way.
	CacheBatch bool `json:"cache_batch"`
	// FriendSet fixes the home page's N+1 isFriend queries: it loads the
	// user's friends once and checks each row against that set, instead
	// of one query per row of the latest 1000 entries and comments. False
	// (the default) keeps the first version's query per row. The page is
	// the same either way.
	FriendSet bool `json:"friend_set"`
	// SQLTags tags every statement with its request's route and trace,
	// as sqlcommenter does (see sqltags.go): how an instrumented app lets
	// stacktune tie statements to requests at any concurrency.
	SQLTags bool `json:"sql_tags"`
	// Profiling serves the pages and handlers the app-CPU profiler is
	// tested with (see profiling.go): /work/burn, /work/wait, /work/self
	// and /debug/pprof/.
	Profiling bool `json:"profiling,omitempty"`
	// ProfileLabels labels every request's CPU samples with its trace ID
	// (from its traceparent) and its route (pprof.Do), as Profiling's
	// pages are: a profile of the app's process then tells its requests
	// apart from each other and from the process's other work.
	ProfileLabels bool `json:"profile_labels,omitempty"`
	// BurnRounds, with Profiling, sizes /work/burn (0: BurnRounds): a
	// change of code to measure.
	BurnRounds int `json:"burn_rounds,omitempty"`
}

// CacheTTL is the expiry, in seconds, of the users cached with
// Config.CacheBatch: an hour.
const CacheTTL = 3600

// LoadConfig reads a Config from the JSON file at path. Unknown keys are
// an error, so that a misspelt setting is not silently ignored; missing
// keys keep their zero values.
func LoadConfig(path string) (Config, error) {
	var cfg Config
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("refapp: config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("refapp: config %s: %w", path, err)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("refapp: config %s: data after the JSON object", path)
	}
	return cfg, nil
}

// JSON is the config file's content: indented JSON with every key.
func (c Config) JSON() []byte {
	data, _ := json.MarshalIndent(c, "", "  ") // strings and booleans: cannot fail
	return append(data, '\n')
}

// Write writes c to path as indented JSON (every key present), mode 0600
// since the DSN may hold a password. It writes in place: writing a
// temporary file and renaming it over path, for readers that must never
// see half a file, is the caller's job.
func (c Config) Write(path string) error {
	if err := os.WriteFile(path, c.JSON(), 0o600); err != nil {
		return fmt.Errorf("refapp: config: %w", err)
	}
	return nil
}

// Server is a running reference app.
type Server struct {
	db         *taggedDB
	mc         *mcClient
	batch      bool // Config.CacheBatch
	friendSet  bool // Config.FriendSet
	profiling  bool // Config.Profiling
	labels     bool // Config.ProfileLabels
	burnRounds int  // Config.BurnRounds
	ln         net.Listener
	srv        *http.Server
	network    string
	done       chan struct{}
	mu         sync.Mutex
	sessions   map[string]int
	closeErr   error
	once       sync.Once
}

// Start opens the database (and memcached when configured), listens and
// serves until Close or ctx ends.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	mcfg, err := mysql.ParseDSN(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("refapp: DSN: %w", err)
	}
	mcfg.ParseTime = true
	mcfg.Loc = time.UTC
	// The pool logs a connection the server's restart closed, then
	// retries: quiet, as the loop restarts the server on purpose.
	mcfg.Logger = &mysql.NopLogger{}
	connector, err := mysql.NewConnector(mcfg)
	if err != nil {
		return nil, fmt.Errorf("refapp: DSN: %w", err)
	}
	db := sql.OpenDB(connector)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("refapp: database: %w", err)
	}
	s := &Server{profiling: cfg.Profiling, labels: cfg.ProfileLabels || cfg.Profiling, burnRounds: cfg.BurnRounds, db: &taggedDB{DB: db, tags: cfg.SQLTags}, batch: cfg.CacheBatch, friendSet: cfg.FriendSet, sessions: make(map[string]int), done: make(chan struct{})}
	if cfg.Memcached != "" {
		s.mc = newMC(cfg.Memcached)
		if _, err := s.mc.get("refapp:ping"); err != nil && !errors.Is(err, errCacheMiss) {
			db.Close()
			return nil, err
		}
	}
	s.network, err = s.listen(cfg.Listen)
	if err != nil {
		s.closeClients()
		return nil, err
	}
	s.srv = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		s.srv.Serve(s.ln)
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

func (s *Server) listen(addr string) (string, error) {
	network := "tcp"
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, addr = "unix", path
		// A socket left by a process that died is removed; any other
		// file is not ours to delete.
		if fi, err := os.Lstat(path); err == nil {
			if fi.Mode()&os.ModeSocket == 0 {
				return "", fmt.Errorf("refapp: listen: %s exists and is not a socket", path)
			}
			if err := os.Remove(path); err != nil {
				return "", fmt.Errorf("refapp: removing stale socket: %w", err)
			}
		}
	} else if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return "", fmt.Errorf("refapp: listen: %w", err)
	}
	if network == "unix" {
		os.Chmod(addr, 0o666) // nginx's workers run as another user
	}
	s.ln = ln
	return network, nil
}

func (s *Server) closeClients() {
	s.db.Close()
	if s.mc != nil {
		s.mc.close()
	}
}

// Network returns "tcp" or "unix".
func (s *Server) Network() string { return s.network }

// Addr returns the listening address: host:port, or the socket path.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the base URL: http://host:port over TCP. Over a unix socket
// it is "http://localhost", to be used with a client that dials Addr().
func (s *Server) URL() string {
	if s.network == "unix" {
		return "http://localhost"
	}
	return "http://" + s.Addr()
}

// Close stops serving (open connections are closed) and closes the
// database and cache clients. It is safe to call more than once.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.closeErr = s.srv.Close()
		<-s.done
		s.closeClients()
	})
	return s.closeErr
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range []struct {
		pattern, action string
		h               http.HandlerFunc
	}{
		{"GET /login", "login_form", s.getLogin},
		{"POST /login", "login", s.postLogin},
		{"GET /logout", "logout", s.logout},
		{"GET /{$}", "index", s.index},
		{"GET /profile/{account_name}", "profile", s.profile},
		{"GET /diary/entries/{account_name}", "entries", s.entries},
		{"GET /diary/entry/{id}", "entry", s.entry},
		{"POST /diary/comment/{id}", "post_comment", s.postComment},
		{"GET /footprints", "footprints", s.footprints},
		{"GET /friends", "friends", s.friends},
		{"GET /initialize", "initialize", s.initialize},
	} {
		h := s.db.handler(rt.pattern, rt.action, rt.h)
		if s.labels {
			h = labelled(rt.pattern, h)
		}
		mux.HandleFunc(rt.pattern, h)
	}
	if s.profiling {
		s.profilingRoutes(mux)
	}
	return mux
}

// The statements, as the first version writes them.
const (
	qLogin          = "SELECT id, account_name, nick_name, email, passhash, salt FROM users WHERE email = ?"
	qUserByID       = "SELECT id, account_name, nick_name, email FROM users WHERE id = ?"
	qUserByAccount  = "SELECT id, account_name, nick_name, email FROM users WHERE account_name = ?"
	qProfile        = "SELECT first_name, last_name, sex, birthday, pref FROM profiles WHERE user_id = ?"
	qMyEntries      = "SELECT id, user_id, private, title, body, created_at FROM entries WHERE user_id = ? ORDER BY created_at DESC LIMIT 5"
	qCommentsForMe  = "SELECT c.id, c.entry_id, c.user_id, c.comment, c.created_at FROM comments c JOIN entries e ON c.entry_id = e.id WHERE e.user_id = ? ORDER BY c.created_at DESC LIMIT 10"
	qLatestEntries  = "SELECT id, user_id, private, title, body, created_at FROM entries ORDER BY created_at DESC LIMIT 1000"
	qLatestComments = "SELECT id, entry_id, user_id, comment, created_at FROM comments ORDER BY created_at DESC LIMIT 1000"
	qEntry          = "SELECT id, user_id, private, title, body, created_at FROM entries WHERE id = ?"
	qFriends        = "SELECT one, another, created_at FROM relations WHERE one = ? OR another = ? ORDER BY created_at DESC"
	qIsFriend       = "SELECT COUNT(1) FROM relations WHERE (one = ? AND another = ?) OR (one = ? AND another = ?)"
	qFootprints     = "SELECT owner_id, DATE(created_at) AS date, MAX(created_at) AS updated FROM footprints WHERE user_id = ? GROUP BY owner_id, DATE(created_at) ORDER BY updated DESC LIMIT ?"
	qAddFootprint   = "INSERT INTO footprints (user_id, owner_id, created_at) VALUES (?, ?, NOW())"
	qProfileEntries = "SELECT id, user_id, private, title, body, created_at FROM entries WHERE user_id = ? ORDER BY created_at DESC LIMIT 5"
	qPublicEntries  = "SELECT id, user_id, private, title, body, created_at FROM entries WHERE user_id = ? AND private = 0 ORDER BY created_at DESC LIMIT 5"
	qDiaryEntries   = "SELECT id, user_id, private, title, body, created_at FROM entries WHERE user_id = ? ORDER BY created_at DESC LIMIT 20"
	qDiaryPublic    = "SELECT id, user_id, private, title, body, created_at FROM entries WHERE user_id = ? AND private = 0 ORDER BY created_at DESC LIMIT 20"
	qCommentCount   = "SELECT COUNT(*) FROM comments WHERE entry_id = ?"
	qEntryComments  = "SELECT id, entry_id, user_id, comment, created_at FROM comments WHERE entry_id = ? ORDER BY created_at"
	qAddComment     = "INSERT INTO comments (entry_id, user_id, comment, created_at) VALUES (?, ?, ?, NOW())"
	qGenerated      = "SELECT name, max_id FROM generated"
)

// User is a user as pages show it.
type User struct {
	ID                           int
	AccountName, NickName, Email string
}

// Profile is a user's profile.
type Profile struct {
	FirstName, LastName, Sex, Pref string
	Birthday                       time.Time
}

// Entry is a diary entry.
type Entry struct {
	ID, UserID  int
	Private     bool
	Title, Body string
	CreatedAt   time.Time
	Author      *User
	Comments    int
}

// Comment is a comment on an entry.
type Comment struct {
	ID, EntryID, UserID int
	Comment             string
	CreatedAt           time.Time
	Author, EntryOwner  *User
}

// Footprint is a visit to the user's pages.
type Footprint struct {
	Owner   *User
	Updated time.Time
}

// Friend is one relation of the user.
type Friend struct {
	User      *User
	CreatedAt time.Time
}

const sessionCookie = "refapp_session"

// session returns the logged-in user id, or 0.
func (s *Server) session(r *http.Request) int {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

// auth returns the current user, or redirects to /login and returns nil.
func (s *Server) auth(w http.ResponseWriter, r *http.Request) *User {
	id := s.session(r)
	if id == 0 {
		http.Redirect(w, r, "/login", http.StatusFound)
		return nil
	}
	u, err := s.user(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return nil
	}
	return u
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	if errors.Is(err, sql.ErrNoRows) {
		status = http.StatusNotFound
	}
	http.Error(w, http.StatusText(status), status)
}

func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) getLogin(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "login", "")
}

func (s *Server) postLogin(w http.ResponseWriter, r *http.Request) {
	email, password := r.FormValue("email"), r.FormValue("password")
	var u User
	var hash, salt string
	err := s.db.QueryRowContext(r.Context(), qLogin, email).Scan(&u.ID, &u.AccountName, &u.NickName, &u.Email, &hash, &salt)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		s.fail(w, err)
		return
	}
	if err != nil || subtle.ConstantTimeCompare([]byte(hash), []byte(passHash(password, salt))) != 1 {
		s.render(w, http.StatusUnauthorized, "login", "login failed")
		return
	}
	var b [16]byte
	rand.Read(b[:])
	sid := hex.EncodeToString(b[:])
	s.mu.Lock()
	s.sessions[sid] = u.ID
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sid, Path: "/", HttpOnly: true})
	http.Redirect(w, r, "/", http.StatusFound)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.mu.Lock()
		delete(s.sessions, c.Value)
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusFound)
}

// user returns user id, through memcached when configured: by default one
// get per user, and a set after every read, hit or miss, with no expiry;
// with CacheBatch as usersBatch does.
func (s *Server) user(ctx context.Context, id int) (*User, error) {
	if s.batch {
		users, err := s.usersBatch(ctx, []int{id})
		if err != nil {
			return nil, err
		}
		return users[id], nil
	}
	key := userKey(id)
	if s.mc != nil {
		if v, err := s.mc.get(key); err == nil {
			if u, ok := decodeUser(v); ok {
				s.mc.set(key, v, 0)
				return u, nil
			}
		}
	}
	var u User
	if err := s.db.QueryRowContext(ctx, qUserByID, id).Scan(&u.ID, &u.AccountName, &u.NickName, &u.Email); err != nil {
		return nil, err
	}
	if s.mc != nil {
		s.mc.set(key, encodeUser(&u), 0)
	}
	return &u, nil
}

func userKey(id int) string { return "user:" + strconv.Itoa(id) }

// userRef asks for user id to be stored in *dst.
type userRef struct {
	id  int
	dst **User
}

// resolveUsers fills in the users refs ask for. By default it is the first
// version's loop, one user (one get and one set) per ref, duplicates
// included; with CacheBatch it is one usersBatch of the distinct ids.
func (s *Server) resolveUsers(ctx context.Context, refs []userRef) error {
	if !s.batch {
		for _, r := range refs {
			u, err := s.user(ctx, r.id)
			if err != nil {
				return err
			}
			*r.dst = u
		}
		return nil
	}
	ids := make([]int, len(refs))
	for i, r := range refs {
		ids[i] = r.id
	}
	users, err := s.usersBatch(ctx, ids)
	if err != nil {
		return err
	}
	for _, r := range refs {
		*r.dst = users[r.id]
	}
	return nil
}

// usersBatch returns the users ids (duplicates allowed) by id: the cached
// ones with one multi-get, the others from the database, each then cached
// with set and a TTL of CacheTTL. A failing cache counts as all misses.
func (s *Server) usersBatch(ctx context.Context, ids []int) (map[int]*User, error) {
	users := make(map[int]*User, len(ids))
	var distinct []int
	seen := make(map[int]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			distinct = append(distinct, id)
		}
	}
	missing := distinct
	if s.mc != nil && len(distinct) > 0 {
		keys := make([]string, len(distinct))
		for i, id := range distinct {
			keys[i] = userKey(id)
		}
		vals, _ := s.mc.getMulti(keys)
		missing = nil
		for i, id := range distinct {
			if v, ok := vals[keys[i]]; ok {
				if u, ok := decodeUser(v); ok && u.ID == id {
					users[id] = u
					continue
				}
			}
			missing = append(missing, id)
		}
	}
	for _, id := range missing {
		var u User
		if err := s.db.QueryRowContext(ctx, qUserByID, id).Scan(&u.ID, &u.AccountName, &u.NickName, &u.Email); err != nil {
			return nil, err
		}
		users[id] = &u
		if s.mc != nil {
			s.mc.set(userKey(id), encodeUser(&u), CacheTTL)
		}
	}
	return users, nil
}

func encodeUser(u *User) []byte {
	return []byte(strconv.Itoa(u.ID) + "\t" + u.AccountName + "\t" + u.NickName + "\t" + u.Email)
}

func decodeUser(b []byte) (*User, bool) {
	f := strings.Split(string(b), "\t")
	if len(f) != 4 {
		return nil, false
	}
	id, err := strconv.Atoi(f[0])
	if err != nil {
		return nil, false
	}
	return &User{ID: id, AccountName: f[1], NickName: f[2], Email: f[3]}, true
}

func (s *Server) userByAccount(ctx context.Context, name string) (*User, error) {
	var u User
	err := s.db.QueryRowContext(ctx, qUserByAccount, name).Scan(&u.ID, &u.AccountName, &u.NickName, &u.Email)
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// isFriend is one query per call: the first version calls it per row.
func (s *Server) isFriend(ctx context.Context, a, b int) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, qIsFriend, a, b, b, a).Scan(&n)
	return n > 0, err
}

// permitted tells whether me may read another's private entries.
func (s *Server) permitted(ctx context.Context, me, another int) (bool, error) {
	if me == another {
		return true, nil
	}
	return s.isFriend(ctx, me, another)
}

func (s *Server) profileOf(ctx context.Context, id int) (Profile, error) {
	var p Profile
	err := s.db.QueryRowContext(ctx, qProfile, id).Scan(&p.FirstName, &p.LastName, &p.Sex, &p.Birthday, &p.Pref)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return p, err
}

// ownerEntries loads the user named account and their entries: all of them
// (qAll) when me may see private ones, else only public ones (qPublic).
func (s *Server) ownerEntries(ctx context.Context, me *User, account, qPublic, qAll string) (*User, bool, []*Entry, error) {
	owner, err := s.userByAccount(ctx, account)
	if err != nil {
		return nil, false, nil, err
	}
	ok, err := s.permitted(ctx, me.ID, owner.ID)
	if err != nil {
		return nil, false, nil, err
	}
	q := qPublic
	if ok {
		q = qAll
	}
	entries, err := s.queryEntries(ctx, q, owner.ID)
	return owner, ok, entries, err
}

func (s *Server) queryEntries(ctx context.Context, q string, args ...any) ([]*Entry, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Entry
	for rows.Next() {
		e := new(Entry)
		if err := rows.Scan(&e.ID, &e.UserID, &e.Private, &e.Title, &e.Body, &e.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func (s *Server) queryComments(ctx context.Context, q string, args ...any) ([]*Comment, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Comment
	for rows.Next() {
		c := new(Comment)
		if err := rows.Scan(&c.ID, &c.EntryID, &c.UserID, &c.Comment, &c.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// friendList returns user id's relations, newest first, through the OR
// scan.
func (s *Server) friendList(ctx context.Context, id int) ([]int, []time.Time, error) {
	rows, err := s.db.QueryContext(ctx, qFriends, id, id)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var ids []int
	var at []time.Time
	for rows.Next() {
		var one, another int
		var t time.Time
		if err := rows.Scan(&one, &another, &t); err != nil {
			return nil, nil, err
		}
		if one == id {
			ids = append(ids, another)
		} else {
			ids = append(ids, one)
		}
		at = append(at, t)
	}
	return ids, at, rows.Err()
}

// footprintList returns user id's footprints. The owners are appended to
// refs for the caller to resolve with the rest of its page, or resolved
// here when refs is nil.
func (s *Server) footprintList(ctx context.Context, id, limit int, refs *[]userRef) ([]Footprint, error) {
	rows, err := s.db.QueryContext(ctx, qFootprints, id, limit)
	if err != nil {
		return nil, err
	}
	var owners []int
	var fps []Footprint
	for rows.Next() {
		var owner int
		var date, updated time.Time
		if err := rows.Scan(&owner, &date, &updated); err != nil {
			rows.Close()
			return nil, err
		}
		owners = append(owners, owner)
		fps = append(fps, Footprint{Updated: updated})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var own []userRef
	if refs == nil {
		refs = &own
	}
	for i, o := range owners {
		*refs = append(*refs, userRef{o, &fps[i].Owner})
	}
	if refs == &own {
		if err := s.resolveUsers(ctx, own); err != nil {
			return nil, err
		}
	}
	return fps, nil
}

func (s *Server) markFootprint(ctx context.Context, owner, visitor int) error {
	if owner == visitor {
		return nil
	}
	_, err := s.db.ExecContext(ctx, qAddFootprint, owner, visitor)
	return err
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	me := s.auth(w, r)
	if me == nil {
		return
	}
	ctx := r.Context()
	data, err := s.home(ctx, me)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "index", data)
}

type homePage struct {
	User                          *User
	Profile                       Profile
	Entries                       []*Entry
	CommentsForMe, FriendComments []*Comment
	FriendEntries                 []*Entry
	Friends                       int
	Footprints                    []Footprint
}

func (s *Server) home(ctx context.Context, me *User) (*homePage, error) {
	p := &homePage{User: me}
	var err error
	if p.Profile, err = s.profileOf(ctx, me.ID); err != nil {
		return nil, err
	}
	if p.Entries, err = s.queryEntries(ctx, qMyEntries, me.ID); err != nil {
		return nil, err
	}
	if p.CommentsForMe, err = s.queryComments(ctx, qCommentsForMe, me.ID); err != nil {
		return nil, err
	}
	// The users shown are collected in refs and resolved at the end.
	var refs []userRef
	for _, c := range p.CommentsForMe {
		refs = append(refs, userRef{c.UserID, &c.Author})
	}
	// isFriend is a query per row, or with FriendSet a lookup in the
	// friend list loaded once.
	isFriend := func(id int) (bool, error) { return s.isFriend(ctx, me.ID, id) }
	permitted := func(id int) (bool, error) { return s.permitted(ctx, me.ID, id) }
	if s.friendSet {
		ids, _, err := s.friendList(ctx, me.ID)
		if err != nil {
			return nil, err
		}
		set := make(map[int]bool, len(ids))
		for _, id := range ids {
			set[id] = true
		}
		isFriend = func(id int) (bool, error) { return set[id], nil }
		permitted = func(id int) (bool, error) { return id == me.ID || set[id], nil }
	}
	latest, err := s.queryEntries(ctx, qLatestEntries)
	if err != nil {
		return nil, err
	}
	for _, e := range latest {
		ok, err := isFriend(e.UserID)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		refs = append(refs, userRef{e.UserID, &e.Author})
		p.FriendEntries = append(p.FriendEntries, e)
		if len(p.FriendEntries) >= 10 {
			break
		}
	}
	comments, err := s.queryComments(ctx, qLatestComments)
	if err != nil {
		return nil, err
	}
	for _, c := range comments {
		ok, err := isFriend(c.UserID)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		es, err := s.queryEntries(ctx, qEntry, c.EntryID)
		if err != nil {
			return nil, err
		}
		if len(es) == 0 {
			continue
		}
		if es[0].Private {
			if ok, err := permitted(es[0].UserID); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
		}
		refs = append(refs, userRef{c.UserID, &c.Author}, userRef{es[0].UserID, &c.EntryOwner})
		p.FriendComments = append(p.FriendComments, c)
		if len(p.FriendComments) >= 10 {
			break
		}
	}
	friends, _, err := s.friendList(ctx, me.ID)
	if err != nil {
		return nil, err
	}
	seen := make(map[int]bool)
	for _, f := range friends {
		seen[f] = true
	}
	p.Friends = len(seen)
	if p.Footprints, err = s.footprintList(ctx, me.ID, 10, &refs); err != nil {
		return nil, err
	}
	if err := s.resolveUsers(ctx, refs); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request) {
	me := s.auth(w, r)
	if me == nil {
		return
	}
	ctx := r.Context()
	owner, ok, entries, err := s.ownerEntries(ctx, me, r.PathValue("account_name"), qPublicEntries, qProfileEntries)
	if err != nil {
		s.fail(w, err)
		return
	}
	prof, err := s.profileOf(ctx, owner.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := s.markFootprint(ctx, owner.ID, me.ID); err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "profile", map[string]any{
		"Owner": owner, "Profile": prof, "Entries": entries, "IsFriend": ok && owner.ID != me.ID,
	})
}

func (s *Server) entries(w http.ResponseWriter, r *http.Request) {
	me := s.auth(w, r)
	if me == nil {
		return
	}
	ctx := r.Context()
	owner, _, entries, err := s.ownerEntries(ctx, me, r.PathValue("account_name"), qDiaryPublic, qDiaryEntries)
	if err != nil {
		s.fail(w, err)
		return
	}
	for _, e := range entries { // N+1: one count per entry
		if err := s.db.QueryRowContext(ctx, qCommentCount, e.ID).Scan(&e.Comments); err != nil {
			s.fail(w, err)
			return
		}
	}
	if err := s.markFootprint(ctx, owner.ID, me.ID); err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "entries", map[string]any{"Owner": owner, "Entries": entries})
}

// readableEntry loads entry {id} for me: 404 when absent, 403 when private
// and me is neither its owner nor a friend.
func (s *Server) readableEntry(w http.ResponseWriter, r *http.Request, me *User) (*Entry, *User) {
	ctx := r.Context()
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		http.NotFound(w, r)
		return nil, nil
	}
	es, err := s.queryEntries(ctx, qEntry, id)
	if err != nil {
		s.fail(w, err)
		return nil, nil
	}
	if len(es) == 0 {
		http.NotFound(w, r)
		return nil, nil
	}
	e := es[0]
	owner, err := s.user(ctx, e.UserID)
	if err != nil {
		s.fail(w, err)
		return nil, nil
	}
	if e.Private {
		ok, err := s.permitted(ctx, me.ID, owner.ID)
		if err != nil {
			s.fail(w, err)
			return nil, nil
		}
		if !ok {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return nil, nil
		}
	}
	return e, owner
}

func (s *Server) entry(w http.ResponseWriter, r *http.Request) {
	me := s.auth(w, r)
	if me == nil {
		return
	}
	e, owner := s.readableEntry(w, r, me)
	if e == nil {
		return
	}
	ctx := r.Context()
	comments, err := s.queryComments(ctx, qEntryComments, e.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	refs := make([]userRef, len(comments))
	for i, c := range comments {
		refs[i] = userRef{c.UserID, &c.Author}
	}
	if err := s.resolveUsers(ctx, refs); err != nil {
		s.fail(w, err)
		return
	}
	if err := s.markFootprint(ctx, owner.ID, me.ID); err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "entry", map[string]any{"Entry": e, "Owner": owner, "Comments": comments})
}

func (s *Server) postComment(w http.ResponseWriter, r *http.Request) {
	me := s.auth(w, r)
	if me == nil {
		return
	}
	e, _ := s.readableEntry(w, r, me)
	if e == nil {
		return
	}
	text := r.FormValue("comment")
	if text == "" {
		http.Error(w, "empty comment", http.StatusBadRequest)
		return
	}
	if _, err := s.db.ExecContext(r.Context(), qAddComment, e.ID, me.ID, text); err != nil {
		s.fail(w, err)
		return
	}
	http.Redirect(w, r, "/diary/entry/"+strconv.Itoa(e.ID), http.StatusFound)
}

func (s *Server) footprints(w http.ResponseWriter, r *http.Request) {
	me := s.auth(w, r)
	if me == nil {
		return
	}
	fps, err := s.footprintList(r.Context(), me.ID, 50, nil)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "footprints", fps)
}

func (s *Server) friends(w http.ResponseWriter, r *http.Request) {
	me := s.auth(w, r)
	if me == nil {
		return
	}
	ctx := r.Context()
	ids, at, err := s.friendList(ctx, me.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	list := make([]Friend, len(ids))
	refs := make([]userRef, len(ids))
	for i, id := range ids { // by default one cache get (and set) per friend
		list[i].CreatedAt = at[i]
		refs[i] = userRef{id, &list[i].User}
	}
	if err := s.resolveUsers(ctx, refs); err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "friends", list)
}

// initialize deletes every row a run added (ids past the generated ones).
func (s *Server) initialize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rows, err := s.db.QueryContext(ctx, qGenerated)
	if err != nil {
		s.fail(w, err)
		return
	}
	maxIDs := make(map[string]int)
	for rows.Next() {
		var name string
		var id int
		if err := rows.Scan(&name, &id); err != nil {
			rows.Close()
			s.fail(w, err)
			return
		}
		maxIDs[name] = id
	}
	rows.Close()
	for _, t := range []string{"relations", "entries", "comments", "footprints"} {
		id, ok := maxIDs[t]
		if !ok {
			http.Error(w, "no generated data: run Generate first", http.StatusInternalServerError)
			return
		}
		if _, err := s.db.ExecContext(ctx, "DELETE FROM "+t+" WHERE id > ?", id); err != nil {
			s.fail(w, err)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}
