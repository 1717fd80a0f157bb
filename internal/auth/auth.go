// Package auth owns users, their roles and their API tokens. Tokens are shown
// once when issued and stored only as SHA-256 hashes.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Roles, from most to least powerful.
const (
	RoleAdmin   = "admin"
	RoleManager = "manager"
	RolePlanner = "planner"
	RoleViewer  = "viewer"
)

// Roles lists every role.
var Roles = []string{RoleAdmin, RoleManager, RolePlanner, RoleViewer}

// AdminName is the display name of the bootstrap administrator, as the
// journal screen shows it.
const AdminName = "Администратор"

// Event types of the auth module.
const (
	EventUserCreated = "user.created"
	EventTokenIssued = "token.issued"
)

// EventTypes describes the auth module's events.
func EventTypes() []events.Type {
	return []events.Type{
		{Type: EventUserCreated, Owner: "auth", AggregateType: "auth_users", Description: "A user was created.",
			Schema: objectSchema(map[string]any{"user_id": intSchema, "name": strSchema, "role": strSchema}, "user_id", "name", "role")},
		{Type: EventTokenIssued, Owner: "auth", AggregateType: "auth_users", Description: "An API token was issued to a user (the token itself is never recorded).",
			Schema: objectSchema(map[string]any{"user_id": intSchema, "token_id": intSchema, "name": strSchema}, "user_id", "token_id")},
	}
}

var (
	intSchema = map[string]any{"type": "integer"}
	strSchema = map[string]any{"type": "string"}
)

func objectSchema(props map[string]any, required ...string) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required}
}

// User is a person or an integration acting on tsekh.
type User struct {
	ID        int64     `json:"id" gorm:"primaryKey"`
	Name      string    `json:"name"`
	Email     *string   `json:"email" extensions:"x-nullable"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at" gorm:"->" format:"date-time"`
}

// TableName is the auth module's users table.
func (User) TableName() string { return "auth_users" }

// Actor returns the user as the journal names it.
func (u User) Actor() events.Actor { return events.Actor{ID: u.ID, Name: u.Name} }

// Can tells whether the user has one of the roles; admin can do everything.
func (u User) Can(roles ...string) bool {
	return u.Role == RoleAdmin || slices.Contains(roles, u.Role)
}

type token struct {
	ID        int64 `gorm:"primaryKey"`
	UserID    int64
	Name      string
	Hash      string
	CreatedAt time.Time `gorm:"->"`
}

func (token) TableName() string { return "auth_tokens" }

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

// CreateUser creates a user. It returns EINVALID for a missing name or an
// unknown role and ECONFLICT when the email is taken.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (User, error) {
	var fields []apperr.FieldError
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		fields = append(fields, apperr.Field("name", "is required"))
	}
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

func createUser(ctx context.Context, tx *gorm.DB, u *User) error {
	if err := tx.Omit("ID", "CreatedAt").Create(u).Error; err != nil {
		return err
	}
	err := events.Add(ctx, tx, events.New{Type: EventUserCreated, AggregateType: "auth_users", AggregateID: u.ID,
		Payload: map[string]any{"user_id": u.ID, "name": u.Name, "role": u.Role}})
	return err
}

// User returns the user with the id, or ENOTFOUND.
func (s *Service) User(ctx context.Context, id int64) (User, error) {
	var u User
	err := s.db.WithContext(ctx).First(&u, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return u, apperr.NotFound("user %d does not exist", id)
	}
	return u, err
}

// IssuedToken is a new token; Token is shown this once and never stored.
type IssuedToken struct {
	ID     int64  `json:"id"`
	UserID int64  `json:"user_id"`
	Name   string `json:"name"`
	Token  string `json:"token"`
}

// IssueToken creates a new API token for the user. It returns ENOTFOUND for
// an unknown user.
func (s *Service) IssueToken(ctx context.Context, userID int64, name string) (IssuedToken, error) {
	secret := NewTokenSecret()
	var out IssuedToken
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&User{}).Where("id = ?", userID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return apperr.NotFound("user %d does not exist", userID)
		}
		t, err := issueToken(ctx, tx, userID, strings.TrimSpace(name), secret)
		out = IssuedToken{ID: t.ID, UserID: userID, Name: t.Name, Token: secret}
		return err
	})
	return out, err
}

func issueToken(ctx context.Context, tx *gorm.DB, userID int64, name, secret string) (token, error) {
	t := token{UserID: userID, Name: name, Hash: HashToken(secret)}
	if err := tx.Omit("ID", "CreatedAt").Create(&t).Error; err != nil {
		return t, err
	}
	err := events.Add(ctx, tx, events.New{Type: EventTokenIssued, AggregateType: "auth_users", AggregateID: userID,
		Payload: map[string]any{"user_id": userID, "token_id": t.ID, "name": name}})
	return t, err
}

// Authenticate returns the user a bearer token belongs to, or EUNAUTHORIZED.
func (s *Service) Authenticate(ctx context.Context, secret string) (User, error) {
	if secret == "" {
		return User{}, apperr.Errorf(apperr.EUNAUTHORIZED, "an API token is required: send Authorization: Bearer <token>")
	}
	var u User
	err := s.db.WithContext(ctx).Raw(`SELECT u.id, u.name, u.email, u.role, u.created_at FROM auth_tokens t
JOIN auth_users u ON u.id = t.user_id WHERE t.hash = ?`, HashToken(secret)).Scan(&u).Error
	if err != nil {
		return User{}, err
	}
	if u.ID == 0 {
		return User{}, apperr.Errorf(apperr.EUNAUTHORIZED, "the API token is not valid")
	}
	return u, nil
}

// EnsureAdmin makes sure the administrator "Администратор" exists and that
// the token logs in as them (BOOTSTRAP_ADMIN_TOKEN). It is idempotent.
func (s *Service) EnsureAdmin(ctx context.Context, secret string) (User, error) {
	var admin User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Where("name = ? AND role = ?", AdminName, RoleAdmin).Order("id").First(&admin).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			admin = User{Name: AdminName, Role: RoleAdmin}
			err = createUser(ctx, tx, &admin)
		}
		if err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&token{}).Where("hash = ?", HashToken(secret)).Count(&n).Error; err != nil || n > 0 {
			return err
		}
		_, err = issueToken(ctx, tx, admin.ID, "bootstrap", secret)
		return err
	})
	return admin, err
}

// EnsureUser returns the user with the name and role, creating them (and
// their user.created event) when there is none: integrations act as users of
// their own, such as the shop webhook's "Интернет-магазин". It is idempotent;
// on PostgreSQL concurrent callers are serialised by an advisory lock, on
// SQLite by its single writer.
func (s *Service) EnsureUser(ctx context.Context, name, role string) (User, error) {
	if strings.TrimSpace(name) == "" {
		return User{}, apperr.Invalid("the user is not valid", apperr.Field("name", "is required"))
	}
	if !slices.Contains(Roles, role) {
		return User{}, apperr.Invalid("the user is not valid", apperr.Field("role", "must be one of %s", strings.Join(Roles, ", ")))
	}
	var u User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if database.DialectOf(tx) == database.Postgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtext(?))", "auth.user:"+role+":"+name).Error; err != nil {
				return err
			}
		}
		err := tx.Where("name = ? AND role = ?", name, role).Order("id").First(&u).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			u = User{Name: name, Role: role}
			return createUser(ctx, tx, &u)
		}
		return err
	})
	return u, err
}

// HasUsers tells whether any user exists (a fresh database has none).
func (s *Service) HasUsers(ctx context.Context) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&User{}).Limit(1).Count(&n).Error
	return n > 0, err
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
