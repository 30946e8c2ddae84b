#!/bin/bash
# Builds the Debian package of Tonearm from this tree: `make install PREFIX=/usr` into a staging
# root, man pages compressed as Debian does, runtime dependencies from dpkg-shlibdeps (the shared
# libraries the programs link: GStreamer, libdbus, SQLite, libc) plus Debian's GStreamer plugin packages and
# a session bus, then dpkg-deb. The Swift runtime is linked into the programs (make release builds
# with --static-swift-stdlib), so the package needs no toolchain.
#   packaging/build-deb.sh [OUTPUT-DIRECTORY]     (default .build/deb; prints the package's path)
# Needs dpkg-dev (dpkg-shlibdeps); run through `make deb`, which builds first.
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:-.build/deb}"
make="${MAKE:-make}"

stage=$(mktemp -d "${TMPDIR:-/tmp}/tonearm-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
"$make" --no-print-directory install PREFIX=/usr DESTDIR="$root" >&2

# Debian strips its programs (dh_strip): tonearmd is 31.6 MB with its symbols and debug
# information, 16.8 MB without (swift 6.3.1)
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/tonearm" "$root/usr/bin/tonearmd" \
    "$root/usr/bin/tonearm-video" "$root/usr/bin/tonearm-engine"
# Debian policy: man pages gzip-compressed (-n: no name or time inside, the same bytes every build)
gzip -9n "$root"/usr/share/man/man1/*.1 "$root"/usr/share/man/man7/*.7
install -Dm644 packaging/debian/copyright "$root/usr/share/doc/tonearm/copyright"

version=$("$root/usr/bin/tonearm" --version)
architecture=$(dpkg --print-architecture)

# dpkg-shlibdeps reads debian/control of a source tree; a minimal one is enough to ask it
mkdir -p "$stage/src/debian"
printf 'Source: tonearm\n\nPackage: tonearm\nArchitecture: any\n' >"$stage/src/debian/control"
shlibs=$(cd "$stage/src" && dpkg-shlibdeps -O "$root/usr/bin/tonearm" "$root/usr/bin/tonearmd" "$root/usr/bin/tonearm-video" "$root/usr/bin/tonearm-engine" 2>/dev/null |
    sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "build-deb: dpkg-shlibdeps found no shared libraries" >&2; exit 1; }
# packed relocations (make release, RELEASE_LINK) need glibc 2.36's loader: the programs name its
# GLIBC_ABI_DT_RELR version, which no symbol carries, so dpkg-shlibdeps does not count it
if objdump -p "$root/usr/bin/tonearmd" | grep -q GLIBC_ABI_DT_RELR; then
    shlibs=$(echo "$shlibs" | sed -E 's/libc6 \(>= [0-9.]+\)/libc6 (>= 2.36)/')
fi

mkdir -p "$root/DEBIAN"
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCHITECTURE@/$architecture/" -e "s/@SHLIBS@/$shlibs/" \
    -e "s/@INSTALLED_SIZE@/$installed_size/" packaging/debian/control.in >"$root/DEBIAN/control"
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"

mkdir -p "$output"
package="$output/tonearm_${version}_${architecture}.deb"
dpkg-deb --root-owner-group --build "$root" "$package" >&2
echo "$package"
