import { DomainError, DomainErrorCodes } from '@rigmarket/contracts';
import { DOMAIN_ERROR_HTTP } from './domain-error-http';
import { toErrorResponse } from './error-envelope.filter';

describe('domain refusals at the HTTP edge', () => {
  it('answers the status of the code, the decider message and its details as extra fields', () => {
    const refusal = new DomainError('tfa_locked', 'Too many wrong codes', {
      retry_after: 900,
      fail_count: 5,
    });
    expect(toErrorResponse(refusal)).toEqual({
      status: 429,
      body: {
        success: false,
        error: 'tfa_locked',
        msg: 'Too many wrong codes',
        retry_after: 900,
        fail_count: 5,
      },
    });
  });

  it("answers the table's message when the decider gave only a code", () => {
    expect(toErrorResponse(new DomainError('no_such_instance'))).toEqual({
      status: 404,
      body: { success: false, error: 'no_such_instance', msg: 'No such instance' },
    });
  });

  it('details cannot overwrite the envelope', () => {
    const body = toErrorResponse(
      new DomainError('not_owner', 'not yours', { success: true, error: 'x' }),
    ).body;
    expect(body).toMatchObject({ success: false, error: 'not_owner', msg: 'not yours' });
  });

  it('every code has a client-error status and a message', () => {
    for (const code of DomainErrorCodes) {
      const { status, msg } = DOMAIN_ERROR_HTTP[code];
      expect([code, status >= 400 && status < 500]).toEqual([code, true]);
      expect(msg.length).toBeGreaterThan(5);
    }
  });
});
