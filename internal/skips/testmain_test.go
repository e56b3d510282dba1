package skips

import (
	"os"
	"testing"
)

// TestMain takes part in the run's report like every package's (see Main).
func TestMain(m *testing.M) { os.Exit(Main(m)) }
