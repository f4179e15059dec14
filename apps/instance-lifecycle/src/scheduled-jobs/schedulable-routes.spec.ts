import { ApiError } from '@rigmarket/contracts';
import { ExecuteCommand } from '../logs/execute.handlers';
import { schedulableRoute } from './schedulable-routes';

const metadata = { correlationId: 'c', causationId: 'c' };

describe('schedulableRoute (the calls a scheduled job may repeat)', () => {
  it('finds execute, reboot and change bid with their instance id, ten-digit ids included', () => {
    expect(schedulableRoute('put', '/api/v0/instances/command/1999999999/')).toMatchObject({
      route: { name: 'execute' },
      instanceId: 1_999_999_999,
    });
    expect(schedulableRoute('PUT', '/api/v0/instances/reboot/42')?.instanceId).toBe(42);
    expect(schedulableRoute('PUT', '/api/v0/instances/bid_price/7/')?.route.name).toBe('change bid');
  });

  it('refuses other methods, other paths and ids past a PostgreSQL integer', () => {
    expect(schedulableRoute('POST', '/api/v0/instances/command/5/')).toBeUndefined();
    expect(schedulableRoute('PUT', '/api/v0/instances/5/')).toBeUndefined();
    expect(schedulableRoute('PUT', '/api/v0/instances/command/2147483648/')).toBeUndefined();
  });

  it("execute's stored command is checked like the route checks it", () => {
    const found = schedulableRoute('PUT', '/api/v0/instances/command/5/')!;
    expect(found.route.command(3, 5, { command: 'du -s /data' }, metadata)).toEqual(
      new ExecuteCommand(3, 5, 'du -s /data'),
    );
    expect(() => found.route.command(3, 5, { command: 'cat /etc/passwd' }, metadata)).toThrow(ApiError);
    expect(() => found.route.command(3, 5, {}, metadata)).toThrow(ApiError);
  });
});
