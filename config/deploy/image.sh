#!/usr/bin/env bash
# Builds fluxfleet's image with no registry at all: `buildah from scratch`, then the binary, the
# shared libraries it links (as `ldd` names them), Debian's CA bundle and a passwd entry for the
# unprivileged uid. The same layout as config/deploy/Containerfile (for those with a registry):
# /usr/local/bin/fluxfleet, /etc/ssl/certs/ca-certificates.crt, uid and gid 65532, entrypoint
# fluxfleet, command `collect`.
#
#   config/deploy/image.sh                       # cargo build --release, image localhost/fluxfleet:VERSION
#   config/deploy/image.sh --tag fluxfleet:dev   # another name
#   config/deploy/image.sh --binary PATH         # an already built binary (the tests give theirs)
#
# Needs buildah (Debian: apt-get install buildah). Prints the image's name when done.
set -euo pipefail
cd "$(dirname "$0")/../.."

usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

binary=""
tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) [ $# -ge 2 ] || usage; binary="$2"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    --tag) [ $# -ge 2 ] || usage; tag="$2"; shift 2 ;;
    --tag=*) tag="${1#--tag=}"; shift ;;
    -h|--help) usage ;;
    *) echo "error: unknown argument '$1' (--binary PATH, --tag NAME)" >&2; exit 2 ;;
  esac
done

command -v buildah >/dev/null 2>&1 || {
  echo "error: buildah is not installed (Debian: apt-get install buildah)" >&2
  exit 1
}
bundle=/etc/ssl/certs/ca-certificates.crt
[ -r "$bundle" ] || {
  echo "error: no CA bundle at $bundle (Debian: apt-get install ca-certificates)" >&2
  exit 1
}

if [ -z "$binary" ]; then
  cargo build --release --locked --bin fluxfleet
  binary=target/release/fluxfleet
fi
[ -x "$binary" ] || { echo "error: $binary is not an executable" >&2; exit 1; }
if [ -z "$tag" ]; then
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  tag="localhost/fluxfleet:${version}"
fi

# The libraries the binary needs, and the dynamic loader: absolute paths only (the vDSO has none).
libraries=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)

work=$(mktemp -d)
ctr=""
cleanup() {
  [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# Who uid 65532 is (the name distroless images give it), and an empty /tmp to mount over.
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n' >"$work/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$work/group"

# The line tables a release keeps for profiling are no use in an image: stripped when strip is
# here (binutils), ten times smaller.
shipped="$binary"
if command -v strip >/dev/null 2>&1; then
  shipped="$work/fluxfleet"
  strip --strip-debug -o "$shipped" "$binary"
fi

ctr=$(buildah from scratch)
buildah copy --quiet --chmod 0755 "$ctr" "$shipped" /usr/local/bin/fluxfleet >/dev/null
for lib in $libraries; do
  buildah copy --quiet "$ctr" "$(readlink -f "$lib")" "$lib" >/dev/null
done
buildah copy --quiet --chmod 0644 "$ctr" "$bundle" /etc/ssl/certs/ca-certificates.crt >/dev/null
buildah copy --quiet --chmod 0644 "$ctr" "$work/passwd" /etc/passwd >/dev/null
buildah copy --quiet --chmod 0644 "$ctr" "$work/group" /etc/group >/dev/null
mkdir -m 1777 "$work/tmp"
buildah copy --quiet "$ctr" "$work/tmp" /tmp >/dev/null
buildah config \
  --user 65532:65532 \
  --entrypoint '["/usr/local/bin/fluxfleet"]' \
  --cmd collect \
  --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  --label org.opencontainers.image.title=fluxfleet \
  "$ctr"
buildah commit --quiet --rm "$ctr" "$tag" >/dev/null
ctr=""
echo "$tag"
