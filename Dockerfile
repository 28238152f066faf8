# The weft binaries, for docker-compose.yml (server, store, workers, gateway, console) or alone:
#   docker build -t weft --build-arg VERSION=$(git describe --tags --always --dirty) --build-arg REVISION=$(git rev-parse HEAD) .
#   docker run --rm weft --version
#   docker run --rm -p 7233:7233 -p 8233:8233 -p 8234:8234 -v weft-dev:/data weft dev --host 0.0.0.0 --data-dir /data --console 0.0.0.0:8234
# .dockerignore leaves .git out, so the build records no VCS revision itself: VERSION and REVISION
# are linked in (starter.Version, starter.Revision) and weft --version and /health say them.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=
RUN for cmd in weft weft-stack; do \
      CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/weftworks/weft/starter.Version=${VERSION} -X github.com/weftworks/weft/starter.Revision=${REVISION}" \
        -o /out/$cmd ./cmd/$cmd || exit 1; \
    done

# static: no libc (both binaries are cgo-free), with CA certificates for the model providers.
FROM gcr.io/distroless/static-debian12
# weft hands `dev`, `server` and `store` to weft-stack, which it finds next to itself.
COPY --from=build /out/weft /out/weft-stack /usr/local/bin/
ENTRYPOINT ["weft"]
