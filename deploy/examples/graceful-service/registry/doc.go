// Package registry is the file-based service registry of the
// graceful-service example: a directory with one file per live instance,
// named "<instance-id>.addr" and holding the instance's "host:port" and a
// newline.
//
// An instance registers by writing its file atomically (a hidden temporary
// file in the same directory, synced, then renamed into place), so a reader
// never sees a partial address, and unregisters by removing it. Readers list
// the directory; hidden files (temporaries) and other names are ignored.
package registry
