import table from './gpu-models.json';

interface GpuModel {
  dlperf: number;
  tflops: number;
}

const MODELS: Readonly<Record<string, GpuModel>> = (table as { models: Record<string, GpuModel> }).models;

const normalise = (name: string): string => name.replace(/_/g, ' ').replace(/\s+/g, ' ').trim().toLowerCase();
const BY_NAME = new Map(Object.entries(MODELS).map(([name, model]) => [normalise(name), model]));

/**
 * The compute score of `numGpus` GPUs of a model (gpu-models.json). An unknown model gets a
 * conservative score from its memory, so a new card can still be listed.
 */
export function computeScore(
  gpuName: string,
  numGpus: number,
  gpuRamMb: number,
): { dlperf: number; tflops: number } {
  const model = BY_NAME.get(normalise(gpuName)) ?? {
    dlperf: Math.round((gpuRamMb / 1024) * 0.5 * 10) / 10,
    tflops: 0,
  };
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return { dlperf: round(model.dlperf * numGpus), tflops: round(model.tflops * numGpus) };
}

export function knownGpuModels(): string[] {
  return Object.keys(MODELS);
}
