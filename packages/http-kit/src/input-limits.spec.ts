import { ApiError } from '@rigmarket/contracts';
import { toErrorResponse } from './error-envelope.filter';
import {
  FIELD_MAX_LENGTH,
  InputLimitsPipe,
  MAX_ARRAY_LENGTH,
  MAX_JSON_DEPTH,
  checkJsonShape,
  checkStrings,
} from './input-limits';

const nested = (depth: number) => {
  let s = '1';
  for (let i = 0; i < depth; i++) s = i % 2 ? `{"a":${s}}` : `[${s}]`;
  return Buffer.from(s);
};

function statusOf(fn: () => unknown): number | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return toErrorResponse(error).status;
  }
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
    return '';
  } catch (error) {
    return toErrorResponse(error).body.msg;
  }
}

describe('request limits (input-limits.ts)', () => {
  it('refuses JSON nested deeper than MAX_JSON_DEPTH on the raw bytes, before parsing', () => {
    expect(() => checkJsonShape(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(statusOf(() => checkJsonShape(nested(MAX_JSON_DEPTH + 1)))).toBe(400);
    expect(messageOf(() => checkJsonShape(nested(950)))).toMatch(/deeper than 32/);
    // Brackets inside strings (escaped quotes too) do not count.
    const inString = Buffer.from(JSON.stringify({ a: '['.repeat(5000) + '\\"{{{{' }));
    expect(() => checkJsonShape(inString)).not.toThrow();
  });

  it('refuses arrays longer than MAX_ARRAY_LENGTH, at any depth', () => {
    const ok = Buffer.from(JSON.stringify({ a: [Array(MAX_ARRAY_LENGTH).fill(0)] }));
    expect(() => checkJsonShape(ok)).not.toThrow();
    const long = Buffer.from(JSON.stringify({ a: { b: Array(MAX_ARRAY_LENGTH + 1).fill('x,y') } }));
    expect(messageOf(() => checkJsonShape(long))).toMatch(/array longer than 1000/);
    // Commas between object members are not array elements.
    const wide = Buffer.from(JSON.stringify(Object.fromEntries([...Array(5000).keys()].map((k) => [k, k]))));
    expect(() => checkJsonShape(wide)).not.toThrow();
  });

  it('refuses NUL, lone surrogates and over-long strings, naming the field', () => {
    expect(messageOf(() => checkStrings({ user: { email: 'a\u0000b' } }, '', ''))).toMatch(
      /user\.email contains a NUL/,
    );
    expect(messageOf(() => checkStrings({ label: '\ud800' }, '', ''))).toMatch(/label is not valid UTF-16/);
    expect(messageOf(() => checkStrings({ env: ['ok', 'x\udc00'] }, '', ''))).toMatch(/env\[1\]/);
    expect(messageOf(() => checkStrings({ ['k\u0000']: 1 }, '', ''))).toMatch(/a key in the body/);
    expect(() => checkStrings({ label: '\ud83d\ude00 ok' }, '', '')).not.toThrow();
    const readme = FIELD_MAX_LENGTH.readme ?? 0;
    expect(() => checkStrings({ readme: 'r'.repeat(readme) }, '', '')).not.toThrow();
    expect(messageOf(() => checkStrings({ readme: 'r'.repeat(readme + 1) }, '', ''))).toMatch(
      /readme is longer than 65536/,
    );
    expect(messageOf(() => checkStrings({ label: 'l'.repeat(1025) }, '', ''))).toMatch(/label is longer/);
    expect(messageOf(() => checkStrings({ n: Infinity }, '', ''))).toMatch(/n is not a finite number/);
  });

  it('validates numeric path ids against the int4 columns they are looked up in', () => {
    const pipe = new InputLimitsPipe();
    const param = (data: string) => ({ type: 'param' as const, data });
    expect(pipe.transform('2147483647', param('id'))).toBe('2147483647');
    expect(statusOf(() => pipe.transform('2147483648', param('id')))).toBe(400);
    expect(statusOf(() => pipe.transform('1'.repeat(40), param('offerId')))).toBe(400);
    // An offer id is machine_id * 1000 + GPUs: a machine id near the int4 bound still has offers.
    expect(pipe.transform('2631438001', param('offerId'))).toBe('2631438001');
    expect(pipe.transform('2147483647999', param('offerId'))).toBe('2147483647999');
    expect(statusOf(() => pipe.transform('2147483648000', param('offerId')))).toBe(400);
    expect(statusOf(() => pipe.transform('x\u0000', param('name')))).toBe(400);
    expect(pipe.transform('abc', param('name'))).toBe('abc');
  });

  it('maps database errors that input causes to 400, and nothing else', () => {
    for (const code of ['22P05', '22003', '22021', '22P02', '54000', '54001']) {
      const pgError = Object.assign(new Error('x'), { driverError: { code } });
      expect(toErrorResponse(pgError)).toMatchObject({ status: 400, body: { error: 'bad_request' } });
    }
    // A bug (an undefined table) stays a 500; a serialisation failure is a 503 (database-unavailable.spec).
    expect(toErrorResponse(Object.assign(new Error('x'), { code: '42P01' })).status).toBe(500);
    expect(toErrorResponse(ApiError.conflict('c')).status).toBe(409);
  });

  it('answers 503 service_unavailable while the database is away (restart, crash, connection lost)', () => {
    const away = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('terminating connection'), { driverError: { code: '57P01' } }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      new Error('Connection terminated unexpectedly'),
    ];
    for (const error of away)
      expect(toErrorResponse(error)).toMatchObject({
        status: 503,
        body: { success: false, error: 'service_unavailable' },
      });
    expect(toErrorResponse(new Error('something else')).status).toBe(500);
  });
});
