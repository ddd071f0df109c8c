package httpserve_test

import (
	"testing"

	"github.com/sharetree/sharetree/internal/testutil"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }
