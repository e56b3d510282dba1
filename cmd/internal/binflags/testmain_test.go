package binflags

import (
	"os"
	"testing"

	"github.com/bottled-dev/bottled/internal/skips"
)

func TestMain(m *testing.M) { os.Exit(skips.Main(m)) }
