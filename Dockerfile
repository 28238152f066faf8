# The weft binaries for docker-compose.yml: server, store, workers, gateway and console.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/weft ./cmd/weft && CGO_ENABLED=0 go build -o /out/weft-stack ./cmd/weft-stack

FROM gcr.io/distroless/static-debian12
# weft hands `server` and `store` to weft-stack, which it finds next to itself.
COPY --from=build /out/weft /out/weft-stack /usr/local/bin/
ENTRYPOINT ["weft"]
