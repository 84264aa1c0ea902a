#!/bin/sh
# Usage: fetch-ovn-schemas.sh APT_STATE_DIR TARGET_DIR RELEASE
# Extracts ovn-nb.ovsschema and ovn-sb.ovsschema from Debian trixie's ovn-central (which must be
# RELEASE.x) into TARGET_DIR. apt runs with a private configuration rooted at APT_STATE_DIR: the
# host's own sources, lists and package status are never touched.
set -eu
apt_dir=$1; target=$2; release=$3
[ -f "$target/ovn-nb.ovsschema" ] && [ -f "$target/ovn-sb.ovsschema" ] && exit 0
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$apt_dir/trixie.sources"
apt() {
  apt-get -q -o Dir::Etc::sourcelist="$apt_dir/trixie.sources" -o Dir::Etc::sourceparts=/dev/null \
    -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::archives="$apt_dir/archives" \
    -o Dir::State::status=/dev/null -o APT::Sandbox::User=root "$@"
}
work=$(mktemp -d "$apt_dir/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
apt update >&2
(cd "$work" && apt download ovn-central >&2)
deb=$(ls "$work"/ovn-central_*.deb)
version=$(dpkg-deb -f "$deb" Version)
case "$version" in
  "$release".*) ;;
  *) echo "trixie's ovn-central is $version, not $release.x" >&2; exit 1 ;;
esac
dpkg-deb -x "$deb" "$work/x"
mkdir -p "$work/out"
cp "$work/x/usr/share/ovn/ovn-nb.ovsschema" "$work/x/usr/share/ovn/ovn-sb.ovsschema" "$work/out/"
echo "Debian trixie ovn-central $version, /usr/share/ovn" > "$work/out/PROVENANCE"
rm -rf "$target"
mv "$work/out" "$target"
