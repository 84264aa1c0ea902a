#!/bin/sh
# Usage: fetch-ovn-schemas.sh APT_STATE_DIR TARGET_DIR RELEASE [PACKAGE FILE...]
# Extracts ovn-nb.ovsschema and ovn-sb.ovsschema from Debian trixie's ovn-central (which must be
# RELEASE.x) into TARGET_DIR; or, given PACKAGE and FILEs (paths inside it), those files from that
# package (openvswitch-switch /usr/share/openvswitch/vswitch.ovsschema for the OVS schema). apt
# runs with a private configuration rooted at APT_STATE_DIR: the host's own sources, lists and
# package status are never touched.
set -eu
apt_dir=$1; target=$2; release=$3
shift 3
if [ $# -eq 0 ]; then
  set -- ovn-central /usr/share/ovn/ovn-nb.ovsschema /usr/share/ovn/ovn-sb.ovsschema
fi
package=$1
shift
have=yes
for file in "$@"; do [ -f "$target/$(basename "$file")" ] || have=no; done
[ "$have" = yes ] && exit 0
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
(cd "$work" && apt download "$package" >&2)
deb=$(ls "$work/${package}"_*.deb)
version=$(dpkg-deb -f "$deb" Version)
case "$version" in
  "$release".*) ;;
  *) echo "trixie's $package is $version, not $release.x" >&2; exit 1 ;;
esac
dpkg-deb -x "$deb" "$work/x"
mkdir -p "$work/out"
for file in "$@"; do cp "$work/x$file" "$work/out/"; done
echo "Debian trixie $package $version: $*" > "$work/out/PROVENANCE"
rm -rf "$target"
mv "$work/out" "$target"
