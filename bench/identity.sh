#!/bin/sh
# identity.sh - record what grantc and grantrun make of every policy, so a
# change meant only to be faster (issue 13) can show it changed nothing:
#   bench/identity.sh OUT     (from the build directory; OUT a new directory)
# run once before and once after the change, then `diff -r BEFORE AFTER`.
# For every .grant and .yaml under policies/ and tests/data/: grantc
# compile, grantc emit for each backend (host target, and seatbelt for
# --target macos), grantrun --dry-run -- true (and, where true is refused,
# -- the first program the projection admits); stdout, stderr and exit
# status of each, one file per command. GRANTC and GRANTRUN override the
# binaries (a copy of an older build). Outputs hold paths and the
# environment: compare two records made the same way (same GK_SRCDIR, same
# environment, e.g. both through `make bench-identity`).
set -u
out=${1:?usage: identity.sh OUTDIR}
src=${GK_SRCDIR:-.}
grantc=${GRANTC:-./grantc}
grantrun=${GRANTRUN:-./grantrun}
export GRANTKIT_HELPER="${GRANTKIT_HELPER:-$PWD/runtime/grantkit-helper}"
export GRANTKIT_POLICY_PATH="${GRANTKIT_POLICY_PATH:-$src/policies}"
mkdir -p "$out" || exit 2
rec() { # NAME CMD...: stdout, stderr and status in OUT/NAME
    name=$1
    shift
    "$@" >"$out/$name.out" 2>"$out/$name.err" </dev/null
    echo $? >"$out/$name.rc"
}
# bench_run's tiny policy, at the same path in every run.
tiny=${TMPDIR:-/tmp}/gk-identity-tiny.grant
printf 'grant tiny {\n    exec { allow /usr/bin/; }\n    fs { read /usr /etc; write cwd:; }\n    net deny;\n}\n' >"$tiny"
n=0
for f in $(cd "$src" && find policies tests/data \( -name '*.grant' -o -name '*.yaml' \) | LC_ALL=C sort) "$tiny"; do
    key=$(printf '%s' "$f" | tr '/' '_')
    case $f in /*) ;; *) f=$src/$f ;; esac
    rec "$key.compile" "$grantc" compile "$f"
    # A file that does not compile says so once; its emits say the same.
    if [ "$(cat "$out/$key.compile.rc")" != 0 ]; then
        n=$((n + 1))
        continue
    fi
    for b in bwrap seatbelt appcontainer landlock; do
        rec "$key.emit-$b" "$grantc" emit -b "$b" "$f"
    done
    rec "$key.emit-macos-seatbelt" "$grantc" emit --target macos -b seatbelt "$f"
    rec "$key.dryrun" "$grantrun" --dry-run -p "$f" -- true
    if [ "$(cat "$out/$key.dryrun.rc")" = 126 ]; then
        # true refused (an allow-list without it): the plan for the first
        # program the projection admits instead.
        prog=$(python3 -c 'import json,os,sys; a=json.load(sys.stdin)["projection"]["exec"]["admit"] or []; f=[x for x in a if os.path.isfile(x) and os.access(x, os.X_OK)]; print(os.path.basename(f[0]) if f else "")' <"$out/$key.compile.out" 2>/dev/null)
        [ -n "$prog" ] && rec "$key.dryrun-admitted" "$grantrun" --dry-run -p "$f" -- "$prog"
    fi
    n=$((n + 1))
done
echo "identity: $n policies recorded in $out"
