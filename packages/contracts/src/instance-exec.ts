/**
 * `vastai execute ID 'COMMAND'` (docs/instances.md, "Execute"): a constrained command run in the renter's
 * container, never through a shell. Only these programs, each word a plain option or path.
 */
export const EXEC_PROGRAMS = ['ls', 'rm', 'du'] as const;
export type ExecProgram = (typeof EXEC_PROGRAMS)[number];

/** The longest command line accepted, and the most words in it. */
export const EXEC_MAX_COMMAND_CHARS = 1_024;
export const EXEC_MAX_WORDS = 64;
/** What the host keeps of the output (stdout and stderr together), and how long the command may run. */
export const EXEC_MAX_OUTPUT_BYTES = 64 * 1024;
export const EXEC_TIMEOUT_MS = 10_000;

/** Letters, digits and `_ . / - + = , : @ % ~`; everything else (quotes, `;&|$<>` and backticks, globs, backslashes) is refused. */
const PLAIN_WORD = /^[A-Za-z0-9_./\-+=,:@%~]+$/;

export type ExecParse = { ok: true; argv: string[] } | { ok: false; reason: string };

/**
 * The argv of an execute command, or why it is refused. Pure: words are split on spaces only (no quoting,
 * no expansion), the first must be ls, rm or du, and every word must be plain.
 */
export function parseExecCommand(command: unknown): ExecParse {
  if (typeof command !== 'string' || command.trim() === '')
    return { ok: false, reason: 'command is required: ls, rm or du with plain arguments' };
  if (command.length > EXEC_MAX_COMMAND_CHARS)
    return { ok: false, reason: `command is longer than ${EXEC_MAX_COMMAND_CHARS} characters` };
  if (/[^\S ]/.test(command))
    return { ok: false, reason: 'command must be one line; words are separated by spaces only' };
  const argv = command.split(' ').filter((word) => word !== '');
  if (argv.length > EXEC_MAX_WORDS)
    return { ok: false, reason: `command has more than ${EXEC_MAX_WORDS} words` };
  const bad = argv.find((word) => !PLAIN_WORD.test(word));
  if (bad !== undefined)
    return {
      ok: false,
      reason: `"${bad.slice(0, 40)}" is not a plain option or path: no shell syntax (; & | $ \` < > quotes, globs, backslashes) is allowed`,
    };
  const program = argv[0]!;
  if (!(EXEC_PROGRAMS as readonly string[]).includes(program))
    return { ok: false, reason: `only ls, rm and du can be executed, not "${program.slice(0, 40)}"` };
  return { ok: true, argv };
}
