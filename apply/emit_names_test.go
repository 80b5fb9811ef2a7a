package apply

import (
	"testing"

	"github.com/stacktune/stacktune/advise"
)

// TestEmitNames: apply repeats the names of advise.Emit's files (it does
// not import the advisor); they must stay the same.
func TestEmitNames(t *testing.T) {
	for ours, theirs := range map[string]string{emitMySQL: advise.EmitMySQL, emitNginx: advise.EmitNginx, emitSysctl: advise.EmitSysctl,
		emitMemcached: advise.EmitMemcached, emitRedis: advise.EmitRedis} {
		if ours != theirs {
			t.Errorf("apply reads %s where advise writes %s", ours, theirs)
		}
	}
}
