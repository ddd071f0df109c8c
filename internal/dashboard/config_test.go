package dashboard

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/cfgerr"
)

func TestConfigValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Resolution: -time.Second}, "Resolution"},
		{Config{Window: time.Millisecond}, "Window"},
		{Config{Window: 24 * time.Hour, Resolution: time.Second}, "Window"},
		{Config{MaxPools: -1}, "MaxPools"},
		{Config{MaxPending: 20_000}, "MaxPending"},
		{Config{MaxRows: -3}, "MaxRows"},
		{Config{Refresh: time.Millisecond}, "Refresh"},
	} {
		err := tc.cfg.Defaults().Validate()
		var fe *cfgerr.FieldError
		if !errors.Is(err, ErrConfig) || !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
	if err := (Config{}).Defaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// The dashboard works offline: no asset loads anything from elsewhere.
func TestAssetsAreSelfContained(t *testing.T) {
	err := fs.WalkDir(assets, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(assets, path)
		if err != nil {
			return err
		}
		for _, remote := range []string{"http:", "https:", "//cdn", "@import", "<script"} {
			if strings.Contains(string(data), remote) {
				t.Errorf("%s holds %q", path, remote)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parsePages(); err != nil {
		t.Fatal(err)
	}
}
