// Listener isolation's rule (GatewayHTTPListenerIsolation): which listener of a port takes a host, and which hosts a
// route attached to one listener does not get because a more specific listener takes them.
import { describe, expect, it } from 'vitest';
import { intersectHostnames, isolatedHosts, mostSpecificListenerHost } from './hostnames.ts';

// The conformance test's Gateway: an empty hostname, a wildcard, a longer wildcard and an exact name on one port.
const PORT_HOSTS = [undefined, '*.example.com', '*.foo.example.com', 'abc.foo.example.com'];

describe('mostSpecificListenerHost', () => {
  it.each([
    ['bar.com', undefined],
    ['bar.example.com', '*.example.com'],
    ['bar.foo.example.com', '*.foo.example.com'],
    ['abc.foo.example.com', 'abc.foo.example.com'],
    ['*.foo.example.com', '*.foo.example.com'],
  ])('%s → %s', (host, listener) => {
    expect(mostSpecificListenerHost(PORT_HOSTS, host)).toBe(listener);
  });
});

describe('isolatedHosts: what a route on one listener does not get', () => {
  it('a route of the empty-hostname listener serving any host loses each more specific listener to it', () => {
    expect(isolatedHosts(PORT_HOSTS, undefined, intersectHostnames(undefined, []))).toEqual([
      { hosts: '*.example.com', listenerHost: '*.example.com' },
      { hosts: '*.foo.example.com', listenerHost: '*.foo.example.com' },
      { hosts: 'abc.foo.example.com', listenerHost: 'abc.foo.example.com' },
    ]);
  });

  it('a host the route lists, owned by a more specific listener, is reported; one nobody else owns is not', () => {
    expect(isolatedHosts(PORT_HOSTS, undefined, ['bar.example.com', 'bar.com'])).toEqual([
      { hosts: 'bar.example.com', listenerHost: '*.example.com' },
    ]);
  });

  it('the wildcard listener loses only the longer wildcard and the exact name under it', () => {
    const served = intersectHostnames('*.example.com', []);
    expect(isolatedHosts(PORT_HOSTS, '*.example.com', served)).toEqual([
      { hosts: '*.foo.example.com', listenerHost: '*.foo.example.com' },
      { hosts: 'abc.foo.example.com', listenerHost: 'abc.foo.example.com' },
    ]);
    // A route host under the wildcard but outside the longer one keeps its requests.
    expect(isolatedHosts(PORT_HOSTS, '*.example.com', ['bar.example.com'])).toEqual([]);
  });

  it('the most specific listener loses nothing; a port with one listener isolates nothing', () => {
    expect(isolatedHosts(PORT_HOSTS, 'abc.foo.example.com', ['abc.foo.example.com'])).toEqual([]);
    expect(isolatedHosts([undefined], undefined, ['*'])).toEqual([]);
  });
});
