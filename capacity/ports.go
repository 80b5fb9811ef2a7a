package capacity

import (
	"fmt"
	"strconv"
	"strings"
)

// Port numbers that bound an ephemeral range.
const (
	// MaxPort is the highest TCP port.
	MaxPort = 65535
	// MinEphemeralPort is the lowest port plan suggests: the kernel's
	// default net.ipv4.ip_unprivileged_port_start, below which ports are
	// reserved for privileged services (ip-sysctl.txt requires
	// ip_local_port_range to start at or above it).
	MinEphemeralPort = 1024
	// MaxEphemeralPorts is the widest range plan can suggest,
	// 1024..65535 (64512 ports, an even count).
	MaxEphemeralPorts = MaxPort - MinEphemeralPort + 1
)

// PortRange is net.ipv4.ip_local_port_range: both ends are included.
type PortRange struct {
	Low, High int
}

// DefaultPortRange is the kernel's default ip_local_port_range.
var DefaultPortRange = PortRange{Low: 32768, High: 60999}

// String is the range as sysctl writes it: "32768 60999".
func (r PortRange) String() string { return fmt.Sprintf("%d %d", r.Low, r.High) }

// Count is the number of ports in the range, both ends included:
// 32768..60999 holds 60999 - 32768 + 1 = 28232 ports.
func (r PortRange) Count() int { return r.High - r.Low + 1 }

// Usable is how many ports of the range connect() can hand out. The kernel
// (__inet_hash_connect in net/ipv4/inet_hashtables.c) turns the range into
// the half-open [low, high+1) — its comment reads
// "[32768, 60999] -> [32768, 61000[" — and then rounds the count down to an
// even number ("remaining &= ~1U") because it scans one parity then the
// other. An odd-sized range therefore loses one port, which is why
// ip-sysctl.txt advises ends of different parity.
func (r PortRange) Usable() int {
	n := r.Count()
	if n > 1 {
		n &^= 1
	}
	return n
}

// Validate checks that the range is one the kernel accepts.
func (r PortRange) Validate() error {
	if p := r.problem(); p != "" {
		return fmt.Errorf("%w: %s", ErrInvalid, p)
	}
	return nil
}

func (r PortRange) problem() string {
	switch {
	case r.Low < 1 || r.High > MaxPort:
		return fmt.Sprintf("port range %s: ports run from 1 to %d", r, MaxPort)
	case r.Low > r.High:
		return fmt.Sprintf("port range %s: the first port is above the last", r)
	}
	return ""
}

// ParsePortRange reads a range written as sysctl shows it ("32768 60999"),
// or as "32768-60999" or "32768,60999".
func ParsePortRange(s string) (PortRange, error) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '-' || r == ',' })
	if len(f) != 2 {
		return PortRange{}, fmt.Errorf("%w: port range %q: want two ports, as in \"32768 60999\"", ErrInvalid, s)
	}
	var r PortRange
	var err error
	if r.Low, err = strconv.Atoi(f[0]); err != nil {
		return PortRange{}, fmt.Errorf("%w: port range %q: %q is not a port number", ErrInvalid, s, f[0])
	}
	if r.High, err = strconv.Atoi(f[1]); err != nil {
		return PortRange{}, fmt.Errorf("%w: port range %q: %q is not a port number", ErrInvalid, s, f[1])
	}
	return r, r.Validate()
}

// rangeFor is the narrowest range ending at 65535 that gives connect() at
// least n ports. The count is made even (n+1 when n is odd), so the range
// starts on an even port and its ends differ in parity, and every port in
// it is usable (see Usable). ok is false when n does not fit above 1024;
// the widest range is returned then.
func rangeFor(n int) (r PortRange, ok bool) {
	if n%2 == 1 {
		n++
	}
	if n > MaxEphemeralPorts {
		return PortRange{Low: MinEphemeralPort, High: MaxPort}, false
	}
	if n < 2 {
		n = 2
	}
	return PortRange{Low: MaxPort + 1 - n, High: MaxPort}, true
}
