//go:build !linux

package loadgen

import "time"

// loopsSupported says whether this platform has the event loops; elsewhere
// URL plans run on one goroutine per connection.
const loopsSupported = false

func (r *runner) loopWorkers(p *urlWorkload) ([]func() time.Time, func(), bool) {
	return nil, nil, false
}
