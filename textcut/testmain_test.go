package textcut

import (
	"os"
	"testing"

	"github.com/bottled-dev/bottled/internal/skips"
)

// TestMain says, at the end of a run, what was skipped for want of a tool
// or fixture (see internal/skips).
func TestMain(m *testing.M) { os.Exit(skips.Main(m)) }
