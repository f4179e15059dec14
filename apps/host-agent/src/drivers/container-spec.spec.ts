import type { AgentProvisionSpec, InstanceConfig } from '@rigmarket/contracts';
import { instanceConfig } from '@rigmarket/testing';
import {
  SERVICE_ENTRYPOINT,
  containerPlan,
  containerPorts,
  demuxDockerLog,
  pickGpus,
  publishedPorts,
  registryAuth,
  shellWords,
  storageHonoursDiskSize,
} from './container-spec';

const config = (overrides: Partial<InstanceConfig>): InstanceConfig =>
  instanceConfig({ image: 'pytorch/pytorch', disk: 40, ...overrides });

const spec = (overrides: Partial<InstanceConfig>): AgentProvisionSpec => ({
  instanceId: 42,
  machineId: 7,
  publicIpaddr: '203.0.113.7',
  numGpus: 2,
  config: config(overrides),
  targetState: 'running',
  instanceApiKey: 'k'.repeat(64),
});

const NO_GPUS = { gpuDeviceIds: null, diskQuota: false };

describe('container plan for an instance', () => {
  it('names and labels the container by the contract other contexts rely on', () => {
    const plan = containerPlan(spec({}), NO_GPUS);
    expect(plan.name).toBe('rigmarket-instance-42');
    expect(plan.Labels).toEqual({ 'rigmarket.instance_id': '42', 'rigmarket.machine_id': '7' });
  });

  it('passes env variables, CONTAINER_API_KEY and the utf8 options, but not the -p/-v flags', () => {
    const plan = containerPlan(
      spec({
        env: { TZ: 'UTC', A: 'b=c', '-p 8081:8081': '1', '-v /a:/b': '1', '-h': 'box' },
        pythonUtf8: true,
        langUtf8: true,
      }),
      NO_GPUS,
    );
    expect(plan.Env).toEqual(
      expect.arrayContaining([
        'TZ=UTC',
        'A=b=c',
        `CONTAINER_API_KEY=${'k'.repeat(64)}`,
        'CONTAINER_ID=42',
        'PYTHONUTF8=1',
        'LANG=C.UTF-8',
      ]),
    );
    expect(plan.Env.some((e) => e.startsWith('-'))).toBe(false);
    expect(plan.Hostname).toBe('box');
  });

  describe('When the runtype is ssh or jupyter', () => {
    it('replaces the entrypoint by the service entrypoint with onstart as its argument, and publishes 22', () => {
      const plan = containerPlan(spec({ runtype: 'ssh_proxy', onstart: 'env >> /etc/environment' }), NO_GPUS);
      expect(plan.Entrypoint).toEqual(['sh', '-c', SERVICE_ENTRYPOINT, 'rigmarket-entrypoint']);
      expect(plan.Cmd).toEqual(['env >> /etc/environment']);
      expect(plan.ExposedPorts).toEqual({ '22/tcp': {} });
      expect(plan.HostConfig.PortBindings).toEqual({ '22/tcp': [{ HostIp: '', HostPort: '' }] });
    });

    it('publishes 8080 and 22 for jupyter, plus the -p keys, and tells the entrypoint to start Jupyter', () => {
      const plan = containerPlan(
        spec({ runtype: 'jupyter_direct', useJupyterLab: true, env: { '-p 7860:7860': '1' } }),
        NO_GPUS,
      );
      expect(Object.keys(plan.ExposedPorts)).toEqual(['8080/tcp', '22/tcp', '7860/tcp']);
      expect(plan.Env).toEqual(
        expect.arrayContaining([
          'RIGMARKET_JUPYTER=1',
          'RIGMARKET_JUPYTER_LAB=1',
          'RIGMARKET_RUNTYPE=jupyter_direct',
        ]),
      );
    });
  });

  describe('When the runtype is args', () => {
    it('keeps the image ENTRYPOINT and gives args as the command', () => {
      const plan = containerPlan(
        spec({ runtype: 'args', args: ['python', 'train.py', '--epochs', '3'] }),
        NO_GPUS,
      );
      expect(plan.Entrypoint).toBeUndefined();
      expect(plan.Cmd).toEqual(['python', 'train.py', '--epochs', '3']);
      expect(plan.ExposedPorts).toEqual({});
    });

    it('splits args_str as a shell would, and keeps the image CMD when neither is given', () => {
      expect(
        containerPlan(spec({ runtype: 'args', argsStr: `sh -c 'echo boom; exit 1'` }), NO_GPUS).Cmd,
      ).toEqual(['sh', '-c', 'echo boom; exit 1']);
      expect(containerPlan(spec({ runtype: 'args' }), NO_GPUS).Cmd).toBeUndefined();
    });
  });

  it('requests the GPU devices and the disk size when the host has them', () => {
    const plan = containerPlan(spec({}), { gpuDeviceIds: ['1', '3'], diskQuota: true });
    expect(plan.HostConfig.DeviceRequests).toEqual([
      { Driver: 'nvidia', DeviceIDs: ['1', '3'], Capabilities: [['gpu']] },
    ]);
    expect(plan.HostConfig.StorageOpt).toEqual({ size: '40G' });
    expect(plan.Labels['rigmarket.gpus']).toBe('1,3');
  });

  it('asks for neither on a host without real GPUs or disk quotas', () => {
    const plan = containerPlan(spec({}), NO_GPUS);
    expect(plan.HostConfig.DeviceRequests).toBeUndefined();
    expect(plan.HostConfig.StorageOpt).toBeUndefined();
  });
});

describe("the renter's volume (volume_info)", () => {
  it('mounts the volume, as a Docker named volume of its own, at mount_path', () => {
    const plan = containerPlan(spec({ volume: { volumeId: 314, mountPath: '/workspace/data' } }), {
      gpuDeviceIds: null,
      diskQuota: false,
    });
    expect(plan.HostConfig.Mounts).toEqual([
      { Type: 'volume', Source: 'rigmarket-volume-314', Target: '/workspace/data' },
    ]);
  });

  it('mounts nothing without one', () => {
    expect(
      containerPlan(spec({}), { gpuDeviceIds: null, diskQuota: false }).HostConfig.Mounts,
    ).toBeUndefined();
  });
});

describe('container rules', () => {
  it('ports per runtype', () => {
    expect(containerPorts('ssh_direct', {})).toEqual([22]);
    expect(containerPorts('jupyter_proxy', {})).toEqual([8080, 22]);
    expect(
      containerPorts('args', { '-p 8000:8000': '1', '-p 127.0.0.1:9000:9001/tcp': '1', FOO: 'bar' }),
    ).toEqual([8000, 9001]);
  });

  it('shell words', () => {
    expect(shellWords(`python -c "print('a b')" x\\ y ''`)).toEqual([
      'python',
      '-c',
      "print('a b')",
      'x y',
      '',
    ]);
    expect(() => shellWords(`echo 'open`)).toThrow(/unterminated/);
  });

  it('image_login as registry credentials', () => {
    expect(registryAuth('-u alice -p s3cret ghcr.io')).toEqual({
      username: 'alice',
      password: 's3cret',
      serveraddress: 'ghcr.io',
    });
    expect(registryAuth('-u alice -p s3cret')).toMatchObject({ serveraddress: 'docker.io' });
    expect(registryAuth(null)).toBeNull();
    expect(() => registryAuth('ghcr.io')).toThrow(/image_login/);
  });

  it('disk size only where the storage driver enforces it', () => {
    expect(storageHonoursDiskSize('overlay2', [['Backing Filesystem', 'extfs']])).toBe(false);
    expect(storageHonoursDiskSize('overlay2', [['Backing Filesystem', 'xfs']])).toBe(true);
    expect(storageHonoursDiskSize('btrfs', [])).toBe(true);
  });

  it('free GPUs, published ports and demultiplexed logs', () => {
    expect(pickGpus(['0', '1', '2', '3'], new Set(['0', '2']), 2)).toEqual(['1', '3']);
    expect(pickGpus(['0', '1'], new Set(['0']), 2)).toBeNull();
    expect(
      publishedPorts({
        '22/tcp': [
          { HostIp: '0.0.0.0', HostPort: '49153' },
          { HostIp: '::', HostPort: '49153' },
        ],
        '8080/tcp': null,
      }),
    ).toEqual({ '22/tcp': 49153 });
    const frame = (stream: 1 | 2, text: string) => {
      const header = Buffer.alloc(8);
      header.writeUInt8(stream, 0);
      header.writeUInt32BE(Buffer.byteLength(text), 4);
      return Buffer.concat([header, Buffer.from(text)]);
    };
    expect(demuxDockerLog(Buffer.concat([frame(1, 'boom\n'), frame(2, 'err\n')]))).toBe('boom\nerr\n');
  });
});
