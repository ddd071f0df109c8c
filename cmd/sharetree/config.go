package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/internal/treeconf"
	"github.com/sharetree/sharetree/subjects"
)

// configFlags are shared by the configuration commands (tree, pool,
// cluster, apply).
type configFlags struct {
	url     string
	output  string
	timeout time.Duration
	nkey    string
	tlsCA   string
}

func (c *configFlags) add(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&c.tlsCA, "tls-ca", "", "PEM file of the certificate authority to trust for a NATS server that requires TLS (default: the system's)")
	cmd.PersistentFlags().StringVar(&c.url, "nats-url", nats.DefaultURL, "NATS server of the scheduler")
	cmd.PersistentFlags().StringVar(&c.nkey, "nkey", "", "file holding this client's nkey seed (`sharetree nkey` makes one), for a NATS server that requires it (changes need an admin's)")
	cmd.PersistentFlags().StringVarP(&c.output, "output", "o", "table", "output format: table, json or yaml")
	// Longer than the service's own treeconf.RequestTimeout, so a slow
	// request ends with the service's error rather than a client timeout.
	cmd.PersistentFlags().DurationVar(&c.timeout, "timeout", treeconf.RequestTimeout+5*time.Second, "timeout of each request")
}

// check validates the flags before anything is sent.
func (c *configFlags) check() error {
	switch c.output {
	case "table", "json", "yaml":
	default:
		return usageError{fmt.Errorf("--output %q: want table, json or yaml", c.output)}
	}
	if c.timeout <= 0 {
		return usageError{fmt.Errorf("--timeout %s must be positive", c.timeout)}
	}
	return nil
}

// connect checks the flags and connects.
func (c *configFlags) connect() (*nats.Conn, *treeconf.Client, error) {
	if err := c.check(); err != nil {
		return nil, nil, err
	}
	opts, err := cliAuth(c.nkey, c.tlsCA)
	if err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(c.url, append(opts, nats.Name("sharetree-cli"))...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", c.url, err)
	}
	return nc, treeconf.NewClient(nc, c.timeout), nil
}

// exactArgs is cobra.ExactArgs with a usage error naming the expected
// arguments.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s: want %s, got %d argument(s)", cmd.CommandPath(), what, len(args))}
		}
		return nil
	}
}

// rangeArgs is cobra.RangeArgs with a usage error naming the expected
// arguments.
func rangeArgs(lo, hi int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return usageError{fmt.Errorf("%s: want %s, got %d argument(s)", cmd.CommandPath(), what, len(args))}
		}
		return nil
	}
}

// treeName checks a tree name given on the command line.
func treeName(cmd *cobra.Command, s string) (string, error) {
	if err := subjects.ValidateToken("tree name", s); err != nil {
		return "", usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
	}
	return s, nil
}

// treePool splits TREE/POOL.
func treePool(cmd *cobra.Command, s string) (string, string, error) {
	tree, pool, ok := strings.Cut(s, "/")
	if !ok {
		return "", "", usageError{fmt.Errorf("%s: %q is not TREE/POOL", cmd.CommandPath(), s)}
	}
	if err := subjects.ValidateToken("tree name", tree); err != nil {
		return "", "", usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
	}
	if err := subjects.ValidateToken("pool name", pool); err != nil {
		return "", "", usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
	}
	return tree, pool, nil
}

// docSource reads a document from -f FILE or --config TEXT (at most one;
// empty when neither is given).
type docSource struct {
	file, text string
}

func (d *docSource) add(cmd *cobra.Command, what string) {
	cmd.Flags().StringVarP(&d.file, "file", "f", "", what+" document: a YAML or JSON file of its keys (- for stdin)")
	cmd.Flags().StringVar(&d.text, "config", "", what+" document inline, as YAML or JSON ('{weight: 2, mode: fifo}')")
}

func (d *docSource) given() bool { return d.file != "" || d.text != "" }

// read returns the document and the name to use in messages.
func (d *docSource) read() ([]byte, string, error) {
	switch {
	case d.file != "" && d.text != "":
		return nil, "", usageError{errors.New("give -f FILE or --config TEXT, not both")}
	case d.file != "":
		data, err := readFile(d.file)
		if err != nil {
			return nil, "", err
		}
		return data, d.file, nil
	}
	return []byte(d.text), "--config", nil
}

// docOut is one document as the commands print it.
type docOut struct {
	Tree     string          `json:"tree,omitempty"`
	Pool     string          `json:"pool,omitempty"`
	Revision uint64          `json:"revision"`
	Config   json.RawMessage `json:"config"`
}

// configValue decodes a canonical document for YAML output and tables.
func configValue(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// writeOut prints v as JSON, or as YAML of the same structure.
func writeOut(w io.Writer, output string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // node_tag_filter's '&' stays readable
	if err := enc.Encode(v); err != nil {
		return err
	}
	data := b.Bytes()
	if output == "json" {
		_, err := w.Write(data)
		return err
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return err
	}
	out, err := yaml.Marshal(generic)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// writeDoc prints one document: a KEY VALUE table under a header line, or
// JSON/YAML.
func writeDoc(w io.Writer, output string, d docOut) error {
	if output != "table" {
		return writeOut(w, output, d)
	}
	var head []string
	if d.Tree != "" {
		head = append(head, "tree "+d.Tree)
	}
	if d.Pool != "" {
		head = append(head, "pool "+d.Pool)
	}
	head = append(head, fmt.Sprintf("revision %d", d.Revision))
	fmt.Fprintf(w, "# %s\n", strings.Join(head, ", "))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE")
	m := configValue(d.Config)
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(tw, "%s\t%s\n", k, compact(m[k]))
	}
	return tw.Flush()
}

// compact prints a value as one line of JSON (strings without quotes).
func compact(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
