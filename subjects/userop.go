package subjects

import (
	"fmt"
	"slices"
	"strings"
)

// UserOpVerbs are the verbs a user sends on its own subject
// (UserOp): the ones that change an operation, which only its owner may.
var UserOpVerbs = []OpVerb{OpAbort, OpUpdate}

// UserOp is the subject on which user asks verb (abort or update) of
// operation id: the scheduler takes the user from the subject and lets
// only the operation's owner through, and a secured NATS server lets each
// client publish only on its own (see internal/natsauth), as for
// UserSubmit.
func UserOp(user, id string, verb OpVerb) (string, error) {
	if err := ValidateToken("user name", user); err != nil {
		return "", err
	}
	if err := ValidateToken("operation id", id); err != nil {
		return "", err
	}
	if !slices.Contains(UserOpVerbs, verb) {
		return "", fmt.Errorf("%w: user operation verb %q is not one of %v", ErrInvalidToken, verb, UserOpVerbs)
	}
	return join(Prefix, "user", user, "op", id, string(verb)), nil
}

// UserOpAll matches verb for every user and operation (for the service
// endpoint).
func UserOpAll(verb OpVerb) string { return join(Prefix, "user", "*", "op", "*", string(verb)) }

// UserOpsOf matches verb for every operation on user's own subjects (for
// the user's NATS permissions). user must be a valid token.
func UserOpsOf(user string, verb OpVerb) string {
	return join(Prefix, "user", user, "op", "*", string(verb))
}

// ParseAnyOp parses an operation request's subject of either form: the
// anonymous Op (user "") or a user's own UserOp.
func ParseAnyOp(subject string) (user, id string, verb OpVerb, err error) {
	if t := strings.SplitN(subject, ".", 4); len(t) > 2 && t[2] == "user" {
		return ParseUserOp(subject)
	}
	id, verb, err = ParseOp(subject)
	return "", id, verb, err
}

// ParseUserOp returns the user, the operation id and the verb of a UserOp
// subject.
func ParseUserOp(subject string) (user, id string, verb OpVerb, err error) {
	t := strings.Split(subject, ".")
	if len(t) != 7 || join(t[0], t[1]) != Prefix || t[2] != "user" || t[4] != "op" {
		return "", "", "", fmt.Errorf("%w: %q is not %s.user.<user>.op.<id>.<verb>", ErrInvalidSubject, subject, Prefix)
	}
	if err := ValidateToken("user name", t[3]); err != nil {
		return "", "", "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	if err := ValidateToken("operation id", t[5]); err != nil {
		return "", "", "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	v := OpVerb(t[6])
	if !slices.Contains(UserOpVerbs, v) {
		return "", "", "", fmt.Errorf("%w: in %q: verb %q is not one of %v", ErrInvalidSubject, subject, t[6], UserOpVerbs)
	}
	return t[3], t[5], v, nil
}
