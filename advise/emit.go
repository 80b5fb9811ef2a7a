package advise

import (
	"errors"
	"fmt"

	"github.com/stacktune/stacktune/changeset"
)

// Emit writes r's change set (ChangeSet) into dir in the layout of
// package changeset: changes.json, which stacktune apply reads, and a
// view per kind for people (a my.cnf drop-in, a sysctl.d file, an nginx
// snippet with each directive under its context, systemd drop-ins,
// memcached options, Redis settings), every setting under a comment naming
// its finding. All files or none. It returns the paths written, sorted;
// no changes means no files and no error.
func Emit(dir string, r *Result) ([]string, error) {
	if r == nil {
		return nil, errors.New("emit: no audit result")
	}
	s := r.ChangeSet()
	if len(s.Changes) == 0 {
		return nil, nil
	}
	paths, err := changeset.Write(dir, s)
	if err != nil {
		return nil, fmt.Errorf("emit: %w", err)
	}
	return paths, nil
}
