// Command bookshop is a second, small web app for stacktune's end-to-end
// tests: not the reference app, with its own schema (authors, books,
// reviews) and its own first-version faults, so a loop that works only on
// the reference app fails here.
//
// Its faults:
//   - GET /books/{id} reads the book's latest reviews with
//     "WHERE book_id = ? ORDER BY created_at DESC LIMIT 10" and reviews has
//     no index on book_id: a full scan per page (the hot, slow query);
//   - GET /authors/{id} lists the author's books, then asks each book's
//     average rating in its own query: an N+1 (one query per book);
//   - it keeps a pool of 4 database connections open for its whole life,
//     so connections opened before a SET GLOBAL keep their old session
//     values (long_query_time) until it is restarted.
//
// POST /initialize creates the schema if needed, empties it and loads
// deterministic data, as a contest app's /initialize does. Usage:
//
//	bookshop -listen 127.0.0.1:8081 -dsn 'root@unix(/path/mysqld.sock)/bookshop'
//
// -listen takes host:port or unix:/path. -sql-tags marginalia tags every
// statement as a Rails app with marginalia (or query log tags) does,
// /*application:bookshop,controller:authors,action:show,request_id:...*/
// at its end, the request id from the X-Request-Id header or a new one;
// -sql-tags sqlcommenter as an app with sqlcommenter does, with the
// request's route and W3C traceparent (from its header or a new one).
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"html"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// Sizes of the data /initialize loads.
const (
	authors         = 200
	booksPerAuthor  = 10
	reviewsPerBook  = 15
	reviewBatchRows = 500
)

// schema creates the tables when they are missing and empties them, as
// many contest apps' /initialize do: indexes added meanwhile stay.
var schema = []string{
	"CREATE TABLE IF NOT EXISTS authors (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL)",
	"CREATE TABLE IF NOT EXISTS books (id INT PRIMARY KEY, author_id INT NOT NULL, title VARCHAR(128) NOT NULL, price INT NOT NULL, KEY ix_author (author_id))",
	// No index on book_id: the fault GET /books/{id} exposes.
	"CREATE TABLE IF NOT EXISTS reviews (id INT PRIMARY KEY AUTO_INCREMENT, book_id INT NOT NULL, rating TINYINT NOT NULL, body VARCHAR(255) NOT NULL, created_at DATETIME NOT NULL)",
	"TRUNCATE TABLE reviews",
	"TRUNCATE TABLE books",
	"TRUNCATE TABLE authors",
}

// The application's queries.
const (
	qBook          = "SELECT title, price FROM books WHERE id = ?"
	qLatestReviews = "SELECT rating, body FROM reviews WHERE book_id = ? ORDER BY created_at DESC LIMIT 10"
	qAuthor        = "SELECT name FROM authors WHERE id = ?"
	qAuthorBooks   = "SELECT id, title FROM books WHERE author_id = ? ORDER BY id"
	qAvgRating     = "SELECT AVG(rating) FROM reviews WHERE book_id = ?"
	qTopBooks      = "SELECT id, title FROM books ORDER BY price DESC, id LIMIT 10"
)

type app struct {
	db   *sql.DB
	tags string // "", "marginalia" or "sqlcommenter"
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8081", "host:port or unix:/path")
	dsn := flag.String("dsn", os.Getenv("BOOKSHOP_DSN"), "go-sql-driver DSN of the bookshop database")
	tags := flag.String("sql-tags", "", "tag every statement with its request: marginalia or sqlcommenter")
	flag.Parse()
	if *tags != "" && *tags != "marginalia" && *tags != "sqlcommenter" {
		log.Fatalf("-sql-tags %q: marginalia or sqlcommenter", *tags)
	}
	db, err := sql.Open("mysql", *dsn)
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	db.SetConnMaxLifetime(0)
	a := &app{db: db, tags: *tags}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /initialize", a.initialize)
	mux.HandleFunc("GET /books/{id}", a.tagged("books", "show", a.book))
	mux.HandleFunc("GET /authors/{id}", a.tagged("authors", "show", a.author))
	mux.HandleFunc("GET /{$}", a.tagged("books", "index", a.top))
	network, addr := "tcp", *listen
	if p, ok := strings.CutPrefix(*listen, "unix:"); ok {
		network, addr = "unix", p
		_ = os.Remove(p)
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}

func (a *app) fail(w http.ResponseWriter, err error) {
	log.Print(err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

func (a *app) initialize(w http.ResponseWriter, r *http.Request) {
	if err := a.load(); err != nil {
		a.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintln(w, `{"language":"go"}`)
}

// load empties the tables (creating them if needed) and loads the data.
func (a *app) load() error {
	for _, q := range schema {
		if _, err := a.db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	var b strings.Builder
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		_, err := a.db.Exec(b.String())
		b.Reset()
		return err
	}
	for i := 1; i <= authors; i++ {
		if b.Len() == 0 {
			b.WriteString("INSERT INTO authors VALUES ")
		} else {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,'author %d')", i, i)
	}
	if err := flush(); err != nil {
		return err
	}
	for i := 1; i <= authors*booksPerAuthor; i++ {
		if b.Len() == 0 {
			b.WriteString("INSERT INTO books VALUES ")
		} else {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,'book %d',%d)", i, (i-1)/booksPerAuthor+1, i, 500+(i*7919)%4500)
	}
	if err := flush(); err != nil {
		return err
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := 0
	for book := 1; book <= authors*booksPerAuthor; book++ {
		for k := 0; k < reviewsPerBook; k++ {
			if b.Len() == 0 {
				b.WriteString("INSERT INTO reviews (book_id, rating, body, created_at) VALUES ")
			} else {
				b.WriteString(",")
			}
			at := base.Add(time.Duration((book*31+k*977)%100000) * time.Minute)
			fmt.Fprintf(&b, "(%d,%d,'review %d of book %d','%s')", book, 1+(book+k)%5, k, book, at.Format("2006-01-02 15:04:05"))
			if rows++; rows%reviewBatchRows == 0 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

func pathID(r *http.Request) (int, error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id <= 0 {
		return 0, errors.New("bad id")
	}
	return id, nil
}

func (a *app) book(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	var title string
	var price int
	if err := a.db.QueryRow(q(r, qBook), id).Scan(&title, &price); errors.Is(err, sql.ErrNoRows) {
		http.NotFound(w, r)
		return
	} else if err != nil {
		a.fail(w, err)
		return
	}
	rows, err := a.db.Query(q(r, qLatestReviews), id)
	if err != nil {
		a.fail(w, err)
		return
	}
	defer rows.Close()
	fmt.Fprintf(w, "<h1 id=title>%s</h1><p>%d yen</p><ul>", html.EscapeString(title), price)
	for rows.Next() {
		var rating int
		var body string
		if err := rows.Scan(&rating, &body); err != nil {
			a.fail(w, err)
			return
		}
		fmt.Fprintf(w, "<li class=review>%d: %s</li>", rating, html.EscapeString(body))
	}
	fmt.Fprint(w, "</ul>")
}

func (a *app) author(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	var name string
	if err := a.db.QueryRow(q(r, qAuthor), id).Scan(&name); errors.Is(err, sql.ErrNoRows) {
		http.NotFound(w, r)
		return
	} else if err != nil {
		a.fail(w, err)
		return
	}
	rows, err := a.db.Query(q(r, qAuthorBooks), id)
	if err != nil {
		a.fail(w, err)
		return
	}
	type book struct {
		id    int
		title string
	}
	var books []book
	for rows.Next() {
		var b book
		if err := rows.Scan(&b.id, &b.title); err != nil {
			rows.Close()
			a.fail(w, err)
			return
		}
		books = append(books, b)
	}
	rows.Close()
	fmt.Fprintf(w, "<h1 id=author>%s</h1><ul>", html.EscapeString(name))
	for _, b := range books {
		// The N+1: one query per book.
		var avg sql.NullFloat64
		if err := a.db.QueryRow(q(r, qAvgRating), b.id).Scan(&avg); err != nil {
			a.fail(w, err)
			return
		}
		fmt.Fprintf(w, "<li class=book>%s (%.1f)</li>", html.EscapeString(b.title), avg.Float64)
	}
	fmt.Fprint(w, "</ul>")
}

func (a *app) top(w http.ResponseWriter, r *http.Request) {
	rows, err := a.db.Query(q(r, qTopBooks))
	if err != nil {
		a.fail(w, err)
		return
	}
	defer rows.Close()
	fmt.Fprint(w, "<h1>Bookshop</h1><ol>")
	for rows.Next() {
		var id int
		var title string
		if err := rows.Scan(&id, &title); err != nil {
			a.fail(w, err)
			return
		}
		fmt.Fprintf(w, "<li><a href=/books/%d>%s</a></li>", id, html.EscapeString(title))
	}
	fmt.Fprint(w, "</ol>")
}

type tagKey struct{}

// tagged puts the request's SQL tags in its context, when -sql-tags is
// on.
func (a *app) tagged(controller, action string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var c string
		switch a.tags {
		case "marginalia":
			id := r.Header.Get("X-Request-Id")
			if id == "" || strings.ContainsAny(id, ",*/") {
				id = randomHex(16)
			}
			c = "/*application:bookshop,controller:" + controller + ",action:" + action + ",request_id:" + id + "*/"
		case "sqlcommenter":
			tp := r.Header.Get("traceparent")
			if len(tp) != 55 || strings.Trim(tp, "0123456789abcdef-") != "" {
				tp = "00-" + randomHex(16) + "-" + randomHex(8) + "-01"
			}
			route := strings.ReplaceAll(url.PathEscape(r.Pattern), "/", "%2F")
			c = "/*action='" + action + "',controller='" + controller + "',route='" + route + "',traceparent='" + tp + "'*/"
		default:
			h(w, r)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), tagKey{}, c)))
	}
}

// q is a statement with the request's tags at its end.
func q(r *http.Request, stmt string) string {
	if c, ok := r.Context().Value(tagKey{}).(string); ok {
		return stmt + " " + c
	}
	return stmt
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	b[0] |= 1
	return hex.EncodeToString(b)
}
