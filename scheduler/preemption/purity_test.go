package preemption

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The package is pure: nothing from NATS or protoactor among its
// dependencies, and no clock, logging, goroutines, randomness or I/O in its
// source.
func TestPreemptionDependenciesArePure(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "nats-io") || strings.Contains(dep, "asynkron") {
			t.Errorf("preemption depends on %s", dep)
		}
	}
}

func TestPreemptionSourceIsPure(t *testing.T) {
	forbiddenImports := map[string]string{
		"log": "logging", "log/slog": "logging", "os": "I/O", "net": "I/O", "net/http": "I/O",
		"io/ioutil": "I/O", "os/exec": "I/O", "math/rand": "randomness", "math/rand/v2": "randomness",
		"unsafe": "unsafe memory", "syscall": "I/O", "sync": "concurrency", "time": "the clock",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbiddenImports[path]; bad {
				t.Errorf("%s imports %s (%s)", fset.Position(imp.Pos()), path, why)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s starts a goroutine", fset.Position(g.Pos()))
			}
			if s, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := s.X.(*ast.Ident); ok && id.Name == "fmt" && strings.HasPrefix(s.Sel.Name, "Print") {
					t.Errorf("%s prints", fset.Position(s.Pos()))
				}
			}
			return true
		})
	}
	if checked < 9 {
		t.Fatalf("checked only %d source files", checked)
	}
}
