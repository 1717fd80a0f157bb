package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/docs"
)

// openAPI godoc
//
//	@Summary	The OpenAPI 3.1 document of this API
//	@ID		getOpenAPI
//	@Description	The contract clients generate from (docs/operating.md, "Generating a client"): every operation, every error as application/problem+json with the Problem schema. The Swagger 2.0 document, for older tools and the Swagger UI, is /swagger/doc.json. Public: no token. Like every request, one with a body over 1 MiB is refused (413).
//	@Tags		operations
//	@Produce	json
//	@Security
//	@Success	200	{object}	map[string]any
//	@Failure	413	{object}	Problem
//	@Router		/openapi.json [get]
func (s *server) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, docs.OpenAPI)
}
