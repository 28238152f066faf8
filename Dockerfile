# The weft binary for docker-compose.yml (worker and, later, the MCP gateway).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/weft ./cmd/weft

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/weft /usr/local/bin/weft
ENTRYPOINT ["weft"]
