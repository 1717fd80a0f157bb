// Package db holds tsekh's versioned SQL migrations, one folder per dialect,
// embedded in the binary and applied by goose.
package db

import "embed"

// Migrations holds migrations/postgres/*.sql and migrations/sqlite/*.sql.
//
//go:embed migrations
var Migrations embed.FS
