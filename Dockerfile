# Multi-stage build: a static binary on a distroless, non-root base image.
#   docker build -t tsekh .
#   docker run --rm -p 8080:8080 -e DATABASE_URL=postgres://... tsekh

FROM golang:1.26-bookworm AS build
WORKDIR /src

# Dependencies first, so this layer is cached until go.mod/go.sum change.
COPY go.mod go.sum ./
RUN go mod download

COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/tsekh ./cmd/tsekh

FROM gcr.io/distroless/static-debian12:nonroot
# The nonroot user's home is writable, so a SQLite file (used when
# DATABASE_URL is unset) lands there.
WORKDIR /home/nonroot
COPY --from=build /out/tsekh /tsekh
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/tsekh"]
CMD ["serve"]
