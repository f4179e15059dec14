import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type AgentGpuSample, MAX_SAMPLED_GPUS } from '@rigmarket/contracts';
import { marketplaceGpuName } from './nvidia-smi';

const run = promisify(execFile);

/** What the sampler asks nvidia-smi every interval: one CSV line per GPU, numbers without units. */
export const NVIDIA_SMI_SAMPLE_QUERY = [
  '--query-gpu=index,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw',
  '--format=csv,noheader,nounits',
];

/** "[N/A]", "[Not Supported]", "" and anything else that is not a number: null. */
const measured = (text: string | undefined): number | null => {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '' || trimmed.startsWith('[')) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : null;
};

/**
 * `index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], temperature.gpu, power.draw [W]`,
 * one line per GPU (at most MAX_SAMPLED_GPUS; a line that is not a GPU is skipped).
 */
export function parseNvidiaSmiSamples(csv: string): AgentGpuSample[] {
  const samples: AgentGpuSample[] = [];
  for (const line of csv.split(/\r?\n/)) {
    const fields = line.split(',').map((field) => field.trim());
    const index = measured(fields[0]);
    if (fields.length < 7 || index === null || !Number.isInteger(index) || !fields[1]) continue;
    samples.push({
      index,
      name: marketplaceGpuName(fields[1]),
      utilization: measured(fields[2]),
      memoryUsedMb: measured(fields[3]),
      memoryTotalMb: measured(fields[4]),
      temperatureC: measured(fields[5]),
      powerW: measured(fields[6]),
    });
    if (samples.length === MAX_SAMPLED_GPUS) break;
  }
  return samples;
}

/** One nvidia-smi run (5 s at most, 64 KiB of output at most); null when it fails or finds no GPU. */
export async function sampleNvidiaGpus(): Promise<AgentGpuSample[] | null> {
  try {
    const { stdout } = await run('nvidia-smi', NVIDIA_SMI_SAMPLE_QUERY, {
      timeout: 5_000,
      maxBuffer: 64 * 1024,
      env: process.env,
    });
    const samples = parseNvidiaSmiSamples(stdout);
    return samples.length > 0 ? samples : null;
  } catch {
    return null;
  }
}

/**
 * Samples the GPUs every `intervalMs` and hands each sample over (one run at a time: a slow nvidia-smi
 * delays the next sample instead of piling runs up).
 */
export class GpuSampler {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;

  constructor(
    private readonly options: {
      intervalMs: number;
      onSample: (gpus: AgentGpuSample[]) => void;
      log: (line: string) => void;
      sample?: () => Promise<AgentGpuSample[] | null>;
    },
  ) {}

  start(): void {
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const gpus = await (this.options.sample ?? sampleNvidiaGpus)();
    if (gpus) {
      this.failures = 0;
      this.options.onSample(gpus);
    } else if (++this.failures === 1) {
      this.options.log('GPU sampling: nvidia-smi gave no sample (logged once until it works again)');
    }
    this.schedule(this.options.intervalMs);
  }
}
