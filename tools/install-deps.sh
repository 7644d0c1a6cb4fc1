#!/bin/sh
# Install the Debian packages mbsbench needs, if any are missing.  Runs apt-get
# as root, or through sudo; says clearly what to do when neither is possible.
# OPTIONAL packages are attempted but the build works without them
# (libsundials-dev: the SUNDIALS peer methods, methods/peers/peer_sundials.c).
set -e
PKGS="build-essential pkg-config libgsl-dev libsuitesparse-dev check libsubunit-dev gnuplot-nox libjansson-dev libinih-dev libsqlite3-dev git"
OPTIONAL="libsundials-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
optmissing=""
for p in $OPTIONAL; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || optmissing="$optmissing $p"
done
[ -z "$missing$optmissing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
elif [ -z "$missing" ]; then
    echo "install-deps: optional packages not installed:$optmissing (peer methods disabled)" >&2
    exit 0
else
    echo "install-deps: missing packages:$missing; run as root: apt-get install$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ -n "$missing" ]; then
    echo "install-deps: installing:$missing" >&2
    $SUDO apt-get install -y -qq $missing >/dev/null
fi
if [ -n "$optmissing" ]; then
    echo "install-deps: installing optional:$optmissing" >&2
    $SUDO apt-get install -y -qq $optmissing >/dev/null ||
        echo "install-deps: optional$optmissing not installed (peer methods disabled)" >&2
fi
exit 0
