import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import Table from 'cli-table3';

/** How a long job reports its advance (rebuild, verify, export, import): phases of counted steps. */
export interface Progress {
  /** Starts a phase of `total` steps (the previous one ends). */
  phase(label: string, total: number): void;
  step(by?: number): void;
}

/** Reports nothing: what the jobs get when no terminal watches them. */
export const NO_PROGRESS: Progress = { phase: () => undefined, step: () => undefined };

/**
 * What the operator tool writes to one stream. On a terminal: a progress bar per phase (cli-progress) and
 * boxed tables (cli-table3), lines printed above the bar. Otherwise (a pipe, a file, CI): no bar, the plain
 * lines as before, and a table as one tab-separated line per row, so scripts keep parsing the output.
 */
export interface OperatorOutput {
  readonly progress: Progress;
  line(text: string): void;
  table(head: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): void;
  /** Removes the bar (before the closing lines and the exit). */
  close(): void;
}

export function operatorOutput(stream: NodeJS.WriteStream): OperatorOutput {
  if (!stream.isTTY) {
    return {
      progress: NO_PROGRESS,
      line: (text) => stream.write(`${text}\n`),
      table: (_head, rows) => {
        for (const row of rows) stream.write(`${row.join('\t')}\n`);
      },
      close: () => undefined,
    };
  }
  let bars: MultiBar | undefined;
  let bar: SingleBar | undefined;
  const stop = () => {
    // A render first: it prints the lines logged since the last one (stop alone would drop them).
    bars?.update();
    bars?.stop();
    bars = undefined;
    bar = undefined;
  };
  const line = (text: string) => {
    if (bars) bars.log(`${text}\n`);
    else stream.write(`${text}\n`);
  };
  return {
    progress: {
      phase(label, total) {
        stop();
        bars = new MultiBar(
          {
            stream,
            clearOnComplete: true,
            hideCursor: true,
            format: ' {label} |{bar}| {percentage}% {value}/{total} | {duration_formatted}',
          },
          Presets.shades_classic,
        );
        bar = bars.create(Math.max(total, 1), 0, { label });
      },
      step(by = 1) {
        bar?.increment(by);
      },
    },
    line,
    table(head, rows) {
      const table = new Table({ head: [...head], style: { head: [], border: [], compact: true } });
      for (const row of rows) table.push(row.map(String));
      line(table.toString());
    },
    close: stop,
  };
}
