// Test helper: raw HTTPS requests to a test lab's API server (undici, one keep-alive agent per server), with any
// bearer token, for what kubectl cannot send or hides (status codes, Status bodies, exact content types).
import { Agent, fetch } from 'undici';
import type { TestLab } from './test-lab.ts';

export interface ApiResponse {
  status: number;
  json: any;
  text: string;
  headers: Headers;
}

const agents = new Map<string, Agent>();

/** Closes the agents this helper opened (afterAll). */
export async function closeApiAgents(): Promise<void> {
  await Promise.all([...agents.values()].map((a) => a.close()));
  agents.clear();
}

export async function api(
  lab: TestLab,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; raw?: string; ct?: string } = {},
): Promise<ApiResponse> {
  let agent = agents.get(lab.server.url);
  if (!agent) {
    agent = new Agent({ connect: { ca: lab.server.caPem } });
    agents.set(lab.server.url, agent);
  }
  const headers: Record<string, string> = { Authorization: `Bearer ${opts.token ?? lab.server.adminToken}` };
  if (opts.body !== undefined || opts.raw !== undefined) headers['Content-Type'] = opts.ct ?? 'application/json';
  const res = await fetch(lab.server.url + path, {
    method,
    headers,
    body: opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined),
    dispatcher: agent,
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text, headers: res.headers as unknown as Headers };
}
