import { ApiError } from '@rigmarket/contracts';
import { ExecuteCommand } from '../logs/execute.handlers';
import { schedulableRoute } from './schedulable-routes';
import { type HandOffCloudCopyCommand, scheduledCallDecider, scheduledCallStreamId } from './scheduled-call';
import { deciderSpec } from '@rigmarket/testing';

const metadata = { correlationId: 'c', causationId: 'c' };
const run = { jobId: 4, dueAt: '2026-05-01T13:00:00.000Z' };

describe('schedulableRoute (the calls a scheduled job may repeat)', () => {
  it('finds execute, reboot and change bid with their instance id, ten-digit ids included', () => {
    expect(schedulableRoute('put', '/api/v0/instances/command/1999999999/', {})).toMatchObject({
      route: { name: 'execute' },
      instanceId: 1_999_999_999,
    });
    expect(schedulableRoute('PUT', '/api/v0/instances/reboot/42', {})?.instanceId).toBe(42);
    expect(schedulableRoute('PUT', '/api/v0/instances/bid_price/7/', {})?.route.name).toBe('change bid');
  });

  it('refuses other methods, other paths and ids past a PostgreSQL integer', () => {
    expect(schedulableRoute('POST', '/api/v0/instances/command/5/', {})).toBeUndefined();
    expect(schedulableRoute('PUT', '/api/v0/instances/5/', {})).toBeUndefined();
    expect(schedulableRoute('PUT', '/api/v0/instances/command/2147483648/', {})).toBeUndefined();
  });

  it("execute's stored command is checked like the route checks it", () => {
    const path = '/api/v0/instances/command/5/';
    expect(schedulableRoute('PUT', path, { command: 'du -s /data' })!.command(3, metadata, run)).toEqual(
      new ExecuteCommand(3, 5, 'du -s /data'),
    );
    expect(() =>
      schedulableRoute('PUT', path, { command: 'cat /etc/passwd' })!.command(3, metadata, run),
    ).toThrow(ApiError);
    expect(() => schedulableRoute('PUT', path, {})!.command(3, metadata, run)).toThrow(ApiError);
  });

  it("finds cloud copy by its body's instance, and hands each run over once per due time", () => {
    const body = {
      src: '/data/out',
      dst: '/bucket/x',
      instance_id: '77',
      selected: '3',
      transfer: 'Instance to Cloud',
      flags: [],
    };
    const found = schedulableRoute('POST', '/api/v0/commands/rclone/', body)!;
    expect(found).toMatchObject({ route: { name: 'cloud copy' }, instanceId: 77 });
    const command = found.command(3, metadata, run) as HandOffCloudCopyCommand;
    expect(command.call).toEqual({
      instanceId: 77,
      srcPath: '/data/out',
      dstPath: '/bucket/x',
      rclone: { connection: '3', transfer: 'Instance To Cloud', flags: [] },
    });
    expect(scheduledCallStreamId(command.run)).toBe(`scheduledcall-4-${Date.parse(run.dueAt)}`);
    expect(() =>
      schedulableRoute('POST', '/api/v0/commands/rclone/', { ...body, transfer: 'sideways' }),
    ).toThrow(ApiError);
    expect(() => schedulableRoute('POST', '/api/v0/commands/rclone/', { ...body, src: '' })).toThrow(
      ApiError,
    );
  });
});

describe('scheduled call hand-over (scheduledcall-<jobId>-<due>)', () => {
  const spec = deciderSpec(scheduledCallDecider);
  const call = {
    instanceId: 77,
    srcPath: '/data',
    dstPath: '/b/x',
    rclone: { connection: '3', transfer: 'Instance To Cloud' as const, flags: [] },
  };
  const due = {
    type: 'ScheduledCloudCopyDue' as const,
    data: { jobId: 4, userId: 3, dueAt: run.dueAt, call, at: run.dueAt },
  };

  it('hands a run over once: a retried run adds nothing', () => {
    spec.given([]).when({ type: 'HandOffCloudCopy', userId: 3, run, call, at: run.dueAt }).then([due]);
    spec.given([due]).when({ type: 'HandOffCloudCopy', userId: 3, run, call, at: run.dueAt }).then([]);
  });
});
