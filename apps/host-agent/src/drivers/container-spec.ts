import type { AgentProvisionSpec, InstanceRuntype } from '@rigmarket/contracts';

/** The container contract other contexts rely on (sync-maintenance finds instances by it): keep it exact. */
export const INSTANCE_LABEL = 'rigmarket.instance_id';
export const MACHINE_LABEL = 'rigmarket.machine_id';
export const GPUS_LABEL = 'rigmarket.gpus';
export const containerName = (instanceId: number): string => `rigmarket-instance-${instanceId}`;

/**
 * The service entrypoint of ssh and jupyter runtypes (spec, entrypoint rule 1): starts sshd and Jupyter
 * when the image has them, runs onstart ($1), then keeps the container up and stops at once on SIGTERM.
 */
export const SERVICE_ENTRYPOINT = `
echo "rigmarket: service entrypoint for instance \${CONTAINER_ID:-?} (\${RIGMARKET_RUNTYPE:-ssh})"
if command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ]; then
  mkdir -p /run/sshd /root/.ssh
  command -v ssh-keygen >/dev/null 2>&1 && ssh-keygen -A >/dev/null 2>&1
  if [ -n "\${PUBLIC_KEY:-}" ]; then echo "$PUBLIC_KEY" >> /root/.ssh/authorized_keys; chmod 600 /root/.ssh/authorized_keys; fi
  "$(command -v sshd || echo /usr/sbin/sshd)" && echo "rigmarket: sshd started on port 22"
else
  echo "rigmarket: no sshd in this image; SSH is unavailable"
fi
if [ "\${RIGMARKET_JUPYTER:-0}" = 1 ]; then
  if command -v jupyter >/dev/null 2>&1; then
    mode=notebook; [ "\${RIGMARKET_JUPYTER_LAB:-0}" = 1 ] && mode=lab
    (cd "\${RIGMARKET_JUPYTER_DIR:-/}" && jupyter "$mode" --ip=0.0.0.0 --port=8080 --allow-root --no-browser --ServerApp.token="\${JUPYTER_TOKEN:-}" &)
    echo "rigmarket: jupyter $mode started on port 8080"
  else
    echo "rigmarket: no jupyter in this image; Jupyter is unavailable"
  fi
fi
trap 'echo "rigmarket: stopping"; exit 0' TERM INT
if [ -n "\${1:-}" ]; then
  echo "rigmarket: running onstart"
  sh -c "$1" &
  wait $!
  echo "rigmarket: onstart finished with status $?"
fi
echo "rigmarket: container ready"
while :; do sleep 3600 & wait $!; done
`.trim();

/** The container ports a runtype provisions (ssh: 22; jupyter: 8080 and 22; args: none) plus the env's `-p` keys. */
export function containerPorts(runtype: InstanceRuntype, env: Record<string, string>): number[] {
  const ports = new Set<number>(
    runtype.startsWith('jupyter') ? [8080, 22] : runtype.startsWith('ssh') ? [22] : [],
  );
  for (const key of Object.keys(env)) {
    const match = /^-p\s+(?:[\d.]+:)?(?:\d+:)?(\d+)(?:\/tcp)?$/.exec(key.trim());
    if (match) ports.add(Number(match[1]));
  }
  return [...ports];
}

/** Splits args_str as a POSIX shell would split words: quotes and backslashes, no expansion. */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`args_str has an unterminated ${quote} quote`);
  if (inWord) words.push(word);
  return words;
}

/** image_login `-u <user> -p <token> <registry>` as Docker's auth config; null when absent. */
export function registryAuth(
  imageLogin: string | null,
): { username: string; password: string; serveraddress: string } | null {
  if (!imageLogin?.trim()) return null;
  const words = shellWords(imageLogin);
  let username = '';
  let password = '';
  let serveraddress = 'docker.io';
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if ((word === '-u' || word === '--username') && words[i + 1] !== undefined) username = words[++i]!;
    else if ((word === '-p' || word === '--password') && words[i + 1] !== undefined) password = words[++i]!;
    else if (!word.startsWith('-')) serveraddress = word;
  }
  if (!username || !password) throw new Error('image_login must be "-u <user> -p <token> [registry]"');
  return { username, password, serveraddress };
}

export interface HostCapabilities {
  /** GPU device indices for this instance; null when the host has no real GPUs (simulated). */
  gpuDeviceIds: string[] | null;
  /** The storage driver enforces a per-container size (StorageOpt size); overlay2 on extfs does not. */
  diskQuota: boolean;
}

/** The part of Docker's ContainerCreateOptions the agent sets (a subset of dockerode's type). */
export interface ContainerPlan {
  name: string;
  Image: string;
  Env: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  Hostname?: string;
  Labels: Record<string, string>;
  ExposedPorts: Record<string, Record<string, never>>;
  Tty: false;
  HostConfig: {
    PortBindings: Record<string, Array<{ HostIp: string; HostPort: string }>>;
    DeviceRequests?: Array<{ Driver: string; DeviceIDs: string[]; Capabilities: string[][] }>;
    StorageOpt?: Record<string, string>;
    Mounts?: Array<{ Type: 'volume'; Source: string; Target: string }>;
    RestartPolicy: { Name: 'no' };
  };
}

/** The Docker named volume holding a Rigmarket volume's data on this host (created by Docker at first use). */
export function dockerVolumeName(volumeId: number): string {
  return `rigmarket-volume-${volumeId}`;
}

/**
 * The container for an instance: env (plus CONTAINER_API_KEY), ports, labels, GPUs, disk, and the
 * entrypoint rules of the spec (ssh/jupyter: service entrypoint + onstart; args: image ENTRYPOINT kept,
 * args or args_str as the command).
 */
export function containerPlan(spec: AgentProvisionSpec, host: HostCapabilities): ContainerPlan {
  const { config } = spec;
  const env: Record<string, string> = {};
  let hostname: string | undefined;
  for (const [key, value] of Object.entries(config.env)) {
    if (key.trim() === '-h') hostname = value;
    else if (!key.startsWith('-')) env[key] = value; // -p are ports; -v and -n are not offered
  }
  if (config.pythonUtf8) Object.assign(env, { PYTHONUTF8: '1', PYTHONIOENCODING: 'utf-8' });
  if (config.langUtf8) Object.assign(env, { LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' });
  env.CONTAINER_ID = String(spec.instanceId);
  env.CONTAINER_API_KEY = spec.instanceApiKey;

  let entrypoint: string[] | undefined;
  let cmd: string[] | undefined;
  if (config.runtype === 'args') {
    const args = config.args ?? (config.argsStr?.trim() ? shellWords(config.argsStr) : null);
    if (args) cmd = args;
  } else {
    const jupyter = config.runtype.startsWith('jupyter');
    Object.assign(env, {
      RIGMARKET_RUNTYPE: config.runtype,
      RIGMARKET_JUPYTER: jupyter ? '1' : '0',
      RIGMARKET_JUPYTER_LAB: config.useJupyterLab ? '1' : '0',
      ...(config.jupyterDir ? { RIGMARKET_JUPYTER_DIR: config.jupyterDir } : {}),
      ...(jupyter ? { JUPYTER_TOKEN: spec.instanceApiKey } : {}),
    });
    entrypoint = ['sh', '-c', SERVICE_ENTRYPOINT, 'rigmarket-entrypoint'];
    cmd = [config.onstart ?? ''];
  }

  const ports = containerPorts(config.runtype, config.env);
  const labels: Record<string, string> = {
    [INSTANCE_LABEL]: String(spec.instanceId),
    [MACHINE_LABEL]: String(spec.machineId),
  };
  if (host.gpuDeviceIds && host.gpuDeviceIds.length > 0) labels[GPUS_LABEL] = host.gpuDeviceIds.join(',');
  return {
    name: containerName(spec.instanceId),
    Image: config.image,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    ...(entrypoint ? { Entrypoint: entrypoint } : {}),
    ...(cmd ? { Cmd: cmd } : {}),
    ...(hostname ? { Hostname: hostname } : {}),
    Labels: labels,
    ExposedPorts: Object.fromEntries(ports.map((p) => [`${p}/tcp`, {}])),
    Tty: false,
    HostConfig: {
      // An empty HostPort: Docker picks a free host port, reported back as ssh_port / ports.
      PortBindings: Object.fromEntries(ports.map((p) => [`${p}/tcp`, [{ HostIp: '', HostPort: '' }]])),
      ...(host.gpuDeviceIds && host.gpuDeviceIds.length > 0
        ? { DeviceRequests: [{ Driver: 'nvidia', DeviceIDs: host.gpuDeviceIds, Capabilities: [['gpu']] }] }
        : {}),
      ...(host.diskQuota ? { StorageOpt: { size: `${Math.max(1, Math.ceil(config.disk))}G` } } : {}),
      // volume_info: the renter's local volume, kept by Docker beyond the container, so a later instance
      // linking the same volume finds its files.
      ...(config.volume
        ? {
            Mounts: [
              {
                Type: 'volume' as const,
                Source: dockerVolumeName(config.volume.volumeId),
                Target: config.volume.mountPath,
              },
            ],
          }
        : {}),
      RestartPolicy: { Name: 'no' },
    },
  };
}

/** Storage drivers that honour StorageOpt size: overlay2 only on xfs (with pquota); btrfs, zfs, devicemapper. */
export function storageHonoursDiskSize(driver: string, status: Array<[string, string]>): boolean {
  if (['btrfs', 'zfs', 'devicemapper'].includes(driver)) return true;
  const backing = status.find(([key]) => key === 'Backing Filesystem')?.[1];
  return driver === 'overlay2' && backing === 'xfs';
}

/** The first `count` device indices not held by other instances; null when too few are free. */
export function pickGpus(deviceIds: string[], held: Set<string>, count: number): string[] | null {
  const free = deviceIds.filter((id) => !held.has(id));
  return free.length >= count ? free.slice(0, count) : null;
}

/** Docker's NetworkSettings.Ports -> {"22/tcp": 49153}; the first binding of each port. */
export function publishedPorts(
  ports: Record<string, Array<{ HostIp: string; HostPort: string }> | null> | undefined,
): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [port, bindings] of Object.entries(ports ?? {})) {
    const hostPort = Number(bindings?.[0]?.HostPort);
    if (Number.isInteger(hostPort) && hostPort > 0) result[port] = hostPort;
  }
  return result;
}

/** Docker's multiplexed log stream (Tty false): 8-byte frame headers, then the payload. */
export function demuxDockerLog(buffer: Buffer): string {
  let out = '';
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const size = buffer.readUInt32BE(offset + 4);
    out += buffer.subarray(offset + 8, offset + 8 + size).toString('utf8');
    offset += 8 + size;
  }
  return out;
}
