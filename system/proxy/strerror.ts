// The text of a socket error as Envoy prints it (libc's strerror, e.g. "Connection refused"), for the errors a
// listener's bind and an upstream connect meet; one table for both.
const TEXT: Record<string, string> = {
  EADDRINUSE: 'Address already in use',
  EACCES: 'Permission denied',
  EADDRNOTAVAIL: 'Cannot assign requested address',
  ECONNREFUSED: 'Connection refused',
  ECONNRESET: 'Connection reset by peer',
  EHOSTUNREACH: 'No route to host',
  ENETUNREACH: 'Network is unreachable',
  ETIMEDOUT: 'Connection timed out',
};

/** strerror of the error's code; undefined for a code not in the table (the caller says what it shows then). */
export function strerror(err: NodeJS.ErrnoException): string | undefined {
  return err.code === undefined ? undefined : TEXT[err.code];
}
