import { transientConflict } from '@rigmarket/event-sourcing';
import { toErrorResponse } from './error-envelope.filter';

/** What a renter gets while PostgreSQL restarts or breaks a deadlock: 503 "retry shortly", never a 500. */
describe('database trouble answers 503 service_unavailable', () => {
  const status = (error: unknown) => toErrorResponse(error).status;

  it('for every way node-postgres reports a lost or refused connection', () => {
    for (const message of [
      'Connection terminated unexpectedly',
      'Client has encountered a connection error and is not queryable',
      'timeout exceeded when trying to connect',
      'Connection ended unexpectedly',
      'Query runner already released. Cannot run queries anymore.',
    ])
      expect(status(new Error(message))).toBe(503);
    expect(status(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(503);
    expect(status(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(503);
  });

  it('for a deadlock or serialisation failure left after the retries, which the command runner retries first', () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const serialisation = { driverError: { code: '40001' }, message: 'could not serialize access' };
    expect(status(deadlock)).toBe(503);
    expect(toErrorResponse(serialisation).body).toMatchObject({
      success: false,
      error: 'service_unavailable',
    });
    expect([deadlock, serialisation].map(transientConflict)).toEqual([true, true]);
  });

  it('but an unexpected error stays a 500', () => {
    expect(status(new Error('Cannot read properties of undefined'))).toBe(500);
    expect(transientConflict(Object.assign(new Error('unique violation'), { code: '23505' }))).toBe(false);
  });
});
