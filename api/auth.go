package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
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
				return apperr.Errorf(apperr.EFORBIDDEN, "this needs the role %s; you are %s", strings.Join(append([]string{auth.RoleAdmin}, roles...), " or "), u.Role)
			}
			return next(c)
		}
	}
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
	Name  string `json:"name" validate:"required" example:"Ольга Планова"`
	Email string `json:"email" validate:"optional" example:"olga@factory.example"`
	Role  string `json:"role" validate:"required" enums:"admin,manager,planner,viewer" example:"planner"`
}

// createUser godoc
//
//	@Summary	Create a user (admin)
//	@ID		createUser
//	@Description	Creates a user with a display name and a role (admin, manager, planner, viewer). Writes user.created.
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
	Name string `json:"name" validate:"optional" example:"CRM import"`
}

// issueToken godoc
//
//	@Summary		Issue an API token for a user (admin)
//	@ID			issueToken
//	@Description	The token is shown in this response only; tsekh stores its hash.
//	@Tags			auth
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		int					true	"user id"
//	@Param			body	body		IssueTokenRequest	false	"a name for the token"
//	@Success		201		{object}	auth.IssuedToken
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Router			/api/v1/users/{id}/tokens [post]
func (s *server) issueToken(c echo.Context) error {
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
	t, err := s.Auth.IssueToken(c.Request().Context(), id, req.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, t)
}
