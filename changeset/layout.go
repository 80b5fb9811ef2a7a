package changeset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/internal/atomicfile"
)

// The files of a change set's directory, relative to it (see the package
// comment).
const (
	FileName      = "changes.json"
	MySQLFile     = "mysql/99-stacktune.cnf"
	SysctlFile    = "sysctl/99-stacktune.conf"
	NginxFile     = "nginx/stacktune.conf"
	MemcachedFile = "memcached/options"
	RedisFile     = "redis/stacktune.conf"
	PHPFPMFile    = "php-fpm/stacktune.conf"
	MountFile     = "fstab/stacktune"
	IndexFile     = "indexes.sql"
	systemdDir    = "systemd"
	dropInName    = "stacktune.conf"
)

// SystemdFile is the drop-in of one unit: systemd/UNIT.d/stacktune.conf.
func SystemdFile(unit string) string {
	return systemdDir + "/" + unit + ".d/" + dropInName
}

// maxSetBytes bounds changes.json.
const maxSetBytes = 16 << 20

// layoutFile reports whether rel is a file this layout writes.
func layoutFile(rel string) bool {
	switch rel {
	case FileName, MySQLFile, SysctlFile, NginxFile, MemcachedFile, RedisFile, PHPFPMFile, MountFile, IndexFile:
		return true
	}
	parts := strings.Split(rel, "/")
	return len(parts) == 3 && parts[0] == systemdDir && strings.HasSuffix(parts[1], ".d") && parts[2] == dropInName
}

// Comments are the comment lines written above a change's setting: its
// finding and title, and its durability cost when it has one.
func Comments(c Change) []string {
	var out []string
	if c.Finding != "" {
		out = append(out, "# "+c.Finding+": "+oneLine(c.Title))
	}
	if c.Risk != nil && c.Risk.Durability != "" {
		out = append(out, "#   durability: "+oneLine(c.Risk.Durability))
	}
	for _, e := range c.Evidence {
		out = append(out, "#   "+oneLine(e))
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Lines turns changes into the lines of a settings file, one per setting
// (changes with one Key share a line and their comments), in order.
func Lines(cs []Change) []Line {
	var out []Line
	at := map[string]int{}
	for _, c := range cs {
		k := c.Key()
		if i, ok := at[k]; ok {
			for _, cm := range Comments(c) {
				if !slices.Contains(out[i].Comments, cm) {
					out[i].Comments = append(out[i].Comments, cm)
				}
			}
			continue
		}
		at[k] = len(out)
		out = append(out, Line{Key: c.FileName(), Value: c.To, Comments: Comments(c)})
	}
	return out
}

// AddIndexSQL is the online DDL that adds an index change's index,
// built from its parsed key parts.
func AddIndexSQL(c Change) (string, error) { return TableIndexes{c.Target, []Change{c}}.SQL() }

// DropIndexSQL is the online DDL that drops it again.
func DropIndexSQL(c Change) string {
	return fmt.Sprintf("ALTER TABLE %s DROP INDEX %s, ALGORITHM=INPLACE, LOCK=NONE", QuoteTable(c.Target), QuoteIdent(c.Name))
}

// TableIndexes are the index changes of one table.
type TableIndexes struct {
	Table   string
	Changes []Change
}

// SQL is the one online ALTER TABLE adding (and dropping) all of them,
// so the table is rebuilt once (no trailing semicolon). Each index is
// written from its parsed key parts (ParseIndexState), never from the
// text of its To: a change whose To is not a state is an error, and so is
// an ignore, which is a statement of its own (IndexStatement).
func (g TableIndexes) SQL() (string, error) {
	specs := make([]string, len(g.Changes))
	for i, c := range g.Changes {
		if err := c.Check(); err != nil {
			return "", fmt.Errorf("index %s on %s: %w", c.Name, c.Target, err)
		}
		to, err := ParseIndexState(c.To)
		if err != nil {
			return "", err
		}
		switch {
		case to.Absent:
			specs[i] = "DROP INDEX " + QuoteIdent(c.Name)
		case to.Ignored || c.From != "" && c.From != Absent:
			return "", fmt.Errorf("index %s on %s: %s → %s is no add or drop", c.Name, c.Target, c.From, c.To)
		default:
			specs[i] = fmt.Sprintf("ADD INDEX %s %s", QuoteIdent(c.Name), FormatKeyParts(to.Parts))
		}
	}
	return fmt.Sprintf("ALTER TABLE %s %s, ALGORITHM=INPLACE, LOCK=NONE", QuoteTable(g.Table), strings.Join(specs, ", ")), nil
}

// ByTable groups index changes by table, tables in the order they first
// appear.
func ByTable(cs []Change) []TableIndexes {
	var out []TableIndexes
	at := map[string]int{}
	for _, c := range cs {
		i, ok := at[c.Target]
		if !ok {
			i = len(out)
			at[c.Target] = i
			out = append(out, TableIndexes{Table: c.Target})
		}
		out[i].Changes = append(out[i].Changes, c)
	}
	return out
}

// IndexSQL is the SQL view of index changes: header, then per table the
// comments of its changes above the one ALTER TABLE adding and dropping
// them, and each ignore (or see again) as a statement of its own in
// MariaDB's words, MySQL's in a comment; every comment is written as a
// -- line.
func IndexSQL(header []string, cs []Change) (string, error) {
	var b strings.Builder
	comment := func(l string) { b.WriteString("--" + strings.TrimPrefix(l, "#") + "\n") }
	for _, h := range header {
		comment(h)
	}
	for _, g := range ByTable(cs) {
		b.WriteString("\n")
		var alter []Change
		for _, c := range g.Changes {
			for _, cm := range Comments(c) {
				comment(cm)
			}
			if to, err := ParseIndexState(c.To); err == nil && !to.Absent && c.From != "" && c.From != Absent {
				q, err := IndexStatement(c, false)
				if err != nil {
					return "", err
				}
				if q != "" {
					my, _ := IndexStatement(c, true)
					comment("# on MySQL 8: " + my + ";")
					b.WriteString(q + ";\n")
				}
				continue
			}
			alter = append(alter, c)
		}
		if len(alter) == 0 {
			continue
		}
		q, err := TableIndexes{g.Table, alter}.SQL()
		if err != nil {
			return "", err
		}
		b.WriteString(q + ";\n")
	}
	return b.String(), nil
}

// QuoteIdent quotes a MySQL identifier.
func QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// QuoteTable quotes "schema.table" (the schema may be empty).
func QuoteTable(t string) string {
	schema, table, ok := strings.Cut(t, ".")
	if !ok {
		return QuoteIdent(t)
	}
	if schema == "" {
		return QuoteIdent(table)
	}
	return QuoteIdent(schema) + "." + QuoteIdent(table)
}

// header is the comment block at the top of a rendered file.
func (s *Set) header(rel string) []string {
	from := "stacktune"
	if s.Source != "" {
		from = s.Source
	}
	host := s.Host
	if host == "" {
		host = "an unnamed host"
	}
	h := []string{fmt.Sprintf("# Written by %s for %s", from, host)}
	if !s.Taken.IsZero() {
		h[0] += fmt.Sprintf(" (snapshot taken %s)", s.Taken.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	h[0] += "."
	h = append(h, "# A view of changes.json, which stacktune apply reads; the comment above each setting names its finding.")
	switch {
	case rel == MySQLFile:
		h = append(h, "# Install as /etc/mysql/mariadb.conf.d/99-stacktune.cnf (MariaDB on Debian) or /etc/mysql/mysql.conf.d/ (MySQL),",
			"# /etc/my.cnf.d/ elsewhere. Dynamic variables also apply at once with SET GLOBAL; the others need a restart.")
	case rel == SysctlFile:
		h = append(h, "# Install as /etc/sysctl.d/99-stacktune.conf, then: sysctl --system")
	case rel == NginxFile:
		h = append(h, "# A snippet, not a file to include as is: put each directive in the context named above it,",
			"# replacing the directive of the same name there. Then: nginx -t && nginx -s reload")
	case rel == MemcachedFile:
		h = append(h, "# memcached command-line options, one per line as /etc/memcached.conf (Debian) takes them;",
			"# elsewhere add them to OPTIONS in /etc/sysconfig/memcached. Then restart memcached.")
	case rel == RedisFile:
		h = append(h, "# Redis settings for redis.conf (or CONFIG SET now and CONFIG REWRITE to keep them).")
	case rel == MountFile:
		h = append(h, "# Mount options to add in /etc/fstab (the fourth field of each mount point's line), then: mount -o remount,OPTION MOUNT-POINT")
	case rel == PHPFPMFile:
		h = append(h, "# PHP-FPM pool settings, each under its pool's [name]: put them in that pool's file (/etc/php/8.2/fpm/pool.d/NAME.conf on Debian),",
			"# replacing the setting of the same name. Then: php-fpm8.2 -t && systemctl reload php8.2-fpm")
	case rel == IndexFile:
		h = append(h, "# Online DDL: each ALTER TABLE builds its indexes without blocking writes (ALGORITHM=INPLACE, LOCK=NONE).")
	case strings.HasPrefix(rel, systemdDir+"/"):
		unit := strings.TrimSuffix(filepath.Base(filepath.Dir(rel)), ".d")
		h = append(h, fmt.Sprintf("# Install as /etc/systemd/system/%s.d/stacktune.conf (what systemctl edit %s writes),", unit, unit),
			fmt.Sprintf("# then: systemctl daemon-reload && systemctl restart %s", unit))
	}
	return h
}

// Render returns the files of s's directory by relative path:
// changes.json and a view per kind of change it holds.
func Render(s *Set) (map[string][]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := *s
	c.Format = FormatVersion
	if c.Changes == nil {
		c.Changes = []Change{}
	}
	js, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{FileName: append(js, '\n')}
	settings := func(rel string, f Format, cs []Change) error {
		if len(cs) == 0 {
			return nil
		}
		b, err := f.Edit(nil, s.header(rel), Lines(cs))
		if err != nil {
			return err
		}
		out[rel] = b
		return nil
	}
	if err := settings(MySQLFile, MyCnf, s.Of(MySQLVariable, MySQLOption)); err != nil {
		return nil, err
	}
	if err := settings(SysctlFile, SysctlD, s.Of(Sysctl)); err != nil {
		return nil, err
	}
	units := map[string][]Change{}
	for _, ch := range s.Of(Systemd) {
		units[ch.Target] = append(units[ch.Target], ch)
	}
	for unit, cs := range units {
		if err := settings(SystemdFile(unit), SystemdDropIn, cs); err != nil {
			return nil, err
		}
	}
	if cs := s.Of(Nginx); len(cs) > 0 {
		out[NginxFile] = []byte(s.renderNginx(cs))
	}
	for rel, kind := range map[string]Kind{MemcachedFile: Memcached, RedisFile: Redis} {
		if cs := s.Of(kind); len(cs) > 0 {
			var b strings.Builder
			writeLines(&b, s.header(rel))
			for _, l := range Lines(cs) {
				writeLines(&b, l.Comments)
				b.WriteString(strings.TrimSpace(l.Key+" "+l.Value) + "\n") // a flag without a value: "-C"
			}
			out[rel] = []byte(b.String())
		}
	}
	if cs := s.Of(Mount); len(cs) > 0 {
		var b strings.Builder
		writeLines(&b, s.header(MountFile))
		for _, c := range cs {
			writeLines(&b, Comments(c))
			b.WriteString(c.Target + " " + c.To + "\n")
		}
		out[MountFile] = []byte(b.String())
	}
	if cs := s.Of(PHPFPM); len(cs) > 0 {
		out[PHPFPMFile] = []byte(s.renderPHPFPM(cs))
	}
	if cs := s.Of(Index); len(cs) > 0 {
		q, err := IndexSQL(s.header(IndexFile), cs)
		if err != nil {
			return nil, err
		}
		out[IndexFile] = []byte(q)
	}
	return out, nil
}

func writeLines(b *strings.Builder, ls []string) {
	for _, l := range ls {
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// renderPHPFPM is the PHP-FPM view: each pool's settings under its
// section header, in the order the pools first appear.
func (s *Set) renderPHPFPM(cs []Change) string {
	var b strings.Builder
	writeLines(&b, s.header(PHPFPMFile))
	var pools []string
	for _, c := range cs {
		if !slices.Contains(pools, c.Target) {
			pools = append(pools, c.Target)
		}
	}
	for _, pool := range pools {
		b.WriteString("\n[" + PHPFPMPool(pool) + "]\n")
		var mine []Change
		for _, c := range cs {
			if c.Target == pool {
				mine = append(mine, c)
			}
		}
		for _, l := range Lines(mine) {
			writeLines(&b, l.Comments)
			b.WriteString(l.Key + " = " + l.Value + "\n")
		}
	}
	return b.String()
}

// NginxHeader starts and ends the line naming the context of the
// directives below it in the nginx view.
const (
	nginxHeaderPrefix = "# --- in "
	nginxHeaderSuffix = " ---"
)

func (s *Set) renderNginx(cs []Change) string {
	var b strings.Builder
	writeLines(&b, s.header(NginxFile))
	var contexts []string
	for _, c := range cs {
		if !slices.Contains(contexts, c.Target) {
			contexts = append(contexts, c.Target)
		}
	}
	for _, ctx := range contexts {
		b.WriteString("\n" + nginxHeaderPrefix + ctx + nginxHeaderSuffix + "\n")
		seen := map[string]bool{}
		for _, c := range cs {
			if c.Target != ctx {
				continue
			}
			line := c.Name + " " + c.To + ";"
			if strings.TrimSpace(c.To) == "" {
				line = c.Name + ";"
			}
			if seen[line] {
				continue
			}
			seen[line] = true
			writeLines(&b, Comments(c))
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// Write writes s's files (Render) into dir, all or none: each file is
// written atomically, and if any write fails the ones already written get
// their old content back (or are removed) and the directories it created
// are removed. Files of the layout left from an older change set in dir
// that s does not have are removed, so the directory holds one change
// set. It returns the paths written, sorted.
func Write(dir string, s *Set) ([]string, error) {
	files, err := Render(s)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	type undo struct {
		path    string
		old     []byte
		existed bool
		perm    fs.FileMode
	}
	var done []undo
	var made []string
	rollback := func(cause error) error {
		var errs []error
		for i := len(done) - 1; i >= 0; i-- {
			u := done[i]
			if u.existed {
				errs = append(errs, writeBytes(u.path, u.old, u.perm))
			} else if err := os.Remove(u.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i]) // only when empty
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%w; and putting the old files back failed: %v", cause, err)
		}
		return cause
	}
	save := func(path string) (undo, error) {
		u := undo{path: path, perm: 0o644}
		old, err := os.ReadFile(path)
		switch {
		case err == nil:
			st, serr := os.Stat(path)
			if serr != nil {
				return u, serr
			}
			u.old, u.existed, u.perm = old, true, st.Mode().Perm()
		case !errors.Is(err, fs.ErrNotExist):
			return u, err
		}
		return u, nil
	}
	rels := make([]string, 0, len(files))
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	var written []string
	for _, rel := range rels {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		mk, err := mkdirs(filepath.Dir(path))
		made = append(made, mk...)
		if err != nil {
			return nil, rollback(err)
		}
		u, err := save(path)
		if err != nil {
			return nil, rollback(err)
		}
		if err := writeBytes(path, files[rel], 0o644); err != nil {
			return nil, rollback(err)
		}
		done = append(done, u)
		written = append(written, path)
	}
	// Views left from an older change set.
	var stale []string
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr == nil && layoutFile(filepath.ToSlash(rel)) && files[filepath.ToSlash(rel)] == nil {
			stale = append(stale, p)
		}
		return nil
	})
	for _, p := range stale {
		u, err := save(p)
		if err != nil {
			return nil, rollback(err)
		}
		if err := os.Remove(p); err != nil {
			return nil, rollback(err)
		}
		u.existed = true
		done = append(done, u)
		os.Remove(filepath.Dir(p)) // a systemd UNIT.d left empty
	}
	return written, nil
}

func writeBytes(path string, data []byte, perm fs.FileMode) error {
	return atomicfile.Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// mkdirs creates dir and its missing parents, returning the ones it
// created, outermost first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !os.IsExist(err) {
			return created, err
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// Decode reads a change set from its JSON (at most 16 MiB) and validates
// it.
func Decode(r io.Reader) (*Set, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSetBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSetBytes {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrInvalid, maxSetBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var s Set
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the change set", ErrInvalid)
	}
	if s.Format == 0 {
		return nil, fmt.Errorf("%w: no \"format\": not a change set written by stacktune", ErrInvalid)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Read reads a change set: a changes.json file, or a directory Write
// wrote. In a directory every view must still be what changes.json
// renders, and no view may be left from another change set: a view edited
// by hand, removed or stale is an error saying so (apply does what
// changes.json says, and must not do something else than what a person
// reviewed). Files that are no part of the layout are named in the notes.
func Read(path string) (*Set, []string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.IsDir() {
		f, _, err := input.OpenFile(path)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		s, err := Decode(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		return s, nil, nil
	}
	jf := filepath.Join(path, FileName)
	f, _, err := input.OpenFile(jf)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s holds no %s: not a directory stacktune audit --emit wrote (or one from an older stacktune: run the audit again)", path, FileName)
	}
	if err != nil {
		return nil, nil, err
	}
	s, err := Decode(f)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", jf, err)
	}
	want, err := Render(s)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", jf, err)
	}
	var problems, notes []string
	for rel, data := range want {
		if rel == FileName {
			continue
		}
		got, err := input.ReadFile(filepath.Join(path, filepath.FromSlash(rel)), maxSetBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, rel+" is missing")
		case err != nil:
			return nil, nil, err
		case !bytes.Equal(got, data):
			problems = append(problems, rel+" was edited")
		}
	}
	err = filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, rerr := filepath.Rel(path, p)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		switch {
		case want[rel] != nil:
		case layoutFile(rel):
			problems = append(problems, rel+" is not part of "+FileName+" (left from another change set?)")
		default:
			notes = append(notes, rel+": not part of the change set, ignored")
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, notes, fmt.Errorf("%s: %s. apply does what %s says: make changes there (or leave findings out with --skip ID), or emit again", path, strings.Join(problems, "; "), FileName)
	}
	sort.Strings(notes)
	return s, notes, nil
}
