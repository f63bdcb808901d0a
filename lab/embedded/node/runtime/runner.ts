// The process runner: starts a container as a local process and reports how it ended.
// - argv from the image catalog and the container spec (already `$(VAR)`-expanded), env, working directory;
// - the tags GWLAB_LAB, GWLAB_POD, GWLAB_CONTAINER and GWLAB_RUN (this lab process instance) in its environment;
// - stdout/stderr into the instance's CRI-format log file (logs.ts);
// - the pod runtime hook through NODE_OPTIONS=--import, configured by GWLAB_POD_RUNTIME, when a runtime config is given;
// - graceful stop: SIGTERM to the container's process group, SIGKILL after the grace period;
// - no orphans, three ways: `setpriv --pdeathsig SIGKILL` on the container's first process, the sentinel process that
//   sweeps the run's tagged processes when the lab dies, and the hook's watchdog in every Node process of a pod.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { processStartTime } from '../runtime-hook/hook-watchdog.ts';
import { RUNTIME_ENV } from '../runtime-hook/runtime-config.ts';
import { ContainerLogWriter } from './logs.ts';
import { killTaggedProcesses, TAG_CONTAINER, TAG_LAB, TAG_POD, TAG_RUN } from './orphans.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
export const POD_HOOK_PATH = join(HERE, '..', 'runtime-hook', 'pod-hook.ts');
const SENTINEL_PATH = join(HERE, 'sentinel.ts');

export interface Logger {
  debug(msg: string, f?: object): void;
  info(msg: string, f?: object): void;
  warn(msg: string, f?: object): void;
  error(msg: string, f?: object): void;
}

export interface RunnerOptions {
  lab: string;
  /** This lab process instance; generated when absent. */
  runId?: string;
  /** The Node binary for `node` commands and the sentinel (default: the lab's own). */
  nodePath?: string;
  /** Use `setpriv --pdeathsig SIGKILL` when it is installed (default true). */
  pdeathsig?: boolean;
  /** Start the sentinel (default true). */
  sentinel?: boolean;
  log?: Logger;
}

export interface ContainerStart {
  namespace: string;
  pod: string;
  container: string;
  /** Full argv; argv[0] is looked up in the container's PATH; `node` means the lab's Node. */
  argv: string[];
  /** The container's environment (already resolved and expanded by the kubelet). */
  env: Record<string, string>;
  /** Absolute host directory (default `/`, as in a container without workingDir). */
  workingDir?: string;
  /** The instance's log file (logs.ts newInstanceLog); required unless `stdio` is 'pipe'. */
  logFile?: string;
  /**
   * 'log' (default): stdout and stderr go to the log file, stdin is /dev/null. 'pipe': the caller gets stdin,
   * stdout and stderr on the ContainerProcess (exec, probes).
   */
  stdio?: 'log' | 'pipe';
  /** Path of the pod's runtime config: turns the pod runtime hook on. */
  runtimeConfig?: string;
}

export type ExitReason = 'Completed' | 'Error' | 'StartError';

export interface ContainerExit {
  exitCode: number;
  signal: NodeJS.Signals | null;
  reason: ExitReason;
  message?: string;
  startedAt: Date;
  finishedAt: Date;
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Host variables a local process needs to behave (locale, home, temp); everything else comes from the pod spec. */
const PASSED_THROUGH = ['HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'TERM'];

function findSetpriv(): string | undefined {
  for (const dir of DEFAULT_PATH.split(':')) {
    try {
      accessSync(join(dir, 'setpriv'), fsConstants.X_OK);
      return join(dir, 'setpriv');
    } catch {
      // next
    }
  }
  return undefined;
}

/** Looks argv[0] up as execve would through PATH; undefined when there is no such executable. */
export function resolveExecutable(cmd: string, path: string, cwd: string): string | undefined {
  const candidates = cmd.includes('/')
    ? [isAbsolute(cmd) ? cmd : resolve(cwd, cmd)]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, cmd));
  for (const c of candidates) {
    try {
      accessSync(c, fsConstants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      // next
    }
  }
  return undefined;
}

export class ContainerProcess extends EventEmitter {
  readonly spec: ContainerStart;
  readonly startedAt = new Date();
  readonly exited: Promise<ContainerExit>;
  pid?: number;
  exit?: ContainerExit;
  /** With stdio 'pipe'. */
  stdin?: NodeJS.WritableStream & { destroy(): void };
  stdout?: NodeJS.ReadableStream;
  stderr?: NodeJS.ReadableStream;
  private resolveExit!: (e: ContainerExit) => void;
  private readonly runner: ProcessRunner;

  constructor(runner: ProcessRunner, spec: ContainerStart) {
    super();
    this.runner = runner;
    this.spec = spec;
    this.exited = new Promise((r) => {
      this.resolveExit = r;
    });
  }

  /** Why it could not start (stdio 'pipe': there is no log file to say it). */
  startError?: string;

  get running(): boolean {
    return this.exit === undefined;
  }

  /** @internal */
  attach(child: ChildProcess, logs: ContainerLogWriter | undefined): void {
    this.pid = child.pid;
    if (logs) {
      if (child.stdout) logs.attach(child.stdout, 'stdout');
      if (child.stderr) logs.attach(child.stderr, 'stderr');
    } else {
      this.stdin = child.stdin ?? undefined;
      this.stdout = child.stdout ?? undefined;
      this.stderr = child.stderr ?? undefined;
      child.stdin?.on('error', () => undefined);
    }
    child.once('exit', (code, signal) => {
      // Like a container's PID namespace going away: whatever the program left in its group or tagged with this
      // container dies with it.
      this.killGroup('SIGKILL');
      void this.runner.sweep(this.spec).finally(async () => {
        await logs?.close();
        const exitCode = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
        this.finish({
          exitCode,
          signal,
          reason: exitCode === 0 ? 'Completed' : 'Error',
          startedAt: this.startedAt,
          finishedAt: new Date(),
        });
      });
    });
  }

  /** @internal */
  finish(e: ContainerExit): void {
    if (this.exit) return;
    this.exit = e;
    this.resolveExit(e);
    this.emit('exit', e);
  }

  /** Sends a signal to the container's process group. */
  signal(sig: NodeJS.Signals): boolean {
    return this.killGroup(sig);
  }

  private killGroup(sig: NodeJS.Signals): boolean {
    if (!this.pid) return false;
    try {
      process.kill(-this.pid, sig);
      return true;
    } catch {
      return false;
    }
  }

  /** SIGTERM, then SIGKILL after `gracePeriodSeconds` (terminationGracePeriodSeconds). */
  async stop(gracePeriodSeconds = 30): Promise<ContainerExit> {
    if (this.exit) return this.exit;
    this.killGroup('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((r) => {
      timer = setTimeout(() => {
        this.killGroup('SIGKILL');
        r();
      }, gracePeriodSeconds * 1000);
    });
    await Promise.race([this.exited, killed]);
    clearTimeout(timer);
    return this.exited;
  }
}

export class ProcessRunner {
  readonly lab: string;
  readonly runId: string;
  readonly nodePath: string;
  private readonly opts: RunnerOptions;
  private readonly setpriv?: string;
  private readonly procs = new Set<ContainerProcess>();
  private sentinel?: ChildProcess;
  private closed = false;

  constructor(opts: RunnerOptions) {
    this.opts = opts;
    this.lab = opts.lab;
    this.runId = opts.runId ?? `${process.pid}-${randomBytes(4).toString('hex')}`;
    this.nodePath = opts.nodePath ?? process.execPath;
    this.setpriv = opts.pdeathsig === false ? undefined : findSetpriv();
    if (opts.pdeathsig !== false && !this.setpriv) {
      opts.log?.warn('setpriv (util-linux) not found: pod processes rely on the sentinel and the hook watchdog');
    }
  }

  /** What the hook's watchdog watches: this process, by pid and start time. */
  watchdogTarget(): { pid: number; startTime: string } | null {
    const startTime = processStartTime(process.pid);
    return startTime ? { pid: process.pid, startTime } : null;
  }

  processes(): ContainerProcess[] {
    return [...this.procs];
  }

  /** The environment a container process gets (also what `exec` uses). */
  environment(
    spec: Pick<ContainerStart, 'namespace' | 'pod' | 'container' | 'env' | 'runtimeConfig'>,
  ): Record<string, string> {
    const env: Record<string, string> = {};
    for (const k of PASSED_THROUGH) if (process.env[k] !== undefined) env[k] = process.env[k] as string;
    env.PATH = `${dirname(this.nodePath)}:${DEFAULT_PATH}`;
    env.HOSTNAME = spec.pod;
    Object.assign(env, spec.env);
    env[TAG_LAB] = this.lab;
    env[TAG_POD] = `${spec.namespace}/${spec.pod}`;
    env[TAG_CONTAINER] = spec.container;
    env[TAG_RUN] = this.runId;
    if (spec.runtimeConfig) {
      env[RUNTIME_ENV] = spec.runtimeConfig;
      const hook = `--import=${pathToFileURL(POD_HOOK_PATH).href}`;
      env.NODE_OPTIONS = spec.env.NODE_OPTIONS ? `${hook} ${spec.env.NODE_OPTIONS}` : hook;
    }
    return env;
  }

  /** Starts a container; a program that cannot be started yields an exit with reason StartError (exit code 128). */
  start(spec: ContainerStart): ContainerProcess {
    if (this.closed) throw new Error('ProcessRunner is closed');
    const proc = new ContainerProcess(this, spec);
    this.procs.add(proc);
    proc.once('exit', () => this.procs.delete(proc));
    const pipe = spec.stdio === 'pipe';
    if (!pipe && !spec.logFile) throw new Error('ProcessRunner.start: logFile is required unless stdio is "pipe"');
    const logs = pipe ? undefined : new ContainerLogWriter(spec.logFile!);
    const fail = (message: string) => {
      logs?.write('stderr', `gwlab: ${message}\n`);
      if (pipe) proc.startError = message;
      void (logs?.close() ?? Promise.resolve()).then(() =>
        proc.finish({
          exitCode: 128,
          signal: null,
          reason: 'StartError',
          message,
          startedAt: proc.startedAt,
          finishedAt: new Date(),
        }),
      );
      return proc;
    };
    const cwd = spec.workingDir ?? '/';
    try {
      if (!statSync(cwd).isDirectory()) return fail(`working directory ${cwd} is not a directory`);
    } catch {
      return fail(`working directory ${cwd} does not exist`);
    }
    const env = this.environment(spec);
    const [cmd, ...args] = spec.argv;
    if (!cmd) return fail('no command: the image has no entrypoint and the container no command');
    const exe = cmd === 'node' ? this.nodePath : resolveExecutable(cmd, env.PATH, cwd);
    if (!exe) return fail(`exec: "${cmd}": executable file not found in $PATH`);
    this.ensureSentinel();
    let child: ChildProcess;
    try {
      child = this.setpriv
        ? spawn(this.setpriv, ['--pdeathsig', 'SIGKILL', '--', exe, ...args], {
            env,
            cwd,
            detached: true,
            stdio: [pipe ? 'pipe' : 'ignore', 'pipe', 'pipe'],
          })
        : spawn(exe, args, { env, cwd, detached: true, stdio: [pipe ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    } catch (err) {
      return fail(`cannot start ${cmd}: ${(err as Error).message}`);
    }
    let started = false;
    child.once('spawn', () => {
      started = true;
    });
    child.once('error', (err) => {
      if (!started) fail(`cannot start ${cmd}: ${err.message}`);
    });
    proc.attach(child, logs);
    this.opts.log?.debug('container started', {
      pod: `${spec.namespace}/${spec.pod}`,
      container: spec.container,
      pid: child.pid,
      argv: spec.argv,
    });
    return proc;
  }

  /** @internal Kills what a finished container left behind outside its process group. */
  async sweep(spec: ContainerStart): Promise<void> {
    await killTaggedProcesses(
      { run: this.runId, pod: `${spec.namespace}/${spec.pod}`, container: spec.container },
      { timeoutMs: 2000 },
    );
  }

  private ensureSentinel(): void {
    if (this.sentinel || this.opts.sentinel === false) return;
    const child = spawn(this.nodePath, [SENTINEL_PATH, this.runId], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
      env: { PATH: process.env.PATH ?? DEFAULT_PATH },
    });
    child.on('error', (err) => this.opts.log?.warn('sentinel failed', { error: err.message }));
    child.unref();
    (child.stdin as unknown as { unref?: () => void })?.unref?.();
    child.stdin?.on('error', () => undefined);
    this.sentinel = child;
  }

  /** Stops every container (SIGTERM, SIGKILL after the grace period), then lets the sentinel go. */
  async close(gracePeriodSeconds = 5): Promise<void> {
    this.closed = true;
    await Promise.all([...this.procs].map((p) => p.stop(gracePeriodSeconds)));
    await killTaggedProcesses({ run: this.runId }, { timeoutMs: 2000 });
    const s = this.sentinel;
    this.sentinel = undefined;
    if (s && s.exitCode === null) {
      const gone = new Promise((r) => s.once('exit', r));
      s.stdin?.end();
      await Promise.race([gone, new Promise((r) => setTimeout(r, 3000).unref())]);
    }
  }
}
