package main

import (
	"strings"
	"testing"
)

// The table of a tree whose shares come from an update computed before a
// new leader's nodes reported their jobs says so under its header.
func TestTreeTableSaysReviving(t *testing.T) {
	const note = "# reviving:"
	for _, reviving := range []string{"true", "false"} {
		doc := `{"tree": "physical", "update_time": "2026-01-02T03:04:05Z", "reviving": ` + reviving + `, "pools": {}, "operations": {}}`
		var out strings.Builder
		if err := writeTreeView(&out, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), note); got != (reviving == "true") {
			t.Errorf("reviving %s: the table says %q: %v\n%s", reviving, note, got, out.String())
		}
	}
}
