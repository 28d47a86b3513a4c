#!/usr/bin/env node
// frame_host.mjs - a host for `grantrun frame` written by an outside reader
// from frame-protocol.md alone (Node.js standard library only). It frames
// every request itself (4-byte big-endian length + UTF-8 JSON), reads the
// run-result frame back byte by byte, and holds each behaviour the spec
// promises to the exact field. grantc only compiles the policies requests
// carry. Exit 0 pass, 1 fail, 77 skip (the automake convention).
//
//   node tests/frame_host.mjs [CASE-SUBSTRING...]
// GK_BUILDDIR names the build tree (default: the cwd).

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BUILD = process.env.GK_BUILDDIR || process.cwd();
const GRANTRUN = path.join(BUILD, 'grantrun');
const GRANTC = path.join(BUILD, 'grantc');
const HELPER = path.join(BUILD, 'runtime', 'grantkit-helper');
const MAX_FRAME = 67108864;
const MiB = 1024 * 1024;
const LIMITS = { output: 16 * MiB, errorOutput: 8 * MiB, diff: 24 * MiB, errorMessage: 64 * 1024 };
const RESULT_KEYS = ['type', 'v', 'ok', 'exitCode', 'failureKind', 'errorMessage', 'output',
  'errorOutput', 'encoding', 'diffRequested', 'diff', 'truncated', 'outputTruncatedBytes',
  'errorOutputTruncatedBytes', 'stats', 'enforcement', 'network'];
const KINDS = ['none', 'script-error', 'resource-limit', 'timeout', 'host-error', 'child-process-crash'];
const SIGNAMES = { 9: 'SIGKILL', 11: 'SIGSEGV', 6: 'SIGABRT', 15: 'SIGTERM' };

// ---- the wire -------------------------------------------------------------
function frame(payload) {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload), 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

// Decode exactly one frame and nothing after it; throws with the reason.
function unframe(buf) {
  if (buf.length < 4) throw new Error(`stdout has ${buf.length} bytes, no length prefix`);
  const n = buf.readUInt32BE(0);
  if (n === 0 || n > MAX_FRAME) throw new Error(`declared length ${n}`);
  if (buf.length !== 4 + n) throw new Error(`declared ${n}, got ${buf.length - 4} payload bytes`);
  const text = buf.subarray(4).toString('utf8');
  if (Buffer.byteLength(text) !== n) throw new Error('payload is not valid UTF-8');
  return JSON.parse(text);
}

function procStatus(pid, key) {
  try {
    const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${key}:\\s+(\\d+)`, 'm'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch { return 0; }
}

function children(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch { return []; }
}

function descendants(pid) {
  const out = [];
  for (const c of children(pid)) out.push(c, ...descendants(c));
  return out;
}

function cmdline(pid) {
  try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((s, i, a) => i < a.length - 1); } catch { return []; }
}

// Run `grantrun frame` once. opts: payload (Buffer: the raw stdin) or req,
// args, chunk (write the stdin this many bytes at a time, yielding between),
// onChild(pid) (called once the --frame-child exists), bin, env, stdio extra.
function runFrame(opts) {
  return new Promise((resolve) => {
    const bytes = opts.payload !== undefined ? opts.payload : frame(opts.req);
    const env = opts.env || { PATH: '/usr/bin:/bin', GRANTKIT_HELPER: HELPER };
    const stdio = ['pipe', 'pipe', 'pipe', ...(opts.extraFds || [])];
    const t0 = Date.now();
    const ids = AS_USER ? { uid: AS_USER.uid, gid: AS_USER.gid } : {};
    const c = spawn(opts.bin || GRANTRUN, ['frame', ...(opts.args || [])], { stdio, env, ...ids });
    const out = [], err = [];
    let errBytes = 0, peak = 0, childPeak = 0, seenChild = false, childInfo = null;
    c.stdout.on('data', (d) => out.push(d));
    c.stderr.on('data', (d) => { errBytes += d.length; if (err.length < 64) err.push(d); });
    c.stdin.on('error', () => {});
    const poll = setInterval(() => {
      peak = Math.max(peak, procStatus(c.pid, 'VmRSS'));
      if (childInfo) childPeak = Math.max(childPeak, procStatus(childInfo.pid, 'VmRSS'));
      if (!seenChild) {
        for (const d of descendants(c.pid)) {
          const argv = cmdline(d);
          if (argv.includes('--frame-child')) {
            const info = inspect(d, argv);
            // a process caught mid-transition (or gone) answers nothing: look again
            if (info.fds === null || info.environ === null) break;
            seenChild = true;
            childInfo = info;
            if (opts.onChild) opts.onChild(d, c.pid);
            break;
          }
        }
      }
    }, 5);
    (async () => {
      if (opts.delayMs) await sleep(opts.delayMs);
      if (opts.chunk) {
        for (let i = 0; i < bytes.length; i += opts.chunk) {
          if (!c.stdin.write(bytes.subarray(i, i + opts.chunk))) await new Promise((r) => c.stdin.once('drain', r));
          if (opts.chunkDelayMs) await sleep(opts.chunkDelayMs);
        }
        c.stdin.end();
      } else if (opts.keepOpen) {
        c.stdin.write(bytes);
      } else {
        c.stdin.end(bytes);
      }
    })();
    c.on('close', (code, signal) => {
      clearInterval(poll);
      const stdout = Buffer.concat(out);
      let result = null, frameError = null;
      try { result = unframe(stdout); } catch (e) { frameError = e.message; }
      resolve({ code, signal, stdout, stderr: Buffer.concat(err).toString(), errBytes, result, frameError,
        ms: Date.now() - t0, peak, childPeak, childInfo, pid: c.pid });
    });
  });
}

// What crossed into the child, read from outside while it runs.
function inspect(pid, argv) {
  const info = { pid, argv };
  try { info.environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8'); } catch { info.environ = null; }
  try { info.fds = fs.readdirSync(`/proc/${pid}/fd`).map((f) => [f, fs.readlinkSync(`/proc/${pid}/fd/${f}`)]); } catch { info.fds = null; }
  try { info.exe = fs.readlinkSync(`/proc/${pid}/exe`); } catch { info.exe = null; }
  return info;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// As root, the cases marked `user` run a second time as the suite's
// unprivileged user (tests/testutil.h GK_TEST_USER), made if missing.
const TEST_USER = 'gk-escape';
let AS_USER = null;
function testUser() {
  let r = spawnSync('id', ['-u', TEST_USER], { encoding: 'utf8' });
  if (r.status !== 0) {
    spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', TEST_USER]);
    r = spawnSync('id', ['-u', TEST_USER], { encoding: 'utf8' });
    if (r.status !== 0) return null;
  }
  const g = spawnSync('id', ['-g', TEST_USER], { encoding: 'utf8' });
  return { uid: Number(r.stdout), gid: Number(g.stdout) };
}

// ---- requests -------------------------------------------------------------
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), 'gk-frame-host-'));
function compile(name, text, extra = []) {
  const f = path.join(WORK, name);
  fs.writeFileSync(f, text);
  const r = spawnSync(GRANTC, ['compile', ...extra, f], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`grantc compile ${name}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
const POLICY_TEXT = `grant host {
    exec { allow /usr/bin/ /bin/; deny /usr/bin/false; }
    fs { read /usr /etc; write tempdir:; deny /etc/shadow /work/secret; readonly /work/ro; }
    net deny;
}
`;
let POLICY, POLICY_MAC, POLICY_NET, POLICY_LINUX;

function request(argv, { env, cwd, execution = {}, run = {}, baseline, entry = {} } = {}) {
  const e = { argv, env: env || { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' }, ...entry };
  if (cwd !== undefined) e.cwd = cwd;
  return {
    type: 'run-request', v: 1, entry: e, policy: POLICY,
    execution: { timeoutMs: 20000, maxMemoryBytes: 0, maxProcesses: 0, cpuSeconds: 0,
      fsQuotaBytes: 16 * MiB, fsNodeLimit: 4096, ...execution },
    run: { includeDiff: false, diffMetadata: false, diffFormat: 'json', captureEncoding: 'utf8',
      level: 'auto', allowDegraded: false, ...run },
    baseline: baseline === undefined ? { root: '/work', files: [] } : baseline,
  };
}
const sh = (script, o) => request(['/bin/sh', '-c', script], o);
const b64 = (s) => Buffer.from(s).toString('base64');
const file = (p, text, mode = 0o644) => ({ path: p, kind: 'file', base64: b64(text), mode });
const dir = (p, mode = 0o755) => ({ path: p, kind: 'dir', mode });

// ---- checks ---------------------------------------------------------------
let failures = 0, passes = 0, skips = 0;
class Fail extends Error {}
function expect(cond, what) { if (!cond) throw new Fail(what); }
function eq(a, b, what) {
  const sa = JSON.stringify(a), sb = JSON.stringify(b);
  if (sa !== sb) throw new Fail(`${what}: got ${sa && sa.slice(0, 400)}, want ${sb && sb.slice(0, 400)}`);
}
const jlen = (s) => Buffer.byteLength(JSON.stringify(s)) - 2;   // the field's JSON-escaped encoding

// Every result, whatever the case, must be one valid run-result frame.
function valid(r, o = {}) {
  expect(!r.frameError, `no valid frame: ${r.frameError}; stderr: ${r.stderr.slice(-300)}`);
  const x = r.result;
  eq(Object.keys(x).sort(), [...RESULT_KEYS].sort(), 'result fields');
  eq([x.type, x.v], ['run-result', 1], 'type and v');
  expect(KINDS.includes(x.failureKind), `failureKind ${x.failureKind}`);
  eq(x.ok, x.failureKind === 'none', 'ok iff none');
  expect(x.exitCode === null || Number.isInteger(x.exitCode), 'exitCode integer or null');
  expect(typeof x.errorMessage === 'string' && jlen(x.errorMessage) <= LIMITS.errorMessage, 'errorMessage bounded');
  expect(typeof x.output === 'string' && typeof x.errorOutput === 'string', 'captures are strings');
  expect(jlen(x.output) <= LIMITS.output && jlen(x.errorOutput) <= LIMITS.errorOutput, 'captures within limits');
  expect(x.diff === null || (typeof x.diff === 'string' && jlen(x.diff) <= LIMITS.diff), 'diff string within limit');
  if (x.diff === null && x.diffRequested) expect(x.truncated === true, 'diff null with diffRequested only when truncated');
  expect(Number.isInteger(x.outputTruncatedBytes) && Number.isInteger(x.errorOutputTruncatedBytes), 'truncated counts');
  expect(x.stats && ['wallMs', 'userMs', 'sysMs', 'maxRssBytes'].every((k) => Number.isInteger(x.stats[k]) && x.stats[k] >= 0), 'stats');
  // enforcement is null exactly when the command never ran; exitCode is null then too, except for
  // the gate's 126 and 127 (§4), so only one direction can be held here.
  if (x.exitCode === null && x.failureKind !== 'timeout') eq(x.enforcement, null, 'enforcement null when the command never ran');
  if (x.enforcement !== null) expect(typeof x.enforcement.level === 'string' && Array.isArray(x.enforcement.unenforced), 'enforcement record');
  if (o.kind) eq(x.failureKind, o.kind, `failureKind (message: ${x.errorMessage.slice(0, 300)})`);
  if (o.exit !== undefined) eq(x.exitCode, o.exit, 'exitCode');
  if (o.msg) expect(o.msg.every((m) => x.errorMessage.includes(m)), `errorMessage ${JSON.stringify(x.errorMessage.slice(0, 300))} lacks ${JSON.stringify(o.msg)}`);
  if (o.kind === 'host-error' && o.ran === false) eq([x.exitCode, x.enforcement], [null, null], 'nothing ran');
  return x;
}

const cases = [];
function t(name, fn, opts = {}) { cases.push({ name, fn, ...opts }); }

// ---- 2. framing and transport ----------------------------------------------
t('basic run: one frame out, exit 0, output, cwd = root, env exact', async () => {
  const r = await runFrame({ req: sh('printf "%s|" "$(pwd)" "$FOO"; env | sort | tr "\\n" ,', { env: { PATH: '/usr/bin:/bin', FOO: 'bar' } }) });
  const x = valid(r, { kind: 'none', exit: 0 });
  eq(x.output, '/work|bar|FOO=bar,PATH=/usr/bin:/bin,PWD=/work,', 'output (cwd defaults to root, env exactly the request)');
  eq([x.encoding, x.diffRequested, x.diff, x.truncated], ['utf8', false, null, false], 'echoes');
  eq(x.network, null, 'network null without an allowlist');
});
t('cwd defaults to / with root null; explicit cwd honoured', async () => {
  let x = valid(await runFrame({ req: sh('pwd', { baseline: { root: null, files: [] } }) }), { kind: 'none' });
  eq(x.output, '/\n', 'cwd with root null');
  x = valid(await runFrame({ req: sh('pwd', { cwd: '/work/sub', baseline: { root: '/work', files: [dir('/sub')] } }) }), { kind: 'none' });
  eq(x.output, '/work/sub\n', 'explicit cwd');
});
t('command stdin is /dev/null', async () => {
  const x = valid(await runFrame({ req: sh('cat; readlink /proc/self/fd/0') }), { kind: 'none' });
  eq(x.output, '/dev/null\n', 'stdin');
});
t('the command sees only descriptors 0 1 2', async () => {
  const x = valid(await runFrame({ req: sh('ls /proc/self/fd') }), { kind: 'none' });
  eq(x.output.split('\n').filter(Boolean).map(Number).filter((n) => n > 2).length <= 1, true, `fds ${x.output}`);
});
t('request written 1 byte at a time', async () => {
  valid(await runFrame({ req: sh('echo slow'), chunk: 1 }), { kind: 'none' });
});
t('request split at the prefix and mid-payload with pauses', async () => {
  const r = await runFrame({ req: sh('echo split'), chunk: 3, chunkDelayMs: 1 });
  eq(valid(r, { kind: 'none' }).output, 'split\n', 'output');
});
t('zero-length payload is an invalid frame', async () => {
  valid(await runFrame({ payload: Buffer.alloc(4) }), { kind: 'host-error', ran: false });
});
t('declared length above 64 MiB: refused without allocating it', async () => {
  const h = Buffer.alloc(4); h.writeUInt32BE(0xffffffff);
  const r = await runFrame({ payload: Buffer.concat([h, Buffer.from('{}')]) });
  valid(r, { kind: 'host-error', ran: false });
  expect(r.peak < 64 * MiB, `parent RSS ${r.peak}`);
});
t('declared length MAX_FRAME+1 refused', async () => {
  const h = Buffer.alloc(4); h.writeUInt32BE(MAX_FRAME + 1);
  valid(await runFrame({ payload: h }), { kind: 'host-error', ran: false });
});
t('EOF inside the length prefix', async () => {
  valid(await runFrame({ payload: Buffer.from([0, 0]) }), { kind: 'host-error', ran: false });
});
t('EOF before the payload is complete', async () => {
  const f = frame(sh('echo x'));
  valid(await runFrame({ payload: f.subarray(0, f.length - 5) }), { kind: 'host-error', ran: false });
});
t('empty stdin', async () => {
  valid(await runFrame({ payload: Buffer.alloc(0) }), { kind: 'host-error', ran: false });
});
t('a host that keeps stdin open after its frame still gets the result', async () => {
  const r = await Promise.race([runFrame({ req: sh('echo open'), keepOpen: true }), sleep(8000).then(() => null)]);
  expect(r, 'no result within 8 s while stdin stayed open');
  eq(valid(r, { kind: 'none' }).output, 'open\n', 'output');
});
// grantrun frame reads one frame and does not wait for EOF (the test above):
// what follows it is never read as a second request; one result only.
t('bytes after the one frame are never a second request', async () => {
  const r = await runFrame({ payload: Buffer.concat([frame(sh('echo x')), frame(sh('echo second'))]) });
  eq(valid(r, { kind: 'none' }).output, 'x\n', 'the first request only');
});
t('payload not JSON', async () => {
  valid(await runFrame({ payload: frame(Buffer.from('not json')) }), { kind: 'host-error', ran: false });
});
t('payload not UTF-8', async () => {
  valid(await runFrame({ payload: frame(Buffer.from('{"type":"run-request","v":1,"x":"\xff"}', 'latin1')) }), { kind: 'host-error', ran: false });
});
t('payload a JSON array', async () => {
  valid(await runFrame({ payload: frame(Buffer.from('[1]')) }), { kind: 'host-error', ran: false });
});
t('a request of 64 MiB or more is refused before spawning', async () => {
  const req = request(['/bin/true'], { baseline: { root: '/work', files: [file('/big', 'x'.repeat(49 * MiB))] },
    execution: { fsQuotaBytes: 128 * MiB } });
  const body = Buffer.from(JSON.stringify(req));
  expect(body.length > MAX_FRAME, 'request is large');
  let spawned = false;
  const r = await runFrame({ payload: frame(body), onChild: () => { spawned = true; } });
  valid(r, { kind: 'host-error', ran: false });
  eq(spawned, false, 'no child spawned');
});

// ---- 3. schema ------------------------------------------------------------
t('v 2: nothing runs, message names both versions', async () => {
  const req = sh('echo ran'); req.v = 2;
  valid(await runFrame({ req }), { kind: 'host-error', ran: false, msg: ['1', '2'] });
});
t('v checked before any other field (v 2 with an unknown field)', async () => {
  const req = sh('echo ran'); req.v = 2; req.bogus = 1;
  const x = valid(await runFrame({ req }), { kind: 'host-error', ran: false, msg: ['2'] });
  expect(!x.errorMessage.includes('bogus'), `version first: ${x.errorMessage}`);
});
t('v as a string or missing', async () => {
  let req = sh('echo ran'); req.v = '1';
  valid(await runFrame({ req }), { kind: 'host-error', ran: false });
  req = sh('echo ran'); delete req.v;
  valid(await runFrame({ req }), { kind: 'host-error', ran: false });
});
t('wrong type', async () => {
  const req = sh('echo ran'); req.type = 'run-result';
  valid(await runFrame({ req }), { kind: 'host-error', ran: false });
});
for (const [where, set] of [
  ['top level', (r) => { r.extraField = 1; }],
  ['entry', (r) => { r.entry.extraField = 1; }],
  ['execution', (r) => { r.execution.extraField = 1; }],
  ['run', (r) => { r.run.extraField = 1; }],
  ['baseline', (r) => { r.baseline.extraField = 1; }],
  ['a baseline entry', (r) => { r.baseline.files = [{ ...dir('/d'), extraField: 1 }]; }],
  ['execution (a typo)', (r) => { r.execution.timeoutMS = 5; delete r.execution.timeoutMs; }],
]) {
  t(`unknown field in ${where} is named`, async () => {
    const req = sh('echo ran'); set(req);
    const x = valid(await runFrame({ req }), { kind: 'host-error', ran: false });
    expect(/extraField|timeoutMS/.test(x.errorMessage), `message names the field: ${x.errorMessage}`);
  });
}
for (const [what, set] of [
  ['argv empty', (r) => { r.entry.argv = []; }],
  ['argv not strings', (r) => { r.entry.argv = ['/bin/echo', 3]; }],
  ['argv missing', (r) => { delete r.entry.argv; }],
  ['env missing (required)', (r) => { delete r.entry.env; }],
  ['env value not a string', (r) => { r.entry.env = { A: 1 }; }],
  ['entry missing', (r) => { delete r.entry; }],
  ['policy missing', (r) => { delete r.policy; }],
  ['policy not an IR', (r) => { r.policy = { hello: 1 }; }],
  ['policy for target macos', (r) => { r.policy = POLICY_MAC; }],
  ['includeDiff with root null', (r) => { r.run.includeDiff = true; r.baseline = { root: null, files: [] }; }],
  ['diffFormat unknown', (r) => { r.run.diffFormat = 'patch'; }],
  ['captureEncoding unknown', (r) => { r.run.captureEncoding = 'latin1'; }],
  ['level unknown', (r) => { r.run.level = 'none'; }],
  ['timeoutMs negative', (r) => { r.execution.timeoutMs = -1; }],
  ['timeoutMs fractional', (r) => { r.execution.timeoutMs = 1.5; }],
  ['fsQuotaBytes a string', (r) => { r.execution.fsQuotaBytes = '16M'; }],
  ['includeDiff not boolean', (r) => { r.run.includeDiff = 1; }],
  ['baseline root relative', (r) => { r.baseline.root = 'work'; }],
  ['baseline path with ..', (r) => { r.baseline.files = [file('/../etc/x', 'x')]; }],
  ['baseline path relative', (r) => { r.baseline.files = [file('a.txt', 'x')]; }],
  ['baseline path not normalised', (r) => { r.baseline.files = [dir('/a'), file('/a//b', 'x')]; }],
  ['baseline path with NUL', (r) => { r.baseline.files = [file('/a\u0000b', 'x')]; }],
  ['baseline path the root itself', (r) => { r.baseline.files = [dir('/')]; }],
  ['baseline duplicate path', (r) => { r.baseline.files = [file('/a', 'x'), file('/a', 'y')]; }],
  ['baseline kind unknown', (r) => { r.baseline.files = [{ path: '/l', kind: 'symlink', mode: 0o777 }]; }],
  ['baseline base64 invalid', (r) => { r.baseline.files = [{ path: '/a', kind: 'file', base64: '***', mode: 420 }]; }],
  ['baseline base64 without padding', (r) => { r.baseline.files = [{ path: '/a', kind: 'file', base64: 'eA', mode: 420 }]; }],
  ['baseline bigger than fsQuotaBytes', (r) => { r.execution.fsQuotaBytes = 65536; r.baseline.files = [file('/a', 'x'.repeat(70000))]; }],
  ['baseline more entries than fsNodeLimit', (r) => { r.execution.fsNodeLimit = 3; r.baseline.files = [file('/a', ''), file('/b', ''), file('/c', ''), file('/d', '')]; }],
]) {
  t(`bad request: ${what}`, async () => {
    const req = sh('echo ran'); set(req);
    const x = valid(await runFrame({ req }), { kind: 'host-error', ran: false });
    expect(!/compiled for this host/.test(x.errorMessage) || what.includes('policy'), `refused for the policy, not the defect: ${x.errorMessage}`);
  });
}

t('control: the unmodified request runs', async () => {
  eq(valid(await runFrame({ req: sh('echo ran') }), { kind: 'none', exit: 0 }).output, 'ran\n', 'output');
});
// §3a says "for target linux"; a policy compiled with --target linux is
// frozen without looking at this host (no symlink resolved), so a run needs
// one compiled here (target host, which on Linux is linux): refused by name.
t('a policy compiled with --target linux is refused, saying why', async () => {
  valid(await runFrame({ req: { ...sh('echo ran'), policy: POLICY_LINUX } }),
    { kind: 'host-error', ran: false, msg: ['compiled for another machine', '--target'] });
});

// ---- 3a/3b. baseline, results, capture --------------------------------------
t('baseline materialised with modes; root writable though the policy grants nothing there', async () => {
  const req = sh('stat -c "%n %a %F" /work/main.c /work/data /work/x.sh; cat /work/main.c; echo new > /work/new.txt && echo wrote', {
    baseline: { root: '/work', files: [file('/main.c', 'int main;\n'), dir('/data', 0o750), file('/x.sh', '#!/bin/sh\n', 0o755)] } });
  const x = valid(await runFrame({ req }), { kind: 'none' });
  eq(x.output, '/work/main.c 644 regular file\n/work/data 750 directory\n/work/x.sh 755 regular file\nint main;\nwrote\n', 'output');
});
t('a policy deny inside baseline.root still applies', async () => {
  const req = sh('cat /work/secret 2>/dev/null || echo denied; cat /work/other', { baseline: { root: '/work', files: [file('/secret', 'KEY\n'), file('/other', 'o\n')] } });
  eq(valid(await runFrame({ req }), { kind: 'none' }).output, 'denied\no\n', 'output');
});
t('a policy readonly inside baseline.root still applies', async () => {
  const req = sh('(echo no >> /work/ro) 2>/dev/null || echo readonly; cat /work/ro', { baseline: { root: '/work', files: [file('/ro', 'keep\n')] } });
  eq(valid(await runFrame({ req }), { kind: 'none' }).output, 'readonly\nkeep\n', 'output');
});
t('exit status: script-error with the status', async () => {
  valid(await runFrame({ req: sh('exit 3') }), { kind: 'script-error', exit: 3 });
});
t('killed by a signal: 128+N, script-error', async () => {
  valid(await runFrame({ req: sh('kill -9 $$') }), { kind: 'script-error', exit: 137 });
  valid(await runFrame({ req: sh('kill -SEGV $$') }), { kind: 'script-error', exit: 139 });
});
t('exec refused by the gate: 126', async () => {
  valid(await runFrame({ req: request(['/usr/bin/false']) }), { kind: 'script-error', exit: 126 });
});
t('exec not admitted and absent: 126; admitted and absent: 127', async () => {
  valid(await runFrame({ req: request(['/opt/nothing-here']) }), { kind: 'script-error', exit: 126 });
  valid(await runFrame({ req: request(['/usr/bin/no-such-program-here']) }), { kind: 'script-error', exit: 127 });
});
t('utf8 capture: invalid bytes become U+FFFD; stderr captured', async () => {
  const x = valid(await runFrame({ req: sh("printf 'a\\377b\\303'; printf 'e\\n' >&2") }), { kind: 'none' });
  eq(x.output, 'a\ufffdb\ufffd', 'output');
  eq(x.errorOutput, 'e\n', 'errorOutput');
});
t('base64 capture: raw bytes', async () => {
  const x = valid(await runFrame({ req: sh("printf 'a\\377\\000b'; printf '\\001' >&2", { run: { captureEncoding: 'base64' } }) }), { kind: 'none' });
  eq(x.encoding, 'base64', 'echo');
  eq([x.output, x.errorOutput], [Buffer.from('a\xff\x00b', 'latin1').toString('base64'), 'AQ=='], 'captures');
});
t('stats and enforcement are reported', async () => {
  const x = valid(await runFrame({ req: sh('sleep 0.2') }), { kind: 'none' });
  expect(x.stats.wallMs >= 150 && x.stats.wallMs < 5000, `wallMs ${x.stats.wallMs}`);
  expect(x.stats.maxRssBytes > 0, 'maxRssBytes');
  eq(x.enforcement, { level: 'namespaces', unenforced: [] }, 'enforcement');
});
t('level landlock: runs with the denies held and says so; a scratch tree it cannot bound is refused closed', async () => {
  let x = valid(await runFrame({ req: sh('cat /etc/shadow 2>/dev/null || echo denied', { run: { level: 'landlock' }, baseline: { root: null, files: [] } }) }),
    { kind: 'none' });
  eq([x.output, x.enforcement.level], ['denied\n', 'landlock'], 'output and level');
  x = valid(await runFrame({ req: sh('echo ran', { run: { level: 'landlock' } }) }), { kind: 'host-error', ran: false, msg: ['16777216'] });
});

// ---- 3c. limits ------------------------------------------------------------
function checkCut(x, field, total, expected, limit) {
  const s = x[field], n = x[`${field}TruncatedBytes`];
  const marker = `\n[truncated: ${n} bytes omitted]\n`;
  expect(n > 0, `${field}TruncatedBytes ${n}`);
  expect(s.endsWith(marker), `${field} ends with the marker (${JSON.stringify(s.slice(-60))})`);
  const kept = s.slice(0, s.length - marker.length);
  eq(Buffer.byteLength(kept) + n, total, `${field}: kept raw bytes + N = all bytes`);
  expect(expected.startsWith(kept), `${field} kept a prefix of what was written`);
  expect(!kept.includes('\ufffd'), `${field} cut at a code-point boundary`);
  expect(jlen(s) <= limit && jlen(s) > limit - 64, `${field} escaped length ${jlen(s)} near limit ${limit}`);
}
t('stdout flood: cut at 16 MiB escaped, marker, count', async () => {
  const total = 24 * MiB, unit = 'ab"\\€😀\n';   // quotes and backslashes double when escaped
  const x = valid(await runFrame({ req: sh(`yes 'ab"\\€😀' | head -c ${total}`) }), { kind: 'none' });
  const expected = unit.repeat(Math.ceil(total / Buffer.byteLength(unit)));
  checkCut(x, 'output', total, expected, LIMITS.output);
  eq(x.truncated, false, 'cutting is not the overflow fallback');
}, { slow: true });
t('stderr flood of 1 GiB: errorOutput cut at 8 MiB, memory bounded', async () => {
  const total = 1024 * MiB;
  let peakAll = 0;
  const r = await runFrame({ req: sh(`yes 0123456789abcdef 2>/dev/null | head -c ${total} >&2`, { execution: { timeoutMs: 120000 } }) });
  const x = valid(r, { kind: 'none' });
  checkCut(x, 'errorOutput', total, '0123456789abcdef\n'.repeat(Math.ceil(9 * MiB / 17)), LIMITS.errorOutput);
  peakAll = Math.max(r.peak, r.childPeak);
  expect(r.childPeak > 0, 'saw the child');
  expect(peakAll < 128 * MiB, `RSS: parent ${r.peak}, child ${r.childPeak}`);
  console.log(`# 1 GiB stderr flood: parent peak RSS ${r.peak} bytes, child ${r.childPeak} bytes, ${r.ms} ms`);
}, { slow: true });
t('base64 capture cut at a 3-byte boundary, no marker', async () => {
  const total = 20 * MiB;
  const x = valid(await runFrame({ req: sh(`head -c ${total} /dev/zero`, { run: { captureEncoding: 'base64' } }) }), { kind: 'none' });
  const raw = Buffer.from(x.output, 'base64');
  eq(raw.length % 3, 0, 'cut at 3 bytes');
  eq(raw.length + x.outputTruncatedBytes, total, 'kept + N');
  expect(x.output.length <= LIMITS.output && x.output.length > LIMITS.output - 8, `length ${x.output.length}`);
  expect(raw.every((b) => b === 0), 'content');
}, { slow: true });
t('a marker the command printed itself is not a cut', async () => {
  const x = valid(await runFrame({ req: sh("printf '\\n[truncated: 5 bytes omitted]\\n'") }), { kind: 'none' });
  eq(x.outputTruncatedBytes, 0, 'count');
});

// ---- diffs -----------------------------------------------------------------
const DIFF_BASE = { root: '/work', files: [file('/keep', 'same\n'), file('/mod', 'a\nb\nc\nd\ne\nf\ng\nh\n'), file('/gone', 'bye\n'),
  dir('/d2f'), file('/f2d', 'x'), dir('/deldir'), file('/deldir/in', 'in\n'), file('/bin', '\x00\x01')] };
const DIFF_SCRIPT = 'cd /work && printf "a\\nb\\nc\\nD\\ne\\nf\\ng\\nh\\n" > mod && rm gone && rmdir d2f && printf z > d2f && ' +
  'rm f2d && mkdir f2d && rm -r deldir && mkdir newdir && printf "n\\n" > newdir/new && printf "\\000\\002" > bin && chmod 600 keep';
t('json diff: kinds, byte counts, order, root never listed', async () => {
  const x = valid(await runFrame({ req: sh(DIFF_SCRIPT, { run: { includeDiff: true }, baseline: DIFF_BASE }) }), { kind: 'none' });
  eq(x.diffRequested, true, 'diffRequested');
  const d = JSON.parse(x.diff);
  eq(Object.keys(d), ['changes'], 'document keys');
  eq(d.changes, [
    { kind: 'modify', path: '/bin', oldBytes: 2, newBytes: 2 },
    { kind: 'replace', path: '/d2f', oldBytes: 0, newBytes: 1 },
    { kind: 'replace', path: '/f2d', oldBytes: 1, newBytes: 0 },
    { kind: 'modify', path: '/mod', oldBytes: 16, newBytes: 16 },
    { kind: 'mkdir', path: '/newdir', oldBytes: 0, newBytes: 0 },
    { kind: 'create', path: '/newdir/new', oldBytes: 0, newBytes: 2 },
    { kind: 'delete', path: '/deldir', oldBytes: 0, newBytes: 0 },
    { kind: 'delete', path: '/deldir/in', oldBytes: 3, newBytes: 0 },
    { kind: 'delete', path: '/gone', oldBytes: 4, newBytes: 0 },
  ].map((c) => ({ ...c })), 'changes');
});
t('json diff with diffMetadata lists mode changes', async () => {
  const x = valid(await runFrame({ req: sh('chmod 600 /work/keep', { run: { includeDiff: true, diffMetadata: true }, baseline: DIFF_BASE }) }), { kind: 'none' });
  const d = JSON.parse(x.diff);
  eq(d.changes, [], 'content unchanged');
  expect(Array.isArray(d.metadataChanges) && d.metadataChanges.some((m) => m.path === '/keep' && JSON.stringify(m).includes('mode')),
    `metadataChanges ${JSON.stringify(d.metadataChanges)}`);
});
t('unified diff: hunks with 3 lines of context, binary, creation and deletion against empty', async () => {
  const x = valid(await runFrame({ req: sh(DIFF_SCRIPT, { run: { includeDiff: true, diffFormat: 'unified' }, baseline: DIFF_BASE }) }), { kind: 'none' });
  const u = x.diff;
  expect(/^--- .*mod.*\n\+\+\+ .*mod.*\n@@ -1,7 \+1,7 @@\n a\n b\n c\n-d\n\+D\n e\n f\n g\n/m.test(u), `modify hunk:\n${u}`);
  expect(/Binary files .*bin.* differ/.test(u), 'binary entry');
  expect(/^--- .*\n\+\+\+ .*newdir\/new.*\n@@ -0,0 \+1(,1)? @@\n\+n\n/m.test(u), 'creation against empty');
  expect(/^--- .*gone.*\n\+\+\+ .*\n@@ -1(,1)? \+0,0 @@\n-bye\n/m.test(u), 'deletion against empty');
});
t('unified diff cut at a line boundary with the marker', async () => {
  const lines = 2 * MiB;   // 26 MiB created as text
  const x = valid(await runFrame({ req: sh(`yes abcdefghijkl | head -n ${lines} > /work/big`,
    { run: { includeDiff: true, diffFormat: 'unified' }, execution: { fsQuotaBytes: 64 * MiB } }) }), { kind: 'none' });
  expect(jlen(x.diff) <= LIMITS.diff && jlen(x.diff) > LIMITS.diff - 200, `diff length ${jlen(x.diff)}`);
  const m = x.diff.match(/\n\[truncated: (\d+) bytes omitted\]\n$/);
  expect(m, `marker at the end: ${JSON.stringify(x.diff.slice(-80))}`);
  const body = x.diff.slice(0, m.index + 1);
  expect(body.endsWith('+abcdefghijkl\n'), 'cut at a line boundary');
}, { slow: true });
t('json diff cut by whole entries with omitted', async () => {
  // long names so a few thousand entries pass 24 MiB
  const seg = 'd'.repeat(250), deep = Array(14).fill(seg).join('/');
  const n = 9000;
  const x = valid(await runFrame({ req: sh(`cd /work && mkdir -p ${deep} && cd ${deep} && seq -f 'f%05g' ${n} | xargs touch`,
    { run: { includeDiff: true }, execution: { fsNodeLimit: 20000, timeoutMs: 60000 } }) }), { kind: 'none' });
  expect(jlen(x.diff) <= LIMITS.diff, `diff length ${jlen(x.diff)}`);
  const d = JSON.parse(x.diff);
  expect(Number.isInteger(d.omitted) && d.omitted > 0, `omitted ${d.omitted} (diff ${jlen(x.diff)} bytes, ${d.changes.length} entries)`);
  eq(d.changes.length + d.omitted, n + 14, 'kept + omitted = all changes');
  eq(x.truncated, false, 'not the fallback');
}, { slow: true });

// ---- 4. failures -------------------------------------------------------------
t('timeout: SIGTERM to the namespace, reported by the child', async () => {
  // 1000 ms: the child's set-up is spent from timeoutMs, and the command
  // must have started, also on a loaded host
  const r = await runFrame({ req: sh('sleep 30', { execution: { timeoutMs: 1000 } }) });
  const x = valid(r, { kind: 'timeout' });
  // §3b: 128+N for a command killed by signal N, after a timeout too.
  expect(x.exitCode === 143 || x.exitCode === 137, `exitCode ${x.exitCode}`);
  expect(x.enforcement !== null, 'the command ran: enforcement record');
  expect(r.ms < 3000, `took ${r.ms} ms (not the command's 30 s)`);
});
t('timeout: SIGKILL 200 ms after an ignored SIGTERM', async () => {
  // 1000 ms: the trap must be set before the deadline, also on a loaded host
  const r = await runFrame({ req: sh("trap '' TERM; while :; do sleep 0.05; done", { execution: { timeoutMs: 1000 } }) });
  const x = valid(r, { kind: 'timeout' });
  eq(x.exitCode, 137, 'exitCode: the SIGKILL ended it');
  expect(r.ms >= 1180 && r.ms < 3500, `took ${r.ms} ms (SIGKILL 200 ms after the SIGTERM at 1000 ms)`);
});
t('timeout kills the whole namespace (a background grandchild too)', async () => {
  const r = await runFrame({ req: sh(`(sleep 31.5${process.pid} &) ; sleep 30`, { execution: { timeoutMs: 300 } }) });
  valid(r, { kind: 'timeout' });
  await sleep(300);
  const left = spawnSync('pgrep', ['-f', `sleep 31.5${process.pid}`], { encoding: 'utf8' }).stdout.trim();
  eq(left, '', 'no process left');
});
t('a command that leaves a background process still ends', async () => {
  const r = await runFrame({ req: sh(`sleep 32.5${process.pid} & echo done`) });
  valid(r, { kind: 'none' });
  expect(r.ms < 5000, `took ${r.ms}`);
  await sleep(200);
  eq(spawnSync('pgrep', ['-f', `sleep 32.5${process.pid}`], { encoding: 'utf8' }).stdout.trim(), '', 'no process left');
});
t('cpuSeconds: resource-limit', async () => {
  const r = await runFrame({ req: sh('while :; do :; done', { execution: { cpuSeconds: 1, timeoutMs: 10000 } }) });
  valid(r, { kind: 'resource-limit' });
});
t('fsQuotaBytes exhausted: resource-limit', async () => {
  valid(await runFrame({ req: sh('head -c 3000000 /dev/zero > /work/big', { execution: { fsQuotaBytes: 1 * MiB } }) }), { kind: 'resource-limit' });
});
t('fsNodeLimit exhausted: resource-limit', async () => {
  valid(await runFrame({ req: sh('cd /work && seq 200 | xargs touch', { execution: { fsNodeLimit: 50 } }) }), { kind: 'resource-limit' });
});
t('maxMemoryBytes caps memory (control without it succeeds)', async () => {
  const hog = "perl -e '$x = \"x\" x 300000000; print length $x'";
  valid(await runFrame({ req: sh(hog) }), { kind: 'none' });
  const x = valid(await runFrame({ req: sh(hog, { execution: { maxMemoryBytes: 64 * MiB } }) }), {});
  expect(x.failureKind === 'resource-limit' || x.failureKind === 'script-error', `kind ${x.failureKind}`);
  expect(x.exitCode !== 0, 'the allocation failed');
});
t('maxProcesses caps processes, or as root is refused closed (control without it succeeds)', async () => {
  const probe = 'for i in $(seq 30); do sleep 2 & done 2>/dev/null; ps -e --no-headers | wc -l';
  const ctl = valid(await runFrame({ req: sh(probe) }), { kind: 'none' });
  expect(Number(ctl.output.trim()) > 30, `control ran ${ctl.output.trim()} processes`);
  const r = await runFrame({ req: sh(probe, { execution: { maxProcesses: 8 } }) });
  const x = valid(r, {});
  if ((AS_USER ? AS_USER.uid : process.geteuid()) === 0) {
    // RLIMIT_NPROC never binds uid 0 and no cgroup is delegated: fail closed
    valid(r, { kind: 'host-error', ran: false, msg: ['--processes 8', 'uid 0'] });
    return;
  }
  expect(x.failureKind === 'script-error' || x.failureKind === 'resource-limit', `kind ${x.failureKind} ${x.errorMessage}`);
  expect(x.exitCode !== 0 || Number(x.output.trim()) <= 10, `with maxProcesses 8 the command ran ${x.output.trim()} processes`);
});
t('the child is killed by a signal it did not request: child-process-crash naming it', async () => {
  const r = await runFrame({ req: sh('sleep 5'), onChild: (pid) => setTimeout(() => { try { process.kill(pid, 'SIGSEGV'); } catch {} }, 100) });
  // Under `make check-asan` the child is instrumented and its own SEGV
  // handler reports and exits 1: still a crash, named by ASan, not a signal.
  const asan = /libasan/.test(spawnSync('ldd', [GRANTRUN], { encoding: 'utf8' }).stdout || '');
  valid(r, { kind: 'child-process-crash', exit: null,
             msg: asan ? ['AddressSanitizer: SEGV'] : ['11', 'SIGSEGV'] });
});
t('parent hard-kills a stuck child at timeoutMs + grace', async () => {
  const r = await runFrame({ req: sh(`sleep 30.25${process.pid}`, { execution: { timeoutMs: 300 } }), args: ['--grace-ms', '500'],
    onChild: (pid) => { try { process.kill(pid, 'SIGSTOP'); } catch {} } });
  const x = valid(r, { kind: 'child-process-crash', msg: ['execution deadline exceeded; child hard-killed after'] });
  expect(/hard-killed after \d+ ms/.test(x.errorMessage), x.errorMessage);
  expect(r.ms >= 750 && r.ms < 3000, `took ${r.ms}`);
  await sleep(300);
  eq(spawnSync('pgrep', ['-f', `sleep 30.25${process.pid}`], { encoding: 'utf8' }).stdout.trim(), '', 'the envelope died with the child');
});
t('default grace is 1000 ms', async () => {
  const r = await runFrame({ req: sh('sleep 30.5', { execution: { timeoutMs: 200 } }),
    onChild: (pid) => { try { process.kill(pid, 'SIGSTOP'); } catch {} } });
  valid(r, { kind: 'child-process-crash', msg: ['hard-killed'] });
  expect(r.ms >= 1150 && r.ms < 3500, `took ${r.ms}`);
});
t('a result racing the deadline is timeout or a hard-kill, never anything else', async () => {
  for (let i = 0; i < 6; i++) {
    const x = valid(await runFrame({ req: sh('sleep 5', { execution: { timeoutMs: 100 + i } }), args: ['--grace-ms', '0'] }), {});
    expect(x.failureKind === 'timeout' || (x.failureKind === 'child-process-crash' && x.errorMessage.includes('deadline exceeded')),
      `race ${i}: ${x.failureKind} ${x.errorMessage}`);
  }
});
t('timeoutMs 0 arms no deadline', async () => {
  valid(await runFrame({ req: sh('sleep 1.2', { execution: { timeoutMs: 0 } }), args: ['--grace-ms', '0'] }), { kind: 'none' });
});
t('signals to the parent (EINTR storm) do not break the exchange', async () => {
  let storm;
  const r = await runFrame({ req: sh('sleep 1; echo through'), chunk: 64, chunkDelayMs: 1,
    onChild: (_pid, parent) => { storm = setInterval(() => { try { process.kill(parent, 'SIGWINCH'); process.kill(parent, 'SIGCHLD'); process.kill(parent, 'SIGURG'); } catch {} }, 1); } });
  clearInterval(storm);
  eq(valid(r, { kind: 'none' }).output, 'through\n', 'output');
});

// ---- 1. process model ------------------------------------------------------
t('the child gets argv --frame-child --bwrap ABS, no environment, fds 0-2 only', async () => {
  const marker = path.join(WORK, 'leak-marker');
  fs.writeFileSync(marker, 'x');
  const leak = fs.openSync(marker, 'r');
  const r = await runFrame({ req: sh('sleep 0.5'), extraFds: [leak],
    env: { PATH: '/usr/bin:/bin', GRANTKIT_HELPER: HELPER, SECRET_PARENT_VAR: 'leak' } });
  fs.closeSync(leak);
  valid(r, { kind: 'none' });
  const c = r.childInfo;
  expect(c, 'saw the child');
  // §1 fixes `--frame-child --bwrap ABS`; grantrun adds --helper (a build
  // tree's helper, since the child has no environment) and --scratch-dir (a
  // mountpoint the parent removes even when the child is killed).
  eq(c.argv.slice(1, 4), ['--frame-child', '--bwrap', '/usr/bin/bwrap'], 'child argv');
  const rest = c.argv.slice(4);
  expect(rest.length % 2 === 0 && rest.every((a, i) => i % 2 || a === '--helper' || a === '--scratch-dir'), `child argv ${c.argv}`);
  eq(c.environ, '', 'child environment empty');
  expect(c.fds && !c.fds.some(([, l]) => l === marker), `leaked descriptor: ${JSON.stringify(c.fds)}`);
});
t('the parent runs its pinned binary even after an on-disk swap', async () => {
  const copy = path.join(WORK, 'grantrun-copy');
  fs.copyFileSync(GRANTRUN, copy); fs.chmodSync(copy, 0o755);
  const evil = path.join(WORK, 'evil');
  fs.writeFileSync(evil, '#!/bin/sh\necho swapped >&2\nexit 99\n'); fs.chmodSync(evil, 0o755);
  let swapped = false;
  const p = runFrame({ bin: copy, req: sh('echo pinned'), delayMs: 300 });
  await sleep(150);
  fs.renameSync(evil, copy); swapped = true;
  const x = valid(await p, { kind: 'none' });
  eq([swapped, x.output], [true, 'pinned\n'], 'ran the pinned binary');
});
t('a net allowlist gives a network record', async () => {
  const x = valid(await runFrame({ req: { ...sh('echo net'), policy: POLICY_NET } }), {});
  eq(x.failureKind, 'none', `kind (${x.errorMessage})`);
  expect(x.network && Array.isArray(x.network.connections) && Number.isInteger(x.network.omitted), `network ${JSON.stringify(x.network)}`);
});

// ---- driver --------------------------------------------------------------
const USER_CASES = ['basic run', 'cwd defaults', 'stdin is /dev/null', 'only descriptors', '1 byte at a time',
  'zero-length', 'above 64 MiB', 'v 2:', 'unknown field in entry', 'baseline materialised', 'deny inside',
  'readonly inside', 'exit status', 'killed by a signal', 'exec refused', 'utf8 capture', 'stats and',
  'stdout flood', 'json diff:', 'unified diff:', 'timeout: SIG', 'cpuSeconds', 'fsQuotaBytes exhausted',
  'fsNodeLimit exhausted', 'maxProcesses', 'did not request', 'hard-kills', 'the child gets argv',
  'keeps stdin open', 'net allowlist'];
async function main() {
  if (!fs.existsSync(GRANTRUN)) { console.log(`SKIP: no ${GRANTRUN}`); process.exit(77); }
  const bw = spawnSync('bwrap', ['--unshare-user', '--ro-bind', '/', '/', 'true']);
  if (bw.status !== 0) { console.log('SKIP: bwrap cannot make a user namespace here'); process.exit(77); }
  POLICY = compile('host.grant', POLICY_TEXT);
  POLICY_LINUX = compile('linux.grant', POLICY_TEXT, ['--target', 'linux', '--home', '/home/u']);
  POLICY_MAC = compile('mac.grant', 'grant m { fs { read /usr; } }\n', ['--target', 'macos', '--home', '/Users/u']);
  POLICY_NET = compile('net.grant', POLICY_TEXT.replace('net deny;', 'net { allow example.com:443; }'));
  const only = process.argv.slice(2);
  const quick = process.env.GK_FRAME_HOST_QUICK === '1';
  const user = process.geteuid() === 0 ? testUser() : null;
  if (process.geteuid() === 0 && !user) console.log(`# SKIP the unprivileged half: no user ${TEST_USER} could be made`);
  fs.chmodSync(WORK, 0o755);
  for (const pass of user ? [null, user] : [null]) {
    AS_USER = pass;
    const who = pass ? ` [as ${TEST_USER}]` : '';
    for (const c of cases) {
      if (pass && !USER_CASES.some((s) => c.name.includes(s))) continue;
      if (only.length && !only.some((s) => c.name.includes(s))) continue;
      if (quick && c.slow) { skips++; console.log(`skip - ${c.name}${who} (GK_FRAME_HOST_QUICK)`); continue; }
      const t0 = Date.now();
      try {
        await c.fn();
        passes++;
        console.log(`ok - ${c.name}${who} (${Date.now() - t0} ms)`);
      } catch (e) {
        failures++;
        console.log(`FAIL - ${c.name}${who}: ${e instanceof Fail ? e.message : e.stack}`);
      }
    }
  }
  console.log(`${passes} passed, ${failures} failed, ${skips} skipped`);
  fs.rmSync(WORK, { recursive: true, force: true });
  process.exit(failures ? 1 : 0);
}
main();
