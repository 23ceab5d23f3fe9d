#!/bin/sh
# Builds the barberd container image with podman or buildah, from the
# repository root: ./deploy/build-image.sh [TAG] (default barberd:latest).
set -eu
tag=${1:-barberd:latest}
cd "$(dirname "$0")/.."
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$ctx/barberd" ./cmd/barberd
cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
if command -v podman >/dev/null; then
  podman build -f deploy/Containerfile -t "$tag" "$ctx"
else
  buildah bud -f deploy/Containerfile -t "$tag" "$ctx"
fi
