// The in-cluster bearer token, read again as soon as the kubelet renews it. @kubernetes/client-node 2.0.1's in-cluster
// configuration (loadFromCluster) reads /var/run/secrets/kubernetes.io/serviceaccount/token through its FileAuth,
// which keeps what it read for 60 s (dist/file_auth.js isTokenExpired; client-go's cached file token source re-reads
// every minute as well, and at once after a 401: transport/round_trippers.go tokenSourceTransport). Kubernetes' token
// lifetimes (at least 10 min, renewed at 80 %) leave that minute to spare; a shorter max lifetime
// (--service-account-max-token-expiration, the lab's short-TTL option) does not, and the control plane would send an
// expired token for up to a minute after each renewal. Here the file is stat'ed on every request and read again when
// it is another file: the kubelet swaps the token by renaming `..data` (atomic writer), so a renewed token is a new
// inode, never a half-written file.
import fs from 'node:fs';
import type { KubeConfig, User } from '@kubernetes/client-node';

const PROVIDER = 'gwvendor-token-file';
/** client-node's Authenticator interface (not exported by its index). */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

export class TokenFileAuthenticator implements Authenticator {
  private readonly cache = new Map<string, { id: string; token: string }>();

  isAuthProvider(user: User): boolean {
    return user.authProvider?.name === PROVIDER;
  }

  async applyAuthentication(user: User, opts: { headers?: Record<string, any> }): Promise<void> {
    opts.headers ??= {};
    opts.headers.Authorization = `Bearer ${this.token(user.authProvider.config.path)}`;
  }

  /** The token in `path`, read again when the file (device, inode, size, mtime) changed since the last read. */
  token(path: string): string {
    const st = fs.statSync(path);
    const id = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    const hit = this.cache.get(path);
    if (hit?.id === id) return hit.token;
    const token = fs.readFileSync(path, 'utf8').trim();
    this.cache.set(path, { id, token });
    return token;
  }
}

/**
 * Makes a KubeConfig whose current user reads a token file (the in-cluster configuration) use TokenFileAuthenticator
 * instead of client-node's once-a-minute FileAuth. Other kubeconfigs are left as they are. Returns whether it did.
 */
export function reloadTokenFileOnChange(kc: KubeConfig): boolean {
  const user = kc.getCurrentUser();
  const path = user?.authProvider?.config?.tokenFile as string | undefined;
  if (!user || !path) return false;
  kc.addAuthenticator(new TokenFileAuthenticator());
  const users = kc
    .getUsers()
    .map((u) => (u.name === user.name ? { ...u, authProvider: { name: PROVIDER, config: { path } } } : u));
  kc.loadFromOptions({
    clusters: kc.getClusters(),
    users,
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext(),
  });
  return true;
}
