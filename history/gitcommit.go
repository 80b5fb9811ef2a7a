package history

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stacktune/stacktune/input"
)

// GitCommit returns the commit checked out in the git repository holding
// dir (dir or a parent has .git), "" when there is none. It reads .git
// itself (HEAD, the branch's ref file or packed-refs, a worktree's
// gitdir and commondir); only when that fails does it ask `git rev-parse
// HEAD`, bounded by two seconds.
func GitCommit(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if c := readGitHead(filepath.Join(d, ".git")); c != "" {
				return c
			}
			return gitRevParse(d)
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

const maxGitFile = 1 << 20

func readSmall(path string) string {
	b, err := input.ReadFile(path, maxGitFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readGitHead(dotgit string) string {
	gitdir := dotgit
	if fi, err := os.Stat(dotgit); err == nil && fi.Mode().IsRegular() {
		line := readSmall(dotgit) // "gitdir: PATH" (a worktree or submodule)
		p, ok := strings.CutPrefix(line, "gitdir:")
		if !ok {
			return ""
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(dotgit), p)
		}
		gitdir = p
	}
	common := gitdir
	if c := readSmall(filepath.Join(gitdir, "commondir")); c != "" {
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		common = c
	}
	head := readSmall(filepath.Join(gitdir, "HEAD"))
	ref, ok := strings.CutPrefix(head, "ref:")
	if !ok {
		return hexCommit(head)
	}
	ref = strings.TrimSpace(ref)
	if strings.Contains(ref, "..") {
		return ""
	}
	for _, d := range []string{gitdir, common} {
		if c := hexCommit(readSmall(filepath.Join(d, filepath.FromSlash(ref)))); c != "" {
			return c
		}
	}
	b, err := input.ReadFile(filepath.Join(common, "packed-refs"), 64<<20)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if c, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
			return hexCommit(c)
		}
	}
	return ""
}

// hexCommit is s when it is a full SHA-1 or SHA-256 object name.
func hexCommit(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	return s
}

func gitRevParse(dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return hexCommit(strings.TrimSpace(string(out)))
}
