import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VASTAI_CLI } from './testing/vastai-cli';

const ROOT = join(__dirname, '../../..');
const STATUSES = ['works', 'partial', 'not served', 'not applicable'] as const;

interface Row {
  area: string;
  command: string;
  status: string;
  notes: string;
}

/** The command table of docs/client-compat.md ("| area | `command` | status | notes |"). */
function commandTable(): Row[] {
  return readFileSync(join(ROOT, 'docs/client-compat.md'), 'utf8')
    .split('\n')
    .filter((line) => /^\| [A-Za-z& ]+\| `[^`]+` +\|/.test(line))
    .map((line) => {
      const [area, command, status, notes] = line
        .split('|')
        .slice(1, 5)
        .map((cell) => cell.trim());
      return { area: area!, command: command!.replace(/`/g, ''), status: status!, notes: notes! };
    });
}

/** Every command of the pinned CLI, host commands included, as its own --help lists them. */
function cliCommands(): string[] {
  const env = {
    PATH: process.env.PATH,
    HOME: mkdtempSync(join(tmpdir(), 'vast-help-')),
    VASTAI_NO_UPDATE_CHECK: '1',
  };
  execFileSync(VASTAI_CLI, ['set', 'role', 'host'], { env });
  const help = execFileSync(VASTAI_CLI, ['--help'], { env, encoding: 'utf8' });
  return [...help.matchAll(/^ ([a-z][a-z0-9_-]*(?: [a-z][a-z0-9_-]*)?) {2,}\S/gm)].map((m) => m[1]!);
}

/**
 * Issue 14's conformance rule: docs/client-compat.md lists each command of the real CLI once, and every
 * command it says works is driven through the real CLI by some test (its words passed as arguments, e.g.
 * `'stop', 'instances'`), so the table cannot claim more than the suites check.
 */
describe('the CLI command table of docs/client-compat.md', () => {
  const rows = commandTable();

  it('lists every command of the pinned CLI exactly once, and nothing else', () => {
    const commands = cliCommands();
    expect(commands.length).toBeGreaterThan(130);
    expect(rows.map((r) => r.command).sort()).toEqual([...commands].sort());
  });

  it('gives each command a known status, and a reason where it is not served in full', () => {
    for (const row of rows) {
      expect([row.command, STATUSES.includes(row.status as (typeof STATUSES)[number])]).toEqual([
        row.command,
        true,
      ]);
      if (row.status !== 'works') expect([row.command, row.notes.length > 10]).toEqual([row.command, true]);
    }
  });

  it('has a test driving the real CLI for every command it says works', () => {
    const sources = readdirSync(join(ROOT, 'apps'), { recursive: true, encoding: 'utf8' })
      .filter(
        (file) => /\/src\/.*\.(e2e|int)-spec\.ts$/.test(file) && !file.endsWith('client-compat.int-spec.ts'),
      )
      .map((file) => readFileSync(join(ROOT, 'apps', file), 'utf8'));
    const quote = `['"\`]`;
    const untested = rows
      .filter((row) => row.status === 'works')
      .filter((row) => {
        const words = row.command.split(' ').map((w) => `${quote}${w.replace(/[-]/g, '\\-')}${quote}`);
        const call = new RegExp(words.join(',\\s*'));
        return !sources.some((text) => call.test(text));
      })
      .map((row) => row.command);
    expect(untested).toEqual([]);
  });
});
