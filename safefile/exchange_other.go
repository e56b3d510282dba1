//go:build !linux && !darwin

package safefile

// Exchange reports that this system cannot swap two files in one step.
func Exchange(a, b string) (bool, error) { return false, nil }
