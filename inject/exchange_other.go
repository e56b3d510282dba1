//go:build !linux && !darwin

package inject

// exchange reports that this system cannot swap two files in one step.
func exchange(a, b string) (bool, error) { return false, nil }
