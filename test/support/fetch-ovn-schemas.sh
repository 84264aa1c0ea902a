#!/bin/sh
# Usage: fetch-ovn-schemas.sh APT_STATE_DIR TARGET_DIR RELEASE [SUITE [PACKAGE FILE...]]
# Extracts ovn-nb.ovsschema and ovn-sb.ovsschema from Debian SUITE's (default trixie) ovn-central
# into TARGET_DIR; or, given PACKAGE and FILEs (paths inside it), those files from that package
# (openvswitch-switch /usr/share/openvswitch/vswitch.ovsschema for the OVS schema). RELEASE is the
# version the package must have: "25.03" (that release) or "newer:25.03" (any later one). apt runs
# with a private configuration rooted at APT_STATE_DIR: the host's own sources, lists and package
# status are never touched.
set -eu
apt_dir=$1; target=$2; release=$3; suite=${4:-trixie}
shift 3
[ $# -gt 0 ] && shift
if [ $# -eq 0 ]; then
  set -- ovn-central /usr/share/ovn/ovn-nb.ovsschema /usr/share/ovn/ovn-sb.ovsschema
fi
package=$1
shift
have=yes
for file in "$@"; do [ -f "$target/$(basename "$file")" ] || have=no; done
[ "$have" = yes ] && exit 0
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$suite" > "$apt_dir/$suite.sources"
apt() {
  apt-get -q -o Dir::Etc::sourcelist="$apt_dir/$suite.sources" -o Dir::Etc::sourceparts=/dev/null \
    -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::archives="$apt_dir/archives" \
    -o Dir::State::status=/dev/null -o APT::Sandbox::User=root "$@"
}
work=$(mktemp -d "$apt_dir/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
apt update >&2
(cd "$work" && apt download "$package" >&2)
deb=$(ls "$work/${package}"_*.deb)
version=$(dpkg-deb -f "$deb" Version)
case "$release" in
  newer:*)
    if ! dpkg --compare-versions "$version" gt "${release#newer:}.99"; then
      echo "$suite's $package is $version, not newer than ${release#newer:}" >&2; exit 1
    fi ;;
  *)
    case "$version" in
      "$release".*) ;;
      *) echo "$suite's $package is $version, not $release.x" >&2; exit 1 ;;
    esac ;;
esac
dpkg-deb -x "$deb" "$work/x"
mkdir -p "$work/out"
for file in "$@"; do cp "$work/x$file" "$work/out/"; done
echo "Debian $suite $package $version: $*" > "$work/out/PROVENANCE"
rm -rf "$target"
mv "$work/out" "$target"
