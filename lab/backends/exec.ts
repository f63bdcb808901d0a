// Runs external commands for the backends, recording each one so that a failure can say exactly what ran.
import { execa } from 'execa';

export interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface CommandRunner {
  run(cmd: string, args: string[], opts?: { input?: string; allowFailure?: boolean; cwd?: string }): Promise<RunResult>;
}

export function commandLine(cmd: string, args: string[]): string {
  return [cmd, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

export function execaRunner(env: NodeJS.ProcessEnv = process.env, log?: (line: string) => void): CommandRunner {
  return {
    async run(cmd, args, opts = {}) {
      log?.(`$ ${commandLine(cmd, args)}`);
      const r = await execa(cmd, args, { env, input: opts.input, cwd: opts.cwd, reject: false, all: false });
      const res = { stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), exitCode: r.exitCode ?? 1 };
      if (res.exitCode !== 0 && !opts.allowFailure) {
        const tail = (res.stderr || res.stdout).trim().split('\n').slice(-5).join('\n');
        throw new Error(`${commandLine(cmd, args)} exited with ${res.exitCode}${tail ? `:\n${tail}` : ''}`);
      }
      return res;
    },
  };
}
