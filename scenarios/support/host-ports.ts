// The contract's fixed local ports (section 4: `kubectl port-forward ... 9095`, `19000`, local `8080`) are one per
// machine, while scenario files run side by side (labs.ts). A file that forwards to them holds this lock for as long
// as it uses them: an abstract Unix socket (Linux; no file to clean up) that the kernel releases when the process
// ends, even by SIGKILL, like the lab's address claim (lab/state.ts claimLabIndex).
import net from 'node:net';

const LOCK = '\0gwlab-scenarios-contract-ports';

function listen(): Promise<net.Server | undefined> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen({ path: LOCK, exclusive: true }, () => resolve(server.unref()));
  });
}

/** The lock when it is free now, else undefined (the caller then takes any free local port). */
export async function tryHoldContractPorts(): Promise<(() => Promise<void>) | undefined> {
  const server = await listen();
  return server && (() => new Promise<void>((r) => server.close(() => r())));
}

/** Waits for the lock (another file holds it for seconds at most), for a file that must have the fixed ports. */
export async function holdContractPorts(timeoutMs = 120_000): Promise<() => Promise<void>> {
  for (const end = Date.now() + timeoutMs; ; ) {
    const release = await tryHoldContractPorts();
    if (release) return release;
    if (Date.now() > end) throw new Error(`the contract's local ports (8080, 9095, 19000) stayed held ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
