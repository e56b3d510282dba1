package watch

// StatusConns is how many status connections the daemon answers at once,
// for the tests that flood it.
const StatusConns = statusConns

// snapshot returns the status without survey, as the tests read it.
func (r *recorder) snapshot() Status {
	return r.copyLocked().status()
}
