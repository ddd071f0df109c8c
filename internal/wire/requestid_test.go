package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateRequestID(t *testing.T) {
	for _, ok := range []string{"a", "0b5e2c1f-6a1d-4c44-9a3e-2f1d0c7b8e9a", "nightly:2026-11-28.run_2", strings.Repeat("x", MaxRequestIDLen)} {
		if err := ValidateRequestID(ok); err != nil {
			t.Errorf("ValidateRequestID(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", MaxRequestIDLen+1), "a b", "a/b", "ünï", "a*", "a\n"} {
		if err := ValidateRequestID(bad); !errors.Is(err, ErrBadRequestID) {
			t.Errorf("ValidateRequestID(%q) = %v, want ErrBadRequestID", bad, err)
		}
	}
}
