// A process that starts tracing as an app does (startTracing, compiled http-kit), serves one HTTP request
// carrying a key in its query string, and prints the attributes of the spans it made as one JSON line.
// Usage: node traced-server.js <path and query to request>
const { createServer } = require('node:http');
const { InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { startTracing, stopTracing } = require('@rigmarket/http-kit');

async function main() {
  const exporter = new InMemorySpanExporter();
  await startTracing({ serviceName: 'traced-server', spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await fetch(`http://127.0.0.1:${server.address().port}${process.argv[2]}`);
  server.close();
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.stdout.write(
    `${JSON.stringify(exporter.getFinishedSpans().map((s) => ({ kind: s.kind, attributes: s.attributes })))}\n`,
  );
  await stopTracing();
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  },
);
