#!/bin/sh
# Usage: fetch-vswitch-schema.sh APT_STATE_DIR TARGET_DIR RELEASE
# Extracts vswitch.ovsschema from Debian trixie's openvswitch-switch (which must be RELEASE.x;
# trixie ships the schema there, not in openvswitch-common) into TARGET_DIR: bookworm's OVS 3.1
# schema has no Flow_Sample_Collector_Set.local_group_id.
# apt runs with a private configuration rooted at APT_STATE_DIR (the one
# test/support/fetch-ovn-schemas.sh uses): the host's own sources, lists and status are untouched.
set -eu
apt_dir=$1; target=$2; release=$3
[ -f "$target/vswitch.ovsschema" ] && exit 0
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
(cd "$work" && apt download openvswitch-switch >&2)
deb=$(ls "$work"/openvswitch-switch_*.deb)
version=$(dpkg-deb -f "$deb" Version)
case "$version" in
  "$release".*) ;;
  *) echo "trixie's openvswitch-switch is $version, not $release.x" >&2; exit 1 ;;
esac
dpkg-deb -x "$deb" "$work/x"
mkdir -p "$work/out"
cp "$work/x/usr/share/openvswitch/vswitch.ovsschema" "$work/out/"
echo "Debian trixie openvswitch-switch $version, /usr/share/openvswitch" > "$work/out/PROVENANCE"
rm -rf "$target"
mv "$work/out" "$target"
