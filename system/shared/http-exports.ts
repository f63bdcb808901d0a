// Node 24's node:http exports WebSocket, CloseEvent and MessageEvent as getters that load Node's own copy of undici
// (its fetch and WebSocket, llhttp). An ES module `import ... from 'node:http'` builds the module's namespace by
// reading every enumerable export, so it runs those getters: ~18 ms of CPU (a bare import of node:http, 20 pairs,
// farm-bench: 66 → 48 ms for the process) at the start of every process that imports node:http, none of which uses
// them. Made non-enumerable before the first import, they stay where they were (`http.WebSocket` through the default
// export, the module object itself) and load undici only when read; only a named ESM import of them stops working.
// Called first thing by system/main.ts (every component) and dep-bundles-register.ts (the lab process, the tools).

/** Keeps node:http's undici-backed exports out of its ES module namespace; idempotent. */
export function deferHttpUndiciExports(): void {
  const http = process.getBuiltinModule('node:http');
  for (const name of ['WebSocket', 'CloseEvent', 'MessageEvent']) {
    const d = Object.getOwnPropertyDescriptor(http, name);
    if (d?.get && d.enumerable && d.configurable) Object.defineProperty(http, name, { ...d, enumerable: false });
  }
}
