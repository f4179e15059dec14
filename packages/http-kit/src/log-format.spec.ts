import { PassThrough } from 'node:stream';
import type { LoggerService } from '@nestjs/common';
import { humanLogStream, logFormat, quietBootLogger } from './log-format';

describe('log format', () => {
  it('is readable at a terminal, JSON otherwise, and LOG_FORMAT decides when set', () => {
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'Pretty' }, false)).toBe('pretty');
  });

  it('writes one short line per entry: time, level, context and message, without pid or request objects', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const stream = humanLogStream(out);
    stream.write(
      `${JSON.stringify({ level: 30, time: Date.UTC(2026, 0, 1, 12, 0, 0), pid: 7, hostname: 'h', context: 'Billing', msg: 'charged 3 instances' })}\n`,
    );
    stream.write(
      `${JSON.stringify({ level: 30, time: Date.UTC(2026, 0, 1), pid: 7, req: { id: 'r', method: 'GET' }, res: { statusCode: 200 }, responseTime: 3, msg: 'GET /healthz 200 3 ms' })}\n`,
    );
    await new Promise((resolve) => setImmediate(resolve));
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\] .*INFO.*: .*Billing: charged 3 instances/);
    expect(lines[1]).toMatch(/GET \/healthz 200 3 ms/);
    expect(text).not.toMatch(/pid|hostname|statusCode/);
  });
});

describe('quietBootLogger', () => {
  const calls: Array<[string, unknown, unknown]> = [];
  const inner: LoggerService = {
    log: (message: unknown, context?: unknown) => calls.push(['info', message, context]),
    debug: (message: unknown, context?: unknown) => calls.push(['debug', message, context]),
    error: (message: unknown, context?: unknown) => calls.push(['error', message, context]),
    warn: (message: unknown, context?: unknown) => calls.push(['warn', message, context]),
  };

  it("turns Nest's route and module lines into debug and leaves everything else as it was", () => {
    const logger = quietBootLogger(inner);
    logger.log('Mapped {/api/v0/instances, GET} route', 'RouterExplorer');
    logger.log('InstancesController {/api/v0}:', 'RoutesResolver');
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.log('listening on 127.0.0.1:8080', 'Shutdown');
    logger.error('charge skipped', 'BillingMeter');
    expect(calls).toEqual([
      ['debug', 'Mapped {/api/v0/instances, GET} route', 'RouterExplorer'],
      ['debug', 'InstancesController {/api/v0}:', 'RoutesResolver'],
      ['debug', 'AppModule dependencies initialized', 'InstanceLoader'],
      ['info', 'listening on 127.0.0.1:8080', 'Shutdown'],
      ['error', 'charge skipped', 'BillingMeter'],
    ]);
  });
});
