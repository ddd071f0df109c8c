package scheduler

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

// The engine is pure: it imports nothing from NATS or protoactor (directly or
// through dependencies), reads no clock, logs nothing, starts no goroutines
// and does no I/O.
func TestSchedulerDependenciesArePure(t *testing.T) {
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
			t.Errorf("scheduler depends on %s", dep)
		}
	}
}

func TestSchedulerSourceIsPure(t *testing.T) {
	forbiddenImports := map[string]string{
		"log": "logging", "log/slog": "logging", "os": "I/O", "net": "I/O", "net/http": "I/O",
		"io/ioutil": "I/O", "os/exec": "I/O", "math/rand": "randomness", "math/rand/v2": "randomness",
		"unsafe": "unsafe memory", "syscall": "I/O",
	}
	forbiddenCalls := map[string]string{
		"time.Now": "reading the clock", "time.Since": "reading the clock", "time.Until": "reading the clock",
		"time.Sleep": "sleeping", "time.After": "timers", "time.NewTimer": "timers", "time.NewTicker": "timers",
		"fmt.Print": "printing", "fmt.Println": "printing", "fmt.Printf": "printing",
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
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s starts a goroutine", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok {
					if why, bad := forbiddenCalls[id.Name+"."+n.Sel.Name]; bad {
						t.Errorf("%s uses %s.%s (%s)", fset.Position(n.Pos()), id.Name, n.Sel.Name, why)
					}
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked only %d source files", checked)
	}
}
