#!/usr/bin/env bash
# build.sh - set up, build and exercise grantkit on a Debian machine.
#
#   ./build.sh          install missing build packages (as root), configure,
#                       build, then compile a bundled policy, print its IR,
#                       and run a command confined by it with grantrun
#   ./build.sh check    all of the above, then the whole test suite, the
#                       front-end and compile suites again under valgrind, and
#                       the whole suite again under ASan+UBSan (make check-asan),
#                       then an install into a scratch DESTDIR (make installcheck)
#   ./build.sh fuzz     build, then `make fuzz` (libFuzzer targets, clang)
#   ./build.sh bench    build, then `make bench`
#
# Everything happens in the source tree; it is safe to run again (each step
# is skipped when already done).
set -euo pipefail

cd "$(dirname "$0")"
mode=${1:-build}
case $mode in
build | check | fuzz | bench) ;;
-h | --help)
    sed -n '2,13s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
*)
    echo "build.sh: unknown mode '$mode' (expected check, fuzz or bench)" >&2
    exit 2
    ;;
esac

say() { printf '==> %s\n' "$*" >&2; }

# ---- 1. Debian packages ------------------------------------------------------
packages=(build-essential autoconf automake libtool pkg-config flex bison
    libyaml-dev libpcre2-dev libjansson-dev nettle-dev check libseccomp-dev libevent-dev
    bubblewrap valgrind groff-base)
# groff-base: the suite renders the man pages (groff -ww -mandoc, no warning).
[ "$mode" = fuzz ] && packages+=(clang-14 libclang-rt-14-dev)
# What the suite runs besides grantkit (a minimal Debian has none of it):
# git (docs, audit and escape tests), python3 (the frame host), curl and
# iproute2 (the proxy's servers in a private network namespace), passwd
# (useradd: the unprivileged test user), patch (diffs applied), procps,
# zsh (the zsh completion is tested in a real zsh line editor).
[ "$mode" = check ] && packages+=(git python3 curl iproute2 passwd patch procps ca-certificates zsh)
# node runs the frame protocol's host written from the spec alone
# (tests/frame_host.mjs); Debian's is 18, which it needs at least. A node
# already on PATH (from elsewhere than Debian) is used as it is.
if [ "$mode" = check ] && ! command -v node >/dev/null 2>&1; then packages+=(nodejs); fi

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        say "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}"
    else
        echo "build.sh: missing Debian packages: ${missing[*]}" >&2
        echo "build.sh: install them with:" >&2
        echo "  sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

# ---- 2. configure and build ---------------------------------------------------
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
    say "autoreconf"
    mkdir -p m4 # AC_CONFIG_MACRO_DIRS; git does not keep empty directories
    autoreconf -fi
fi
if [ ! -f Makefile ] || [ configure -nt Makefile ]; then
    say "configure"
    ./configure -q --enable-silent-rules
fi
say "make"
make -j"$(nproc)"

# ---- 3. the mode's job --------------------------------------------------------
# An uninstalled tree finds `include "base/..."` in its own policies/.
export GRANTKIT_POLICY_PATH="${GRANTKIT_POLICY_PATH:-$PWD/policies}"
case $mode in
build)
    say "./grantc compile --pretty policies/base/reasonable.grant"
    ./grantc compile --pretty policies/base/reasonable.grant
    # The helper is not installed yet: use the build tree's.
    export GRANTKIT_HELPER="$PWD/runtime/grantkit-helper"
    say "./grantrun -p policies/base/reasonable.grant -- ls policies/base"
    ./grantrun -p policies/base/reasonable.grant -- ls policies/base
    ;;
check)
    # Each stage says how long it took: CI's budget is the sum.
    timed() { local t0=$SECONDS; "$@"; local rc=$?; say "$* took $((SECONDS - t0)) s"; return $rc; }
    say "make check"
    # VERBOSE=1: on failure automake prints the failing tests' logs.
    timed make -j"$(nproc)" check VERBOSE=1
    say "make check-valgrind"
    timed make check-valgrind
    say "make check-asan"
    timed make check-asan
    # The install: every file in place, examples/ built against the
    # installed grant.pc and run (make installcheck; distcheck does the same
    # with a real prefix).
    say "make install DESTDIR=install-check && make installcheck"
    rm -rf install-check
    make -s install DESTDIR="$PWD/install-check" >/dev/null
    make -s installcheck DESTDIR="$PWD/install-check"
    rm -rf install-check
    ;;
fuzz | bench)
    say "make $mode"
    make "$mode"
    ;;
esac
