// A person at the admin index, in headless Chromium: open /, follow each link, set a component to debug with the form.
// Chromium comes from npm (@sparticuz/chromium, see system/shared/testing/chromium.ts); playwright-core drives it.
import { readFileSync } from 'node:fs';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HeadlessBrowser, launchHeadlessChromium } from '../../shared/testing/chromium.ts';
import type { ControlPlane } from '../controlplane.ts';
import { startOfflineControlPlane } from '../testing/control-plane.ts';

const INPUT = readFileSync(new URL('../testdata/basic/input.yaml', import.meta.url), 'utf8');

let cp: ControlPlane;
let headless: HeadlessBrowser;
let browser: BrowserContext;

beforeAll(async () => {
  cp = await startOfflineControlPlane(INPUT);
  headless = await launchHeadlessChromium();
  browser = headless.context;
}, 60_000);

afterAll(async () => {
  await headless?.close();
  await cp?.stop();
});

describe('admin index in a browser', () => {
  it('links every endpoint; each link opens', async () => {
    const page = await browser.newPage();
    await page.goto(cp.admin!.url + '/');
    expect(await page.title()).toContain('gwvendor control plane');
    const links = await page.$$eval('h2 a', (as) =>
      as.map((a) => ({ text: a.textContent, href: a.getAttribute('href') })),
    );
    expect(links.map((l) => l.text)).toEqual([
      '/debug/pprof',
      '/logging',
      '/snapshots/krt',
      '/snapshots/xds',
      '/metrics',
    ]);
    for (const l of links) {
      await page.goto(cp.admin!.url + '/');
      const [resp] = await Promise.all([page.waitForNavigation(), page.click(`h2 a[href="${l.href}"]`)]);
      expect(resp?.status(), l.href!).toBe(200);
      const body = await page.textContent('body');
      if (l.text === '/logging') expect(body).toContain('current log levels:');
      if (l.text === '/snapshots/krt') expect(body).toContain('"synced": true');
      if (l.text === '/snapshots/xds') expect(body).toContain('"data": {}');
      if (l.text === '/metrics') expect(body).toContain('gwvendor_translations_total');
      if (l.text === '/debug/pprof') {
        const profiles = await page.$$eval('a', (as) => as.map((a) => a.getAttribute('href')));
        expect(profiles).toEqual(expect.arrayContaining(['profile?seconds=10', 'heap', 'handles']));
        // A profile link downloads a file.
        const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[href="heap"]')]);
        expect(download.suggestedFilename()).toBe('heap.pb.gz');
      }
    }
    await page.close();
  });

  it('sets a component to debug through the form', async () => {
    const page = await browser.newPage();
    await page.goto(cp.admin!.url + '/');
    expect(cp.logs.level('deployer')).toBe('off');
    await page.selectOption('#component', 'deployer');
    await page.selectOption('#level', 'debug');
    await Promise.all([page.waitForNavigation(), page.click('#set-level-button')]);
    expect(page.url()).toBe(cp.admin!.url + '/logging');
    expect(await page.textContent('body')).toContain('deployer: debug');
    expect(cp.logs.level('deployer')).toBe('debug');
    await page.goto(cp.admin!.url + '/');
    const row = await page.textContent('#levels');
    expect(row).toContain('deployer');
    expect(row).toContain('debug');
    await page.close();
  });
});
