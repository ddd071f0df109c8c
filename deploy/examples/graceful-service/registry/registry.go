package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Suffix ends every registry entry's file name.
const Suffix = ".addr"

// Sentinel errors; every error of the package wraps one of these (or an
// *fs.PathError from the file system).
var (
	// ErrInvalidID: an instance id that cannot name a registry file (empty,
	// hidden, or containing a path separator).
	ErrInvalidID = errors.New("registry: invalid instance id")
	// ErrInvalidAddr: an address that is not "host:port" on one line.
	ErrInvalidAddr = errors.New("registry: invalid address")
)

// Instance is one registered instance.
type Instance struct {
	// ID names the instance (the job id when it runs as a job).
	ID string
	// Addr is where it listens, "host:port".
	Addr string
}

// CheckID reports whether id can name a registry entry.
func CheckID(id string) error {
	if id == "" || strings.HasPrefix(id, ".") || strings.ContainsAny(id, `/\`) || strings.ContainsRune(id, 0) {
		return fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	return nil
}

// Path is the file of instance id in dir.
func Path(dir, id string) string { return filepath.Join(dir, id+Suffix) }

// Register writes id's entry atomically, replacing an older one.
func Register(dir, id, addr string) (err error) {
	if err := CheckID(id); err != nil {
		return err
	}
	if addr == "" || strings.ContainsAny(addr, "\n\r") {
		return fmt.Errorf("%w: %q", ErrInvalidAddr, addr)
	}
	tmp, err := os.CreateTemp(dir, "."+id+Suffix+".tmp-*")
	if err != nil {
		return fmt.Errorf("registry: register %s: %w", id, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.WriteString(addr + "\n"); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("registry: register %s: %w", id, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("registry: register %s: %w", id, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("registry: register %s: %w", id, err)
	}
	if err := os.Rename(tmp.Name(), Path(dir, id)); err != nil {
		return fmt.Errorf("registry: register %s: %w", id, err)
	}
	return nil
}

// Unregister removes id's entry; an entry already gone is not an error.
func Unregister(dir, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if err := os.Remove(Path(dir, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("registry: unregister %s: %w", id, err)
	}
	return nil
}

// List reads every entry of dir, sorted by id. Entries removed while the
// directory is read are skipped; empty or malformed ones too.
func List(dir string) ([]Instance, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: list: %w", err)
	}
	var out []Instance
	for _, e := range ents {
		name := e.Name()
		id, ok := strings.CutSuffix(name, Suffix)
		if !ok || e.IsDir() || CheckID(id) != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("registry: list: %w", err)
		}
		addr := strings.TrimSpace(string(b))
		if addr == "" || strings.ContainsAny(addr, "\n\r") {
			continue
		}
		out = append(out, Instance{ID: id, Addr: addr})
	}
	slices.SortFunc(out, func(a, b Instance) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Lookup reports id's current address; false when it is not registered.
func Lookup(dir, id string) (string, bool, error) {
	if err := CheckID(id); err != nil {
		return "", false, err
	}
	b, err := os.ReadFile(Path(dir, id))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("registry: lookup %s: %w", id, err)
	}
	addr := strings.TrimSpace(string(b))
	return addr, addr != "", nil
}
