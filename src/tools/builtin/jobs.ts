/** `job_output`, `job_kill`, `job_list`: what makes `bash` background mode usable. */
import type { ToolDefinition } from '../types.js';
import { ToolError } from '../types.js';
import type { Job, JobRead } from '../shell/jobs.js';
import { sandboxNote } from './bash.js';
import type { BuiltinEnv } from './env.js';
import { DEFAULT_WAIT_MS } from './limits.js';
import { builtinParameters } from './parameters.js';
import type { JobKillArgs, JobOutputArgs } from './schemas.js';

const MAX_WAIT_MS = 600_000;

export function statusLine(r: Pick<JobRead, 'status' | 'exitCode' | 'signal' | 'spawnError'>): string {
  if (r.status === 'running') return '[status: running]';
  if (r.status === 'killed') return '[status: killed]';
  if (r.spawnError !== undefined && r.exitCode === null) return `[status: failed, could not start: ${r.spawnError}]`;
  if (r.signal) return `[status: ${r.status}, killed by signal ${r.signal}]`;
  return `[status: ${r.status}, exit code ${r.exitCode}]`;
}

function find(env: BuiltinEnv, id: string): Job {
  const job = env.jobs.get(id);
  if (!job) {
    const ids = env.jobs.list().map((j) => j.id);
    throw new ToolError(
      'JOB_NOT_FOUND',
      `there is no background job "${id}"` +
        `${ids.length ? `; jobs in this session: ${ids.join(', ')}` : '; no background job was started in this session'}`,
    );
  }
  return job;
}

export function jobOutputTool(env: BuiltinEnv): ToolDefinition<JobOutputArgs> {
  return {
    name: 'job_output',
    description:
      'Read a background job: the output since the previous read, ending with `[status: ...]`. Non-blocking unless `wait: true`.',
    parameters: builtinParameters('job_output'),
    permission: { effects: 'none' },
    async execute(args, ctx) {
      const job = find(env, args.job_id);
      if (args.wait) await job.wait(Math.min(args.timeout_ms ?? DEFAULT_WAIT_MS, MAX_WAIT_MS), ctx.signal);
      if (job.status !== 'running') await job.done; // the log is flushed before we point at it
      const r = job.read();
      const lines: string[] = [r.delta === '' ? '(no new output)' : r.delta.replace(/\n$/, '')];
      if (r.lost > 0)
        lines.push(`[${r.lost} bytes of output were dropped before this read${r.logPath ? `; the complete log is at ${r.logPath}` : ''}]`);
      const note = sandboxNote(job.sandbox);
      if (note) lines.push(note);
      lines.push(statusLine(r));
      return {
        content: lines.join('\n'),
        meta: { jobId: job.id, status: r.status, exitCode: r.exitCode, ...(r.logPath ? { log: r.logPath } : {}) },
      };
    },
  };
}

export function jobKillTool(env: BuiltinEnv): ToolDefinition<JobKillArgs> {
  return {
    name: 'job_kill',
    description:
      'Request cancellation of a running background job by job id. Returns immediately; the job settles as killed once it actually stops.',
    parameters: builtinParameters('job_kill'),
    permission: { effects: 'none' },
    execute(args) {
      const job = find(env, args.job_id);
      if (!job.kill()) return `job ${job.id} had already finished ${statusLine(job)}`;
      return `requested cancellation of job ${job.id}`;
    },
  };
}

export function jobListTool(env: BuiltinEnv): ToolDefinition<Record<string, never>> {
  return {
    name: 'job_list',
    description: 'List the background jobs of this session (running and finished) with their ids and statuses.',
    parameters: builtinParameters('job_list'),
    isConcurrencySafe: () => true,
    permission: { effects: 'none' },
    execute() {
      const jobs = env.jobs.list();
      if (jobs.length === 0) return 'No background jobs.';
      return jobs.map((j) => `${j.id} ${statusLine(j)} ${j.command.length > 120 ? `${j.command.slice(0, 120)}…` : j.command}`).join('\n');
    },
  };
}
