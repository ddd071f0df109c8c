package subjects

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidToken is wrapped by every error about a subject token.
var ErrInvalidToken = errors.New("subjects: invalid token")

// ErrInvalidSubject is wrapped by every error about a whole subject that does
// not have the expected shape.
var ErrInvalidSubject = errors.New("subjects: invalid subject")

// MaxTokenLength bounds a name used as a subject token.
const MaxTokenLength = 128

// ValidateToken reports whether s can be one subject token: 1 to
// MaxTokenLength characters from [A-Za-z0-9_-$], not starting with "$"
// (reserved for NATS system subjects). what names the token in the
// error ("node id", "operation id").
func ValidateToken(what, s string) error {
	if s == "" {
		return fmt.Errorf("%w: %s is empty", ErrInvalidToken, what)
	}
	if len(s) > MaxTokenLength {
		return fmt.Errorf("%w: %s %.20q… is %d characters, at most %d allowed", ErrInvalidToken, what, s, len(s), MaxTokenLength)
	}
	if s[0] == '$' {
		return fmt.Errorf("%w: %s %q starts with '$', which NATS reserves for system subjects", ErrInvalidToken, what, s)
	}
	for i := 0; i < len(s); i++ {
		if !tokenByte(s[i]) {
			return fmt.Errorf("%w: %s %q has %q at byte %d; only letters, digits, '_', '-' and '$' are allowed", ErrInvalidToken, what, s, s[i], i)
		}
	}
	return nil
}

func tokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '_', c == '-', c == '$':
		return true
	}
	return false
}

// join builds a subject from already validated tokens.
func join(tokens ...string) string { return strings.Join(tokens, ".") }
