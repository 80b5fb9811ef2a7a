package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// CommandTarget is a change the user makes with commands of their own: one
// that puts it in force (a git checkout, a build, the app's restart) and
// one that takes it back. stacktune cannot read such a change back from
// the system, so its state is which command ran last (off until Apply
// runs), and Verify runs Check when one is given: a command that fails
// unless the change is in force (a health check, a grep of the deployed
// version). A killed transaction is recovered as any other: the journal's
// state before says which command to run.
type CommandTarget struct {
	// Label names the change ("N+1 fix").
	Label string
	// Apply and Revert are the commands (argv, no shell); Check is
	// optional.
	Apply, Revert, Check []string

	on bool
}

// The states of a CommandTarget.
const (
	CommandOn  = "on"
	CommandOff = "off"
)

const commandKey = "state"

var _ Target = (*CommandTarget)(nil)

// NewCommandTarget checks the commands and returns the target, off.
func NewCommandTarget(label string, apply, revert, check []string) (*CommandTarget, error) {
	switch {
	case strings.TrimSpace(label) == "" || strings.ContainsAny(label, "\n\r\x00"):
		return nil, fmt.Errorf("a user step needs a name on one line, not %q", label)
	case len(apply) == 0 || apply[0] == "":
		return nil, fmt.Errorf("user step %s: no command that applies it", label)
	case len(revert) == 0 || revert[0] == "":
		return nil, fmt.Errorf("user step %s: no command that reverts it", label)
	}
	return &CommandTarget{Label: label, Apply: apply, Revert: revert, Check: check}, nil
}

func (t *CommandTarget) Name() string { return "command " + t.Label }

func (t *CommandTarget) Wanted() State { return State{commandKey: CommandOn} }

func (t *CommandTarget) state() string {
	if t.on {
		return CommandOn
	}
	return CommandOff
}

// Snapshot is which command ran last.
func (t *CommandTarget) Snapshot(context.Context) (State, error) {
	return State{commandKey: t.state()}, nil
}

// Activate runs Apply for on and Revert for off.
func (t *CommandTarget) Activate(ctx context.Context, want State) error {
	on := want[commandKey] == CommandOn
	argv := t.Revert
	if on {
		argv = t.Apply
	}
	if _, err := runCommand(ctx, argv, false); err != nil {
		return fmt.Errorf("%s: %w", t.Name(), err)
	}
	t.on = on
	return nil
}

// Verify runs Check when the change should be in force.
func (t *CommandTarget) Verify(ctx context.Context, want State) error {
	if want[commandKey] != t.state() {
		return &MismatchError{What: t.Name(), Mismatches: []Mismatch{{Key: commandKey, Got: t.state(), Want: want[commandKey]}}}
	}
	if want[commandKey] == CommandOn && len(t.Check) > 0 {
		if _, err := runCommand(ctx, t.Check, false); err != nil {
			return errors.Join(&MismatchError{What: t.Name(), Mismatches: []Mismatch{{Key: commandKey, Got: "check failed", Want: CommandOn}}}, err)
		}
	}
	return nil
}

// HandFix is the command that puts the wanted state back.
func (t *CommandTarget) HandFix(_, want string) string {
	argv := t.Revert
	if want == CommandOn {
		argv = t.Apply
	}
	return strings.Join(argv, " ")
}
