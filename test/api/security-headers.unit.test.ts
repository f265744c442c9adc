import { afterAll, beforeAll, expect, it } from 'vitest';
import { appWithoutBackends } from '../helpers/app-without-backends.js';

/** The orders page's security headers (helmet): its own script and stylesheet only, never framed, never sniffed. */
let base: string;
let close: () => void;
beforeAll(async () => {
  const server = appWithoutBackends({ faultsEnabled: true }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  close = () => server.close();
});
afterAll(() => close?.());

it('serves the page with a CSP that allows only its own script and stylesheet, and the usual hardening headers', async () => {
  for (const path of ['/', '/page.js', '/page.css']) {
    const res = await fetch(base + path);
    expect(res.status, path).toBe(200);
    const csp = Object.fromEntries(
      res.headers
        .get('content-security-policy')!
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    expect(csp['default-src']).toEqual(["'self'"]);
    expect(csp['script-src']).toEqual(["'self'"]);
    expect(csp['style-src']).toEqual(["'self'"]);
    expect(csp['object-src']).toEqual(["'none'"]);
    expect(csp['frame-ancestors']).toEqual(["'self'"]);
    expect(csp).not.toHaveProperty('upgrade-insecure-requests'); // would break the page over plain HTTP
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-powered-by')).toBeNull();
  }
  // The page itself holds nothing inline that such a CSP would block.
  const html = await (await fetch(base + '/')).text();
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=|\son\w+=/i);
});
