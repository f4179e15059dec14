/**
 * Following a log that the host hands over whole on each request (docker logs without follow): which lines
 * of the newest copy are new, given how many lines were sent and the last of them.
 *
 * - The usual case: the copy still starts with what was sent; the lines after `sent` are new.
 * - The copy was cut at its head (a host keeps only its newest lines): the lines after the last copy of the
 *   last line sent are new.
 * - The copy no longer holds that line (the container was recreated): every line of it is new.
 */
export function newLogLines(current: readonly string[], sent: number, lastLine: string | null): string[] {
  if (sent === 0 || lastLine === null) return current.slice(sent);
  if (current.length >= sent && current[sent - 1] === lastLine) return current.slice(sent);
  const at = current.lastIndexOf(lastLine);
  return at >= 0 ? current.slice(at + 1) : [...current];
}

/**
 * A log line as one `data:` field: a carriage return would split it, so a line a terminal would have
 * redrawn (a progress bar) is sent as what the terminal showed last.
 */
export const oneLine = (line: string): string =>
  line
    .split('\r')
    .filter((part) => part !== '')
    .pop() ?? '';
