import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';

/** One Server-Sent Event as a client sees it, with when it arrived. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
  receivedAt: number;
}

/** An open `text/event-stream` response, parsed as the EventSource specification says (without reconnecting). */
export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  /** The events so far (comments such as `: ping` are counted in `comments`). */
  events: SseEvent[];
  comments: string[];
  /** The body of a refused request (not 200). */
  body: string;
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  /** The first event from index `from` on that `accept` takes, waiting up to `timeoutMs`. */
  next(accept: (e: SseEvent) => boolean, timeoutMs?: number, from?: number): Promise<SseEvent>;
  close(): void;
}

/** Opens `url` with `headers` and parses the stream until closed. */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    req = httpRequest(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let body = '';
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => (endedResolve = r));
      let fields: { id?: string; event?: string; data: string[] } = { data: [] };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (res.statusCode !== 200) {
          body += chunk;
          return;
        }
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (fields.data.length > 0 || fields.event)
              events.push({
                id: fields.id,
                event: fields.event ?? 'message',
                data: fields.data.join('\n'),
                receivedAt: Date.now(),
              });
            fields = { data: [] };
            for (const wake of [...waiters]) wake();
            continue;
          }
          if (line.startsWith(':')) {
            comments.push(line.slice(1).trim());
            continue;
          }
          const colon = line.indexOf(':');
          const name = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (name === 'data') fields.data.push(value);
          else if (name === 'id') fields.id = value;
          else if (name === 'event') fields.event = value;
        }
      });
      res.on('end', () => {
        endedResolve();
        for (const wake of [...waiters]) wake();
      });
      res.on('error', () => endedResolve());
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments,
        get body() {
          return body;
        },
        ended,
        next(accept, timeoutMs = 10_000, from = 0) {
          return new Promise((found, failed) => {
            const look = () => {
              const hit = events.slice(from).find(accept);
              if (hit) {
                done();
                found(hit);
              } else if (res.readableEnded) {
                done();
                failed(new Error(`stream ended without the event; got ${JSON.stringify(events)}`));
              }
            };
            const timer = setTimeout(() => {
              done();
              failed(new Error(`no such event within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
            }, timeoutMs);
            const done = () => {
              clearTimeout(timer);
              waiters.delete(look);
            };
            waiters.add(look);
            look();
          });
        },
        close() {
          req?.destroy();
          res.destroy();
        },
      };
      if (res.statusCode !== 200) res.on('end', () => resolve(client));
      else resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}
