import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { type NextFunction, type Request, type Response, static as expressStatic } from 'express';

/**
 * The web console's security headers. Scripts only from this origin (no inline script, no eval); styles
 * also inline (the component library sets its CSS variables and positions in style attributes and one
 * style element); the API, logs and images from this origin only; no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/** Paths the console never answers: the API, its docs and document, logs, health and metrics stay the app's. */
const NOT_CONSOLE = /^\/(api|docs|logs|healthz|readyz|metrics|openapi\.json)(\/|$)/;

/** Where the built console is (apps/console/dist, `npm run build`), or null when it was not built. */
export function consoleDist(): string | null {
  let root: string;
  try {
    root = dirname(require.resolve('@rigmarket/console/package.json'));
  } catch {
    root = join(__dirname, '..', '..', 'console');
  }
  const dist = join(root, 'dist');
  return existsSync(join(dist, 'index.html')) ? dist : null;
}

/**
 * Serves the console at `/` (docs/console.md): its hashed bundles under /assets (cached for a year), its
 * other files, and index.html for every other GET that asks for HTML (the client's routes: /offers,
 * /instances...), with the CSP above. API paths are never touched: an unknown /api path still gets the
 * API's Error object. Without a built console, `/` says how to build it.
 */
export function serveConsole(app: INestApplication, dist: string | null = consoleDist()): void {
  const index = dist ? readFileSync(join(dist, 'index.html'), 'utf8') : null;
  const files = dist ? expressStatic(dist, { index: false, fallthrough: true, maxAge: '1h' }) : null;
  const assets = dist
    ? expressStatic(join(dist, 'assets'), {
        index: false,
        fallthrough: false,
        immutable: true,
        maxAge: '365d',
      })
    : null;
  app.use('/assets', (req: Request, res: Response, next: NextFunction) => {
    if (!assets) return next();
    res.setHeader('X-Content-Type-Options', 'nosniff');
    return assets(req, res, next);
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || NOT_CONSOLE.test(req.path)) return next();
    const page = () => {
      if (!req.accepts('html')) return next();
      for (const [name, value] of Object.entries(HEADERS)) res.setHeader(name, value);
      res.setHeader('Cache-Control', 'no-cache');
      if (index === null)
        return res
          .status(404)
          .type('text/plain')
          .send('The web console is not built: run `npm run build` (it builds apps/console).\n');
      return res.type('text/html').send(index);
    };
    if (!files || req.path === '/' || req.path === '/index.html') return page();
    return files(req, res, page);
  });
}
