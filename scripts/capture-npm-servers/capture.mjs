#!/usr/bin/env node
// capture.mjs — capture the tools/list of published MCP servers from npm
// (and of Go MCP servers from the Go module proxy).
//
// For each (package, version, args, env) in servers.json it installs that
// exact version into a fresh temporary directory (never into the repository),
// or, for an entry with "go": {"module", "package"}, downloads that module
// version with `go mod download` and builds the package with `go build` in a
// fresh temporary module, starts the server over stdio, speaks
// newline-delimited JSON-RPC
// (initialize, notifications/initialized, tools/list following nextCursor
// until there is none) and writes
//
//   <out>/<short>/<version>.tools-list.json   a JSON array transcript
//       [request, response, request, response, ...] of the tools/list
//       exchange; every response is the exact line the server printed,
//       byte for byte (only the newline that ended it is dropped);
//   <out>/<short>/<version>.server-info.json  serverInfo, protocolVersion and
//       capabilities from initialize, and where the package came from.
//
// No dependencies: Node 18+ and npm (and Go for "go" entries). Every child is
// bounded: npm install and go build by --install-timeout (default 300 s), the
// server by --timeout (default 60 s),
// after which its whole process group is killed; it is killed at the end in
// any case.
//
// Usage (from the repository root):
//   node scripts/capture-npm-servers/capture.mjs [--config FILE] [--out DIR]
//        [--only SHORT[,SHORT...]] [--timeout SECONDS] [--install-timeout SECONDS]
//        [--keep-tmp]

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');

const PROTOCOL_VERSION = '2025-06-18';
const CLIENT_INFO = { name: 'mcpdrift-capture', version: '1' };
const MAX_PAGES = 1000;

function parseArgs(argv) {
  const o = {
    config: path.join(here, 'servers.json'),
    out: path.join(repoRoot, 'testdata', 'realworld'),
    only: null,
    timeout: 60,
    installTimeout: 300,
    keepTmp: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) die(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--config': o.config = path.resolve(val()); break;
      case '--out': o.out = path.resolve(val()); break;
      case '--only': o.only = new Set(val().split(',').filter(Boolean)); break;
      case '--timeout': o.timeout = Number(val()); break;
      case '--install-timeout': o.installTimeout = Number(val()); break;
      case '--keep-tmp': o.keepTmp = true; break;
      case '-h': case '--help':
        {
          // The header comment, up to the first line that is not a comment.
          const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1);
          const end = lines.findIndex((l) => !l.startsWith('//'));
          process.stdout.write(lines.slice(0, end).map((l) => l.slice(3)).join('\n') + '\n');
        }
        process.exit(0);
      default: die(`unknown argument ${a}`);
    }
  }
  if (!(o.timeout > 0) || !(o.installTimeout > 0)) die('timeouts must be positive numbers of seconds');
  return o;
}

function die(msg) {
  process.stderr.write(`capture: ${msg}\n`);
  process.exit(2);
}

function log(msg) {
  process.stderr.write(`capture: ${msg}\n`);
}

// A fixed, freshly emptied directory, so that a path a server may echo into
// its tool descriptions is the same at every capture and every version.
const EMPTY_DIR = path.join(os.tmpdir(), 'mcpdrift-capture-empty');

function subst(s) {
  return s.split('{{EMPTY_DIR}}').join(EMPTY_DIR);
}

function npm(args, opts) {
  const r = spawnSync('npm', args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) throw new Error(`npm ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} exited ${r.status}: ${(r.stderr || '').trim().slice(-2000)}`);
  return r.stdout;
}

function registryMeta(pkg, version, installTimeout) {
  const out = npm(['view', `${pkg}@${version}`, 'dist.integrity', 'dist.tarball', 'license', 'version', '--json'],
    { timeout: installTimeout * 1000 });
  const m = JSON.parse(out);
  if (m.version !== version) throw new Error(`npm view ${pkg}@${version} answered version ${m.version}`);
  // Only the tarball's file name is kept: it follows from the package and
  // version, and the integrity is what identifies it.
  const tarball = typeof m['dist.tarball'] === 'string' ? m['dist.tarball'].split('/').pop() : null;
  return { integrity: m['dist.integrity'], tarball, license: m.license ?? null };
}

function install(pkg, version, tmp, installTimeout, overrides) {
  // The temporary project: npm overrides (if the config gives any for this
  // version) pin transitive dependencies a release resolved when it was
  // published; see servers.json.
  const project = { name: 'mcpdrift-capture', version: '0.0.0', private: true };
  if (overrides && Object.keys(overrides).length) project.overrides = overrides;
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify(project, null, 2) + '\n');
  // --ignore-scripts: nothing of the package runs at install time (no browser
  // download, no build step); the server runs only when started below.
  npm(['install', '--prefix', tmp, `${pkg}@${version}`, '--no-audit', '--no-fund', '--ignore-scripts',
    '--no-package-lock', '--loglevel=error'], { timeout: installTimeout * 1000, cwd: tmp });
  const pj = JSON.parse(fs.readFileSync(path.join(tmp, 'node_modules', ...pkg.split('/'), 'package.json'), 'utf8'));
  if (pj.version !== version) throw new Error(`installed ${pkg} is version ${pj.version}, not ${version}`);
  return pj;
}

function run(cmd, args, opts) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${(r.stderr || '').trim().slice(-2000)}`);
  return r.stdout;
}

// The environment of the go command: the user's module and build caches
// and proxy settings, no workspace, no vendoring, this toolchain only.
function goEnv() {
  return { ...process.env, GOWORK: 'off', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
}

// A Go server: `go mod download -json module@version` (the module's hashes
// as the checksum database knows them), then a temporary module that
// requires exactly that version and builds the package with -trimpath, so
// that no path of this machine reaches the binary.
function buildGo(srv, version, tmp, installTimeout) {
  const { module: mod, package: pkg } = srv.go;
  const timeout = installTimeout * 1000;
  const dl = JSON.parse(run('go', ['mod', 'download', '-json', `${mod}@${version}`], { timeout, cwd: tmp, env: goEnv() }));
  if (dl.Error) throw new Error(`go mod download ${mod}@${version}: ${dl.Error}`);
  if (dl.Version !== version) throw new Error(`go mod download ${mod}@${version} answered version ${dl.Version}`);
  const work = path.join(tmp, 'build');
  fs.mkdirSync(work);
  fs.writeFileSync(path.join(work, 'go.mod'), 'module mcpdrift-capture\n');
  run('go', ['get', `${mod}@${version}`], { timeout, cwd: work, env: goEnv() });
  const bin = path.join(tmp, 'server');
  run('go', ['build', '-trimpath', '-o', bin, pkg], { timeout, cwd: work, env: goEnv() });
  // The modules linked into the binary, as its build information says.
  const bi = run('go', ['version', '-m', bin], { timeout, cwd: work, env: goEnv() });
  const deps = {};
  for (const line of bi.split('\n')) {
    const f = line.trim().split('\t');
    if ((f[0] === 'dep' || f[0] === '=>') && f[1] && f[2]) deps[f[1]] = f[2];
  }
  const goVersion = run('go', ['env', 'GOVERSION'], { timeout, cwd: work, env: goEnv() }).trim();
  return { dl, bin, deps, goVersion };
}

// The version of each direct dependency as Node would resolve it from the
// package, plus zod (which several servers import without declaring it).
function resolvedDeps(tmp, pkg, pj) {
  const pkgDir = path.join(tmp, 'node_modules', ...pkg.split('/'));
  const names = new Set([...Object.keys(pj.dependencies ?? {}), 'zod']);
  const out = {};
  for (const n of [...names].sort()) {
    for (const base of [path.join(pkgDir, 'node_modules'), path.join(tmp, 'node_modules')]) {
      const f = path.join(base, ...n.split('/'), 'package.json');
      if (fs.existsSync(f)) {
        out[n] = JSON.parse(fs.readFileSync(f, 'utf8')).version;
        break;
      }
    }
  }
  return out;
}

function binOf(pkg, pj, wanted) {
  let rel;
  if (typeof pj.bin === 'string') {
    rel = pj.bin;
  } else if (pj.bin && typeof pj.bin === 'object') {
    const names = Object.keys(pj.bin);
    const unscoped = pkg.split('/').pop();
    const name = wanted ?? (names.length === 1 ? names[0] : names.find((n) => n === unscoped));
    if (!name || !pj.bin[name]) throw new Error(`${pkg}: choose a bin among ${names.join(', ')} ("bin" in the config)`);
    rel = pj.bin[name];
  } else {
    throw new Error(`${pkg}: package.json has no bin`);
  }
  return rel;
}

// Where the package states its licence beyond package.json (which may only
// say "SEE LICENSE IN LICENSE"): the first non-blank line of a LICENSE file
// it ships, else the first non-blank line under a "License" heading of its
// README.
function licenseFile(pkgDir) {
  const names = fs.readdirSync(pkgDir);
  const firstLine = (text) => text.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
  const f = names.find((n) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(n));
  if (f) return { file: f, first_line: firstLine(fs.readFileSync(path.join(pkgDir, f), 'utf8')) };
  const readme = names.find((n) => /^readme(\.md)?$/i.test(n));
  if (!readme) return null;
  const text = fs.readFileSync(path.join(pkgDir, readme), 'utf8');
  const m = /^#+\s*licen[cs]e\s*$/im.exec(text);
  if (!m) return null;
  return { file: readme, first_line: firstLine(text.slice(m.index + m[0].length)).slice(0, 200) };
}

// Talks newline-delimited JSON-RPC to a child over stdio.
class StdioPeer {
  constructor(child, label) {
    this.child = child;
    this.label = label;
    this.buf = Buffer.alloc(0);
    this.pending = new Map(); // id -> {resolve, reject}
    this.noise = [];
    this.closed = null;
    child.stdout.on('data', (chunk) => this.onData(chunk));
    child.on('exit', (code, signal) => {
      this.closed = `exited (code ${code}, signal ${signal})`;
      for (const { reject } of this.pending.values()) reject(new Error(`${label}: server ${this.closed} before answering`));
      this.pending.clear();
    });
    child.stdin.on('error', () => {}); // EPIPE after the child died: reported by 'exit'
  }

  onData(chunk) {
    this.buf = Buffer.concat([this.buf, chunk]);
    for (;;) {
      const nl = this.buf.indexOf(0x0a);
      if (nl < 0) break;
      const line = this.buf.subarray(0, nl);
      this.buf = this.buf.subarray(nl + 1);
      this.onLine(Buffer.from(line));
    }
  }

  onLine(raw) {
    let msg;
    try {
      msg = JSON.parse(raw.toString('utf8'));
    } catch {
      if (raw.toString('utf8').trim() !== '') this.noise.push(raw.toString('utf8').slice(0, 200));
      return;
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
      this.noise.push(raw.toString('utf8').slice(0, 200));
      return;
    }
    const isResponse = 'id' in msg && !('method' in msg) && ('result' in msg || 'error' in msg);
    if (isResponse) {
      const p = this.pending.get(msg.id);
      if (p) {
        this.pending.delete(msg.id);
        p.resolve({ raw, msg });
      } else {
        this.noise.push(`unexpected response id ${JSON.stringify(msg.id)}`);
      }
      return;
    }
    if ('method' in msg && 'id' in msg) {
      // A request from the server (roots/list, sampling, ping...): this
      // client offers no capabilities; answer ping, refuse the rest.
      const reply = msg.method === 'ping'
        ? { jsonrpc: '2.0', id: msg.id, result: {} }
        : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } };
      this.send(reply);
      return;
    }
    // A notification (logging, list_changed...): not part of the capture.
  }

  send(obj) {
    const bytes = Buffer.from(JSON.stringify(obj) + '\n', 'utf8');
    this.child.stdin.write(bytes);
    return bytes.subarray(0, bytes.length - 1);
  }

  request(id, method, params) {
    if (this.closed) return Promise.reject(new Error(`${this.label}: server ${this.closed}`));
    const req = { jsonrpc: '2.0', id, method };
    if (params !== undefined) req.params = params;
    const p = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    const bytes = this.send(req);
    return p.then((r) => ({ ...r, reqBytes: bytes }));
  }
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    try { child.kill(signal); } catch { /* gone */ }
  }
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) {
    killGroup(child, 'SIGKILL'); // grandchildren, if any
    return;
  }
  try { child.stdin.end(); } catch { /* ignore */ }
  killGroup(child, 'SIGTERM');
  const exited = await Promise.race([
    new Promise((r) => child.once('exit', () => r(true))),
    new Promise((r) => setTimeout(() => r(false), 3000)),
  ]);
  killGroup(child, 'SIGKILL');
  if (!exited) await new Promise((r) => child.once('exit', r));
}

async function captureOne(srv, version, opt) {
  const label = `${labelOf(srv)}@${version}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpdrift-capture-'));
  try {
    // source: where the server came from, for the server-info file;
    // command, argv: what starts it.
    let source, command, argv;
    if (srv.go) {
      log(`${label}: go mod download and go build in ${tmp}`);
      const g = buildGo(srv, version, tmp, opt.installTimeout);
      command = g.bin;
      argv = [];
      source = {
        go_module: srv.go.module,
        go_package: srv.go.package,
        version,
        integrity: g.dl.Sum,
        go_mod_integrity: g.dl.GoModSum,
        license: null,
        license_file: licenseFile(g.dl.Dir),
        bin: `go build -trimpath ${srv.go.package}`,
        args: srv.args ?? [],
        env: srv.env ?? {},
        resolved_dependencies: g.deps,
        captured_at: null,
        go: g.goVersion,
      };
    } else {
      log(`${label}: registry metadata`);
      const meta = registryMeta(srv.package, version, opt.installTimeout);
      log(`${label}: npm install into ${tmp}`);
      const overrides = srv.overrides?.[version];
      const pj = install(srv.package, version, tmp, opt.installTimeout, overrides);
      const pkgDir = path.join(tmp, 'node_modules', ...srv.package.split('/'));
      const bin = path.join(pkgDir, binOf(srv.package, pj, srv.bin));
      command = process.execPath;
      argv = [bin];
      source = {
        package: srv.package,
        version,
        integrity: meta.integrity,
        tarball: meta.tarball,
        license: meta.license,
        license_file: licenseFile(pkgDir),
        bin: path.relative(pkgDir, bin),
        args: srv.args ?? [],
        env: srv.env ?? {},
        npm_overrides: overrides ?? null,
        resolved_dependencies: resolvedDeps(tmp, srv.package, pj),
        captured_at: null,
        node: process.version,
      };
    }

    fs.rmSync(EMPTY_DIR, { recursive: true, force: true });
    fs.mkdirSync(EMPTY_DIR, { recursive: true });
    const home = path.join(tmp, 'home');
    fs.mkdirSync(home);
    const args = (srv.args ?? []).map(subst);
    const extraEnv = Object.fromEntries(Object.entries(srv.env ?? {}).map(([k, v]) => [k, subst(v)]));
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      TMPDIR: tmp,
      NO_COLOR: '1',
      ...extraEnv,
    };
    const shown = srv.go ? ['<built binary>'] : ['node', path.relative(tmp, argv[0])];
    log(`${label}: start ${[...shown, ...args].join(' ')}`);
    const child = spawn(command, [...argv, ...args], {
      cwd: home,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // own process group: killed as a whole
    });
    let stderr = '';
    child.stderr.on('data', (c) => { if (stderr.length < 20000) stderr += c.toString('utf8'); });
    const peer = new StdioPeer(child, label);

    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => {
        killGroup(child, 'SIGKILL');
        reject(new Error(`${label}: no complete answer within ${opt.timeout} s; killed`));
      }, opt.timeout * 1000);
    });
    const session = (async () => {
      const init = await peer.request(1, 'initialize', {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: CLIENT_INFO,
      });
      if (init.msg.error) throw new Error(`${label}: initialize failed: ${JSON.stringify(init.msg.error)}`);
      peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const parts = [];
      let cursor;
      let id = 2;
      for (let page = 0; ; page++) {
        if (page >= MAX_PAGES) throw new Error(`${label}: more than ${MAX_PAGES} pages`);
        const r = await peer.request(id++, 'tools/list', cursor === undefined ? {} : { cursor });
        parts.push(r.reqBytes, r.raw);
        if (r.msg.error) throw new Error(`${label}: tools/list failed: ${JSON.stringify(r.msg.error)}`);
        const nc = r.msg.result?.nextCursor;
        if (nc === undefined || nc === null) break;
        cursor = nc;
      }
      return { init: init.msg.result, parts, noise: peer.noise.length };
    })();
    let result;
    try {
      result = await Promise.race([session, deadline]);
    } catch (err) {
      if (stderr.trim()) err.message += `\n--- server stderr ---\n${stderr.trim().slice(-3000)}`;
      throw err;
    } finally {
      clearTimeout(timer);
      await stop(child);
    }
    if (peer.noise.length) log(`${label}: ignored non-JSON-RPC stdout: ${JSON.stringify(peer.noise.slice(0, 5))}`);

    const outDir = path.join(opt.out, srv.short);
    fs.mkdirSync(outDir, { recursive: true });
    const chunks = [Buffer.from('[\n')];
    result.parts.forEach((b, i) => {
      chunks.push(b);
      chunks.push(Buffer.from(i + 1 < result.parts.length ? ',\n' : '\n'));
    });
    chunks.push(Buffer.from(']\n'));
    const tlPath = path.join(outDir, `${version}.tools-list.json`);
    fs.writeFileSync(tlPath, Buffer.concat(chunks));

    const info = {
      ...source,
      captured_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      client_protocol_version: PROTOCOL_VERSION,
      protocolVersion: result.init?.protocolVersion ?? null,
      serverInfo: result.init?.serverInfo ?? null,
      capabilities: result.init?.capabilities ?? null,
      tools_list_pages: result.parts.length / 2,
    };
    // Lines on stdout that are no JSON-RPC message, up to the last
    // tools/list answer: a server that prints debug output on its protocol
    // channel (only the count: their text may hold addresses).
    if (result.noise) info.non_jsonrpc_stdout_lines = result.noise;
    fs.writeFileSync(path.join(outDir, `${version}.server-info.json`), JSON.stringify(info, null, 2) + '\n');
    const n = JSON.parse(fs.readFileSync(tlPath, 'utf8')).filter((m) => m.result).reduce((a, m) => a + (m.result.tools?.length ?? 0), 0);
    log(`${label}: ${n} tools in ${result.parts.length / 2} page(s) -> ${path.relative(process.cwd(), tlPath)}`);
  } finally {
    if (opt.keepTmp) log(`${label}: kept ${tmp}`);
    else removeTmp(tmp);
  }
}

// Removes a temporary directory. A server may still be writing into its
// HOME through a process that left its process group (an update check,
// say): retried, and a directory that cannot be removed is reported, not
// fatal.
function removeTmp(tmp) {
  try {
    fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch (err) {
    log(`warning: could not remove ${tmp}: ${err.message}`);
  }
}

function labelOf(srv) {
  return srv.go ? srv.go.package : srv.package;
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const cfg = JSON.parse(fs.readFileSync(opt.config, 'utf8'));
  let failed = 0;
  for (const srv of cfg.servers) {
    if (opt.only && !opt.only.has(srv.short)) continue;
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(srv.short)) die(`bad short name ${JSON.stringify(srv.short)}`);
    for (const v of srv.versions) {
      if (!/^[0-9A-Za-z.+-]+$/.test(v)) die(`bad version ${JSON.stringify(v)}`);
      try {
        await captureOne(srv, v, opt);
      } catch (err) {
        failed++;
        log(`FAILED ${labelOf(srv)}@${v}: ${err.message}`);
      }
    }
  }
  fs.rmSync(EMPTY_DIR, { recursive: true, force: true });
  if (failed) {
    log(`${failed} capture(s) failed`);
    process.exit(1);
  }
}

main().catch((err) => die(err.stack || String(err)));
