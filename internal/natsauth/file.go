package natsauth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nats-io/nkeys"
	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/subjects"
)

// ErrInvalid is wrapped by every error about an auth file.
var ErrInvalid = errors.New("natsauth: invalid auth file")

// File is a parsed auth file.
//
//	version: 1
//	admins:  [{name: ops, nkey: UA...}]
//	clients: [{name: ci, nkey: UB...}]
//	agents:  [{node: n1, nkey: UC...}]
type File struct {
	Admins  []Identity
	Clients []Identity
	Agents  []Agent
}

// Identity is an admin or a client: a name for logs and the user's nkey
// public key.
type Identity struct {
	Name string `yaml:"name"`
	NKey string `yaml:"nkey"`
}

// Agent is a node agent's user: its node id and nkey public key.
type Agent struct {
	Node string `yaml:"node"`
	NKey string `yaml:"nkey"`
}

type rawFile struct {
	Version int        `yaml:"version"`
	Admins  []Identity `yaml:"admins"`
	Clients []Identity `yaml:"clients"`
	Agents  []Agent    `yaml:"agents"`
}

// ReadFile reads and checks the auth file at path.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return Parse(path, data)
}

// Parse checks an auth file's content; name names it in errors, which
// give the key's path and line.
func Parse(name string, data []byte) (*File, error) {
	bad := func(path string, line int, format string, args ...any) error {
		where := name
		if path != "" {
			where += ": " + path
		}
		if line > 0 {
			where += fmt.Sprintf(" (line %d)", line)
		}
		return fmt.Errorf("%w: %s: %s", ErrInvalid, where, fmt.Sprintf(format, args...))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, bad("", 0, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var raw rawFile
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, bad("", 0, "empty document")
		}
		return nil, bad("", 0, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if raw.Version != 1 {
		return nil, bad("version", line(&root, "version"), "version %d: want 1", raw.Version)
	}
	seen := map[string]string{} // nkey → where first
	checkKey := func(path, key string, ln int) error {
		if !nkeys.IsValidPublicUserKey(key) {
			return bad(path, ln, "%q is not an nkey user public key (one starts with U; `sharetree nkey` makes one)", key)
		}
		if first, dup := seen[key]; dup {
			return bad(path, ln, "nkey %s is already %s: one user, one role", key, first)
		}
		seen[key] = path
		return nil
	}
	clientNames := map[string]string{}
	for _, group := range []struct {
		key  string
		list []Identity
	}{{"admins", raw.Admins}, {"clients", raw.Clients}} {
		for i, id := range group.list {
			p := fmt.Sprintf("%s[%d]", group.key, i)
			if id.Name == "" {
				return nil, bad(p+".name", line(&root, group.key, i), "a name is required")
			}
			if group.key == "clients" {
				// A client's name is its user: the subject it submits on
				// and what pools' submit_acl lists.
				if err := subjects.ValidateToken("user name", id.Name); err != nil {
					return nil, bad(p+".name", line(&root, group.key, i, "name"), "%v", err)
				}
				if first, dup := clientNames[id.Name]; dup {
					return nil, bad(p+".name", line(&root, group.key, i, "name"), "user %q is already %s", id.Name, first)
				}
				clientNames[id.Name] = p
			}
			if err := checkKey(p+".nkey", id.NKey, line(&root, group.key, i, "nkey")); err != nil {
				return nil, err
			}
		}
	}
	nodes := map[string]bool{}
	for i, a := range raw.Agents {
		p := fmt.Sprintf("agents[%d]", i)
		if err := subjects.ValidateToken("node id", a.Node); err != nil {
			return nil, bad(p+".node", line(&root, "agents", i, "node"), "%v", err)
		}
		if nodes[a.Node] {
			return nil, bad(p+".node", line(&root, "agents", i, "node"), "node %q has an agent already", a.Node)
		}
		nodes[a.Node] = true
		if err := checkKey(p+".nkey", a.NKey, line(&root, "agents", i, "nkey")); err != nil {
			return nil, err
		}
	}
	if len(seen) == 0 {
		return nil, bad("", 0, "no users: list admins, clients or agents")
	}
	return &File{Admins: raw.Admins, Clients: raw.Clients, Agents: raw.Agents}, nil
}

// line is the line of the node at path (mapping keys and sequence
// indexes) under a document's root, 0 when there is none.
func line(root *yaml.Node, path ...any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, step := range path {
		switch s := step.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return 0
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == s {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return n.Line
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || s >= len(n.Content) {
				return n.Line
			}
			n = n.Content[s]
		}
	}
	return n.Line
}
