// The images built from this repository, as the image catalog's builtins: SYSTEM_IMAGE runs system/main.ts of this
// checkout with the lab's Node, in the checkout's root (the Dockerfile's WORKDIR analogue); the component comes from
// the container's args, as in the image. Its image environment points Node's compile cache at the lab's
// (lab/compile-cache.ts), as an image would ship one built with it: a pod's modules, the runtime hook and
// system/main.ts included, load warm from the second start on.
// The Gateway API conformance suite's backend images (upstream's echo-basic, as v1.6.1's conformance manifests name
// them) run the same image's `echo` component (system/echo/), configured by the pod's environment as echo-basic is,
// so conformance/base/manifests.yaml and the tests' manifests apply verbatim; the base manifests' coredns (the
// GATEWAY-UDP backend) runs the echo component as a stand-in that serves nothing and says so (system/echo/main.ts).
import { REPO_ROOT, SYSTEM_IMAGE, systemEntrypoint } from '../../../../system/image.ts';
import { compileCacheDir } from '../../../compile-cache.ts';
import type { ImageEntry } from './images.ts';

/** Tags of upstream's echo-basic that Gateway API v1.6.1's conformance manifests use. */
export const ECHO_BASIC_TAGS = ['v1.5.1', 'v1.6.0-dev.2', 'v1.6.0-dev.3', 'v1.6.0', 'v1.6.1'] as const;
/** Where upstream publishes echo-basic: releases and the staging registry. */
export const ECHO_BASIC_REPOSITORIES = [
  'registry.k8s.io/gateway-api/echo-basic',
  'gcr.io/k8s-staging-gateway-api/echo-basic',
] as const;
/** The coredns image of v1.6.1's conformance/base/manifests.yaml (the UDPRoute tests' DNS backend). */
export const CONFORMANCE_COREDNS_IMAGE = 'registry.k8s.io/coredns/coredns:v1.12.2';

export function systemImages(opts: { node?: string; compileCache?: string } = {}): Record<string, ImageEntry> {
  const env = { NODE_COMPILE_CACHE: opts.compileCache ?? compileCacheDir() };
  const system: ImageEntry = { command: systemEntrypoint({ node: opts.node }), workingDir: REPO_ROOT, env };
  const echo: ImageEntry = { ...system, command: [...system.command, 'echo'] };
  const entries: Record<string, ImageEntry> = { [SYSTEM_IMAGE]: system };
  for (const repo of ECHO_BASIC_REPOSITORIES) for (const tag of ECHO_BASIC_TAGS) entries[`${repo}:${tag}`] = echo;
  entries[CONFORMANCE_COREDNS_IMAGE] = { ...echo, env: { ...env, GWLAB_ECHO_STANDIN: 'coredns' } };
  return entries;
}
