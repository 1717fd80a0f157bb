package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

const userKey = "tsekh.user"

// authenticate resolves the bearer token to a user, and makes that user the
// actor of the events the request writes.
func (s *server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		scheme, token, ok := strings.Cut(h, " ")
		if h != "" && (!ok || !strings.EqualFold(scheme, "Bearer")) {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="tsekh"`)
			return apperr.Errorf(apperr.EUNAUTHORIZED, "the Authorization header must be: Bearer <token>")
		}
		u, err := s.Auth.Authenticate(c.Request().Context(), strings.TrimSpace(token))
		if err != nil {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="tsekh"`)
			return err
		}
		c.Set(userKey, u)
		c.SetRequest(c.Request().WithContext(events.WithActor(c.Request().Context(), u.Actor())))
		return next(c)
	}
}

// requireRole lets through users with one of the roles (admins always).
func requireRole(roles ...string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			u := currentUser(c)
			if !u.Can(roles...) {
				return apperr.Errorf(apperr.EFORBIDDEN, "this needs %s; you are %s", rolesText(roles), u.Role)
			}
			return next(c)
		}
	}
}

// rolesText names the roles that may do something, admin first and each
// once: "the role admin", "one of the roles admin, planner".
func rolesText(roles []string) string {
	names := []string{auth.RoleAdmin}
	for _, r := range roles {
		if !slices.Contains(names, r) {
			names = append(names, r)
		}
	}
	if len(names) == 1 {
		return "the role " + names[0]
	}
	return "one of the roles " + strings.Join(names, ", ")
}

func currentUser(c echo.Context) auth.User {
	u, _ := c.Get(userKey).(auth.User)
	return u
}

// me godoc
//
//	@Summary	The caller
//	@ID		getMe
//	@Description	The user the bearer token belongs to, with the role.
//	@Tags		auth
//	@Produce	json
//	@Security	BearerAuth
//	@Success	200	{object}	auth.User
//	@Failure	401	{object}	Problem
//	@Router		/api/v1/me [get]
func (s *server) me(c echo.Context) error {
	return c.JSON(http.StatusOK, currentUser(c))
}

// CreateUserRequest is the body of POST /api/v1/users.
type CreateUserRequest struct {
	Name  string `json:"name" validate:"required" maxLength:"200" example:"Ольга Планова"`
	Email string `json:"email" validate:"optional" maxLength:"254" example:"olga@factory.example"`
	Role  string `json:"role" validate:"required" enums:"admin,manager,planner,master,buyer,viewer" example:"planner"`
}

// createUser godoc
//
//	@Summary	Create a user (admin)
//	@ID		createUser
//	@Description	Creates a user with a display name and a role (admin, manager, planner, master, buyer, viewer). Writes user.created. The user gets API tokens with POST /api/v1/users/{id}/tokens.
//	@Tags		auth
//	@Accept		json
//	@Produce	json
//	@Security	BearerAuth
//	@Param		body	body		CreateUserRequest	true	"the user"
//	@Success	201		{object}	auth.User
//	@Failure	400		{object}	Problem
//	@Failure	401		{object}	Problem
//	@Failure	403		{object}	Problem
//	@Failure	409		{object}	Problem
//	@Failure	413		{object}	Problem
//	@Failure	415		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/users [post]
func (s *server) createUser(c echo.Context) error {
	var req CreateUserRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	u, err := s.Auth.CreateUser(c.Request().Context(), auth.NewUser{Name: req.Name, Email: req.Email, Role: req.Role})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, u)
}

// IssueTokenRequest is the body of POST /api/v1/users/{id}/tokens.
type IssueTokenRequest struct {
	Name string `json:"name" validate:"optional" maxLength:"200" example:"CRM import"`
	// The token's lifetime as a Go duration ("720h" is 30 days, "90m"), from
	// 1m to 8760h; without it the token works until it is revoked.
	ExpiresIn string `json:"expires_in" validate:"optional" maxLength:"32" example:"720h"`
}

// issueToken godoc
//
//	@Summary		Issue an API token for a user (admin)
//	@ID			issueToken
//	@Description	The token is shown in this response only (sent with Cache-Control: no-store); tsekh stores its hash. expires_in, a Go duration from 1m to 8760h ("720h" = 30 days), makes it expire; without it the token works until it is revoked. 409 for a deactivated user. Writes token.issued, which never holds the token.
//	@Tags			auth
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int					true	"user id"	minimum(1) example(1)
//	@Param			body	body		IssueTokenRequest	false	"a name and a lifetime for the token"
//	@Success		201		{object}	auth.IssuedToken
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/users/{id}/tokens [post]
func (s *server) issueToken(c echo.Context) error {
	// The answer carries a secret: no cache may keep it, even a failed one's.
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var req IssueTokenRequest
	if c.Request().ContentLength != 0 {
		if err := bindJSON(c, &req); err != nil {
			return err
		}
	}
	in := auth.NewToken{Name: req.Name}
	if f := input.Line("expires_in", req.ExpiresIn, 32); len(f) > 0 {
		return apperr.Invalid("the token is not valid", f...)
	}
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil {
			return apperr.Invalid("the token is not valid", apperr.Field("expires_in", `must be a duration such as "720h" (30 days) or "90m"`))
		}
		in.ExpiresIn = &d
	}
	t, err := s.Auth.IssueToken(c.Request().Context(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, t)
}

// listUsers godoc
//
//	@Summary	Users (admin)
//	@ID		listUsers
//	@Description	Users in id order, deactivated ones included (deactivated_at is set). GET /api/v1/users/{id} shows a user's tokens.
//	@Tags		auth
//	@Produce	json
//	@Security	BearerAuth
//	@Param		limit	query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param		cursor	query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS91c2VycyIsImlkIjoxfQ)
//	@Success	200		{object}	UserList
//	@Failure	401		{object}	Problem
//	@Failure	403		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/users [get]
func (s *server) listUsers(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	us, next, err := s.Auth.Users(c.Request().Context(), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pageList(c, us, next))
}

// getUser godoc
//
//	@Summary	One user with their tokens (admin)
//	@ID		getUser
//	@Description	The user and every token ever issued to them, oldest first: name, status (active, expired, revoked), created_at, last_used_at (to the minute), expires_at, revoked_at. Never a token's secret or hash.
//	@Tags		auth
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"user id"	minimum(1) example(1)
//	@Success	200	{object}	auth.UserDetail
//	@Failure	401	{object}	Problem
//	@Failure	403	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/users/{id} [get]
func (s *server) getUser(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	d, err := s.Auth.UserDetail(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// revokeToken godoc
//
//	@Summary	Revoke a user's API token (admin)
//	@ID		revokeToken
//	@Description	The token stops working at once (401 from then on). Revoking a revoked token changes nothing. Writes token.revoked.
//	@Tags		auth
//	@Security	BearerAuth
//	@Param		id			path	int	true	"user id"	minimum(1) example(1)
//	@Param		token_id	path	int	true	"token id"	minimum(1) example(1)
//	@Success	204
//	@Failure	401	{object}	Problem
//	@Failure	403	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/users/{id}/tokens/{token_id} [delete]
func (s *server) revokeToken(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	tokenID, err := pathID(c, "token_id")
	if err != nil {
		return err
	}
	if err := s.Auth.RevokeToken(c.Request().Context(), id, tokenID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// deactivateUser godoc
//
//	@Summary	Deactivate a user (admin)
//	@ID		deactivateUser
//	@Description	Every token of the user stops working at once (they are revoked) and the user can get no new ones; the journal keeps naming them as the actor of their events. 409 for yourself and for the last active administrator. Deactivating a deactivated user changes nothing. Writes user.deactivated.
//	@Tags		auth
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"user id"	minimum(1) example(1)
//	@Success	200	{object}	auth.User
//	@Failure	401	{object}	Problem
//	@Failure	403	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	409	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/users/{id}/deactivate [post]
func (s *server) deactivateUser(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	u, err := s.Auth.DeactivateUser(c.Request().Context(), id, currentUser(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, u)
}
