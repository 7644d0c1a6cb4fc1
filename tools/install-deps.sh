#!/bin/sh
# Install the Debian packages mbsbench needs, if any are missing.  Runs apt-get
# as root, or through sudo; says clearly what to do when neither is possible.
set -e
PKGS="build-essential pkg-config libgsl-dev libsuitesparse-dev check libsubunit-dev gnuplot-nox libjansson-dev libinih-dev git"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing" >&2
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "install-deps: missing packages:$missing; run as root: apt-get install$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq $missing >/dev/null
