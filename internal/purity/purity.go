package purity

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

// Rules say what a package's non-test source must not use.
type Rules struct {
	// Imports maps a forbidden import path to why.
	Imports map[string]string
	// Calls maps a forbidden "pkg.Name" selector to why.
	Calls map[string]string
	// MinFiles guards against a check that reads nothing: fewer non-test
	// files than this fail the test.
	MinFiles int
}

// BaseImports are forbidden in every pure package.
var BaseImports = map[string]string{
	"log": "logging", "log/slog": "logging", "os": "I/O", "net": "I/O", "net/http": "I/O",
	"io/ioutil": "I/O", "os/exec": "I/O", "math/rand": "randomness", "math/rand/v2": "randomness",
	"unsafe": "unsafe memory", "syscall": "I/O",
}

// PrintCalls are fmt's printing functions.
var PrintCalls = map[string]string{
	"fmt.Print": "printing", "fmt.Println": "printing", "fmt.Printf": "printing",
}

// TargetMathCalls are the math functions that are not correctly rounded,
// so their last bit can differ by target (assembly on some targets, Go
// elsewhere, compiled with fused multiply-adds on some). A pure engine
// computes the same bits everywhere, so it uses only exact or correctly
// rounded ones (Sqrt, Floor, Round, Frexp, Pow10, …); see
// docs/DETERMINISM.md.
var TargetMathCalls = func() map[string]string {
	m := map[string]string{}
	for _, name := range []string{
		"Exp", "Exp2", "Expm1", "Log", "Log10", "Log1p", "Log2", "Pow",
		"Sin", "Cos", "Tan", "Sincos", "Asin", "Acos", "Atan", "Atan2", "Sinh", "Cosh", "Tanh",
		"Asinh", "Acosh", "Atanh", "Cbrt", "Hypot", "Erf", "Erfc", "Erfinv", "Erfcinv", "Gamma", "Lgamma",
		"J0", "J1", "Jn", "Y0", "Y1", "Yn",
	} {
		m["math."+name] = "its last bit depends on the target"
	}
	return m
}()

// With returns the union of the maps (none is changed).
func With(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// CheckDependencies fails t when the package in the current directory
// depends, directly or not, on NATS or protoactor.
func CheckDependencies(t *testing.T) {
	t.Helper()
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
			t.Errorf("the package depends on %s", dep)
		}
	}
}

// CheckSource fails t for every forbidden import, forbidden call and go
// statement in the non-test files of the current directory.
func CheckSource(t *testing.T, r Rules) {
	t.Helper()
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
			if why, bad := r.Imports[path]; bad {
				t.Errorf("%s imports %s (%s)", fset.Position(imp.Pos()), path, why)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s starts a goroutine", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok {
					if why, bad := r.Calls[id.Name+"."+n.Sel.Name]; bad {
						t.Errorf("%s uses %s.%s (%s)", fset.Position(n.Pos()), id.Name, n.Sel.Name, why)
					}
				}
			}
			return true
		})
	}
	if checked < r.MinFiles {
		t.Fatalf("checked only %d source files, want at least %d", checked, r.MinFiles)
	}
}
