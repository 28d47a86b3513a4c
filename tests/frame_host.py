#!/usr/bin/env python3
"""frame_host.py - a host written from frame-protocol.md alone (standard
library only): it frames run-requests byte by byte (4-byte big-endian
length + UTF-8 JSON), drives `grantrun frame`, and reads the run-result
frame back the same way. None of grantkit's C code frames or parses here;
grantc only compiles the policy the requests carry. Run by `make check`
(exit 0 pass, 1 fail, 77 skip)."""

import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

BUILD = os.environ.get("GK_BUILDDIR", os.getcwd())
GRANTRUN = os.path.join(BUILD, "grantrun")
GRANTC = os.path.join(BUILD, "grantc")
MAX_FRAME = 67108864

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


def exchange(raw: bytes):
    """Write raw bytes to grantrun frame; return the result document."""
    p = subprocess.run([GRANTRUN, "frame"], input=raw, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    out = p.stdout
    assert len(out) >= 4, "no length prefix: %r %r" % (out, p.stderr)
    (n,) = struct.unpack(">I", out[:4])
    assert 0 < n <= MAX_FRAME, "bad declared length %d" % n
    assert len(out) == 4 + n, "one frame, then EOF: %d != %d" % (len(out), 4 + n)
    doc = json.loads(out[4:].decode("utf-8"))
    assert doc["type"] == "run-result" and doc["v"] == 1, doc
    return doc


def request(policy, argv, **kw):
    req = {
        "type": "run-request", "v": 1,
        "entry": {"argv": argv, "env": {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}},
        "policy": policy,
        "execution": {"timeoutMs": kw.get("timeout", 0), "maxMemoryBytes": 0,
                      "maxProcesses": 0, "cpuSeconds": 0,
                      "fsQuotaBytes": 16777216, "fsNodeLimit": 4096},
        "run": {"includeDiff": kw.get("diff", False), "diffMetadata": False,
                "diffFormat": kw.get("format", "json"),
                "captureEncoding": kw.get("encoding", "utf8"),
                "level": "auto", "allowDegraded": False},
        "baseline": {"root": kw.get("root"), "files": kw.get("files", [])},
    }
    return req


def main():
    if not shutil.which("bwrap"):
        print("SKIP: no bwrap on PATH", file=sys.stderr)
        return 77
    os.environ.setdefault("GRANTKIT_HELPER",
                          os.path.join(BUILD, "runtime", "grantkit-helper"))
    work = tempfile.mkdtemp(prefix="gk-frame-host-", dir="/var/tmp")
    try:
        pol = os.path.join(work, "t.grant")
        with open(pol, "w") as f:
            f.write("grant t {\n  exec { allow sh cat printf sleep; }\n"
                    "  fs { read /usr /etc; write cwd:; }\n  net deny;\n}\n")
        policy = json.loads(subprocess.run([GRANTC, "compile", pol], check=True,
                                           stdout=subprocess.PIPE, cwd=work).stdout)

        # 1. A run with a baseline and a diff.
        files = [{"path": "/in.txt", "kind": "file",
                  "base64": base64.b64encode(b"hello\n").decode(), "mode": 0o644},
                 {"path": "/sub", "kind": "dir", "mode": 0o755}]
        req = request(policy, ["sh", "-c", "cat in.txt; echo bye >> in.txt; echo err >&2"],
                      root="/work", files=files, diff=True)
        res = exchange(frame(json.dumps(req).encode()))
        check(res["ok"] is True and res["failureKind"] == "none", "ok run: %r" % res)
        check(res["exitCode"] == 0, "exitCode 0: %r" % res["exitCode"])
        check(res["output"] == "hello\n", "output: %r" % res["output"])
        check(res["errorOutput"] == "err\n", "errorOutput: %r" % res["errorOutput"])
        check(res["diffRequested"] is True, "diffRequested")
        diff = json.loads(res["diff"])
        check(diff == {"changes": [{"kind": "modify", "path": "/in.txt",
                                    "oldBytes": 6, "newBytes": 10}]}, "diff: %r" % diff)
        check(set(res["stats"]) == {"wallMs", "userMs", "sysMs", "maxRssBytes"}, "stats")
        check(res["enforcement"] == {"level": "namespaces", "unenforced": []}, "enforcement")
        check(res["network"] is None, "network")

        # 2. Binary output as base64, and a failing status.
        req = request(policy, ["sh", "-c", "printf '\\000\\377'; exit 4"], encoding="base64")
        res = exchange(frame(json.dumps(req).encode()))
        check(res["failureKind"] == "script-error" and res["exitCode"] == 4, "status 4: %r" % res)
        check(res["encoding"] == "base64", "encoding echo")
        check(base64.b64decode(res["output"]) == b"\x00\xff", "base64 output: %r" % res["output"])

        # 3. Another version: host-error naming both, before anything runs.
        req = request(policy, ["true"])
        req["v"] = 2
        res = exchange(frame(json.dumps(req).encode()))
        check(res["failureKind"] == "host-error" and "version 2" in res["errorMessage"]
              and "version 1" in res["errorMessage"], "v=2: %r" % res)
        check(res["exitCode"] is None, "v=2 exitCode null")

        # 4. An unknown field, named.
        req = request(policy, ["true"])
        req["run"]["includeDif"] = True
        res = exchange(frame(json.dumps(req).encode()))
        check(res["failureKind"] == "host-error" and "'run.includeDif'" in res["errorMessage"],
              "unknown field: %r" % res)

        # 5. A short frame: the length says 100, 10 bytes follow, then EOF.
        res = exchange(struct.pack(">I", 100) + b'{"type":"r')
        check(res["failureKind"] == "host-error" and "EOF after 10 of the 100" in
              res["errorMessage"], "short frame: %r" % res)

        # 6. The child's own timeout.
        req = request(policy, ["sh", "-c", "printf started; sleep 30"], timeout=300)
        res = exchange(frame(json.dumps(req).encode()))
        check(res["failureKind"] == "timeout" and res["output"] == "started",
              "timeout: %r" % res)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        return 1
    print("frame_host.py: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
