package testbin

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// UsageCase is bad usage of a binary: run under the name Argv0 (what
// os.Args[0] says, which decides whose help the message points to) with
// Args, it must say Want. It is a struct literal's type rather than a
// named one so that test tables can list cases without field names.
type UsageCase = struct {
	Argv0 string
	Args  []string
	Want  string
}

// CheckUsage runs each case through run with os.Args[0] set to the case's
// Argv0, and fails t unless run returns an error of type E (the binary's
// usage error) that says Want, having written nothing to stdout or stderr:
// the caller says the one line, not the flag package besides.
func CheckUsage[E error](t *testing.T, cases []UsageCase, run func(args []string, stdout, stderr io.Writer) error) {
	t.Helper()
	old := os.Args[0]
	defer func() { os.Args[0] = old }()
	for _, c := range cases {
		os.Args[0] = c.Argv0
		var out, errs bytes.Buffer
		err := run(c.Args, &out, &errs)
		if !errors.As(err, new(E)) || err.Error() != c.Want || out.Len()+errs.Len() > 0 {
			t.Errorf("%s %q: %v, stdout %q, stderr %q; want %q alone", c.Argv0, c.Args, err, out.String(), errs.String(), c.Want)
		}
	}
}
