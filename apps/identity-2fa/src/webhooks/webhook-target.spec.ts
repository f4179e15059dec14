import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseSchedule, retryDelayMs } from './webhook-settings';
import { postWebhook, signedHeaders } from './webhook-sender';
import { isPrivateAddress, parseWebhookUrl } from './webhook-target';
import { Webhook } from 'standardwebhooks';

describe('webhook targets (SSRF guard)', () => {
  it('knows private, loopback, link-local and mapped addresses from public ones', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
    ])
      expect({ address, private: isPrivateAddress(address) }).toEqual({ address, private: true });
    for (const address of ['203.0.113.7', '8.8.8.8', '2001:4860:4860::8888', '::ffff:8.8.8.8'])
      expect({ address, private: isPrivateAddress(address) }).toEqual({ address, private: false });
  });

  it('refuses private hosts unless the operator allows them, and bad URLs always', () => {
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://localhost/x',
      'http://[::1]/x',
      'http://169.254.169.254/latest',
    ])
      expect(() => parseWebhookUrl(url, false)).toThrow(/private/);
    expect(parseWebhookUrl('http://127.0.0.1:8080/x', true)).toBe('http://127.0.0.1:8080/x');
    expect(parseWebhookUrl(' https://example.com/hook#frag ', false)).toBe('https://example.com/hook');
    for (const url of [
      'ftp://example.com/',
      'not a url',
      '',
      'https://u:p@example.com/',
      `https://e.com/${'a'.repeat(2048)}`,
    ])
      expect(() => parseWebhookUrl(url, true)).toThrow();
  });

  it('does not send to a private address when they are refused, even if stored earlier', async () => {
    const result = await postWebhook('http://127.0.0.1:9/', {}, '{}', {
      timeoutMs: 1000,
      allowPrivate: false,
    });
    expect(result).toMatchObject({ ok: false, statusCode: null, error: expect.stringMatching(/private/) });
  });
});

describe('webhook signing and sending', () => {
  it('signs per Standard Webhooks: the library verifies what it sends', async () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    let seen: { headers: Record<string, string>; body: string } | undefined;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen = { headers: req.headers as Record<string, string>, body };
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const body = JSON.stringify({
        type: 'credit.low',
        timestamp: '2026-01-01T00:00:00Z',
        data: { balance: 1 },
      });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const result = await postWebhook(url, signedHeaders(secret, 'msg_1', body, new Date()), body, {
        timeoutMs: 2000,
        allowPrivate: true,
      });
      expect(result).toMatchObject({ ok: true, statusCode: 204 });
      expect(new Webhook(secret).verify(seen!.body, seen!.headers)).toEqual(JSON.parse(body));
      expect(seen!.headers['webhook-id']).toBe('msg_1');
    } finally {
      server.close();
    }
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const result = await postWebhook(url, {}, '{}', { timeoutMs: 200, allowPrivate: true });
      expect(result).toMatchObject({ ok: false, statusCode: null, error: 'no answer within 200 ms' });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('reads retry schedules and spreads each wait by at most 20%', () => {
    expect(parseSchedule('5s,5m,30m,2h')).toEqual([5000, 300_000, 1_800_000, 7_200_000]);
    expect(parseSchedule('250,1.5s')).toEqual([250, 1500]);
    expect(parseSchedule('5x')).toBeUndefined();
    expect(retryDelayMs([1000, 2000], 1, () => 0)).toBe(800);
    expect(retryDelayMs([1000, 2000], 2, () => 1)).toBe(2400);
    expect(retryDelayMs([1000, 2000], 3)).toBeUndefined();
  });
});
