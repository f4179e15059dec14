import { ApiError, type InstanceRuntype } from '@rigmarket/contracts';

/**
 * The runtype table of the spec plus the CLI's space-separated token lists with the truncated
 * `_direc` spelling ("ssh_direc ssh_proxy", "jupyter_direc ssh_direc ssh_proxy", "args").
 */
export function parseRuntype(raw: string): InstanceRuntype {
  const tokens = raw.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) throw ApiError.badRequest('runtype must not be empty');
  let jupyter = false;
  let direct = false;
  let args = false;
  for (const token of tokens) {
    switch (token) {
      case 'ssh':
      case 'ssh_proxy':
        break;
      case 'ssh_direc':
      case 'ssh_direct':
        direct = true;
        break;
      case 'jupyter':
      case 'jupyter_proxy':
        jupyter = true;
        break;
      case 'jupyter_direc':
      case 'jupyter_direct':
        jupyter = true;
        direct = true;
        break;
      case 'args':
        args = true;
        break;
      default:
        throw ApiError.badRequest(
          `Unknown runtype "${token}": use ssh, ssh_direct, ssh_proxy, jupyter, jupyter_direct, jupyter_proxy or args`,
        );
    }
  }
  if (args) {
    if (tokens.length > 1) throw ApiError.badRequest('runtype args cannot be combined with ssh or jupyter');
    return 'args';
  }
  if (jupyter) return direct ? 'jupyter_direct' : 'jupyter_proxy';
  return direct ? 'ssh_direct' : 'ssh_proxy';
}

/** Container ports each runtype provisions, plus the `-p host:container` keys of env. */
export function containerPorts(runtype: InstanceRuntype, env: Record<string, string>): number[] {
  const ports = new Set<number>(
    runtype === 'ssh_direct' ? [22] : runtype === 'jupyter_direct' ? [8080, 22] : [],
  );
  for (const key of Object.keys(env)) {
    const match = /^-p\s+(?:\d+:)?(\d+)(?:\/\w+)?$/.exec(key.trim());
    if (match) ports.add(Number(match[1]));
  }
  return [...ports];
}
