package auth

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// The auth module's store: every statement on auth_users and auth_tokens,
// one function a statement, dialect-neutral (the clock's expressions are
// the database package's), each checked on both databases by
// store_test.go. The rules (who may be deactivated, what a token's state
// means) call them and write no SQL of their own.

// insertUser adds the user and fills in its id and the database clock's
// created_at. A taken email is a unique violation.
func insertUser(ctx context.Context, tx *gorm.DB, u *User) error {
	var row struct {
		ID        int64
		CreatedAt time.Time
	}
	err := database.Scan(tx.WithContext(ctx).Raw("INSERT INTO auth_users (name, email, role) VALUES (?, ?, ?) RETURNING id, created_at",
		u.Name, u.Email, u.Role), &row)
	u.ID, u.CreatedAt = row.ID, row.CreatedAt
	return err
}

// userByID reads the user; found is false for an unknown id. forUpdate
// locks the row on PostgreSQL (SQLite has one writer and ignores it), to
// serialise issuing tokens with deactivating the user.
func userByID(ctx context.Context, tx *gorm.DB, id int64, forUpdate bool) (u User, found bool, err error) {
	q := tx.WithContext(ctx)
	if forUpdate {
		q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	err = q.First(&u, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return u, false, nil
	}
	return u, err == nil, err
}

// userNamed returns the first user (by id) with the name and role, or nil.
func userNamed(ctx context.Context, tx *gorm.DB, name, role string) (*User, error) {
	var us []User
	if err := tx.WithContext(ctx).Where("name = ? AND role = ?", name, role).Order("id").Limit(1).Find(&us).Error; err != nil || len(us) == 0 {
		return nil, err
	}
	return &us[0], nil
}

// anyUser says whether a user exists.
func anyUser(ctx context.Context, db *gorm.DB) (bool, error) {
	var ids []int64
	err := db.WithContext(ctx).Model(&User{}).Limit(1).Pluck("id", &ids).Error
	return len(ids) > 0, err
}

// usersPage returns the page pr of users in id order, one more than
// pr.Limit when there are more.
func usersPage(ctx context.Context, db *gorm.DB, pr page.Request) ([]User, error) {
	var us []User
	err := db.WithContext(ctx).Where("id > ?", pr.After).Order("id").Limit(pr.Limit + 1).Find(&us).Error
	return us, err
}

// activeAdminsBut counts the active administrators other than the user id.
func activeAdminsBut(ctx context.Context, tx *gorm.DB, id int64) (int64, error) {
	var n int64
	err := tx.WithContext(ctx).Model(&User{}).Where("role = ? AND deactivated_at IS NULL AND id <> ?", RoleAdmin, id).Count(&n).Error
	return n, err
}

// markDeactivated stamps the user deactivated with the database's clock.
func markDeactivated(ctx context.Context, tx *gorm.DB, id int64) error {
	return tx.WithContext(ctx).Exec("UPDATE auth_users SET deactivated_at = "+database.Now(tx)+" WHERE id = ?", id).Error
}

// revokeTokensOf revokes every live token of the user and returns their
// ids, in order.
func revokeTokensOf(ctx context.Context, tx *gorm.DB, userID int64) ([]int64, error) {
	revoked := []int64{}
	err := database.Scan(tx.WithContext(ctx).Raw("UPDATE auth_tokens SET revoked_at = "+database.Now(tx)+" WHERE user_id = ? AND revoked_at IS NULL RETURNING id", userID),
		&revoked)
	slices.Sort(revoked) // RETURNING gives the rows in no set order
	return revoked, err
}

// insertToken adds a token of the user by the hash of its secret, expiring
// expiresIn after the database's clock (never when nil), and returns it
// with its id and times, the secret left out.
func insertToken(ctx context.Context, tx *gorm.DB, userID int64, name, hash string, expiresIn *time.Duration, bootstrap bool) (IssuedToken, error) {
	expires := "NULL"
	if expiresIn != nil {
		expires = database.NowPlus(tx, *expiresIn)
	}
	var row struct {
		ID        int64
		CreatedAt time.Time
		ExpiresAt *time.Time
	}
	err := database.Scan(tx.WithContext(ctx).Raw(`INSERT INTO auth_tokens (user_id, name, hash, expires_at, bootstrap) VALUES (?, ?, ?, `+expires+`, ?)
RETURNING id, created_at, expires_at`, userID, name, hash, bootstrap), &row)
	return IssuedToken{ID: row.ID, UserID: userID, Name: name, CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt}, err
}

// tokenRow is a token as the store reads it: expired by the database's
// clock or not.
type tokenRow struct {
	Token
	Expired bool
}

// tokensOfUser returns every token of the user, in id order.
func tokensOfUser(ctx context.Context, tx *gorm.DB, userID int64) ([]tokenRow, error) {
	var rows []tokenRow
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT id, name, bootstrap, created_at, last_used_at, expires_at, revoked_at,
  (expires_at IS NOT NULL AND expires_at <= `+database.Now(tx)+`) AS expired
FROM auth_tokens WHERE user_id = ? ORDER BY id`, userID), &rows)
	return rows, err
}

// revokeToken revokes the user's live token and returns its name; revoked
// is false when the user has no such live token.
func revokeToken(ctx context.Context, tx *gorm.DB, userID, tokenID int64) (name string, revoked bool, err error) {
	var names []string
	err = database.Scan(tx.WithContext(ctx).Raw(`UPDATE auth_tokens SET revoked_at = `+database.Now(tx)+`
WHERE id = ? AND user_id = ? AND revoked_at IS NULL RETURNING name`, tokenID, userID), &names)
	if err != nil || len(names) == 0 {
		return "", false, err
	}
	return names[0], true, nil
}

// hasToken says whether the user has the token, revoked or not.
func hasToken(ctx context.Context, tx *gorm.DB, userID, tokenID int64) (bool, error) {
	var ids []int64
	err := tx.WithContext(ctx).Table("auth_tokens").Where("id = ? AND user_id = ?", tokenID, userID).Limit(1).Pluck("id", &ids).Error
	return len(ids) > 0, err
}

// login is a token and its user as Authenticate reads them: TokenID is 0
// when no token has the hash; Expired by the database's clock, and Stale
// when its last use is older than lastUsedResolution.
type login struct {
	User
	TokenID   int64
	RevokedAt *time.Time
	ExpiresAt *time.Time
	Expired   bool
	Stale     bool
}

// loginByHash reads the token with the hash and its user.
func loginByHash(ctx context.Context, db *gorm.DB, hash string) (login, error) {
	var row login
	db = db.WithContext(ctx)
	err := database.Scan(db.Raw(`SELECT t.id AS token_id, t.revoked_at, t.expires_at,
  (t.expires_at IS NOT NULL AND t.expires_at <= `+database.Now(db)+`) AS expired,
  (t.last_used_at IS NULL OR t.last_used_at < `+database.NowPlus(db, -lastUsedResolution)+`) AS stale,
  u.id, u.name, u.email, u.role, u.created_at, u.deactivated_at
FROM auth_tokens t JOIN auth_users u ON u.id = t.user_id WHERE t.hash = ?`, hash), &row)
	return row, err
}

// touchToken stamps the token used now, unless it was within
// lastUsedResolution: requests with one token at the same moment race
// harmlessly, one writes and the rest change nothing.
func touchToken(ctx context.Context, db *gorm.DB, tokenID int64) error {
	db = db.WithContext(ctx)
	return db.Exec(`UPDATE auth_tokens SET last_used_at = `+database.Now(db)+` WHERE id = ?
AND (last_used_at IS NULL OR last_used_at < `+database.NowPlus(db, -lastUsedResolution)+`)`, tokenID).Error
}

// tokenByHash returns the id of the token with the hash and when it was
// revoked; id is 0 when no token has it.
func tokenByHash(ctx context.Context, tx *gorm.DB, hash string) (id int64, revokedAt *time.Time, err error) {
	var row struct {
		ID        int64
		RevokedAt *time.Time
	}
	err = database.Scan(tx.WithContext(ctx).Raw("SELECT id, revoked_at FROM auth_tokens WHERE hash = ?", hash), &row)
	return row.ID, row.RevokedAt, err
}

// revokedToken is a token revokeBootstrapBut revoked.
type revokedToken struct {
	ID     int64
	UserID int64
	Name   string
}

// revokeBootstrapBut revokes every live bootstrap token but the one with
// the id and returns them, in id order.
func revokeBootstrapBut(ctx context.Context, tx *gorm.DB, id int64) ([]revokedToken, error) {
	var replaced []revokedToken
	err := database.Scan(tx.WithContext(ctx).Raw(`UPDATE auth_tokens SET revoked_at = `+database.Now(tx)+`
WHERE bootstrap AND revoked_at IS NULL AND id <> ? RETURNING id, user_id, name`, id), &replaced)
	slices.SortFunc(replaced, func(a, b revokedToken) int { return cmp.Compare(a.ID, b.ID) }) // RETURNING gives no order
	return replaced, err
}
