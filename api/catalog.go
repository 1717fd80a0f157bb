package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// listProducts godoc
//
//	@Summary	Products with their parts specification
//	@ID		listProducts
//	@Description	Products in id order, each with its default route and parts specification.
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		limit	query		int		false	"page size (1-500, default 50)"
//	@Param		cursor	query		string	false	"next_cursor of the previous page"
//	@Success	200		{object}	ProductList
//	@Failure	401		{object}	Problem
//	@Failure	422		{object}	Problem
//	@Router		/api/v1/products [get]
func (s *server) listProducts(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	ps, next, err := s.Catalog.Products(c.Request().Context(), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list(ps, next))
}

// getProduct godoc
//
//	@Summary	One product
//	@ID		getProduct
//	@Description	A product with its parts specification.
//	@Tags		catalog
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"product id"
//	@Success	200	{object}	catalog.Product
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/products/{id} [get]
func (s *server) getProduct(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	p, err := s.Catalog.Product(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}
