/**
 * The check-then-open race, attacked for real: the agent's own sandboxed `bash`, started with
 * `run_in_background` under workspace-write, runs a flipper that keeps swapping workspace entries
 * for symbolic links to a directory outside, with `rename()` over a name and with
 * `renameat2(RENAME_EXCHANGE)` (a Python ctypes call: Node has no renameat2), while every file tool
 * is called at least 100 times. Not one byte from outside may come back, and nothing outside may
 * change or appear.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { codingTools } from '../../src/tools/coding-tools.js';
import { permissions } from '../../src/tools/permissions/plugin.js';
import { agentFor, call, outsideDir, tempDir, text } from './helpers.js';

const MARK = 'OUTSIDE-ONLY-BYTES';
const ROUNDS = 100;

/** Loops until its stop file appears; counts what it flipped. Runs inside the bash sandbox. */
const FLIPPER = String.raw`
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
ws, outside = sys.argv[1], sys.argv[2]
os.chdir(ws)
def exchange(a, b):
    if libc.renameat2(-100, a.encode(), -100, b.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), 'renameat2 ' + a + ' ' + b)
n = 0
print('flipping', flush=True)
while not os.path.exists('.stop'):
    exchange('d', 'dlink')            # a real directory <-> a link to a directory outside
    exchange('fa', 'fb')              # a regular file <-> a link to a file outside
    os.symlink(outside + '/secret.txt', 'sf.l')
    os.rename('sf.l', 'sf')           # a file replaced by a link to a file outside...
    with open('sf.f', 'w') as f:
        f.write('inside sf\n')
    os.rename('sf.f', 'sf')           # ...and back
    n += 1
print('flips', n, flush=True)
`;

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p, `${rel}${name}/`);
      else out[`${rel}${name}`] = `${st.size}:${st.mtimeMs}:${readFileSync(p, 'utf8')}`;
    }
  };
  walk(dir, '');
  return out;
}

/** `all`: every file tool, JS search; `grep`: only grep, on ripgrep (each call starts a sandbox, ~0.1 s). */
async function attack(ripgrep: 'auto' | 'off', tools: 'all' | 'grep'): Promise<void> {
  const outside = outsideDir();
  writeFileSync(join(outside, 'secret.txt'), `${MARK} secret\n`);
  mkdirSync(join(outside, 'dir'));
  writeFileSync(join(outside, 'dir', 'f.txt'), `${MARK} in a directory\n`);
  writeFileSync(join(outside, 'dir', `${MARK}.txt`), `${MARK} by name\n`);
  const before = snapshot(outside);

  const root = tempDir('dsh-race-ws-');
  mkdirSync(join(root, 'd'));
  writeFileSync(join(root, 'd', 'f.txt'), 'inside d\n');
  symlinkSync(join(outside, 'dir'), join(root, 'dlink'));
  writeFileSync(join(root, 'fa'), 'inside fa\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'fb'));
  writeFileSync(join(root, 'sf'), 'inside sf\n');
  const scripts = tempDir('dsh-race-script-', outsideDir());
  writeFileSync(join(scripts, 'flip.py'), FLIPPER);

  const agent = agentFor(root, [codingTools({ ripgrep }), permissions({ sandbox: 'workspace-write', approval: 'never' })]);
  const started = await call(agent, 'bash', { command: `python3 ${join(scripts, 'flip.py')} ${root} ${outside}`, run_in_background: true });
  expect(text(started)).toContain('started background job bash-1');
  // Wait until it flips.
  for (let i = 0; i < 100 && !text(await call(agent, 'job_output', { job_id: 'bash-1' })).includes('flipping'); i++)
    await new Promise((r) => setTimeout(r, 50));

  const leaks: string[] = [];
  let ok = 0;
  let refused = 0;
  const check = (label: string, o: Awaited<ReturnType<typeof call>>): void => {
    if (text(o).includes(MARK)) leaks.push(`${label}: ${text(o).slice(0, 300)}`);
    if (o.isError) {
      refused++;
      if (process.env.RACE_DEBUG) console.log(label, text(o).slice(0, 200));
    } else ok++;
  };
  for (let i = 0; i < ROUNDS && tools === 'grep'; i++) {
    check('grep', await call(agent, 'grep', { pattern: MARK, path: ['.', 'd', 'fa', 'sf'][i % 4]! }));
  }
  for (let i = 0; i < ROUNDS && tools === 'all'; i++) {
    for (const p of ['d/f.txt', 'fa', 'sf']) check(`read ${p}`, await call(agent, 'read', { file_path: p }));
    check('read dir d', await call(agent, 'read', { file_path: 'd' }));
    for (const p of ['d/new.txt', 'd/f.txt', 'fa', 'sf'])
      check(`write ${p}`, await call(agent, 'write', { file_path: p, content: `written ${i}\n` }));
    for (const p of ['d/f.txt', 'fa', 'sf'])
      check(`edit ${p}`, await call(agent, 'edit', { file_path: p, old_string: MARK, new_string: 'EDITED' }));
    check('glob', await call(agent, 'glob', { pattern: '**/*', path: 'd' }));
    check('glob root', await call(agent, 'glob', { pattern: '*' }));
    check('grep', await call(agent, 'grep', { pattern: MARK }));
    check('grep d', await call(agent, 'grep', { pattern: MARK, path: 'd' }));
    check('grep fa', await call(agent, 'grep', { pattern: MARK, path: 'fa' }));
  }
  writeFileSync(join(root, '.stop'), '');
  const end = text(await call(agent, 'job_output', { job_id: 'bash-1', wait: true, timeout_ms: 10_000 }));
  const flips = Number(/flips (\d+)/.exec(end)?.[1] ?? 0);
  await agent.dispose();

  expect(leaks).toEqual([]);
  expect(snapshot(outside)).toEqual(before);
  // The attack really ran concurrently, and the tools still did their work most of the time.
  expect(flips, end).toBeGreaterThan(ROUNDS);
  expect(ok).toBeGreaterThan(tools === 'all' ? ROUNDS : 0);
  if (tools === 'all') expect(refused).toBeGreaterThan(0);
}

describe('no check-then-open race under a concurrent flipper (workspace-write, the agent’s own background bash)', () => {
  it('read, write, edit, glob and grep (JS search) never reach outside', { timeout: 120_000 }, () => attack('off', 'all'));
  it('the same with grep on ripgrep (confined to a view of the workspace)', { timeout: 120_000 }, () => attack('auto', 'grep'));
});
