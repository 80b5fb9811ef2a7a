package advise

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files Emit writes, relative to its directory.
const (
	EmitMySQL     = "mysql/99-stacktune.cnf"
	EmitSysctl    = "sysctl/99-stacktune.conf"
	EmitNginx     = "nginx/stacktune.conf"
	EmitMemcached = "memcached/options"
	EmitRedis     = "redis/stacktune.conf"
	// EmitSystemd is the drop-in of one unit: systemd/<unit>.d/stacktune.conf.
	emitSystemdDir = "systemd"
)

// emitLine is one setting of a file with the findings that propose it.
type emitLine struct {
	key      string
	line     string
	comments []string
	group    string // nginx: the context it goes in
}

// emitFile collects a file's lines in order.
type emitFile struct {
	path  string
	lines []*emitLine
	byKey map[string]*emitLine
}

// Emit writes the changes of r's findings as ready files under dir: a
// my.cnf drop-in ([mysqld]), a sysctl.d file, an nginx snippet (each
// directive under the context it goes in), systemd drop-ins
// ([Service] LimitNOFILE=) per unit, memcached options and Redis
// settings. Every setting is preceded by "# <finding id>: <title>" (and
// its durability cost, when it has one). Changes of kind ddl and code are
// not written.
//
// Emit writes all the files or none: they are written into a staging
// directory inside dir first, then renamed into place; if anything fails,
// the files already renamed are removed (a file they replaced is put
// back), and so are the directories Emit created. It returns the paths
// written, sorted; no changes means no files and no error.
func Emit(dir string, r *Result) ([]string, error) {
	if r == nil {
		return nil, errors.New("emit: no audit result")
	}
	files, err := buildFiles(r)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, nil
	}
	return writeAll(dir, files)
}

// buildFiles renders the files' contents, by path relative to the
// directory.
func buildFiles(r *Result) (map[string][]byte, error) {
	byPath := map[string]*emitFile{}
	get := func(path string) *emitFile {
		f := byPath[path]
		if f == nil {
			f = &emitFile{path: path, byKey: map[string]*emitLine{}}
			byPath[path] = f
		}
		return f
	}
	for _, fd := range r.Findings {
		comment := fmt.Sprintf("# %s: %s", fd.ID, oneLine(fd.Title))
		for _, ch := range fd.Changes() {
			path, line, group, ok := renderChange(ch)
			if !ok {
				continue
			}
			f := get(path)
			key := ch.key()
			if l, ok := f.byKey[key]; ok {
				if l.line != line {
					return nil, fmt.Errorf("emit: %s sets %s to two values (%q and %q): audit results resolve such conflicts, this one was edited", path, ch.Name, l.line, line)
				}
				l.comments = appendUnique(l.comments, comment)
				continue
			}
			l := &emitLine{key: key, line: line, group: group, comments: []string{comment}}
			if fd.Risk.Durability != "" {
				l.comments = append(l.comments, "#   durability: "+oneLine(fd.Risk.Durability))
			}
			f.byKey[key] = l
			f.lines = append(f.lines, l)
		}
	}
	out := map[string][]byte{}
	for path, f := range byPath {
		out[path] = []byte(renderFile(r, f))
	}
	return out, nil
}

// renderChange places a change: the file, its line, and for nginx the
// context it goes in.
func renderChange(ch Change) (path, line, group string, ok bool) {
	switch ch.Kind {
	case KindMySQLVariable, KindMySQLOption:
		name := ch.Name
		if ch.Option != "" {
			name = ch.Option
		}
		return EmitMySQL, name + " = " + ch.Value, "", true
	case KindSysctl:
		return EmitSysctl, ch.Name + " = " + ch.Value, "", true
	case KindNginx:
		return EmitNginx, ch.Name + " " + ch.Value + ";", ch.Target, true
	case KindSystemd:
		unit := safeUnit(ch.Target)
		return filepath.ToSlash(filepath.Join(emitSystemdDir, unit+".d", "stacktune.conf")), ch.Name + "=" + ch.Value, "", true
	case KindMemcached:
		return EmitMemcached, ch.Name + " " + ch.Value, "", true
	case KindRedis:
		return EmitRedis, ch.Name + " " + ch.Value, "", true
	}
	return "", "", "", false
}

// safeUnit keeps a unit name usable as a directory name.
func safeUnit(u string) string {
	u = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == '@':
			return r
		}
		return '_'
	}, u)
	if u == "" || u == "." || u == ".." {
		return "unknown.service"
	}
	return u
}

func renderFile(r *Result, f *emitFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by stacktune from the audit of %s (snapshot taken %s).\n", orUnknown(r.Host), r.Taken.UTC().Format("2006-01-02 15:04:05 UTC"))
	b.WriteString("# Review every line: the comment above it names the finding (stacktune audit shows its evidence and risk).\n")
	switch {
	case f.path == EmitMySQL:
		b.WriteString("# Install as /etc/mysql/mariadb.conf.d/99-stacktune.cnf (MariaDB on Debian) or /etc/mysql/mysql.conf.d/ (MySQL),\n")
		b.WriteString("# /etc/my.cnf.d/ elsewhere. Dynamic variables also apply at once with SET GLOBAL; the others need a restart.\n")
		b.WriteString("[mysqld]\n")
	case f.path == EmitSysctl:
		b.WriteString("# Install as /etc/sysctl.d/99-stacktune.conf, then: sysctl --system\n")
	case f.path == EmitNginx:
		b.WriteString("# A snippet, not a file to include as is: put each directive in the context named above it,\n")
		b.WriteString("# replacing the directive of the same name there. Then: nginx -t && nginx -s reload\n")
	case f.path == EmitMemcached:
		b.WriteString("# memcached command-line options, one per line as /etc/memcached.conf (Debian) takes them;\n")
		b.WriteString("# elsewhere add them to OPTIONS in /etc/sysconfig/memcached. Then restart memcached.\n")
	case f.path == EmitRedis:
		b.WriteString("# Redis settings for redis.conf (or CONFIG SET now and CONFIG REWRITE to keep them).\n")
	case strings.HasPrefix(f.path, emitSystemdDir+"/"):
		unit := strings.TrimSuffix(filepath.Base(filepath.Dir(f.path)), ".d")
		fmt.Fprintf(&b, "# Install as /etc/systemd/system/%s.d/stacktune.conf (what systemctl edit %s writes),\n", unit, unit)
		fmt.Fprintf(&b, "# then: systemctl daemon-reload && systemctl restart %s\n", unit)
		b.WriteString("[Service]\n")
	}
	lines := f.lines
	if f.path == EmitNginx {
		// Group by context, in order of first appearance.
		var groups []string
		seen := map[string]bool{}
		for _, l := range lines {
			if !seen[l.group] {
				seen[l.group] = true
				groups = append(groups, l.group)
			}
		}
		for _, g := range groups {
			fmt.Fprintf(&b, "\n# --- in %s ---\n", g)
			for _, l := range lines {
				if l.group == g {
					writeLine(&b, l)
				}
			}
		}
		return b.String()
	}
	for _, l := range lines {
		writeLine(&b, l)
	}
	return b.String()
}

func writeLine(b *strings.Builder, l *emitLine) {
	for _, c := range l.comments {
		b.WriteString(c)
		b.WriteByte('\n')
	}
	b.WriteString(l.line)
	b.WriteByte('\n')
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed host"
	}
	return s
}

// oneLine keeps a text on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// writeAll writes files (by relative path) into dir, all or nothing.
func writeAll(dir string, files map[string][]byte) (written []string, err error) {
	top, err := mkdirs(filepath.Clean(dir))
	defer func() {
		if err != nil {
			for i := len(top) - 1; i >= 0; i-- {
				os.Remove(top[i])
			}
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("emit: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("emit: %s is not a directory", dir)
	}
	stage, err := os.MkdirTemp(dir, ".stacktune-emit-")
	if err != nil {
		return nil, fmt.Errorf("emit: %w", err)
	}
	defer os.RemoveAll(stage)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// 1. Write every file into the staging directory.
	for _, p := range paths {
		sp := filepath.Join(stage, "new", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(sp), 0o755); err != nil {
			return nil, fmt.Errorf("emit: %w", err)
		}
		if err := writeSync(sp, files[p]); err != nil {
			return nil, fmt.Errorf("emit: %w", err)
		}
	}
	// 2. Rename them into place, undoing everything on a failure.
	type done struct{ target, backup string }
	var committed []done
	var created []string
	defer func() {
		if err == nil {
			return
		}
		for i := len(committed) - 1; i >= 0; i-- {
			d := committed[i]
			os.Remove(d.target)
			if d.backup != "" {
				os.Rename(d.backup, d.target)
			}
		}
		for i := len(created) - 1; i >= 0; i-- {
			os.Remove(created[i]) // only succeeds when empty
		}
		written = nil
	}()
	for _, p := range paths {
		target := filepath.Join(dir, filepath.FromSlash(p))
		mk, err := mkdirs(filepath.Dir(target))
		created = append(created, mk...)
		if err != nil {
			return nil, fmt.Errorf("emit: %w", err)
		}
		d := done{target: target}
		if fi, err := os.Lstat(target); err == nil {
			if fi.IsDir() {
				return nil, fmt.Errorf("emit: %s is a directory", target)
			}
			d.backup = filepath.Join(stage, "old", filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(d.backup), 0o755); err != nil {
				return nil, fmt.Errorf("emit: %w", err)
			}
			if err := os.Rename(target, d.backup); err != nil {
				return nil, fmt.Errorf("emit: %w", err)
			}
		}
		if err := os.Rename(filepath.Join(stage, "new", filepath.FromSlash(p)), target); err != nil {
			if d.backup != "" {
				os.Rename(d.backup, target)
			}
			return nil, fmt.Errorf("emit: %w", err)
		}
		committed = append(committed, d)
		written = append(written, target)
	}
	return written, nil
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

// writeSync writes a new file and syncs it.
func writeSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
