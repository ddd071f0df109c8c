package natsauth_test

import (
	"testing"

	"github.com/sharetree/sharetree/internal/testutil"
)

// TestMain fails the tests if a goroutine outlives them (see
// testutil.VerifyNoLeaks).
func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }
