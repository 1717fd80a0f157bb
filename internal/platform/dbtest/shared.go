package dbtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/tsekh/tsekh/db"
)

// The test binaries of one run of the suite share their templates: each
// would otherwise migrate its own (every migration's statements and
// commits, two pg_dumps): 34 migrations in one make test of 2026-12-06,
// whose statements took about 75 s of the server's time. TEST_TEMPLATE_DIR names a directory
// that lives one run (make test makes a fresh one and removes it): the
// first binary to need a dialect's template builds it and writes it there,
// and the others read it. Without it, each binary builds its own.
//
// A template written there is trusted to be of the code under test: the
// directory must not outlive the run (the key below covers the migrations'
// SQL and the server, not the Go migrations' code).

// templateDirEnv names the environment variable of the shared directory.
const templateDirEnv = "TEST_TEMPLATE_DIR"

// sharedWait is how long a binary waits for another that is building the
// template; past it (the other died, or is very slow) it builds its own.
const sharedWait = 2 * time.Minute

// sharedWaiting, when set (by a test), is called when a binary first finds
// another building the template it needs.
var sharedWaiting func()

// sharedSQLite returns the SQLite template's bytes, shared within the run.
func sharedSQLite(build func() ([]byte, error)) ([]byte, error) {
	return shared("sqlite-"+templateKey()+".db", build)
}

// sharedPostgres returns the PostgreSQL template, shared within the run.
func sharedPostgres(build func() (postgresTemplate, error)) (postgresTemplate, error) {
	var tp postgresTemplate
	b, err := shared("postgres-"+templateKey(PostgresURL())+".json", func() ([]byte, error) {
		built, err := build()
		if err != nil {
			return nil, err
		}
		return json.Marshal(built)
	})
	if err != nil {
		return tp, err
	}
	return tp, json.Unmarshal(b, &tp)
}

// templateKey names a template by the migrations' SQL and the extra
// strings given (the server's URL).
func templateKey(extra ...string) string {
	h := sha256.New()
	_ = fs.WalkDir(db.Migrations, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := db.Migrations.ReadFile(path)
		h.Write([]byte(path + "\x00"))
		h.Write(b)
		return err
	})
	for _, s := range extra {
		h.Write([]byte("\x00" + s))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// shared returns the content of the file of the shared directory (opened
// as an os.Root: nothing outside it is touched), building it with build
// (and writing it there) when no binary of the run has. One
// binary builds it at a time: it holds file.building, made exclusively,
// while the others wait for the file. Without a shared directory, or when
// it cannot be used, build's result alone.
func shared(file string, build func() ([]byte, error)) ([]byte, error) {
	dir := os.Getenv(templateDirEnv)
	if dir == "" {
		return build()
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return build()
	}
	defer func() { _ = root.Close() }()
	building := file + ".building"
	deadline := time.Now().Add(sharedWait)
	for waited := false; ; waited = true {
		if b, err := root.ReadFile(file); err == nil {
			return b, nil
		}
		f, err := root.OpenFile(building, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			_ = f.Close()
			break
		}
		if !errors.Is(err, fs.ErrExist) || time.Now().After(deadline) {
			return build()
		}
		if !waited && sharedWaiting != nil {
			sharedWaiting()
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer func() { _ = root.Remove(building) }()
	b, err := build()
	if err != nil {
		return nil, err
	}
	// Written whole under another name, then renamed: a reader sees the
	// whole file or none.
	tmp := file + ".tmp-" + randomHex(4)
	if err := root.WriteFile(tmp, b, 0o600); err != nil {
		_ = root.Remove(tmp)
		return b, nil
	}
	if err := root.Rename(tmp, file); err != nil {
		_ = root.Remove(tmp)
	}
	return b, nil
}
