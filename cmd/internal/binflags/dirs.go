package binflags

import (
	"errors"
	"fmt"
	"io"

	"github.com/bottled-dev/bottled/sources"
)

// Resolve finds the directories a command works on, as sources.FindDirs
// does (given: the flags given), says the warning it has once on stderr
// (after "name: warning: "). An empty flag is a UsageError.
func Resolve(name string, given sources.Given, stderr io.Writer) (sources.Dirs, error) {
	d, err := sources.FindDirs(given)
	if errors.As(err, new(sources.EmptyFlagError)) {
		return d, UsageError{err}
	}
	if err != nil {
		return d, err
	}
	if d.Warning != "" {
		fmt.Fprintf(stderr, "%s: warning: %s\n", name, d.Warning)
	}
	return d, nil
}
