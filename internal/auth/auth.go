// Package auth owns users, their roles and their API tokens. Tokens are shown
// once when issued and stored only as SHA-256 hashes; they may expire, can be
// revoked, and stop working when their user is deactivated.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// Roles, from most to least powerful.
const (
	RoleAdmin   = "admin"
	RoleManager = "manager"
	RolePlanner = "planner"
	RoleMaster  = "master" // the shop floor: reports progress, reads the plan, launches nothing, changes no catalog
	RoleBuyer   = "buyer"  // purchasing: reads what a planner reads; writes suppliers, purchase orders, receipts and counts; launches nothing
	RoleViewer  = "viewer"
)

// Roles lists every role.
var Roles = []string{RoleAdmin, RoleManager, RolePlanner, RoleMaster, RoleBuyer, RoleViewer}

// AdminName is the display name of the bootstrap administrator, as the
// journal screen shows it.
const AdminName = "Администратор"

// RegisterEvents declares the auth module's event types
// (internal/contracts, auth.go); it subscribes to none. None of them ever
// holds a token's secret or hash.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.UserCreated, contracts.UserDeactivated, contracts.TokenIssued, contracts.TokenRevoked)
}

// User is a person or an integration acting on tsekh.
type User struct {
	ID        int64     `json:"id" gorm:"primaryKey"`
	Name      string    `json:"name"`
	Email     *string   `json:"email" extensions:"x-nullable"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at" gorm:"->" format:"date-time"`
	// When the user was deactivated; null while active.
	DeactivatedAt *time.Time `json:"deactivated_at" gorm:"->" format:"date-time" extensions:"x-nullable"`
}

// TableName is the auth module's users table.
func (User) TableName() string { return "auth_users" }

// Actor returns the user as the journal names it.
func (u User) Actor() events.Actor { return events.Actor{ID: u.ID, Name: u.Name} }

// Can tells whether the user has one of the roles; admin can do everything.
func (u User) Can(roles ...string) bool {
	return u.Role == RoleAdmin || slices.Contains(roles, u.Role)
}

// Service manages users and tokens.
type Service struct{ db *gorm.DB }

// NewService returns the auth service over db.
func NewService(db *gorm.DB) *Service { return &Service{db: db} }

// NewUser is the input of CreateUser.
type NewUser struct {
	Name  string
	Email string
	Role  string
}

// CreateUser creates a user. It returns EINVALID for a missing, too long
// (over 200 characters) or not single-line name, an email that is not an
// address alone (input.Email) or an unknown role, and ECONFLICT when the email is taken.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (User, error) {
	var fields []apperr.FieldError
	in.Name, in.Email = strings.TrimSpace(in.Name), strings.TrimSpace(in.Email)
	fields = append(fields, input.RequiredLine("name", in.Name, input.MaxName)...)
	fields = append(fields, input.Email("email", in.Email)...)
	if !slices.Contains(Roles, in.Role) {
		fields = append(fields, apperr.Field("role", "must be one of %s", strings.Join(Roles, ", ")))
	}
	if len(fields) > 0 {
		return User{}, apperr.Invalid("the user is not valid", fields...)
	}
	u := User{Name: in.Name, Role: in.Role}
	if e := strings.TrimSpace(in.Email); e != "" {
		u.Email = &e
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return createUser(ctx, tx, &u)
	})
	if database.IsUniqueViolation(err) {
		return User{}, apperr.Conflict("a user with the email %q exists already", *u.Email)
	}
	return u, err
}

// createUser inserts the user and reads back its id and the database clock's
// created_at, then writes user.created.
func createUser(ctx context.Context, tx *gorm.DB, u *User) error {
	if err := insertUser(ctx, tx, u); err != nil {
		return err
	}
	err := events.Add(ctx, tx, contracts.UserCreated.New(u.ID, contracts.UserCreatedPayload{UserID: u.ID, Name: u.Name, Role: u.Role}))
	return err
}

// User returns the user with the id, or ENOTFOUND.
func (s *Service) User(ctx context.Context, id int64) (User, error) {
	return mustUser(ctx, s.db, id, false)
}

// mustUser is userByID, ENOTFOUND for an unknown id.
func mustUser(ctx context.Context, tx *gorm.DB, id int64, forUpdate bool) (User, error) {
	u, found, err := userByID(ctx, tx, id, forUpdate)
	if err == nil && !found {
		err = apperr.NotFound("user %d does not exist", id)
	}
	return u, err
}

// EnsureUser returns the user with the name and role, creating them (and
// their user.created event) when there is none: integrations act as users of
// their own, such as the shop webhook's "Интернет-магазин". It is idempotent;
// on PostgreSQL concurrent callers are serialised by an advisory lock, on
// SQLite by its single writer.
func (s *Service) EnsureUser(ctx context.Context, name, role string) (User, error) {
	var u User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		u, err = EnsureUserIn(ctx, tx, name, role)
		return err
	})
	return u, err
}

// EnsureUserIn is EnsureUser in the caller's transaction tx: the user it
// creates commits, or rolls back, with what the caller writes. It takes the
// same lock, held to the end of tx.
func EnsureUserIn(ctx context.Context, tx *gorm.DB, name, role string) (User, error) {
	if strings.TrimSpace(name) == "" {
		return User{}, apperr.Invalid("the user is not valid", apperr.Field("name", "is required"))
	}
	if !slices.Contains(Roles, role) {
		return User{}, apperr.Invalid("the user is not valid", apperr.Field("role", "must be one of %s", strings.Join(Roles, ", ")))
	}
	if err := database.LockName(tx, "auth.user:"+role+":"+name); err != nil {
		return User{}, err
	}
	found, err := userNamed(ctx, tx, name, role)
	if err != nil || found != nil {
		return deref(found), err
	}
	u := User{Name: name, Role: role}
	return u, createUser(ctx, tx, &u)
}

// HasUsers tells whether any user exists (a fresh database has none).
func (s *Service) HasUsers(ctx context.Context) (bool, error) {
	return anyUser(ctx, s.db)
}

// NewTokenSecret returns a new random API token.
func NewTokenSecret() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return "tsk_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// HashToken is how tokens are stored: hex SHA-256. Tokens are long random
// strings, so a fast hash is enough; a database leak reveals no usable token.
func HashToken(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// deref is what p points to, or T's zero value when p is nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}
