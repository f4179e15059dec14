import { Header } from '@nestjs/common';

/**
 * A route that answers JSON text made elsewhere (by the database, with json_agg), sent as it is: no JSON.parse
 * of the database's answer and no JSON.stringify of the objects it would become. The handler returns the text
 * (a string, which Nest sends unchanged); this sets the content type that Express gives an object's answer
 * (`application/json; charset=utf-8`). Error answers are unchanged (the error filter writes them).
 */
export const AnswersJsonText = () => Header('Content-Type', 'application/json');

/** `{"key":<text>,...}` from JSON texts, the texts unparsed; each value must be valid JSON already. */
export function jsonObjectText(entries: Readonly<Record<string, string>>): string {
  return `{${Object.entries(entries)
    .map(([key, text]) => `${JSON.stringify(key)}:${text}`)
    .join(',')}}`;
}
