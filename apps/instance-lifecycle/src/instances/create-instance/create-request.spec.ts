import type { TemplateContent } from '@rigmarket/contracts';
import { VASTAI_CREATE_INSTANCE } from '@rigmarket/testing';
import { parseCreateRequest } from './create-request';
import { containerPorts, parseRuntype } from './runtype';
import { envStringToObject, instanceConfig } from './template-merge';

const CLI_BODY = VASTAI_CREATE_INSTANCE;

const TEMPLATE: TemplateContent & { hashId: string } = {
  hashId: 'h1',
  name: 't',
  image: 'vastai/base',
  tag: 'cuda-12',
  desc: null,
  readme: null,
  readme_visible: false,
  env: '-e A=template -e B=2 -p 8888:8888',
  onstart: 'template onstart',
  runtype: 'jupyter',
  args_str: null,
  ssh_direct: false,
  use_ssh: true,
  jup_direct: true,
  jupyter_dir: '/work',
  use_jupyter_lab: true,
  docker_login_repo: 'ghcr.io',
  docker_login_user: 'u',
  docker_login_pass: 'p',
  href: null,
  repo: null,
  extra_filters: { gpu_ram: { gte: 20000 }, verified: { eq: true } },
  recommended_disk_space: 30,
  private: false,
  volume_info: { mount_path: '/ignored' },
};

const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return '';
};

describe('instance creation requests', () => {
  it('accepts the CLI body as it is sent, nulls meaning absent', () => {
    const request = parseCreateRequest(CLI_BODY);
    expect(request).toMatchObject({
      image: 'pytorch/pytorch',
      disk: 40,
      runtype: 'ssh_direct',
      label: 'mylabel',
      price: null,
      targetState: 'running',
      onstart: 'echo hi',
    });
    const config = instanceConfig(request, null);
    expect(config.env).toEqual({ TZ: 'UTC', '-p 8080:8080': '1', A: 'b=c' });
    expect(containerPorts(config.runtype, config.env).sort((a, b) => a - b)).toEqual([22, 8080]);
  });

  it('defaults disk to 8 and the runtype to ssh (proxy)', () => {
    const config = instanceConfig(parseCreateRequest({ image: 'busybox' }), null);
    expect(config).toMatchObject({ disk: 8, runtype: 'ssh_proxy' });
  });

  it("parses the runtype table and the CLI's space-separated forms", () => {
    expect(parseRuntype('ssh')).toBe('ssh_proxy');
    expect(parseRuntype('ssh_direct')).toBe('ssh_direct');
    expect(parseRuntype('ssh_direc ssh_proxy')).toBe('ssh_direct');
    expect(parseRuntype('jupyter_proxy ssh_proxy')).toBe('jupyter_proxy');
    expect(parseRuntype('jupyter_direc ssh_direc ssh_proxy')).toBe('jupyter_direct');
    expect(parseRuntype('jupyter')).toBe('jupyter_proxy');
    expect(parseRuntype('args')).toBe('args');
    expect(() => parseRuntype('sshh')).toThrow('Unknown runtype');
    expect(containerPorts('jupyter_direct', {})).toEqual([8080, 22]);
    expect(containerPorts('ssh_proxy', {})).toEqual([]);
  });

  it('takes args as a list', () => {
    expect(parseCreateRequest({ image: 'busybox', runtype: 'args', args: ['-c', 'echo hi'] })).toMatchObject({
      runtype: 'args',
      args: ['-c', 'echo hi'],
    });
    expect(message(() => parseCreateRequest({ image: 'busybox', args: '-c echo' }))).toContain(
      'args must be a list',
    );
  });

  it('refuses what the spec refuses, with a message that says why', () => {
    expect(message(() => parseCreateRequest({}))).toContain('image is required unless template_hash_id');
    expect(message(() => parseCreateRequest({ image: 'x', env: '-e TZ=UTC -p 22:22' }))).toContain(
      'env must be an object',
    );
    expect(message(() => parseCreateRequest({ image: 'x', env: '-e TZ=UTC' }))).toContain(
      'Docker-flag string',
    );
    expect(message(() => parseCreateRequest({ image: 'x', onstart: 'x'.repeat(4049) }))).toContain(
      'at most 4048',
    );
    expect(parseCreateRequest({ image: 'x', onstart: 'x'.repeat(4048) }).onstart).toHaveLength(4048);
    expect(message(() => parseCreateRequest({ image: 'x', target_state: 'paused' }))).toContain(
      'target_state must be running or stopped',
    );
    expect(message(() => parseCreateRequest({ template_id: 12 }))).toContain('template_hash_id');
    expect(message(() => parseCreateRequest({ image: 'x', disk: 'lots' }))).toContain(
      'disk must be a number',
    );
    expect(message(() => parseCreateRequest({ image: 'x', vm: 'yes' }))).toContain('vm must be a boolean');
    expect(message(() => parseCreateRequest({ image: 'x', volume_info: 'v1' }))).toContain(
      'volume_info must be an object',
    );
    expect(
      message(() =>
        parseCreateRequest({ image: 'x', volume_info: { volume_id: 'abc', mount_path: '/data' } }),
      ),
    ).toContain('volume_id');
    expect(
      message(() => parseCreateRequest({ image: 'x', volume_info: { volume_id: 3, mount_path: 'data' } })),
    ).toContain('absolute path');
    expect(
      message(() =>
        parseCreateRequest({ image: 'x', volume_info: { volume_id: 3, mount_path: '/data/../etc' } }),
      ),
    ).toContain('absolute path');
    expect(parseCreateRequest({ image: 'x', disk: '12.5', target_state: 'stopped' })).toMatchObject({
      disk: 12.5,
      targetState: 'stopped',
    });
  });

  it("reads volume_info as the CLI sends it (link or create), and only the request's counts", () => {
    const link = parseCreateRequest({ image: 'x', volume_info: { mount_path: '/data', volume_id: '222' } });
    expect(link.volume).toEqual({
      createNew: false,
      volumeId: 222,
      mountPath: '/data',
      sizeGb: null,
      name: null,
    });
    const create = parseCreateRequest({
      image: 'x',
      volume_info: { mount_path: '/data', create_new: true, volume_id: 222, name: 'v1', size: 30 },
    });
    expect(create.volume).toEqual({
      createNew: true,
      volumeId: 222,
      mountPath: '/data',
      sizeGb: 30,
      name: 'v1',
    });
    expect(instanceConfig(link, null).volume).toEqual({ volumeId: 222, mountPath: '/data' });
    // create_new: the volume to create from offer 222 travels in the config; nothing is linked yet.
    expect(instanceConfig(create, null)).toMatchObject({
      volume: null,
      newVolume: { volumeOfferId: 222, sizeGb: 30, name: 'v1', mountPath: '/data' },
    });
    const sizeless = parseCreateRequest({
      image: 'x',
      volume_info: { mount_path: '/data', create_new: true, volume_id: 222 },
    });
    expect(instanceConfig(sizeless, null).newVolume).toMatchObject({ sizeGb: 15 });
    expect(instanceConfig(link, null)).not.toHaveProperty('newVolume');
    expect(
      message(() =>
        parseCreateRequest({
          image: 'x',
          volume_info: { mount_path: '/data', create_new: true, volume_id: 222, size: 2.5 },
        }),
      ),
    ).toContain('whole number');
    expect(instanceConfig(parseCreateRequest({ image: 'x', vm: true }), null).vm).toBe(true);
  });

  it('merges a template per the precedence table', () => {
    const request = parseCreateRequest({
      template_hash_id: 'h1',
      image: null,
      env: { A: 'request', C: '3' },
      extra_filters: { verified: { eq: false } },
    });
    const config = instanceConfig(request, TEMPLATE);
    expect(config).toMatchObject({
      image: 'vastai/base:cuda-12',
      runtype: 'jupyter_direct',
      disk: 30,
      onstart: 'template onstart',
      jupyterDir: '/work',
      useJupyterLab: true,
      imageLogin: '-u u -p p ghcr.io',
      templateHashId: 'h1',
    });
    expect(config.env).toEqual({ A: 'request', B: '2', '-p 8888:8888': '1', C: '3' });
    expect(config.extraFilters).toEqual({ gpu_ram: { gte: 20000 }, verified: { eq: false } });
    // request scalars win
    const overridden = instanceConfig(
      parseCreateRequest({
        template_hash_id: 'h1',
        image: 'mine:1',
        disk: 50,
        runtype: 'args',
        onstart: 'mine',
      }),
      TEMPLATE,
    );
    expect(overridden).toMatchObject({ image: 'mine:1', disk: 50, runtype: 'args', onstart: 'mine' });
  });

  it('reads Docker-flag env strings', () => {
    expect(envStringToObject('-e TZ=UTC -p 8080:8080 -e A=b=c -v /a:/b -h host -e "Q=x y"')).toEqual({
      TZ: 'UTC',
      '-p 8080:8080': '1',
      A: 'b=c',
      '-v /a:/b': '1',
      '-h': 'host',
      Q: 'x y',
    });
  });
});
