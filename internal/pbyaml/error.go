package pbyaml

import (
	"errors"
	"fmt"
)

// ErrInvalid is what every decoding error wraps.
var ErrInvalid = errors.New("invalid document")

// Error is a problem at one place of the document.
type Error struct {
	// File names the document (Options.File); empty when not given.
	File string
	// Line and Column locate the problem, from 1; 0 when unknown.
	Line, Column int
	// Path is the path to the key ("tasks[0].job_resources.cpu"); empty
	// for the document itself.
	Path string
	// Reason says what is wrong.
	Reason string
}

func (e *Error) Error() string {
	var s string
	switch {
	case e.File != "" && e.Line > 0 && e.Column > 0:
		s = fmt.Sprintf("%s:%d:%d: ", e.File, e.Line, e.Column)
	case e.File != "" && e.Line > 0:
		s = fmt.Sprintf("%s:%d: ", e.File, e.Line)
	case e.File != "":
		s = e.File + ": "
	case e.Line > 0 && e.Column > 0:
		s = fmt.Sprintf("line %d, column %d: ", e.Line, e.Column)
	case e.Line > 0:
		s = fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Path != "" {
		s += e.Path + ": "
	}
	return s + e.Reason
}

// Unwrap returns ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }
