/**
 * Raw HTTP for the API tests: the path is sent exactly as given (no URL normalisation, so `..`
 * and percent-escapes reach the server as an attacker would send them), to 127.0.0.1 only.
 */
import { request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function raw(
  port: number,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; host?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: opts.host ?? '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: opts.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Path (with the token) and port of a viewer URL. */
export function parts(url: string): { port: number; base: string } {
  const u = new URL(url);
  return { port: Number(u.port), base: u.pathname };
}

export async function json<T = any>(url: string, route: string, params: Record<string, string | number> = {}): Promise<T> {
  const { port, base } = parts(url);
  const q = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]));
  const r = await raw(port, `${base}api/${route}${q.size ? `?${q}` : ''}`);
  if (r.status !== 200) throw new Error(`${route}: HTTP ${r.status}: ${r.body}`);
  return JSON.parse(r.body) as T;
}
