import type { NextFunction, Request, Response } from 'express';

/**
 * Real clients compare Content-Type to exactly `application/json` (docs/client-compat.md 2.1); Express
 * appends `; charset=utf-8`. JSON is UTF-8 by definition (RFC 8259), so dropping the parameter is safe.
 */
export function exactJsonContentType(_req: Request, res: Response, next: NextFunction): void {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = ((name: string, value: string | number | readonly string[]) => {
    if (
      name.toLowerCase() === 'content-type' &&
      typeof value === 'string' &&
      value.startsWith('application/json')
    ) {
      return setHeader(name, 'application/json');
    }
    return setHeader(name, value);
  }) as Response['setHeader'];
  next();
}
