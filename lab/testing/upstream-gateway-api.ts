// Upstream's Gateway API repository for tests that need a release other than the vendored one (an old bundle built as
// upstream builds its release assets: scripts/vendor-gateway-api.ts buildBundle). Read with git from a local mirror when
// there is one (GWLAB_GATEWAY_API_REPO, else the workplace's read-only mirror), else cloned bare at that tag into a
// temporary folder that cleanup() removes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MIRROR = '/work/.mirror/kubernetes-sigs+gateway-api/repo';
const URL = 'https://github.com/kubernetes-sigs/gateway-api.git';

export function upstreamGatewayApi(tag: string): { gitDir: string; cleanup: () => void } {
  const local = process.env.GWLAB_GATEWAY_API_REPO ?? MIRROR;
  if (existsSync(local)) return { gitDir: local, cleanup: () => {} };
  const tmp = mkdtempSync(join(tmpdir(), 'gwlab-gateway-api-'));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  try {
    const gitDir = join(tmp, 'repo.git');
    execFileSync('git', ['clone', '--quiet', '--bare', '--depth', '1', '--branch', tag, URL, gitDir]);
    return { gitDir, cleanup };
  } catch (err) {
    cleanup();
    throw new Error(`no local Gateway API mirror (GWLAB_GATEWAY_API_REPO) and cloning ${URL} failed`, { cause: err });
  }
}
