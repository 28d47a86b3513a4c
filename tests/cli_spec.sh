#!/bin/bash
# cli_spec.sh - grantc and grantrun held to cli.md row by row, from a
# user's point of view (written from the spec, not the sources), in a
# project directory under the build tree (outside /tmp); as root the table
# runs again as the unprivileged test user (tests/testutil.h GK_TEST_USER).
# A row: NAME | STATUS | STDOUT-ERE | STDERR-ERE | shell command. An empty
# field is not checked; '^$' means empty. Exit 0 pass, 1 fail, 77 skip.
B=${GK_BUILDDIR:-$PWD}
export B
TEST_USER=gk-escape
if [ -z "${1:-}" ]; then
    [ -x "$B/grantrun" ] || { echo "SKIP: no $B/grantrun"; exit 77; }
    "$0" root || exit 1
    if [ "$(id -u)" = 0 ]; then
        id "$TEST_USER" >/dev/null 2>&1 ||
            useradd --system --no-create-home --shell /usr/sbin/nologin "$TEST_USER" 2>/dev/null
        if id "$TEST_USER" >/dev/null 2>&1; then
            "$0" "$TEST_USER" || exit 1
        else
            echo "SKIP the unprivileged half: no user $TEST_USER could be made"
        fi
    fi
    exit 0
fi
who=$1
[ "$who" = root ] && who=
P=$B/tests/cli-spec.d/proj${who:+-$who}
rm -rf "$P"; mkdir -p "$P"
chmod 755 "$B/tests/cli-spec.d"
cd "$P" || exit 2
cat > p.grant <<'EOF'
grant p {
    exec { allow /usr/bin/ /bin/; deny /usr/bin/false; }
    fs { read /usr /etc; write cwd: tempdir:; deny cwd:/secret; }
    net deny;
}
EOF
cat > wide.grant <<'EOF'
grant wide {
    exec { allow /usr/bin/ /bin/; }
    fs { read /usr /etc; write cwd: tempdir:; }
    net deny;
}
EOF
cat > bad.grant <<'EOF'
grant bad { fs { raed /usr; } }
EOF
printf 'grant   x{net deny;}\n' > ugly.grant
cat > y.yaml <<'EOF'
grant: y
fs:
  read: [/usr]
net: deny
EOF
mkdir -p seeds/sub; echo s > seeds/sub/f; ln -sf /etc/passwd seeds/link; echo top > seedfile
echo secret > secret
[ -n "$who" ] && chown -R "$who" "$P"
export GRANTKIT_HELPER=$B/runtime/grantkit-helper GRANTKIT_POLICY_PATH=$B/policies
export PATH=$B:/usr/bin:/bin
pass=0 fail=0
row() {
    local name=$1 want=$2 out_re=$3 err_re=$4 cmd=$5
    local o e s
    if [ -n "$who" ]; then
        o=$(setpriv --reuid="$who" --regid="$(id -g "$who")" --clear-groups -- env HOME="$P" bash -c "$cmd" 2>"$P/.err"); s=$?
    else
        o=$(bash -c "$cmd" 2>"$P/.err"); s=$?
    fi
    e=$(cat "$P/.err")
    local bad=""
    [ -z "$want" ] || [ "$s" = "$want" ] || bad="status $s (want $want)"
    if [ -n "$out_re" ] && ! grep -Eq -- "$out_re" <<<"$o"; then bad="$bad; stdout !~ /$out_re/"; fi
    if [ "$out_re" = '^$' ] && [ -n "$o" ]; then bad="$bad; stdout not empty"; fi
    if [ -n "$err_re" ] && ! grep -Eq -- "$err_re" <<<"$e"; then bad="$bad; stderr !~ /$err_re/"; fi
    if [ "$err_re" = '^$' ] && [ -n "$e" ]; then bad="$bad; stderr not empty"; fi
    if [ -z "$bad" ]; then
        pass=$((pass + 1)); echo "ok - $name${who:+ [$who]}"
    else
        fail=$((fail + 1)); echo "FAIL - $name${who:+ [$who]}: $bad"
        echo "    \$ $cmd"; echo "    stdout: $(head -c 400 <<<"$o")"; echo "    stderr: $(head -c 400 <<<"$e")"
    fi
}
# shellcheck disable=SC2016
while IFS='|' read -r name want out_re err_re cmd; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    name=$(sed 's/ *$//' <<<"$name"); want=${want// /}
    out_re=$(sed 's/^ *//; s/ *$//' <<<"$out_re"); err_re=$(sed 's/^ *//; s/ *$//' <<<"$err_re")
    row "$name" "$want" "$out_re" "$err_re" "$cmd"
done <<'TABLE'
# ---- GNU conventions
grantc --help on stdout                 |0|^Usage: grantc|^$| grantc --help
grantc --version                        |0|^grantc \(grantkit\) [0-9]|^$| grantc --version
grantrun --help                         |0|^Usage: grantrun|^$| grantrun --help
grantrun --version                      |0|^grantrun \(grantkit\)|^$| grantrun --version
grantc unknown command: 2, prefixed     |2|^$|^grantc: | grantc frobnicate
grantc unknown option: 2, prefixed      |2|^$|^grantc: | grantc compile --frob p.grant
grantrun unknown option: 125, prefixed  |125|^$|^grantrun: | grantrun --frob -p p.grant -- true
grantc no command: 2                    |2|^$|grantc| grantc
# ---- compile
compile prints the IR                   |0|^\{"context":.*"grantkit":1,"kind":"policy"||grantc compile p.grant
compile --pretty two-space indent       |0|^  "context": \{||grantc compile --pretty p.grant
compile - reads stdin                   |0|"kind":"policy"|| grantc compile - < p.grant
compile yaml                            |0|"kind":"policy"|| grantc compile y.yaml
compile IR as input                     |0|"kind":"policy"|| grantc compile p.grant > ir.json && grantc compile ir.json
compile IR with disagreeing ctx: 2      |2|^$|ir.json:1:[0-9]+: error: .*home| grantc compile p.grant > ir.json && grantc compile --home /nowhere ir.json
compile -o writes the file              |0|^$|^$| rm -f out.json; grantc compile -o out.json p.grant && test -s out.json
compile -o - is stdout                  |0|"kind":"policy"|| grantc compile -o - p.grant
compile error: 2, file:line:col, caret  |2|^$|bad.grant:1:[0-9]+: error| grantc compile bad.grant
compile error writes nothing to -o      |2|^gone$|| rm -f o2.json; grantc compile -o o2.json bad.grant; s=$?; [ -e o2.json ] || echo gone; exit $s
compile error keeps an old -o           |2|^old$|| echo old > o3.json; grantc compile -o o3.json bad.grant; s=$?; cat o3.json; exit $s
compile several files meet              |0|narrower|| grantc compile p.grant wide.grant > m.json && grantc compare m.json wide.grant; exit 0
compile --extend joins (lossy: deny kept)|1|^narrower|| grantc compile wide.grant --extend p.grant > e.json && grantc compare e.json wide.grant
sources readonly automatically          |1|denied|| grantc check p.grant -- write p.grant
sources readonly in a meet too          |1|denied|| grantc check wide.grant p.grant -- write wide.grant
compile --target macos offline          |0|"target":"macos"|| grantc compile --target macos --home /Users/u p.grant
compile --target windows                |0|"target":"windows"|| grantc compile --target windows --home 'C:\Users\u' --user u --cwd 'C:\w' wide.grant
compile --target nonsense: 2            |2|^$|^grantc: | grantc compile --target beos p.grant
compile ctx flags accepted              |0|"home":"/h"|| grantc compile --home /h --user u --cwd /c --tempdir /t --path /usr/bin --xdg config=/h/.cfg --no-implicit p.grant
compile --xdg bad name: 2               |2|^$|^grantc: | grantc compile --xdg nope=/x p.grant
compile missing file: 2                 |2|^$|^nonexistent.grant: error: cannot read| grantc compile nonexistent.grant
# ---- emit
emit bwrap default shell                |0|--unshare-net|| grantc emit --backend bwrap p.grant
emit bwrap json array                   |0|^\[".*"\]$|| grantc emit --backend bwrap --format json p.grant
emit bwrap argv0 NUL-separated          |0|^ok$|| grantc emit --backend bwrap --format argv0 p.grant | tr '\0' '\n' | grep -qx -- --unshare-net && echo ok
emit bwrap runs under real bwrap        |0|^inside$|| grantc emit --backend bwrap --format argv0 p.grant | xargs -0 sh -c 'exec bwrap "$@" -- /bin/echo inside' bwrap
emit bwrap argv has no program name     |0|^ok$|| a=$(grantc emit --backend bwrap --format json p.grant); case $a in '["bwrap"'*|*grantkit-helper*) echo bad;; *) echo ok;; esac
emit seatbelt sbpl default              |0|\(version 1\)|| grantc emit --target macos --home /Users/u --backend seatbelt p.grant
emit appcontainer json default          |0|^\{|| grantc emit --target windows --home 'C:\Users\u' --user u --cwd 'C:\w' --backend appcontainer wide.grant
emit appcontainer powershell            |0|.||grantc emit --target windows --home 'C:\Users\u' --user u --cwd 'C:\w' --backend appcontainer --format powershell wide.grant
emit landlock json                      |0|^\{|| grantc emit --backend landlock p.grant
emit unknown backend: 2                 |2|^$|^grantc: | grantc emit --backend zfs p.grant
emit bad format: 2                      |2|^$|^grantc: | grantc emit --backend bwrap --format yaml p.grant
emit --format text for landlock: 2      |2|^$|^grantc: | grantc emit --backend landlock --format sbpl p.grant
# ---- check
check exec allowed: 0 with reason       |0|^  by p\.grant:2 \(layer p\): allow /usr/bin/||grantc check p.grant -- exec /usr/bin/ls
check exec denied: 1 with reason        |1|^  by p\.grant:2 \(layer p\): deny /usr/bin/false|| grantc check p.grant -- exec /usr/bin/false
check read allowed                      |0|allow|| grantc check p.grant -- read /usr/share
check read denied                       |1|den|| grantc check p.grant -- read /root/nothing
check write cwd                         |0|allow|| grantc check p.grant -- write "$PWD/x"
check deny wins                         |1|^  by p\.grant:3 \(layer p\): deny|| grantc check p.grant -- read "$PWD/secret"
check gate shell.chdir no opinion: 0    |0|no-opinion|| grantc check p.grant -- gate shell.chdir
check gate editor.read denied: 1        |1|denied|| printf 'grant e { editor { read deny; } }\n' > ed.grant; grantc check ed.grant -- gate editor.read
check gate unknown: 2                   |2|^$|^grantc: | grantc check p.grant -- gate shell.fly
check bad query: 2                      |2|^$|^grantc: | grantc check p.grant -- fly /x
check no query: 2                       |2|^$|^grantc: | grantc check p.grant
check broken policy: 2 not denied       |2|^$|bad.grant| grantc check bad.grant -- exec /usr/bin/ls
check --format json                     |0|^\{|| grantc check --format json p.grant -- exec /usr/bin/ls
check connect (network.md)              |1|den|| grantc check p.grant -- connect example.com:443
# ---- audit
audit text                              |||| grantc audit p.grant; case $? in 0|1) exit 0;; esac; exit 9
audit json                              |0|^[\[{]|| grantc audit --format json p.grant; [ $? -le 1 ]
audit sarif                             |0|"version": ?"2\.1\.0"|| grantc audit --format sarif p.grant; [ $? -le 1 ]
audit deputy is a warning: 0 (fail-on error)|0|GK001 deputy|| printf 'grant d { exec { allow cwd:/bin/; } fs { write cwd:; } }\n' > dep.grant; grantc audit dep.grant
audit --fail-on bounds the status       |0|.|| grantc audit --fail-on error dep.grant >/dev/null; s=$?; grantc audit --fail-on warning dep.grant >/dev/null; [ $? = 1 ] && [ $s = 0 ] && echo ok
audit bad format: 2                     |2|^$|^grantc: | grantc audit --format xml p.grant
# ---- compare
compare equal: 0                        |0|^equal|| grantc compare p.grant p.grant
compare narrower: 1                     |1|^narrower|| grantc compare p.grant wide.grant
compare wider: 1                        |1|^wider|| grantc compare wide.grant p.grant
compare incomparable: 1                 |1|^incomparable|| printf 'grant a { exec { allow /usr/bin/ls; } }\n' > a.grant; printf 'grant b { exec { allow /usr/bin/cat; } }\n' > b.grant; grantc compare a.grant b.grant
compare --format json                   |1|^\{|| grantc compare --format json p.grant wide.grant
compare one arg: 2                      |2|^$|^grantc: | grantc compare p.grant
# ---- fmt
fmt prints canonical                    |0|^grant x \{|| grantc fmt ugly.grant
fmt --check unformatted: 1              |1|||  grantc fmt --check ugly.grant
fmt --check formatted: 0                |0||| grantc fmt p.grant > f.grant; grantc fmt --check f.grant
fmt -i rewrites                         |0|^ok$|| cp ugly.grant u2.grant; grantc fmt -i u2.grant && grantc fmt --check u2.grant && echo ok
fmt --to yaml                           |0|^grant: x|| grantc fmt --to yaml ugly.grant
fmt --to grant from yaml                |0|^grant y|| grantc fmt --to grant y.yaml
fmt error: 2                            |2|^$|bad.grant| grantc fmt bad.grant
# ---- sbpl, sid
sbpl lint with a warning: 1            |1|SB009||  printf '(version 1)\n(deny default)\n(allow file-read* (subpath "/usr"))\n' > s.sb; grantc sbpl lint s.sb
sbpl eval allow: 0                      |0|allow|| grantc sbpl eval s.sb file-read-data /usr/bin/ls
sbpl eval deny: 1                       |1|deny|| grantc sbpl eval s.sb file-read-data /etc/passwd
sbpl eval -D                            |0|allow|| printf '(version 1)\n(deny default)\n(allow file-read* (subpath (param "D")))\n' > d.sb; grantc sbpl eval d.sb -D D=/opt file-read-data /opt/x
sid capability                          |0|^S-1-15-3-|| grantc sid capability internetClient
sid appcontainer                        |0|^S-1-15-2-|| grantc sid appcontainer Contoso.App
sid bad kind: 2                         |2|^$|^grantc: | grantc sid user x
# ---- grantrun: statuses
run: own status 0                       |0|^hi$|| grantrun -p p.grant -- /bin/echo hi
run: own status 3                       |3|^$|| grantrun -p p.grant -- sh -c 'exit 3'
run: status 123                         |123|^$|| grantrun -p p.grant -- sh -c 'exit 123'
run: timeout 124                        |124|^$|^grantrun: | grantrun -p p.grant --timeout 300ms -- sleep 5
run: timeout bare seconds               |124|^$|| grantrun -p p.grant --timeout 0.3 -- sleep 5
run: timeout 1m parses                  |0|^$|| grantrun -p p.grant --timeout 1m -- true
run: timeout 1h parses                  |0|^$|| grantrun -p p.grant --timeout 1h -- true
run: bad duration 125                   |125|^$|^grantrun: | grantrun -p p.grant --timeout 5y -- true
run: usage 125 (no command)             |125|^$|^grantrun: | grantrun -p p.grant
run: usage 125 (no policy)              |125|^$|^grantrun: | grantrun -- true
run: policy error 125                   |125|^$|bad.grant:1| grantrun -p bad.grant -- true
run: gate denial 126                    |126|^$|^grantrun: | grantrun -p p.grant -- /usr/bin/false
run: not admitted, absent 126           |126|^$|^grantrun: | grantrun -p p.grant -- /opt/nope/x
run: admitted, absent 127               |127|^$|^grantrun: | grantrun -p p.grant -- /usr/bin/no-such-thing
run: name on no PATH, not admitted: 126 |126|^$|nor is it on PATH| grantrun -p p.grant -- no-such-thing-here
run: not executable 126                 |126|^$|| grantrun -p p.grant -- /etc/passwd
run: signal 128+N                       |137|^$|| grantrun -p p.grant -- sh -c 'kill -9 $$'
run: signal TERM 143                    |143|^$|| grantrun -p p.grant -- sh -c 'kill -TERM $$'
run: fs deny holds                      |1|^$|| grantrun -p p.grant -- cat "$PWD/secret"
run: cwd writable                       |0|^w$|| grantrun -p p.grant -- sh -c 'echo w > out.txt && cat out.txt'
run: policy source readonly             |2|^$|Read-only file system| grantrun -p p.grant -- sh -c 'echo x >> p.grant'
run: no network                         |1|^$|| grantrun -p p.grant -- sh -c 'exec 3<>/dev/tcp/1.1.1.1/80' 2>/dev/null; [ $? -ne 0 ] && exit 1
# ---- grantrun: environment
run: minimal env                        |0|^HOME LANG PATH TERM USER$|| USER=u TERM=xterm FOO=bar grantrun -p p.grant -- sh -c 'env | cut -d= -f1 | grep -v "^PWD$" | sort | tr "\n" " " | sed "s/ $//"'
run: --env NAME=VALUE                   |0|^v$|| grantrun -p p.grant --env X=v -- sh -c 'echo $X'
run: --env NAME copies                  |0|^c$|| X=c grantrun -p p.grant --env X -- sh -c 'echo $X'
run: --keep-env                         |0|^k$|| KEEPME=k grantrun -p p.grant --keep-env -- sh -c 'echo $KEEPME'
# ---- grantrun: limits
run: --memory parses M                  |0|^$|| grantrun -p p.grant --memory 512M -- true
run: --memory caps                      |||| grantrun -p p.grant --memory 64M -- perl -e '$x = "x" x 300000000'; [ $? -ne 0 ]
run: --memory bad unit 125              |125|^$|^grantrun: | grantrun -p p.grant --memory 5T -- true
run: --cpu                              |||| grantrun -p p.grant --cpu 1 -- sh -c 'while :; do :; done'; s=$?; [ $s -ge 128 ] && exit 0; exit $s
run: --processes                        |||| grantrun -p p.grant --processes 4 -- sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; wait'; s=$?; if [ "$(id -u)" = 0 ]; then [ $s = 125 ]; else [ $s != 0 ]; fi
# ---- grantrun: level, report, dry-run, bwrap
run: --level namespaces                 |0|^x$|| grantrun -p p.grant --level namespaces -- /bin/echo x
run: --level landlock                   |0|^x$|| grantrun -p p.grant --level landlock -- /bin/echo x
run: --level bad 125                    |125|^$|^grantrun: | grantrun -p p.grant --level max -- true
run: --report writes JSON               |0|"level"|| rm -f rep.json; grantrun -p p.grant --report rep.json -- true && cat rep.json
run: --dry-run prints, runs nothing     |0|bwrap|| rm -f dry; grantrun -p p.grant --dry-run -- touch dry; [ ! -e dry ]
run: --bwrap missing 125                |125|^$|^grantrun: .*bwrap| grantrun -p p.grant --bwrap /nonexistent/bwrap -- true
run: no bwrap on PATH 125               |125|^$|^grantrun: .*bwrap| PATH=/nonexistent $B/grantrun -p p.grant -- /bin/true
run: --tty accepted                     |0|^t$|| grantrun -p p.grant --tty -- /bin/echo t
run: refused closed names the rule      |||| grantrun -p p.grant --level landlock --processes 4 -- true 2>e.txt; s=$?; if [ "$(id -u)" = 0 ]; then [ $s = 125 ] && grep -q 'processes' e.txt; else [ $s = 0 ]; fi
run: --allow-degraded runs, prints rule  |||| grantrun -p p.grant --allow-degraded --processes 4 -- /bin/echo ran 2>e.txt >o.txt; s=$?; grep -qx ran o.txt && [ $s = 0 ] && { [ "$(id -u)" != 0 ] || grep -q processes e.txt; }
run: --report not written on refusal    |126|^gone$|| rm -f r2.json; grantrun -p p.grant --report r2.json -- /usr/bin/false; s=$?; [ -e r2.json ] || echo gone; exit $s
compare prints witnesses                |1|^narrower|| grantc compare p.grant wide.grant | head -3; exit ${PIPESTATUS[0]}
emit landlock --format json             |0|^\{|| grantc emit --backend landlock --format json p.grant
# ---- grantrun: process isolation
iso: process status                     |3|^$|script-error| grantrun -p p.grant --isolate process -- sh -c 'exit 3'
iso: summary names failureKind          |3|^$|script-error| grantrun -p p.grant --isolate process -- sh -c 'exit 3'
iso: output replayed                    |0|^o$|| grantrun -p p.grant --isolate process -- /bin/echo o
iso: timeout 124                        |124|^$|timeout| grantrun -p p.grant --isolate process --timeout 300ms -- sleep 5
iso: --grace-ms 50: timeout or hard-kill||^$|^grantrun: [a-z-]+ \(exitCode [n1][u34][l37]| grantrun -p p.grant --isolate process --grace-ms 50 --timeout 300ms -- sleep 5; s=$?; [ $s = 124 ] && exit 0; [ $s = 125 ]
iso: host-error 125                     |125|^$|host-error| grantrun -p p.grant --isolate process --bwrap /nonexistent -- true
iso: resource-limit with status         |||| grantrun -p p.grant --isolate process --cpu 1 -- sh -c 'while :; do :; done' 2>e.txt; s=$?; grep -q resource-limit e.txt && [ $s -ge 128 ]
iso: bad --isolate 125                  |125|^$|^grantrun: | grantrun -p p.grant --isolate thread -- true
iso: --json document                    |0|^\{"type":"run-result","v":1||grantrun -p p.grant --json -- /bin/echo j
iso: --json exit status                 |3|"exitCode":3|| grantrun -p p.grant --json -- sh -c 'exit 3'
iso: --seed file default DEST           |0|^top$|| grantrun -p p.grant --seed seedfile -- cat /work/seedfile
iso: --seed tree =DEST                  |0|^s$|| grantrun -p p.grant --seed seeds/sub=/in -- cat /work/in/f
iso: --seed symlink refused 125         |125|^$|link| grantrun -p p.grant --seed seeds -- true
iso: --root                             |0|^/scr$|| grantrun -p p.grant --seed seedfile --root /scr -- sh -c 'pwd'
iso: --diff json                        |0|"kind":"create"|| grantrun -p p.grant --seed seedfile --diff json -- sh -c 'echo n > /work/new'
iso: --diff unified                     |0|^\+\+\+ |^grantrun: none| grantrun -p p.grant --seed seedfile --diff unified -- sh -c 'echo n > /work/seedfile'
iso: --fs-quota full                    |||| grantrun -p p.grant --seed seedfile --fs-quota 1M -- sh -c 'head -c 3000000 /dev/zero > /work/big' 2>e.txt; grep -q resource-limit e.txt
iso: --fs-nodes full                    |||| grantrun -p p.grant --seed seedfile --fs-nodes 20 -- sh -c 'cd /work; seq 100 | xargs touch' 2>e.txt; grep -q resource-limit e.txt
iso: --fs-quota bad 125                 |125|^$|^grantrun: | grantrun -p p.grant --fs-quota lots -- true
iso: seed over 64 MiB refused 125       |125|^$|host-error| head -c 70000000 /dev/zero > big.bin; grantrun -p p.grant --fs-quota 200M --seed big.bin -- true; s=$?; rm -f big.bin; exit $s
iso: --isolate none with --seed 125     |125|^$|^grantrun: | grantrun -p p.grant --isolate none --seed seedfile -- true
TABLE
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
