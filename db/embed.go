// Package db holds tsekh's versioned migrations, applied by goose: SQL, one
// folder per dialect, embedded in the binary; and the few written in Go
// (GoMigrations), one for both dialects, whose versions no SQL file takes.
package db

import "embed"

// Migrations holds migrations/postgres/*.sql and migrations/sqlite/*.sql.
//
//go:embed migrations
var Migrations embed.FS
