package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharetree/sharetree/internal/natsauth"
)

func TestNkeyWritesASeedAndPrintsItsPublicKey(t *testing.T) {
	seed := filepath.Join(t.TempDir(), "agent.nk")
	code, out, errOut := runCLI(t, "nkey", "--seed-file", seed)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	k, err := natsauth.ReadSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out); got != k.Public() || !strings.HasPrefix(got, "U") {
		t.Errorf("printed %q, want the seed's public key %s", got, k.Public())
	}
	if fi, err := os.Stat(seed); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("seed file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	// An existing file is not overwritten.
	if code, out, errOut := runCLI(t, "nkey", "--seed-file", seed); code != 2 || out != "" || !strings.Contains(errOut, "--seed-file") {
		t.Errorf("over an existing file: exit %d, stdout %q, stderr %q; want 2 naming --seed-file", code, out, errOut)
	}
	if again, err := natsauth.ReadSeed(seed); err != nil || again.Public() != k.Public() {
		t.Errorf("the seed file changed: %v, %v", again, err)
	}
	if code, _, errOut := runCLI(t, "nkey"); code != 2 || !strings.Contains(errOut, "--seed-file is required") {
		t.Errorf("without --seed-file: exit %d, stderr %q", code, errOut)
	}
}

func TestServerAuthAndTLSFlagsRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, "auth.yaml", "version: 1\nagents:\n  - {node: n1, nkey: nope}\n")
	seed := filepath.Join(dir, "s.nk")
	if code, _, errOut := runCLI(t, "nkey", "--seed-file", seed); code != 0 {
		t.Fatal(errOut)
	}
	pub, _ := natsauth.ReadSeed(seed)
	good := writeFile(t, "good.yaml", "version: 1\nclients: [{name: ci, nkey: "+pub.Public()+"}]\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"server", "--auth", bad}, `--auth: natsauth: invalid auth file: ` + bad + `: agents[0].nkey (line 3)`},
		{[]string{"server", "--auth", filepath.Join(dir, "missing.yaml")}, "--auth: "},
		{[]string{"server", "--nkey", filepath.Join(dir, "missing.nk")}, "--nkey: "},
		{[]string{"server", "--nats-url", "nats://127.0.0.1:1", "--auth", good}, "--auth"},
		{[]string{"server", "--nkey", seed}, "--nkey"},
		{[]string{"agent", "--node-id", "n1", "--resources", "cpu=1", "--nkey", bad}, "agent: --nkey: "},
		{[]string{"op", "list", "--nkey", bad}, "--nkey: "},
		{[]string{"server", "--tls-cert", bad}, "--tls-cert"},
		{[]string{"server", "--tls-cert", bad, "--tls-key", bad}, "--tls-cert, --tls-key: "},
		{[]string{"server", "--tls-ca", bad}, "--tls-ca"},
		{[]string{"op", "list", "--tls-ca", filepath.Join(dir, "missing.pem")}, "--tls-ca: "},
		{[]string{"pool", "get", "physical/a", "--tls-ca", filepath.Join(dir, "missing.pem")}, "--tls-ca: "},
		{[]string{"agent", "--node-id", "n1", "--resources", "cpu=1", "--tls-ca", filepath.Join(dir, "missing.pem")}, "agent: --tls-ca: "},
	} {
		if code, _, errOut := runCLI(t, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
