/**
 * What a sandboxed command can reach besides files, attacked for real:
 *
 * - capabilities: run by root, bwrap used to leave the command every capability, and
 *   `umount -l /proc` then showed the host's processes (dsh's environment and memory among them)
 *   and `mount -o remount,rw /` undid read-only. Now no command may unmount, remount or see a
 *   host process, in any mode (as a non-root user this holds trivially);
 * - Unix sockets: a daemon listening on a path socket outside the workspace (made by the test
 *   outside /tmp, where every mode sees it) must be unreachable under read-only and
 *   workspace-write, reachable under danger-full-access (documented) unless the network is off,
 *   and through `allowSockets`; an abstract socket is reachable unless the network is off.
 */
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { codingTools } from '../../src/tools/coding-tools.js';
import { permissions } from '../../src/tools/permissions/plugin.js';
import { probeBubblewrap, capabilityArgs, ROOT_CAPS } from '../../src/tools/shell/bubblewrap.js';
import { hostSockets, parseProcNetUnix, socketsToMask } from '../../src/tools/shell/sockets.js';
import type { SandboxMode } from '../../src/tools/permissions/modes.js';
import { agentFor, call, outsideDir, tempDir, text } from './helpers.js';

const bwrap = await probeBubblewrap('bwrap');
const MODES: SandboxMode[] = ['read-only', 'workspace-write', 'danger-full-access'];

function listen(path: string, greeting: string): Promise<Server> {
  const server = createServer((c) => c.end(`${greeting}\n`));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve(server));
  });
}

/** A client script (outside /tmp, so every mode sees it) that reports, per address, what happened. */
function client(dir: string): string {
  const file = join(dir, 'client.cjs');
  writeFileSync(
    file,
    `const net = require('net');
for (const a of process.argv.slice(2)) {
  const addr = a.startsWith('@') ? '\\0' + a.slice(1) : a;
  net.connect(addr)
    .on('data', (d) => console.log('CONNECTED ' + a + ' ' + String(d).trim()))
    .on('error', (e) => console.log('REFUSED ' + a + ' ' + e.code));
}
`,
  );
  return file;
}

describe('/proc/net/unix', () => {
  it('lists path sockets and skips abstract and unbound ones', () => {
    const text = [
      'Num       RefCount Protocol Flags    Type St Inode Path',
      '0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/docker.sock',
      '0000000000000000: 00000003 00000000 00000000 0001 03 12346',
      '0000000000000000: 00000002 00000000 00010000 0001 01 12347 @/tmp/.X11-unix/X0',
      '0000000000000000: 00000002 00000000 00010000 0002 01 12348 /run/a dir/with space.sock',
    ].join('\n');
    expect(parseProcNetUnix(text)).toEqual(['/run/docker.sock', '/run/a dir/with space.sock']);
  });

  it('keeps the workspace’s and allowed sockets, masks the rest', () => {
    const all = ['/run/docker.sock', '/run/postgresql/.s.PGSQL.5432', '/ws/app.sock', '/wsx/b.sock', '/tmp/x.sock'];
    expect(socketsToMask(all, ['/ws', '/tmp'], ['/run/postgresql'])).toEqual(['/run/docker.sock', '/wsx/b.sock']);
  });

  it('finds a socket the test binds, outside every scanned directory', async () => {
    const path = join(outsideDir(), 'found.sock');
    const server = await listen(path, 'x');
    try {
      expect(hostSockets()).toContain(path);
    } finally {
      server.close();
    }
  });
});

describe('capabilities', () => {
  it('drops every capability, and as root keeps only file-ownership ones', () => {
    expect(capabilityArgs(1000)).toEqual(['--cap-drop', 'ALL']);
    const root = capabilityArgs(0);
    expect(root.slice(0, 2)).toEqual(['--cap-drop', 'ALL']);
    expect(root.filter((_a, i) => root[i - 1] === '--cap-add').sort()).toEqual([...ROOT_CAPS].sort());
    for (const c of [
      'CAP_SYS_ADMIN',
      'CAP_SYS_PTRACE',
      'CAP_DAC_READ_SEARCH',
      'CAP_MKNOD',
      'CAP_NET_RAW',
      'CAP_NET_ADMIN',
      'CAP_SYS_RAWIO',
      'CAP_SYS_MODULE',
    ])
      expect(root).not.toContain(c);
  });

  it.skipIf(!bwrap.ok)(
    'no mode lets a command unmount its /proc, remount / writable or see a host process',
    { timeout: 120_000 },
    async () => {
      const outside = outsideDir();
      const victim = join(outside, 'victim.txt');
      writeFileSync(victim, 'untouched\n');
      for (const mode of MODES) {
        const agent = agentFor(tempDir(), [codingTools(), permissions({ sandbox: mode, approval: 'never' })]);
        const out = text(
          await call(agent, 'bash', {
            command: [
              'echo "capeff: $(grep CapEff /proc/self/status)"',
              'umount -l /proc 2>/dev/null',
              `echo "pids: $(ls /proc | grep -c '^[0-9]')"`,
              `[ -e /proc/${process.pid}/environ ] && echo "sees dsh" || echo "no dsh"`,
              'umount -l / 2>/dev/null; mount -o remount,rw / 2>/dev/null',
              `[ ${mode === 'danger-full-access' ? '1' : '0'} = 1 ] || echo escaped > ${victim} 2>/dev/null`,
            ].join('\n'),
          }),
        );
        expect(out, `${mode}\n${out}`).toContain('no dsh');
        // Only the sandbox's own processes: bash, ls, grep and bwrap's init, never the host's hundreds.
        expect(Number(/pids: (\d+)/.exec(out)?.[1]), `${mode}\n${out}`).toBeLessThan(10);
        const capEff = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(out)?.[1] ?? 'ffffffffffffffff'}`);
        expect(capEff & (1n << 21n), `${mode}: CAP_SYS_ADMIN`).toBe(0n);
        await agent.dispose();
      }
      const { readFileSync } = await import('node:fs');
      expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
    },
  );
});

describe.skipIf(!bwrap.ok)('unix sockets', () => {
  // Reachable under danger-full-access and when allowed; an abstract socket only without --no-network.
  it('a daemon’s path socket is masked under read-only and workspace-write (and danger-full-access without a network)', {
    timeout: 180_000,
  }, async () => {
    const dir = outsideDir();
    const sock = join(dir, 'daemon.sock');
    const abstract = `@dsh-test-${randomBytes(6).toString('hex')}`;
    const servers = [await listen(sock, 'DAEMON'), await listen(`\0${abstract.slice(1)}`, 'ABSTRACT')];
    const script = client(dir);
    try {
      const run = async (mode: SandboxMode, extra: { network?: boolean; allowSockets?: string[] } = {}): Promise<string> => {
        const agent = agentFor(tempDir(), [codingTools(), permissions({ sandbox: mode, approval: 'never', ...extra })]);
        try {
          return text(await call(agent, 'bash', { command: `node ${script} ${sock} ${abstract}` }));
        } finally {
          await agent.dispose();
        }
      };
      for (const mode of ['read-only', 'workspace-write'] as const) {
        const out = await run(mode);
        expect(out, mode).toMatch(new RegExp(`REFUSED ${sock} E`));
        expect(out, mode).not.toContain('DAEMON');
        expect(out, mode).toContain(`CONNECTED ${abstract} ABSTRACT`);
        const allowed = await run(mode, { allowSockets: [dir] });
        expect(allowed, `${mode} with allowSockets`).toContain(`CONNECTED ${sock} DAEMON`);
        const offline = await run(mode, { network: false });
        expect(offline, `${mode} --no-network`).toMatch(new RegExp(`REFUSED ${abstract} E`));
        expect(offline, `${mode} --no-network`).not.toContain('ABSTRACT');
      }
      const full = await run('danger-full-access');
      expect(full).toContain(`CONNECTED ${sock} DAEMON`);
      const fullOffline = await run('danger-full-access', { network: false });
      expect(fullOffline).toMatch(new RegExp(`REFUSED ${abstract} E`));
      // With the network off, a daemon on a path socket (a proxy, Docker, an SSH control master)
      // must not reach other hosts for the command either, even under danger-full-access.
      expect(fullOffline).toMatch(new RegExp(`REFUSED ${sock} E`));
      expect(fullOffline).not.toContain('DAEMON');
      const fullOfflineAllowed = await run('danger-full-access', { network: false, allowSockets: [sock] });
      expect(fullOfflineAllowed).toContain(`CONNECTED ${sock} DAEMON`);
    } finally {
      for (const s of servers) s.close();
    }
  });
});
